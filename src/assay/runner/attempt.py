"""One attempt of one case: sandbox -> agent -> grader -> Attempt.

Whatever goes wrong stays inside the attempt: a RunError makes it `error` with its
message, ModelUnavailable makes it `skipped`, and a bug in assay makes it `error` with
the traceback written beside its transcripts (never on the terminal, which shows one
line per case). So does plugin code raising SystemExit or another BaseException (only
Ctrl-C and cancellation go on), and an agent or a grading that returns past --timeout,
having blocked the event loop where no timer could stop it, is a timeout all the same.
`--timeout` bounds the agent, and the grading with what the agent left of it, except
where the kind's grading keeps its own limits (a task's verification commands: PVYai's
own rule). A task whose agent did not finish gets every check `blocked`.
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import os
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assay._util.secrets import redact
from assay.agents import agent_for, runtime_spec
from assay.agents.cli_transcript import read_activity
from assay.core.checks import Check
from assay.core.files import (
    AGENT_TRANSCRIPT_FILE,
    ATTEMPT_DIFF_FILE,
    artifacts_dir,
    safe_segment,
)
from assay.core.statuses import ErrorSource
from assay.core.usage import Usage
from assay.errors import (
    AgentError,
    AssayError,
    AttemptTimeout,
    JudgeError,
    ModelUnavailable,
    RunError,
    SandboxError,
    output_error,
)
from assay.registry.plugin_calls import is_interruption, what_it_raised
from assay.registry.runtimes import BUILTIN_RUNTIMES
from assay.report.model import AgentActivity, Attempt
from assay.runner.answers import save_answer
from assay.runner.combine import graded_attempt, total_usage
from assay.runner.error_source import error_source
from assay.runner.kinds import grader_for, kind_of
from assay.runner.outcome import AttemptOutcome
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case
from assay.workspace import build_sandbox, remove_sandbox

if TYPE_CHECKING:
    from assay.agents.base import Agent
    from assay.options import RunSettings
    from assay.runner.plan import PlannedRun
    from assay.workspace import Sandbox

__all__ = ["artifacts_dir", "run_attempt", "safe_segment"]

FailedStatus = Literal["error", "skipped"]

BACKSTOP_GRACE_S = 5.0
"""An agent that stops itself at the timeout (the command agent kills its process group,
the builtin agent has its own timer: `RuntimeSpec.keeps_timeout`) has this much longer
before the runner's own timer fires, only for one that failed to stop."""

_OUT_OF_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}
"""Write failures that are the machine's, not the case's: the run stops with exit 4."""
_RAW_JUDGE_CHARS = 4000
"""How much of a broken judge answer the report keeps (the whole of it is in the file)."""


async def run_attempt(
    run: PlannedRun,
    index: int,
    *,
    options: RunSettings,
    work_root: Path,
    report_dir: Path,
    agent: Agent | None = None,
) -> AttemptOutcome:
    """Run attempt `index` (0-based) of `run`; never raises except on cancellation.

    `agent` answers instead of the runtime's (`assay check`'s synthetic answers): the
    sandbox and the grading are the run's own."""

    started = time.monotonic()
    artifacts = artifacts_dir(report_dir, run.case.id, run.model, index)
    usage: list[Usage] = []
    findings: list[dict[str, Any]] = []
    sandbox: Sandbox | None = None
    inline = False
    status: FailedStatus
    judge: dict[str, Any]
    phase = "sandbox"
    source: ErrorSource | None = None
    checks: list[Check] = []
    try:
        # A small review sandbox is built on the loop: a few milliseconds and no process,
        # where a thread costs more CPU than the build (the interpreter lock changes hands
        # at each of its system calls). Anything larger is built in a thread.
        inline = kind_of(run.case).small_sandbox(run.case.spec, options.skill)
        if inline:
            sandbox = _prepare(run, artifacts, work_root, options.skill)
        else:
            sandbox = await asyncio.to_thread(_prepare, run, artifacts, work_root, options.skill)
        if sandbox.diff:  # what the agent reviewed, for report.html to show beside its findings
            (artifacts / ATTEMPT_DIFF_FILE).write_text(redact(sandbox.diff), encoding="utf-8")
        ctx = AttemptContext(
            case=run.case,
            sandbox=sandbox,
            model=run.model,
            judge_model=run.judge_model,
            timeout_s=run.timeout_s,
            attempt=index,
            artifacts_dir=artifacts,
            agent_command=run.agent_command,
            skill_override=options.skill,
            env=dict(options.extra_env),
        )
        if agent is None:
            agent = agent_for(run.case, runtime=run.runtime, options=options)
        grader = grader_for(run.case, options=options)
        # --timeout bounds the agent, and the grading too where the kind says so (a judge
        # that never answers must not hold a case longer than an agent may); a task's
        # checks keep their own limits instead, as PVYai's do.
        kind = kind_of(run.case)
        phase = "agent"
        attempt_began = time.monotonic()
        attempt_ends = attempt_began + run.timeout_s
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(run.timeout_s + _backstop_grace(run)) as deadline:
                began = loop.time()
                output = await _agent_output(agent, ctx, runtime=run.runtime)
                usage.append(output.usage)
                findings = output.findings
                # For `assay regrade`: kept whatever the grading says.
                save_answer(artifacts, output, workspace=_kept(sandbox, options))
                _in_time(deadline, began, since=attempt_began)
                phase = grading_phase(run)
                # The agent's own timer kills it at the timeout; grading gets what is left,
                # or its own limits.
                grading_ends = loop.time() + _left(attempt_ends) if kind.timed_grading else None
                deadline.reschedule(grading_ends)
                began = loop.time()
                grade = await grader.grade(ctx, output)
                _in_time(deadline, began, since=attempt_began)
        except TimeoutError:
            if not deadline.expired():
                raise
            raise AttemptTimeout(
                f"timeout after {run.timeout_s:g}s in {phase}", usage=total_usage(usage)
            ) from None
        except _PastDeadline as late:
            raise AttemptTimeout(
                f"timeout after {run.timeout_s:g}s in {phase}{late}", usage=total_usage(usage)
            ) from None
        usage.append(grade.usage)
        transcript = output.transcript or output.stdout_path
        attempt = graded_attempt(
            grade,
            duration_s=time.monotonic() - started,
            usage=total_usage(usage),
            transcript=_relative(transcript, report_dir) if transcript else None,
            activity=output.activity,
        )
        return AttemptOutcome(attempt, findings, grade.judge, _kept(sandbox, options))
    except ModelUnavailable as exc:
        status, reason, judge = "skipped", str(exc), {}
        if exc.usage is not None:  # an agent CLI's calls before the bridge refused one
            usage.append(exc.usage)
    except AttemptTimeout as exc:
        # What the agent spent before the grading ran out is paid for all the same.
        status, reason, judge = "error", str(exc), {}
        source = error_source(exc, phase=phase)
        usage = [exc.usage] if exc.usage is not None else []
        if phase == "agent":  # an agent that never finished: a task's checks are blocked
            checks = _agent_failure_checks(run.case, reason)
    except JudgeError as exc:
        status, reason, judge = "error", str(exc), _judge_failure(exc, artifacts, report_dir)
        source = error_source(exc, phase=phase)
        if exc.usage is not None:
            usage.append(exc.usage)
    except AssayError as exc:
        status, reason, judge = "error", str(exc), {}
        source = error_source(exc, phase=phase)
        if isinstance(exc, RunError) and exc.usage is not None:
            usage.append(exc.usage)
        if isinstance(exc, AgentError):
            checks = _agent_failure_checks(run.case, reason)
    except Exception as exc:  # a bug in assay or a plugin: keep the run going, keep the evidence
        if isinstance(exc, OSError) and exc.errno in _OUT_OF_SPACE:
            # Not this case's fault: every case after it would fail the same way.
            raise output_error(exc, what=str(artifacts), report_dir=report_dir) from None
        status, judge = "error", {}
        source = error_source(exc, phase=phase, plugin_runtime=_plugin_runtime(run))
        if phase == "agent" and _plugin_runtime(run):  # its bug, not assay's
            reason = f"runtime {run.runtime!r} raised {what_it_raised(exc)}"
            checks = _agent_failure_checks(run.case, reason)
        else:
            reason = f"internal error: {type(exc).__name__}: {exc}"
        reason += f" (traceback in {_keep_traceback(exc, artifacts, report_dir)})"
    except BaseException as exc:
        # SystemExit, GeneratorExit, ... from the agent or a grader: plugin code's failure,
        # this attempt's error. Uncaught, a sys.exit(0) would end the run as a passed gate.
        if is_interruption(exc):
            raise
        status, judge = "error", {}
        source = error_source(exc, phase=phase)
        reason = f"the {phase} raised {what_it_raised(exc)}"
        reason += f" (traceback in {_keep_traceback(exc, artifacts, report_dir)})"
        if phase == "agent":
            checks = _agent_failure_checks(run.case, reason)
    finally:
        if sandbox is not None and not options.keep_workspaces:
            if inline and not _agent_writes(run):
                remove_sandbox(sandbox)  # as small as it was built: nothing else wrote in it
            else:
                await asyncio.to_thread(remove_sandbox, sandbox)
    left = _agent_transcript_left(artifacts) if phase != "sandbox" else None
    attempt = Attempt(
        status=status,
        reason=reason,
        error_source=source if status == "error" else None,
        duration_s=time.monotonic() - started,
        usage=total_usage(usage),
        checks=checks,
        transcript=_relative(left, report_dir) if left else None,
        activity=_left_activity(left),
    )
    return AttemptOutcome(attempt, findings, judge, _kept(sandbox, options))


class _PastDeadline(Exception):
    """The agent or the grading returned after the attempt's deadline, its timer never having
    stopped it: it caught the cancellation, or it blocked the event loop (no timer fires
    while code runs without awaiting). The text says which; the attempt is a timeout."""


def _plugin_runtime(run: PlannedRun) -> bool:
    """Whether the case's agent is a plugin's (or a library user's), not one assay ships."""

    return run.runtime not in BUILTIN_RUNTIMES


def _backstop_grace(run: PlannedRun) -> float:
    """How long after --timeout the runner's own timer fires in the agent's phase: the grace
    an agent that stops itself at the timeout (`RuntimeSpec.keeps_timeout`) has to do so
    and say why; none for any other, whose deadline the runner's timer is."""
    spec = runtime_spec(run.runtime)
    return BACKSTOP_GRACE_S if spec is not None and spec.keeps_timeout else 0.0


LATE_TOLERANCE_S = 1.0
"""How late past its deadline a call may return and still count. The loop runs one thing
at a time, so an answer that was ready in time can be handed over a little late, after
another case's work (a sandbox built on the loop, a report line); only one returning
well past it blocked the loop itself, or swallowed its cancellation."""


def _in_time(deadline: asyncio.Timeout, began: float, *, since: float) -> None:
    """_PastDeadline when the call that began at `began` (loop time) returned more than
    LATE_TOLERANCE_S after `deadline`, or after its timer fired (a cancellation it caught):
    a verdict reached past --timeout is a timeout like any other."""
    if deadline.expired():
        raise _PastDeadline("")
    ends = deadline.when()
    if ends is None or asyncio.get_running_loop().time() < ends + LATE_TOLERANCE_S:
        return
    if began >= ends:  # started with no time left (the agent used it all): nothing blocked
        raise _PastDeadline("")
    raise _PastDeadline(
        f": the event loop was blocked until it returned, {time.monotonic() - since:.1f}s "
        "into the attempt, so the timeout could not stop it (a runtime or grader must not "
        "block the loop: run blocking work with asyncio.to_thread)"
    )


async def _agent_output(agent: object, ctx: AttemptContext, *, runtime: str) -> AgentOutput:
    """What the agent returns, checked: a runtime's mistake (a plugin's) is said as the
    attempt's error, not found later as an internal error in grading."""
    run = getattr(agent, "run", None)
    if not callable(run):
        raise AgentError(
            f"runtime {runtime!r}: its agent ({type(agent).__name__}) has no "
            "`async def run(self, ctx)`"
        )
    answer = run(ctx)
    if not inspect.isawaitable(answer):
        raise AgentError(
            f"runtime {runtime!r}: run(ctx) returned {type(answer).__name__} at once, "
            "not an awaitable: write it as `async def run(self, ctx)`"
        )
    output = await answer
    if not isinstance(output, AgentOutput):
        raise AgentError(
            f"runtime {runtime!r} returned {type(output).__name__}: expected an AgentOutput "
            "(assay.agents.base)"
        )
    return output


def _keep_traceback(exc: BaseException, artifacts: Path, report_dir: Path) -> str:
    """Write `exc`'s traceback beside the attempt's transcripts; its path in the report."""
    try:
        artifacts.mkdir(parents=True, exist_ok=True)  # the failure may predate it
        trace_file = artifacts / "traceback.txt"
        trace = redact("".join(traceback.format_exception(exc)))  # a report-dir file
        trace_file.write_text(trace, encoding="utf-8")
    except OSError as write_failure:
        raise output_error(write_failure, what=str(artifacts), report_dir=report_dir) from None
    return _relative(trace_file, report_dir)


def grading_phase(run: PlannedRun) -> str:
    """What grades the case, as a timeout names it: `judge`, `checks` or `grading`."""
    return kind_of(run.case).grading_phase


def _left(ends: float) -> float:
    return max(ends - time.monotonic(), 0.0)


def _agent_failure_checks(case: Case, reason: str) -> list[Check]:
    """A task whose agent could not run or finish has every check `blocked` (PVYai)."""
    blocked = kind_of(case).blocked_checks
    return blocked(case.spec, reason) if blocked is not None else []


def _prepare(run: PlannedRun, artifacts: Path, work_root: Path, skill: Path | None) -> Sandbox:
    """The attempt's file-system setup, off the event loop: its directory, its sandbox,
    and what the kind records of it (built or not) before anything else runs."""

    artifacts.mkdir(parents=True, exist_ok=True)
    kind = kind_of(run.case)
    try:
        sandbox = build_sandbox(
            run.case, parent=work_root, skill_override=skill, builder=kind.sandbox
        )
    except SandboxError as exc:
        if kind.record_setup is not None:
            kind.record_setup(artifacts, exc)
        raise
    if kind.record_setup is not None:
        kind.record_setup(artifacts, sandbox)
    return sandbox


def _agent_writes(run: PlannedRun) -> bool:
    """Its agent is a program of its own (an agent command, a CLI preset), which may leave
    any amount behind in the sandbox; the builtin agent's tools only read."""
    spec = runtime_spec(run.runtime)
    return spec is None or spec.runs_agent_command or spec.program is not None


def _kept(sandbox: Sandbox | None, options: RunSettings) -> str | None:
    return str(sandbox.path) if sandbox is not None and options.keep_workspaces else None


def _judge_failure(exc: JudgeError, artifacts: Path, report_dir: Path) -> dict[str, Any]:
    """What the judge said when it broke: the full text beside the transcripts, a taste of
    it in the report (the case is `error`, and the answer is the evidence why)."""
    if exc.raw is None:
        return {"error": str(exc)}
    raw = redact(exc.raw)  # a CI artifact, like the transcripts: the judge may quote a key
    raw_file = artifacts / "judge-raw.txt"
    raw_file.write_text(raw, encoding="utf-8")
    return {
        "error": str(exc),
        "raw": raw[:_RAW_JUDGE_CHARS],
        "raw_file": _relative(raw_file, report_dir),
    }


def _agent_transcript_left(artifacts: Path) -> Path | None:
    """What a command agent or preset CLI did in an attempt that failed: its transcript,
    written whatever became of its answer (None when it never ran)."""
    path = artifacts / AGENT_TRANSCRIPT_FILE
    return path if path.is_file() else None


def _left_activity(transcript: Path | None) -> AgentActivity | None:
    activity = read_activity(transcript) if transcript is not None else None
    try:
        return AgentActivity.model_validate(activity) if activity else None
    except ValueError:  # a summary that does not read as one is left out, not the attempt
        return None


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:  # another drive on Windows
        return str(path)
