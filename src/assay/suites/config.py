"""Project configuration: `[tool.assay]` in pyproject.toml, or a top-level `assay.toml`.

The nearest file walking up from the start directory wins (`assay.toml` before
`pyproject.toml` in the same directory; a pyproject.toml without `[tool.assay]` is passed
over). Paths in it are relative to the file's directory. Its run options rank below
the command line and `ASSAY_*` and above a suite's (`runner/settings.py` applies them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay._util.paths import resolve_inside
from assay.errors import ConfigError, ConfigErrors, SourcePosition
from assay.suites.command import read_agent_command
from assay.suites.validation import describe, did_you_mean
from assay.suites.wire_common import AgentCommandValue, Runtime

__all__ = ["AssayConfig", "ConfigFile", "load_config"]


class ConfigFile(BaseModel):
    """The `[tool.assay]` table (or `assay.toml`)."""

    # Built on first use: most runs have no configuration file to validate.
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)
    root: str | None = None
    """The eval root, relative to this file (default: the directory given on the command line)."""
    paths: list[str] = []
    """Default suite paths, relative to this file, used when no PATH is given."""
    agent_command: AgentCommandValue | None = None
    """Default agent command; an argv element starting with `./` is relative to this file."""
    runtime: Runtime | None = None
    """Default runtime."""
    model: str | None = None
    """Default subject model."""
    judge_model: str | None = None
    """Default judge model."""
    threshold: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    """Gate threshold for the aggregate score."""
    concurrency: Annotated[int, Field(ge=1)] | None = None
    """Cases run at once."""
    max_errors: Annotated[int, Field(ge=0)] | None = None
    """Errored cases tolerated before the gate fails."""
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    """Per-attempt limit in seconds (agent, judge and checks); beats a suite's `timeoutMs`."""
    require_all: bool | None = None
    """A skipped case (no key, an --offline cache miss) fails the gate."""
    gate: Literal["threshold", "regression"] | None = None
    """The gate's mode: against the threshold, or against a baseline report."""
    inconclusive: Literal["score", "fail", "pass", "neutral"] | None = None
    """What an interval straddling the threshold makes the gate (default score)."""
    errors_count_as: Literal["skip", "fail"] | None = None
    """Whether the gate's score counts errors as misses (default skip)."""
    hidden_changes: Literal["warn", "fail"] | None = None
    """A task whose agent hid changes from git status: warn (default) or fail it."""
    floor: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    """The regression gate's absolute lowest score."""
    quarantine: list[str] = []
    """Case ids (`suite/case`) that run and are reported but are kept out of the gate."""
    affects_all: list[str] = []
    """Globs (repository-relative) whose change makes `--affected-by` run every case."""
    report_dir: str | None = None
    """Where reports are written, relative to this file."""
    scaffold_without_license: bool | None = None
    """`assay scaffold` copies no license (this repository's code is under none)."""
    isolation: Literal["auto", "bwrap", "none"] | None = None
    """OS sandbox for agents and verification commands (default auto)."""
    agent_network: bool | None = None
    """Whether agents may use the network inside the sandbox (default true)."""
    command_network: bool | None = None
    """Whether verification commands may use the network inside the sandbox (default true)."""
    pass_env: list[str] = []
    """Credential-shaped variables that verification commands may see after all."""
    sandbox_max_processes: int | str | None = None
    """Processes and threads a sandbox may hold at once (default 4096; `unlimited`)."""
    sandbox_max_file_size: int | str | None = None
    """The largest file a sandboxed program may write: bytes, or `512M`, `4G`, `unlimited`
    (default 4G)."""
    sandbox_tmp_size: int | str | None = None
    """The cap of each of a sandbox's private /tmp and HOME, in RAM (default 4G)."""
    graders: list[str] = []
    """User graders run on every case after its own grading: names registered in the
    `assay.graders` entry point group, or `module:function` (found beside this file)."""


@dataclass(frozen=True)
class AssayConfig:
    """A loaded configuration; paths are absolute."""

    path: Path
    """The pyproject.toml or assay.toml it came from."""
    root: Path | None = None
    paths: tuple[Path, ...] = ()
    agent_command: tuple[str, ...] | None = None
    runtime: str | None = None
    model: str | None = None
    judge_model: str | None = None
    threshold: float | None = None
    concurrency: int | None = None
    max_errors: int | None = None
    timeout: float | None = None
    require_all: bool | None = None
    gate: str | None = None
    inconclusive: str | None = None
    errors_count_as: str | None = None
    hidden_changes: str | None = None
    floor: float | None = None
    quarantine: tuple[str, ...] = ()
    affects_all: tuple[str, ...] = ()
    report_dir: Path | None = None
    scaffold_without_license: bool = False
    isolation: str | None = None
    agent_network: bool | None = None
    command_network: bool | None = None
    pass_env: tuple[str, ...] = ()
    sandbox_limits: Mapping[str, int] = field(default_factory=dict)
    """The `sandbox_*` keys set, as `assay.isolation.limits.Limits` fields -> their values."""
    graders: tuple[str, ...] = ()
    warnings: tuple[ConfigError, ...] = ()
    """Unknown keys (errors under `--strict`)."""


def load_config(start: Path) -> AssayConfig | None:
    """The configuration governing `start` (a file or directory), or None when there is none."""
    here = Path(os.path.abspath(start))
    if not here.is_dir():
        here = here.parent
    for directory in (here, *here.parents):
        dedicated = directory / "assay.toml"
        if dedicated.is_file():
            return _load(dedicated, _parse_toml(dedicated), table=None)
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            data = _parse_toml(pyproject)
            tool = data.get("tool")
            if isinstance(tool, dict) and "assay" in tool:
                return _load(pyproject, tool["assay"], table="tool.assay")
    return None


def _parse_toml(path: Path) -> dict[str, Any]:
    # lazy: start-up (tomllib only on this path)
    import tomllib  # only when there is a file to read: about 4 ms of start-up

    try:
        with path.open("rb") as stream:
            return tomllib.load(stream)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line, col = (int(match[1]), int(match[2])) if match else (0, 0)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(f"malformed TOML: {message}", SourcePosition(path, line, col)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read configuration: {exc}", SourcePosition(path)) from None


def _load(path: Path, data: Any, *, table: str | None) -> AssayConfig:
    text = path.read_text(encoding="utf-8", errors="replace")
    if not isinstance(data, dict):
        raise ConfigError("[tool.assay] must be a table", _key_location(path, text, table, None))
    try:
        return _resolve(path, text, table, ConfigFile.model_validate(data), ())
    except ValidationError as exc:
        problems = exc.errors(include_url=False)
    errors: list[ConfigError] = []
    warnings: list[ConfigError] = []
    cleaned = dict(data)
    for error in problems:
        key = error["loc"][0] if error["loc"] else None
        where = _key_location(path, text, table, key)
        if error["type"] == "extra_forbidden":
            guess = did_you_mean(key, ConfigFile.model_fields)
            warnings.append(ConfigError(f"unknown configuration key {key!r}{guess}", where))
            cleaned.pop(key, None)
        else:
            errors.append(ConfigError(describe(error, tuple(error["loc"])), where))
    if errors:
        failure = ConfigErrors(errors)
        # Said too, as warnings: one pass shows everything wrong with the file.
        failure.warnings = tuple(warnings)
        raise failure
    return _resolve(path, text, table, ConfigFile.model_validate(cleaned), tuple(warnings))


def _resolve(
    path: Path, text: str, table: str | None, model: ConfigFile, warnings: tuple[ConfigError, ...]
) -> AssayConfig:
    base = path.parent.resolve()

    def inside(key: str, raw: str) -> Path:
        if os.path.normpath(raw) == ".":
            return base
        return resolve_inside(base, raw, location=_key_location(path, text, table, key))

    agent_command = None
    if model.agent_command is not None:
        where = _key_location(path, text, table, "agent_command")
        try:
            agent_command, typos = read_agent_command(model.agent_command, base_dir=base)
        except ValueError as exc:
            raise ConfigError(f"agent_command: {exc}", where) from None
        warnings += tuple(ConfigError(f"agent_command: {typo}", where) for typo in typos)
    if model.graders:
        # lazy: start-up (not loaded with this module)
        from assay.registry.graders import grader_problem

        for reference in model.graders:
            problem = grader_problem(reference, project_dir=base)
            if problem is not None:
                raise ConfigError(problem, _key_location(path, text, table, "graders"))
    root = inside("root", model.root) if model.root is not None else None
    if root is not None and not root.is_dir():
        # Said here, not later as every skill and fixture "not found under" a missing root.
        where = _key_location(path, text, table, "root")
        raise ConfigError(f"root {model.root!r} is not a directory under {base}", where)
    return AssayConfig(
        path=path.resolve(),
        root=root,
        paths=tuple(inside("paths", p) for p in model.paths),
        agent_command=agent_command,
        runtime=model.runtime,
        model=model.model,
        judge_model=model.judge_model,
        threshold=model.threshold,
        concurrency=model.concurrency,
        max_errors=model.max_errors,
        timeout=model.timeout,
        require_all=model.require_all,
        gate=model.gate,
        inconclusive=model.inconclusive,
        errors_count_as=model.errors_count_as,
        hidden_changes=model.hidden_changes,
        floor=model.floor,
        quarantine=tuple(model.quarantine),
        affects_all=tuple(model.affects_all),
        # An output location, not an input to confine: absolute paths are fine.
        report_dir=base / model.report_dir if model.report_dir else None,
        scaffold_without_license=bool(model.scaffold_without_license),
        isolation=model.isolation,
        agent_network=model.agent_network,
        command_network=model.command_network,
        pass_env=tuple(model.pass_env),
        sandbox_limits=_sandbox_limits(model, lambda key: _key_location(path, text, table, key)),
        graders=tuple(model.graders),
        warnings=warnings,
    )


def _sandbox_limits(model: ConfigFile, where: Callable[[str], SourcePosition]) -> dict[str, int]:
    # lazy: start-up (not loaded with this module)
    from assay.isolation.limits import LIMIT_VARIABLES, parse_limit

    found = {}
    for name in LIMIT_VARIABLES:
        raw = getattr(model, f"sandbox_{name}")
        if raw is not None:
            found[name] = parse_limit(name, str(raw), label=f"sandbox_{name}", where=where)
    return found


def _key_location(path: Path, text: str, table: str | None, key: object) -> SourcePosition:
    """Best-effort line of `key = ...` inside `table` (tomllib reports no positions)."""
    in_table = table is None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_table = table is not None and stripped.strip("[] \t") == table
            if in_table and key is None:
                return SourcePosition(path, number, 1)
            continue
        if in_table and key is not None and re.match(rf"{re.escape(str(key))}\s*=", stripped):
            return SourcePosition(path, number, line.index(stripped) + 1)
    return SourcePosition(path)
