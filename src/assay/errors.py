"""Every exception assay raises on purpose.

```
AssayError
├── ConfigError          the user's mistake: exit 2, printed as `path:line:col: message`,
│                        never with a traceback
│   └── ConfigErrors     several of them at once (validation reports every problem, not the first)
├── OutputError          assay could not write its own files (full disk, read-only or gone
│                        report directory): exit 4, one line, what was streamed stays resumable
└── RunError             a case could not be run or graded: that case is `error`, the others go on
    ├── SandboxError     the git sandbox could not be built (bad diff, unsafe tarball, git failed)
    │   └── WorkspaceSetupError  a task fixture PVYai's harness cannot set up (its baseline
    │                    commit fails): `harness_error` is what PVYai reports
    ├── AgentError       the agent under test crashed, timed out, or gave unreadable output
    ├── JudgeError       the judge failed or answered outside its schema (after one retry)
    ├── ModelError       the model API failed after every retry
    ├── AttemptTimeout   --timeout ran out, in the agent, the judge or the checks (named)
    └── ModelUnavailable the model cannot be called in this run (no credentials, --offline cache
                         miss, budget spent): the case is `skipped` with this reason, not `error`
```

Anything else escaping to the CLI is a bug in assay and is shown with its traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from assay.core.positions import SourcePosition

if TYPE_CHECKING:
    from assay.core.usage import Usage

__all__ = [
    "AgentError",
    "AssayError",
    "AttemptTimeout",
    "ConfigError",
    "ConfigErrors",
    "JudgeError",
    "ModelError",
    "ModelUnavailable",
    "OutputError",
    "RunError",
    "SandboxError",
    "SourcePosition",
    "WorkspaceSetupError",
    "output_error",
]


class AssayError(Exception):
    """Base of every error assay raises deliberately."""


class ConfigError(AssayError):
    """A mistake in the user's input: suites, fixtures, options, environment."""

    def __init__(self, message: str, location: SourcePosition | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class ConfigErrors(ConfigError):
    """Several configuration errors found in one pass, reported together."""

    def __init__(self, errors: Iterable[ConfigError]) -> None:
        self.errors = list(errors)
        self.warnings: tuple[ConfigError, ...] = ()
        """Found in the same pass (unknown keys): shown beside the errors."""
        super().__init__("\n".join(str(e) for e in self.errors))

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


class OutputError(AssayError):
    """assay itself could not write a file it owns (results stream, report, artifacts)."""

    def __init__(self, message: str, *, report_dir: Path | None = None) -> None:
        super().__init__(message)
        self.report_dir = report_dir
        """The report directory of the run, when there was one: `--resume` continues it."""


def output_error(exc: OSError, *, what: str, report_dir: Path | None = None) -> OutputError:
    """`cannot write <file>: No space left on device` from the OSError a write raised."""
    target = exc.filename if exc.filename is not None else what
    reason = exc.strerror or str(exc) or type(exc).__name__
    return OutputError(f"cannot write {target}: {reason}", report_dir=report_dir)


class RunError(AssayError):
    """A case could not be run or graded; the case is reported as `error`.

    `usage` is what the failed part had spent when it failed, where known: paid for all the
    same, so the attempt reports it and `--max-cost` counts it."""

    usage: Usage | None = None


class SandboxError(RunError):
    """The case's git sandbox could not be built."""


class WorkspaceSetupError(SandboxError):
    """A task's workspace cannot be set up as PVYai sets it up (its fixture copied, `git
    init`, `git add .`, `git commit -m baseline`): PVYai's task is then an `error`, and so
    is assay's. The message says why in assay's words; `harness_error` is the failure as
    PVYai's materialiser reports it (git's own words, where they are known)."""

    def __init__(self, message: str, *, harness_error: str = "") -> None:
        super().__init__(message)
        self.harness_error = harness_error or message


class AgentError(RunError):
    """The agent under test failed: crash, timeout, missing executable, unreadable output."""

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class JudgeError(RunError):
    """The judge could not produce a valid verdict. `raw` keeps what it said, `usage` what
    the failed calls cost (they are paid for all the same)."""

    def __init__(self, message: str, raw: str | None = None, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.usage = usage


class ModelError(RunError):
    """A model API call failed after every retry."""


class AttemptTimeout(RunError):
    """`--timeout` ran out: the message names the part of the attempt that was running,
    `usage` what the attempt had spent by then."""

    def __init__(self, message: str, *, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage


class ModelUnavailable(RunError):
    """The model cannot be called in this run; the case is skipped with this message as reason."""
