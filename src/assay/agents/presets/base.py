"""What every agent CLI preset shares: the prompt, the skill, the run, reading the answer.

A preset (`claude-code`, `codex`, ...) is a `Preset`: its CLI's headless argv, the model
keys it may see, the providers whose models it runs (read through the provider registry's
names, and what the CLI calls them), where its skill goes (a system prompt flag, or an
instructions file the CLI reads from the workspace), and a `Stream` that turns the CLI's
stdout into trace events (`tool:<name>`), its final message and its usage. The subject
model reaches the CLI only when it is one the CLI runs; otherwise the CLI runs its own
default model, and the run says so once (`cannot_run`, read by the planner). `PresetAgent`
runs it like any command agent: in the case's sandbox, inside the run's OS sandbox when
there is one, with the agent environment less every model key but the preset's own. Its
final message answers the case: a JSON block with findings or a verdict (parsed leniently,
then validated like the command runtime's answer), or for a rubric case the review itself.
"""

from __future__ import annotations

import contextlib
import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, assert_never

from assay._util.fixture_tree import MAX_FIXTURE_FILE_BYTES
from assay._util.secrets import agent_environ, holds_credential, redact
from assay._util.untrusted_files import UntrustedFileError, read_untrusted
from assay.agents.asks import ASKS, Shown, ask_for
from assay.agents.cli_transcript import AGENT_TRANSCRIPT_NAME, CliTranscript
from assay.agents.command import (
    _assay_env,
    _AttemptFiles,
    _validated_findings,
    _validated_verdict,
    _with_stderr,
    run_agent_process,
    template_values,
)
from assay.agents.presets.answer import json_answer, without_json_blocks
from assay.agents.skill import load_skill
from assay.agents.trace import TraceKeys, parse_json_object
from assay.bridge.attempt import Bridged, bridged_api, open_bridge, relayed
from assay.bridge.normalise import PathNames
from assay.core.usage import Usage
from assay.errors import AgentError, ModelUnavailable
from assay.models.names import parse_model, provider_of
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from assay.suites.warden_skill import skill_at_run

if TYPE_CHECKING:
    from assay.options import RunOptions

__all__ = ["Invocation", "Preset", "PresetAgent", "Stream", "preset_prompt"]

_ANSWER_LAST = "End your final message with the answer as one fenced ```json block: {shape}."


class Stream(ABC):
    """A line callback for the CLI's stdout: what the run needs from its stream."""

    def __init__(self) -> None:
        self.trace = TraceKeys()
        self.final_text: str | None = None
        """The agent's final message (None when the stream ended before it)."""
        self.usage = Usage()
        self.error: str | None = None
        """What the CLI reported as its failure, if it did."""
        self.lines = 0
        self.unreadable = 0
        """Lines that were not the JSON the CLI promises (a warning, a truncated line)."""
        self.transcript = CliTranscript()
        """What the agent did, as the stream tells it (`cli_transcript.py`)."""

    def __call__(self, line: str) -> None:
        if not line.strip():
            return
        self.lines += 1
        event = parse_json_object(line)
        if event is None:
            self.unreadable += 1
            return
        self.on_event(event)

    def tool(self, name: object, tool_input: Any = None, *, call_id: object = None) -> None:
        if isinstance(name, str) and name.strip():
            self.trace.add(f"tool:{name.strip()}")
            self.transcript.tool_call(name.strip(), tool_input, call_id=call_id)

    def add_usage(self, **counts: Any) -> None:
        update = {key: getattr(self.usage, key) + _count(value) for key, value in counts.items()}
        self.usage = self.usage.model_copy(update=update)

    @abstractmethod
    def on_event(self, event: dict[str, Any]) -> None: ...


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


@dataclass(frozen=True)
class Invocation:
    """What one attempt gives the CLI."""

    prompt: str
    model: str | None
    """The model id as the CLI names it (`Preset.cli_model`); None: the CLI's own default."""
    skill: str | None
    """The skill's instructions when the preset passes them on the command line."""
    workspace: Path
    instructions_file: str | None = None
    """The workspace file holding the skill, when the preset reads it from there."""


class Preset(ABC):
    """One agent CLI, driven headless."""

    name: str
    """The runtime name (`claude-code`)."""
    key_variables: tuple[str, ...] = ()
    """The model keys the CLI may see; every other provider key is withheld."""
    providers: ClassVar[Mapping[str, str] | None] = None
    """The assay providers whose models the CLI runs, each with the provider prefix the CLI
    writes before the model's id: '' for none (Claude Code takes `claude-sonnet-4-6`),
    else the CLI's own provider name (opencode writes a Gemini model `google/gemini-...`).
    None: any model, as the id after its provider (a preset that declares nothing)."""
    instructions_file: str | None = None
    """Where the skill goes when the CLI reads instructions from the workspace (AGENTS.md);
    None when it takes them as an argument (`Invocation.skill`)."""
    bridge_api: ClassVar[str | None] = None
    """The API the CLI calls that assay's model bridge speaks (`anthropic`, `openai`,
    `gemini`: the provider whose API it is), so
    its calls can go through assay's model layer (`assay.bridge`); None: direct calls.
    A CLI whose API depends on the model it runs says so in `bridge_api_for`."""

    def __init__(self, program: str) -> None:
        self.program = program

    @classmethod
    def agent(cls, program: str, *, options: RunOptions | None = None) -> PresetAgent:
        """The Agent that runs this preset's CLI `program` (the runtime registry's factory)."""
        return PresetAgent(cls(program), options=options)

    @abstractmethod
    def argv(self, run: Invocation) -> list[str]: ...

    @abstractmethod
    def stream(self) -> Stream: ...

    @classmethod
    def cli_model(cls, model: str) -> str | None:
        """`model` (`provider/name`, or a bare name the provider registry reads as one) as
        the CLI names it, or None when its provider is not one the CLI runs."""

        parsed = parse_model(model)
        if cls.providers is None:
            return parsed.name
        prefix = cls.providers.get(parsed.provider)
        if prefix is None:
            return None
        return f"{prefix}/{parsed.name}" if prefix else parsed.name

    @classmethod
    def cannot_run(cls, model: str) -> str | None:
        """Why the CLI is not given `model` and runs its own default model; None when it runs it."""
        if cls.providers is None or cls.cli_model(model) is not None:
            return None
        kinds = ", ".join(f"{provider}/" for provider in cls.providers)
        return (
            f"{cls.name} runs {kinds} models, not {model}: its cases ran with {cls.name}'s own "
            f"default model (choose one with --model, and the judge with --judge-model)"
        )

    def keys_for(self, model: str | None) -> tuple[str, ...]:
        """The keys the CLI may see when it runs `model` (None: its own default model)."""
        return self.key_variables

    def environ(self, model: str | None) -> dict[str, str]:
        """The agent environment less every credential but this preset's keys."""
        keep = set(self.keys_for(model))
        return {
            name: value
            for name, value in agent_environ().items()
            if name in keep or not holds_credential(name, value)
        }

    def bridge_api_for(self, model: str | None) -> str | None:
        """The API the CLI speaks through the bridge when it runs `model` (None: its own
        default model); None: its calls stay direct."""
        return self.bridge_api

    def bridge_environ(self, url: str, token: str, api: str) -> dict[str, str]:
        """What points the CLI's `api` calls (`bridge_api_for`) at the bridge at `url`, with
        `token` as its key."""
        return {}

    def bridge_files(self, url: str, api: str, model: str | None) -> dict[str, str]:
        """Files (name: text) the CLI reads, beyond its environment, to send `model`'s `api`
        calls to the bridge at `url`: written into the attempt's scratch directory (its
        own, beside the workspace and never in it, seen at the same path in the OS
        sandbox) and named to the CLI by `bridge_argv`. They never hold the token."""
        return {}

    def bridge_argv(self, files: Mapping[str, Path]) -> list[str]:
        """The arguments that name the written `bridge_files` (name: path) to the CLI."""
        return []

    def run_model(self, subject: str | None) -> str | None:
        """The model the CLI runs for a case whose subject model is `subject`: it, when the
        CLI runs its provider's models; None (its own default) otherwise."""
        return subject if subject and self.cli_model(subject) is not None else None

    def relays_to_bridge(self, options: RunOptions | None, subject: str | None) -> bool:
        """Whether an attempt with subject model `subject` runs the CLI, in the OS sandbox,
        with no network but the relay to its bridge (`bridge.attempt.relayed`)."""
        bridged = bridged_api(self, options, self.run_model(subject))
        return bridged is not None and relayed(options)

    def price(self, model: str | None, usage: Usage) -> float | None:
        """The cost of `usage` when the CLI did not state it: the price of `model` by its
        provider's pricing; None for the CLI's own default model, which assay does not know."""
        if model is None:
            return None

        return provider_of(model).price(parse_model(model).name, usage)


def preset_prompt(case: Case, *, diff: str, diff_file: Path) -> str:
    """What the CLI is asked, per case kind (`asks.ASKS` words it), ending with the answer it
    must give in its final message."""
    answer = ASKS[case.kind].answer
    if answer.written_review:
        hint = "Write the review as your final message."
    else:
        hint = _ANSWER_LAST.format(shape=answer.shape) if answer.shape else ""
    return ask_for(case, Shown(diff_at=f"in {diff_file}", diff=diff, answer=hint)).text


def _skill_text(ctx: AttemptContext) -> str | None:
    spec = ctx.case.spec
    path = skill_at_run(getattr(spec, "skill", None), ctx.skill_override)
    return load_skill(path).body if path is not None else None


class PresetAgent:
    """Runs a preset's CLI for one attempt (the preset runtimes' Agent)."""

    def __init__(self, preset: Preset, *, options: RunOptions | None = None) -> None:
        self.preset = preset
        self.options = options
        self.sandboxing = options.sandboxing if options is not None else None

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        preset, case, sandbox = self.preset, ctx.case, ctx.sandbox
        workspace = Path(sandbox.path)
        files = _AttemptFiles.create(Path(sandbox.scratch), ctx.artifacts_dir, diff=sandbox.diff)
        prompt = preset_prompt(case, diff=sandbox.diff, diff_file=files.diff)
        files.write_prompt(prompt)
        skill = _skill_text(ctx)
        cli_model = preset.cli_model(ctx.model) if ctx.model else None
        # The subject model when the CLI runs it; None: its own default (the plan said so).
        model = preset.run_model(ctx.model)
        invocation = Invocation(
            prompt=prompt,
            model=cli_model,
            skill=skill if preset.instructions_file is None else None,
            workspace=workspace,
            instructions_file=preset.instructions_file if skill else None,
        )
        argv = preset.argv(invocation)
        values = template_values(ctx, prompt=prompt, files=files)
        bridged = bridged_api(preset, self.options, model)
        # Through the bridge the CLI gets no real key at all: the bridge's token is its key.
        keys = preset.environ(model) if bridged is None else _without_credentials()
        env = {**keys, **ctx.env, **_assay_env(values, case, files)}
        stream = preset.stream()
        stream.trace = TraceKeys(case.required_trace_events)  # kept past the trace's bound
        stream.transcript.prompt(prompt)

        def keep_transcript(error: str | None) -> Path:
            return stream.transcript.write(
                ctx.artifacts_dir / AGENT_TRANSCRIPT_NAME,
                case_id=case.id,
                kind=case.kind,
                model=model,
                runtime=preset.name,
                usage=usage,
                final_message=stream.final_text,
                error=error,
                environment=env,
            )

        usage = stream.usage
        async with _maybe_bridge(bridged, preset, self.options, ctx, env) as bridge:
            if bridge is not None and bridged is not None:
                env = {**env, **bridge.environ}
                scratch = Path(sandbox.scratch)
                argv = [*argv, *_bridge_files(preset, bridge, bridged, model, scratch)]
            try:
                with _instructions(workspace, preset.instructions_file, skill):
                    result = await run_agent_process(
                        argv,
                        ctx=ctx,
                        env=env,
                        files=files,
                        on_stdout_line=stream,
                        sandboxing=self.sandboxing,
                        label=preset.name,
                        launch_failed=lambda exc: f"{preset.name}: {exc}",
                        relay=bridge.relay if bridge and relayed(self.options) else None,
                    )
            except AgentError as exc:  # timed out, wrote outside: what it did is still kept
                usage = stream.usage
                keep_transcript(str(exc))
                raise
            usage = stream.usage
            if usage.cost_usd is None:
                usage = usage.model_copy(update={"cost_usd": preset.price(model, usage)})
            if bridge is not None:
                try:
                    usage = _bridge_usage(bridge, usage)
                except ModelUnavailable as exc:  # the bridge stopped it: what it did is kept
                    keep_transcript(str(exc))
                    raise
        transcript = keep_transcript(_stream_failure(stream, result.exit_code, preset.name))
        output = AgentOutput(
            trace_events=stream.trace.keys,
            usage=usage,
            exit_code=result.exit_code,
            stdout_path=files.stdout,
            stderr_path=files.stderr,
            transcript=transcript,
            activity=stream.transcript.reported,
        )
        if isinstance(case.spec, TaskSpec):
            return output  # the checks decide, as for any command agent
        # A failed attempt's calls were paid for all the same: its error carries their usage.
        if result.exit_code != 0 or stream.error:
            said = f": {redact(stream.error, env)}" if stream.error else ""
            raise AgentError(
                _with_stderr(
                    f"{preset.name} exited with code {result.exit_code}{said}", result, env
                ),
                usage=usage,
            )
        if stream.final_text is None:
            raise AgentError(
                f"{preset.name} printed no final message ({stream.lines} lines on stdout, "
                f"{stream.unreadable} not JSON): the stream ended early",
                usage=usage,
            )
        try:
            _read_answer(case.spec, output, redact(stream.final_text, env), preset.name)
        except AgentError as exc:
            exc.usage = usage
            raise
        return output


def _stream_failure(stream: Stream, exit_code: int | None, name: str) -> str | None:
    """How the CLI's run ended when it did not end well, for its transcript."""
    if stream.error:
        return stream.error
    if exit_code not in (0, None):
        return f"{name} exited with code {exit_code}"
    if stream.final_text is None:
        return f"{name} printed no final message"
    return None


def _without_credentials() -> dict[str, str]:
    return {k: v for k, v in agent_environ().items() if not holds_credential(k, v)}


def _bridge_files(
    preset: Preset, bridge: Bridged, api: str, model: str | None, scratch: Path
) -> list[str]:
    """Writes the preset's files for the bridge into the attempt's `scratch` directory:
    the arguments that name them to the CLI. The scratch directory is the agent's (its
    HOME), so a link left at a file's name is replaced, never written through."""
    written: dict[str, Path] = {}
    for name, text in preset.bridge_files(bridge.url, api, model).items():
        _replace_in(scratch, name, text.encode())
        written[name] = scratch / name
    return preset.bridge_argv(written)


def _maybe_bridge(
    api: str | None,
    preset: Preset,
    options: RunOptions | None,
    ctx: AttemptContext,
    env: Mapping[str, str],
) -> contextlib.AbstractAsyncContextManager[Bridged | None]:
    if api is None:
        return contextlib.nullcontext()
    # The attempt's own directories are new in every run: the cache keys them by name.
    names = PathNames.of(
        [(Path(ctx.sandbox.path).parent, "<sandbox>"), (ctx.artifacts_dir, "<artifacts>")]
    )
    return open_bridge(
        preset,
        api=api,
        options=options,
        sample=ctx.attempt,
        artifacts_dir=ctx.artifacts_dir,
        environ=env,
        names=names,
    )


def _bridge_usage(bridge: Bridged, cli_usage: Usage) -> Usage:
    """The attempt's usage: the bridge's count when the CLI's calls went through it (the
    CLI's own report stays in the model-calls file, a cross-check); a call it refused
    (budget, offline miss) ends the attempt `skipped` with the reason."""
    session = bridge.session
    session.close(cli_usage=cli_usage)
    if session.stopped is not None:
        stopped = ModelUnavailable(session.stopped)
        stopped.usage = session.usage  # the calls made before were paid for all the same
        raise stopped
    # A CLI that made no call through the bridge (its own login, a fake) keeps its report.
    return session.usage if session.calls else cli_usage


def _read_answer(
    spec: ReviewSpec | VerifySpec | RubricSpec, output: AgentOutput, text: str, name: str
) -> None:
    source = f"{name}'s final message"
    if isinstance(spec, ReviewSpec):
        answer = json_answer(text, "findings")
        if answer is None:
            raise AgentError(f"{source} holds no JSON block with findings: {_start(text)}")
        output.findings = _validated_findings(answer, source)
    elif isinstance(spec, VerifySpec):
        answer = json_answer(text, "verdict")
        if answer is None:
            raise AgentError(f"{source} holds no JSON block with a verdict: {_start(text)}")
        output.verdict, output.verdict_reason = _validated_verdict(answer, source)
    elif isinstance(spec, RubricSpec):
        answer = json_answer(text, "findings")
        if answer is not None:
            output.findings = _validated_findings(answer, source)
        output.review_text = without_json_blocks(text)
        if not output.review_text and not output.findings:
            raise AgentError(f"{source} is empty")
    else:
        assert_never(spec)


def _start(text: str) -> str:
    text = " ".join(text.split())
    return repr(text[:200] + ("..." if len(text) > 200 else ""))


class _instructions:  # noqa: N801 - used as a context manager, named for what it holds
    """The skill as the CLI's instructions file in the workspace, for the run only.

    A file already there (the repository's own AGENTS.md) keeps its text after the skill,
    and is put back as it was afterwards (a link as the link it was), so the workspace holds
    only the agent's changes. The agent owns the workspace while it runs, and assay writes
    there after it as its own user, outside any sandbox: so no link is followed, neither
    one left at the file's name (an AGENTS.md pointing at `~/.bashrc`) nor a workspace that
    became one.
    """

    def __init__(self, workspace: Path, name: str | None, skill: str | None) -> None:
        self.workspace = workspace
        self.name = name if name and skill else None
        self.skill = skill or ""
        self.before: bytes | None = None
        self.link: str | None = None

    def __enter__(self) -> None:
        if self.name is None:
            return
        path = self.workspace / self.name
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                self.link = os.readlink(path)
            else:
                self.before = read_untrusted(path, max_bytes=MAX_FIXTURE_FILE_BYTES)
        except FileNotFoundError:
            pass
        except (OSError, UntrustedFileError):  # a directory, a FIFO: the repository's own
            self.name = None
            return
        own = self.before.decode("utf-8", errors="replace") if self.before else ""
        text = self.skill + ("\n\n" + own if own else "")
        _replace_in(self.workspace, self.name, text.encode())

    def __exit__(self, *exc: object) -> None:
        if self.name is not None:
            _replace_in(self.workspace, self.name, self.before, link=self.link)


def _replace_in(
    directory: Path, name: str, content: bytes | None, *, link: str | None = None
) -> None:
    """`directory/name` removed, then written anew with `content`, or made the symbolic
    link `link` (neither: left removed), through no link: one there is removed, never
    written through. A directory that is not one any more (or one at `name`) is left."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            os.unlink(name, dir_fd=fd)
        if link is not None:
            with contextlib.suppress(OSError):
                os.symlink(link, name, dir_fd=fd)
        if content is None:
            return
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        with contextlib.suppress(OSError):  # a directory the agent left there: kept
            with open(os.open(name, flags, 0o644, dir_fd=fd), "wb") as out:
                out.write(content)
    finally:
        os.close(fd)
