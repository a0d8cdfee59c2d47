"""The `command` runtime: any agent CLI, run as an argv template in the case's sandbox.

The template's placeholders ({workspace} {prompt} {task_id} {case_id} {model}
{diff_file}) are substituted per argv element, never through a shell; the same values
are in ASSAY_* environment variables. The agent answers through files and stdout:

- task: it changes the workspace; its exit code is recorded and the checks decide.
- review / verify: `{"findings": [...]}` / `{"verdict": "keep"|"reject"}` in
  $ASSAY_FINDINGS_FILE, or as a JSON line on stdout (the last such line wins). The file
  is read outside the agent's sandbox, so only as a regular file of at most 16 MiB: a
  symbolic link (to /dev/zero, to a host file), a FIFO or a directory there is an error.
- rubric: its stdout, minus JSON lines, is the review; findings are optional.

JSON lines with `type`/`event` on stdout are trace events in every kind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, assert_never

from pydantic import ValidationError

from assay._util import json_text
from assay._util.secrets import agent_environ, redact, redact_file
from assay._util.untrusted_files import UntrustedFileError, open_untrusted, read_untrusted
from assay.agents.asks import ASKS, Shown, ask_for
from assay.agents.cli_transcript import AGENT_TRANSCRIPT_NAME, CliTranscript
from assay.agents.submissions import MAX_FINDINGS
from assay.agents.trace import StdoutReader, parse_json_object, trace_events_of
from assay.core.files import ATTEMPT_PROMPT_FILE
from assay.core.findings import Finding
from assay.core.placeholders import AGENT_FILE_VARIABLES, PLACEHOLDERS
from assay.core.severities import normalise_severity
from assay.errors import AgentError
from assay.isolation.processes import CommandResult, LaunchError, run_command
from assay.subject import AgentOutput, AttemptContext, read_agent_stream
from assay.suites.case import Case, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from assay.suites.command import fill_placeholders

if TYPE_CHECKING:
    from assay.isolation.bwrap import BridgeRelay, Sandboxing
    from assay.options import RunOptions

__all__ = [
    "PLACEHOLDERS",
    "CommandAgent",
    "build_prompt",
    "render_argv",
    "run_agent_process",
    "template_values",
]

MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""A findings file larger than this is not an answer but a runaway agent."""
MAX_REVIEW_BYTES = 1024 * 1024
"""How much of a rubric review's stdout is kept for the judge."""
MAX_ENV_PROMPT_BYTES = 100_000
"""Linux refuses any single argv or environment string over 128 KiB; larger prompts are
only in $ASSAY_PROMPT_FILE."""
_STDERR_IN_MESSAGE = 2000

_ANSWER_HINT = (
    "Write {shape} to the file named by $ASSAY_FINDINGS_FILE, "
    "or print it as one JSON line on stdout."
)


def render_argv(template: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """Substitute `{name}` placeholders in each element (others stay, as in PVYai)."""
    return [fill_placeholders(element, values) for element in template]


def build_prompt(case: Case, *, diff: str, diff_file: Path) -> str:
    """What the agent is asked to do, for each kind of case (`asks.ASKS` words it)."""
    answer = ASKS[case.kind].answer
    # A rubric case's review is the agent's stdout, as Cassandra reads it: nothing to add.
    hint = "" if answer.shape is None or answer.written_review else _ANSWER_HINT
    shown = Shown(diff_at=f"in {diff_file}", diff=diff, answer=hint.format(shape=answer.shape))
    return ask_for(case, shown).text


@dataclass(frozen=True)
class _AttemptFiles:
    """Where one attempt's inputs and outputs live: scratch (beside the repo) and artifacts."""

    diff: Path
    findings: Path
    prompt: Path
    tmp: Path
    stdout: Path
    stderr: Path
    asked: Path
    """The prompt's copy in the artifacts, redacted (the agent reads the scratch one)."""

    @classmethod
    def create(cls, scratch: Path, artifacts: Path, *, diff: str) -> _AttemptFiles:
        artifacts.mkdir(parents=True, exist_ok=True)
        files = cls(
            diff=scratch / "diff.patch",
            findings=scratch / "findings.json",
            prompt=scratch / "prompt.txt",
            tmp=scratch / "tmp",
            stdout=artifacts / "agent.stdout",
            stderr=artifacts / "agent.stderr",
            asked=artifacts / ATTEMPT_PROMPT_FILE,
        )
        files.diff.write_text(diff, encoding="utf-8")
        files.findings.unlink(missing_ok=True)  # never read a previous attempt's answer
        files.tmp.mkdir(mode=0o700, exist_ok=True)
        return files

    def write_prompt(self, prompt: str) -> None:
        """The prompt for the agent, and its copy kept with the attempt's artifacts."""
        self.prompt.write_text(prompt, encoding="utf-8")
        self.asked.write_text(redact(prompt), encoding="utf-8")


class CommandAgent:
    """Runs the agent under test as an external command (the `command` runtime), inside
    the run's OS sandbox when it has one (`RunOptions.sandboxing`)."""

    def __init__(self, *, options: RunOptions | None = None) -> None:
        self.sandboxing = options.sandboxing if options is not None else None

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        template = ctx.agent_command
        case, sandbox = ctx.case, ctx.sandbox
        if not template:
            # Task suites (PVYai) have no place for one; Warden suites do.
            where = (
                "[tool.assay]" if isinstance(case.spec, TaskSpec) else "the suite or [tool.assay]"
            )
            raise AgentError(
                f"no agent command: pass --agent-command or set agent_command in {where}"
            )
        files = _AttemptFiles.create(Path(sandbox.scratch), ctx.artifacts_dir, diff=sandbox.diff)
        prompt = build_prompt(case, diff=sandbox.diff, diff_file=files.diff)
        files.write_prompt(prompt)
        values = template_values(ctx, prompt=prompt, files=files)
        argv = render_argv(template, values)
        env = {**agent_environ(), **ctx.env, **_assay_env(values, case, files)}

        record = CliTranscript()
        record.prompt(prompt)
        reader = StdoutReader(case.required_trace_events, record=record.command_line)

        def launch_failed(exc: LaunchError) -> str:
            if exc.in_gos_words:
                return str(exc)  # Go's words (`fork/exec ./agent.sh: ...`): PVYai's reason
            hint = ""
            if "too long" in exc.problem and len(prompt.encode()) > MAX_ENV_PROMPT_BYTES:
                hint = "; the prompt is too large for argv: read $ASSAY_PROMPT_FILE instead"
            return f"agent {exc}{hint}"

        output = AgentOutput(stdout_path=files.stdout, stderr_path=files.stderr)
        failure: str | None = "the attempt ended before the agent did"
        try:
            result = await run_agent_process(
                argv,
                ctx=ctx,
                env=env,
                files=files,
                on_stdout_line=reader,
                sandboxing=self.sandboxing,
                label="agent",
                launch_failed=launch_failed,
            )
            output.trace_events, output.exit_code = reader.events, result.exit_code
            failure = None
            if isinstance(case.spec, TaskSpec):
                # PVYai scores a task's trace from the stdout it kept, its first MiB.
                stdout, _ = read_agent_stream(files.stdout)
                output.trace_events = trace_events_of(stdout, case.required_trace_events)
                if result.exit_code != 0:
                    failure = f"agent exited with code {result.exit_code}"
                # Failing a task is the agent's result, not a broken run: the checks decide.
                return output
            if result.exit_code != 0:
                raise AgentError(
                    _with_stderr(f"agent exited with code {result.exit_code}", result, env)
                )
            _read_answer(case.spec, output, files, reader)
            if output.review_text:
                # The review reaches the judge and the report; an agent echoing its key must not.
                output.review_text = redact(output.review_text, env)
            return output
        except AgentError as exc:
            failure = str(exc)
            raise
        finally:
            # What the agent did, kept whether or not its answer could be used.
            output.transcript = record.write(
                ctx.artifacts_dir / AGENT_TRANSCRIPT_NAME,
                case_id=case.id,
                kind=case.kind,
                model=ctx.model,
                runtime="command",
                usage=output.usage,
                final_message=_final_message(output),
                error=failure,
                environment=env,
            )
            output.activity = record.reported


def _final_message(output: AgentOutput) -> str | None:
    """The agent's answer as its transcript's last message: the review, the verdict or the
    findings it gave (None: it gave none, or a task, whose answer is the workspace)."""
    if output.review_text:
        return output.review_text
    if output.verdict is not None:
        answer: dict[str, Any] = {"verdict": output.verdict, "reason": output.verdict_reason}
        return json.dumps(answer, ensure_ascii=False)
    if output.findings:
        return json.dumps({"findings": output.findings}, ensure_ascii=False)
    return None


def template_values(ctx: AttemptContext, *, prompt: str, files: _AttemptFiles) -> dict[str, str]:
    """The placeholders' values for one attempt (also its ASSAY_* variables)."""
    return {
        "workspace": str(ctx.sandbox.path),
        "prompt": prompt,
        "task_id": ctx.case.local_id,
        "case_id": ctx.case.id,
        "model": ctx.model or "",
        "diff_file": str(files.diff),
    }


async def run_agent_process(
    argv: Sequence[str],
    *,
    ctx: AttemptContext,
    env: Mapping[str, str],
    files: _AttemptFiles,
    on_stdout_line: Callable[[str], None],
    sandboxing: Sandboxing | None,
    label: str,
    launch_failed: Callable[[LaunchError], str],
    relay: BridgeRelay | None = None,
) -> CommandResult:
    """Run an agent's process in the case's workspace, confined when `sandboxing` says so
    (with a `relay`: no network but the model bridge's, `Sandboxing.for_agent`).

    Its transcripts are redacted (they become CI artifacts). AgentError when it cannot
    start (`launch_failed` words why), runs out of time, or writes outside its workspace;
    `label` names it in those messages.
    """
    workspace = Path(ctx.sandbox.path)
    # The sandbox's private directory holds only the repo and scratch: anything new
    # there afterwards was written outside the workspace.
    private_dir = workspace.parent
    entries_before = set(os.listdir(private_dir))
    isolation = sandboxing.for_agent(Path(ctx.sandbox.root), argv, relay) if sandboxing else None
    try:
        result = await run_command(
            argv,
            cwd=workspace,
            env=env,
            timeout_s=ctx.timeout_s,
            stdout_path=files.stdout,
            stderr_path=files.stderr,
            on_stdout_line=on_stdout_line,
            isolation=isolation,
        )
    except LaunchError as exc:
        raise AgentError(launch_failed(exc)) from None
    for transcript in (files.stdout, files.stderr):
        # Transcripts become CI artifacts: an agent printing its key must not leak it.
        redact_file(transcript, env)
    if result.timed_out:
        raise AgentError(_with_stderr(f"{label} timed out after {ctx.timeout_s:g}s", result, env))
    outside = sorted(set(os.listdir(private_dir)) - entries_before)
    if outside:
        raise AgentError(f"{label} wrote outside its workspace: {', '.join(outside)}")
    return result


def _read_answer(
    spec: ReviewSpec | VerifySpec | RubricSpec,
    output: AgentOutput,
    files: _AttemptFiles,
    reader: StdoutReader,
) -> None:
    """Fill `output` from the agent's answer; AgentError when it is missing or malformed."""
    if isinstance(spec, ReviewSpec):
        answer = _answer(files.findings, reader.last_findings, "findings")
        if answer is None:
            shape = '{"findings": [...]}'
            raise AgentError("agent gave no findings: " + _missing_answer(shape))
        output.findings = _validated_findings(*answer)
    elif isinstance(spec, VerifySpec):
        answer = _answer(files.findings, reader.last_verdict, "verdict")
        if answer is None:
            shape = '{"verdict": "keep"|"reject"}'
            raise AgentError("agent gave no verdict: " + _missing_answer(shape))
        output.verdict, output.verdict_reason = _validated_verdict(*answer)
    elif isinstance(spec, RubricSpec):
        answer = _answer(files.findings, reader.last_findings, "findings")
        if answer is not None:
            output.findings = _validated_findings(*answer)
        output.review_text = _review_text(files.stdout)
        if not output.review_text and not output.findings:
            raise AgentError("agent printed no review on stdout")
    else:
        assert_never(spec)


def _missing_answer(shape: str) -> str:
    hint = _ANSWER_HINT.format(shape=shape).rstrip(".")
    return hint[0].lower() + hint[1:]


def _assay_env(values: Mapping[str, str], case: Case, files: _AttemptFiles) -> dict[str, str]:
    """The placeholders as ASSAY_* variables, plus the answer file and a private TMPDIR.

    HOME stays the user's without a sandbox (real agent CLIs find their configuration and
    login there); inside one, HOME and TMPDIR are private tmpfs mounts instead.
    """
    env = {f"ASSAY_{name.upper()}": value for name, value in values.items()}
    if len(values["prompt"].encode()) > MAX_ENV_PROMPT_BYTES:
        del env["ASSAY_PROMPT"]
    prompt_file, findings_file, case_kind = AGENT_FILE_VARIABLES
    env[prompt_file] = str(files.prompt)
    env[findings_file] = str(files.findings)
    env[case_kind] = case.kind
    env["TMPDIR"] = str(files.tmp)
    return env


def _with_stderr(message: str, result: CommandResult, env: Mapping[str, str]) -> str:
    # Masked, then cut: cut first, a secret straddling the cut would keep its end.
    tail = redact(result.stderr_tail, env).strip()[-_STDERR_IN_MESSAGE:]
    if not tail:
        return message
    return f"{message}; stderr ends with:\n{tail}"


_FROM_FILE = "$ASSAY_FINDINGS_FILE"
_FROM_STDOUT = "the agent's stdout"
_FILE_FIXES = {
    "link": "; write the {key} to the file itself",
    "kind": "; write the {key} to it as a regular file",
    "size": "",
}


def _answer(
    findings_file: Path, from_stdout: dict[str, Any] | None, key: str
) -> tuple[dict[str, Any], str] | None:
    """The agent's answer and where it came from: the findings file when the agent wrote
    one, else its last stdout line carrying `key`; None when it gave neither.

    The file is the agent's, read outside its sandbox: only a regular file of at most
    MAX_ANSWER_BYTES is read, and no link is followed (`read_untrusted`)."""
    try:
        raw = read_untrusted(findings_file, max_bytes=MAX_ANSWER_BYTES)
    except FileNotFoundError:
        return None if from_stdout is None else (from_stdout, _FROM_STDOUT)
    except UntrustedFileError as exc:
        fix = _FILE_FIXES[exc.reason].format(key=key)
        raise AgentError(f"{_FROM_FILE} {exc.problem}{fix}") from None
    except OSError as exc:
        raise AgentError(f"{_FROM_FILE} cannot be read: {exc.strerror or exc}") from None
    try:
        answer = json_text.loads(raw)
    except ValueError as exc:
        raise AgentError(f"{_FROM_FILE} ({findings_file}) is not valid JSON: {exc}") from None
    if not isinstance(answer, dict) or key not in answer:
        raise AgentError(f'{_FROM_FILE} must hold a JSON object with a "{key}" key')
    return answer, _FROM_FILE


def _validated_findings(answer: Mapping[str, Any], source: str) -> list[dict[str, Any]]:
    raw = answer["findings"]
    if not isinstance(raw, list):
        raise AgentError(f'"findings" in {source} must be a list, not {type(raw).__name__}')
    if len(raw) > MAX_FINDINGS:
        raise AgentError(
            f'"findings" in {source} holds {len(raw):,} findings, over the limit of '
            f"{MAX_FINDINGS:,}"
        )
    findings = []
    for index, item in enumerate(raw):
        if isinstance(item, dict) and isinstance(item.get("severity"), str):
            # The words agents use (`major`, `warning`) read as the five levels; an unknown
            # one is left as written, so the error below names what the agent said.
            severity = normalise_severity(item["severity"]) or item["severity"].strip().lower()
            item = {**item, "severity": severity}
        try:
            finding = Finding.model_validate(item)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'finding'}: {error['msg']}"
                for error in exc.errors()[:5]
            )
            raise AgentError(f"finding {index} in {source} is invalid: {problems}") from None
        findings.append(finding.model_dump(mode="json", exclude_none=True))
    return findings


def _validated_verdict(
    answer: Mapping[str, Any], source: str
) -> tuple[Literal["keep", "reject"], str]:
    raw = answer.get("verdict")
    verdict = raw.strip().lower() if isinstance(raw, str) else raw
    reason = str(answer.get("reason") or "")
    if verdict == "keep":
        return "keep", reason
    if verdict == "reject":
        return "reject", reason
    raise AgentError(f'"verdict" in {source} must be "keep" or "reject", not {raw!r}')


def _review_text(stdout_path: Path) -> str:
    """The agent's stdout without its JSON lines, capped for the judge."""
    try:
        with open_untrusted(stdout_path) as stream:  # assay wrote it; never read it through a link
            raw = stream.read(MAX_REVIEW_BYTES + 1)
    except UntrustedFileError as exc:
        raise AgentError(f"the agent's stdout ({stdout_path}) {exc.problem}") from None
    except OSError as exc:
        raise AgentError(f"the agent's stdout ({stdout_path}) cannot be read: {exc}") from None
    text = raw[:MAX_REVIEW_BYTES].decode("utf-8", errors="replace")
    lines = [line for line in text.splitlines() if parse_json_object(line) is None]
    review = "\n".join(lines).strip()
    if len(raw) > MAX_REVIEW_BYTES:
        review += f"\n[review truncated at {MAX_REVIEW_BYTES} bytes]"
    return review
