"""Running the project's own Python graders outside assay's process, confined.

A `module:attribute` grader named in `[tool.assay] graders`, `assay.toml` or a suite is a
file of the repository under test: a pull request can change it. Imported in assay's
process it would read the CI job's tokens and the model key, and write `$GITHUB_ENV`. So
it runs as verification commands run: a child process (`assay.grading.grader_child`, whose
docstring holds the protocol: one JSON document each way) in their OS sandbox, with their
scrubbed environment, within a timeout, its answer bounded and validated here. Of the
project it is shown its own module or package, never `.git`.

This module starts the child and reads its answer; `grading/confined_graders.py` grades a
case with it. Checking a reference while suites load (`assay validate`, before any run's
sandbox exists) uses a sandbox of its own (the checkout and HOME masked, nothing
writable, no network, only the module's `.py` files shown); where bwrap does not work, a
child with the scrubbed environment. Graders installed as packages (the `assay.graders`
entry point group) and ones a library caller registers run in assay's process: they are
the job's own environment, not the pull request's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from assay._util.secrets import scrubbed_environ
from assay.core.checks import Check
from assay.isolation.bwrap import Confinement, _python_paths, checkout_root, probe_bwrap
from assay.isolation.exposure import ALWAYS_MASKED
from assay.isolation.limits import find_prlimit
from assay.isolation.processes import LaunchError, run_command

if TYPE_CHECKING:
    from assay.isolation.bwrap import Confinement
    from assay.isolation.exposure import Exposure

__all__ = [
    "ANSWER_CAP_BYTES",
    "ChildAnswer",
    "ChildOutcome",
    "child_argv",
    "module_files",
    "project_grader_problem",
    "run_grader_child",
]

ANSWER_CAP_BYTES = 4 * 1024 * 1024
"""A confined grader's answer (stdout) longer than this is an error, not read."""
_LOG_CAP_BYTES = 1024 * 1024
_CHECK_TIMEOUT_S = 60.0
"""How long importing a grader to check it may take while suites load."""
_ASSAY_PACKAGE = Path(os.path.realpath(__file__)).parents[1]
"""assay's own package directory, which the child imports its side from."""
_MAX_MODULE_FILES = 256
"""Files of a grader's package shown to it, one mount each."""


class ChildAnswer(BaseModel):
    """What the child answers (`grader_child`): exactly one field set, or none after a check."""

    model_config = ConfigDict(extra="forbid")
    problem: str | None = None
    error: str | None = None
    checks: list[Check] | None = None


@dataclasses.dataclass(frozen=True)
class ChildOutcome:
    answer: ChildAnswer | None
    failure: str = ""
    """Why there is no answer: `crashed (exit code 1): ...`, `did not answer within 5s`."""


def child_argv() -> list[str]:
    """assay's interpreter running `grader_child.main`, isolated (`-I`: no PYTHONPATH, no
    current directory on the import path, no user site), assay's own package first."""
    root = str(_ASSAY_PACKAGE.parent)
    code = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from assay.grading.grader_child import main; main()"
    )
    return [sys.executable, "-I", "-c", code]


def _import_path(masked: Sequence[Path]) -> list[str]:
    """This process's import path for the child (installed packages), without the current
    directory and anything in or around a masked directory that holds a run's own files (a
    checkout, the report dir, the work root). HOME, /tmp and /run are masked for privacy
    alone: a package the job installed under them (a virtualenv or a PYTHONPATH entry in
    /tmp, a `pip --user` site under HOME) stays importable, read-only."""
    home = os.environ.get("HOME", "")
    generic = {*ALWAYS_MASKED, *([Path(os.path.realpath(home))] if os.path.isabs(home) else [])}
    specific = [m for m in masked if m not in generic]
    kept = []
    for entry in sys.path:
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        real = Path(os.path.realpath(entry))
        if any(real.is_relative_to(m) or m.is_relative_to(real) for m in specific):
            continue
        kept.append(str(real))
    return kept


def module_files(reference: str, project_dir: Path, *, python_only: bool) -> list[Path]:
    """The files of the grader's top-level module or package under `project_dir` (at most
    `_MAX_MODULE_FILES`), never in `.git` or `__pycache__`; `.py` files alone when
    `python_only`. What of them the child is shown is decided by the caller (a run's
    `Exposure` shows only what git tracks)."""
    top = reference.partition(":")[0].split(".")[0]
    if not top.isidentifier():
        return []
    base = Path(os.path.realpath(project_dir))
    package, module = base / top, base / f"{top}.py"
    if package.is_dir() and not package.is_symlink():
        files: list[Path] = []
        for folder, dirs, names in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__"))
            files += [Path(folder) / name for name in sorted(names)]
    elif module.is_file():
        files = [module]
    else:
        return []
    kept = [
        f
        for f in files
        if f.is_file() and not f.is_symlink() and (f.suffix == ".py" or not python_only)
    ]
    return kept[:_MAX_MODULE_FILES]


def _shown(
    confinement: Confinement, reference: str, project_dir: Path, exposure: Exposure | None
) -> Confinement:
    """`confinement` showing also what the grader's child needs: assay's package, the
    installed packages, and the grader's own files: those `exposure` (a run's) may show of
    its checkout (tracked, no suite file or fixture), else its `.py` files."""
    files = module_files(reference, project_dir, python_only=exposure is None)
    if exposure is not None:
        named = [str(f) for f in files]
        files = exposure.named_files(named, confinement.masked, writable=confinement.writable)
    extra = [
        _ASSAY_PACKAGE,
        *(Path(p) for p in _import_path(confinement.masked)),
        *files,
    ]
    return dataclasses.replace(confinement, exposed=(*confinement.exposed, *extra))


def _request(reference: str, project_dir: Path, context: dict[str, Any] | None) -> bytes:
    masked = (Path(os.path.realpath(project_dir)),)
    sys_path = [str(_ASSAY_PACKAGE.parent), *_import_path(masked)]
    request = {
        "reference": reference,
        "project_dir": str(project_dir),
        "sys_path": sys_path,
        "context": context,
    }
    return json.dumps(request).encode()


async def run_grader_child(
    reference: str,
    project_dir: Path,
    context: dict[str, Any] | None,
    *,
    cwd: Path,
    confinement: Confinement | None,
    exposure: Exposure | None = None,
    timeout_s: float,
    env: dict[str, str],
) -> ChildOutcome:
    """The child's answer for `reference` (`context` None: only check it), or why there is
    none (a crash, a timeout, an answer over the cap or not valid)."""

    argv = child_argv()
    if confinement is not None:
        confinement = _shown(confinement, reference, project_dir, exposure)
    with tempfile.TemporaryDirectory(prefix="assay-grader-") as scratch:
        answer_file, log_file = Path(scratch) / "answer.json", Path(scratch) / "stderr.log"
        try:
            result = await run_command(
                argv,
                cwd=cwd,
                env=env,
                timeout_s=timeout_s,
                stdout_path=answer_file,
                stderr_path=log_file,
                max_capture_bytes=max(ANSWER_CAP_BYTES, _LOG_CAP_BYTES) + 1,
                isolation=confinement,
                stdin=_request(reference, project_dir, context),
            )
        except LaunchError as exc:
            return ChildOutcome(None, f"could not start: {exc}")
        said = result.stderr_tail.strip().splitlines()
        last = f": {said[-1].strip()}" if said else ""
        if result.timed_out:
            return ChildOutcome(None, f"did not answer within {timeout_s:g}s")
        if result.stopped:
            return ChildOutcome(None, result.stopped)
        if result.exit_code != 0:
            return ChildOutcome(None, f"crashed (exit code {result.exit_code}){last}")
        if answer_file.stat().st_size > ANSWER_CAP_BYTES:
            return ChildOutcome(None, f"answered more than {ANSWER_CAP_BYTES} bytes")
        raw = answer_file.read_bytes()
    try:
        return ChildOutcome(ChildAnswer.model_validate_json(raw))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        return ChildOutcome(None, f"gave an invalid answer ({where}: {first['msg']})")


def _bwrap_confinement(project_dir: Path) -> Confinement | None:
    """A sandbox for checking a grader while suites load (no run's sandbox exists yet): the
    project's checkout and HOME masked, nothing writable, no network."""

    bwrap = _working_bwrap()
    if bwrap is None:
        return None
    masked = {checkout_root(project_dir)}
    home = os.environ.get("HOME", "")
    inner_home = "/tmp/home"
    if home and os.path.isabs(home) and os.path.isdir(home) and home != "/":
        masked.add(Path(os.path.realpath(home)))
        inner_home = os.path.realpath(home)
    return Confinement(
        bwrap=bwrap,
        writable=(),
        masked=tuple(sorted(masked)),
        exposed=tuple(_python_paths()),
        network=False,
        home=inner_home,
        prlimit=find_prlimit(),
    )


@functools.cache
def _working_bwrap() -> str | None:

    return probe_bwrap()[0]


@functools.cache
def project_grader_problem(reference: str, project_dir: Path) -> str | None:
    """Why the project's grader `reference` names no usable grader, or None: imported and
    checked in a confined child, never in this process."""

    confinement = _bwrap_confinement(project_dir)
    run = run_grader_child(
        reference,
        project_dir,
        None,
        cwd=project_dir,
        confinement=confinement,
        timeout_s=_CHECK_TIMEOUT_S,
        env=scrubbed_environ(),
    )
    outcome = _in_own_loop(run)
    if outcome.answer is None:
        return f"grader {reference!r} (run confined to be checked) {outcome.failure}"
    return outcome.answer.problem


def _in_own_loop(coroutine: Any) -> Any:
    """Run `coroutine` to its end from synchronous code, even under a running event loop
    (suites load inside `assay run`'s loop): in a thread of its own."""
    box: dict[str, Any] = {}

    def main() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=main, name="assay-grader-check")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
