"""Run options: what a run is asked to do (`RunOptions`) and what it then does (`RunSettings`).

```python
import assay

report = assay.run(assay.RunOptions(paths=("evals",), threshold=0.8))
```

A `RunOptions` field left at `None` (or an empty tuple) was not given. The runner then
decides it, the same way for `assay.run()` and `assay run` (`runner/settings.py`), and
the first of these that has a value wins:

    the option given (a RunOptions field, or what was typed on the command line)
    > the environment (`ASSAY_<OPTION>`: `--max-errors` reads ASSAY_MAX_ERRORS)
    > `[tool.assay]` in pyproject.toml (or assay.toml)
    > the suite (a Warden harness's `timeoutMs`, a `_suite.yaml`'s `timeout_ms`)
    > the default below.

Models, runtime, agent command and judge model are decided per case (`runner/resolve.py`).
`RunSettings` is the decided form every component of a run receives: every option set,
and `sources` saying where each value came from. This module imports nothing heavy: the
command line reads it at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assay.core.numbers import read_number

if TYPE_CHECKING:
    from assay.isolation.bwrap import IsolationMode, Sandboxing

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_ERRORS",
    "DEFAULT_REPEAT",
    "DEFAULT_REPORT_DIR",
    "DEFAULT_THRESHOLD",
    "DEFAULT_TIMEOUT_S",
    "HISTORY_KEEP_VARIABLE",
    "RunOptions",
    "RunSettings",
]

HISTORY_KEEP_VARIABLE = "ASSAY_HISTORY_KEEP"
"""How many runs the run history keeps (report/history.py): read from the environment only,
as no option sets it (ASSAY_HISTORY is the `--history` option's)."""

DEFAULT_CONCURRENCY = 8
DEFAULT_REPEAT = 1
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_THRESHOLD = 0.75
DEFAULT_MAX_ERRORS = 0
DEFAULT_REPORT_DIR = Path("assay-report")


@dataclass(frozen=True)
class RunOptions:
    """What a run is asked to do; None / empty / False = not given (see the module docstring)."""

    paths: tuple[str, ...] = ()
    """Suite files or directories; empty = `[tool.assay] paths`, else `.`."""
    root: Path | None = None
    """`--root`: the eval root, beating `[tool.assay] root`."""
    patterns: tuple[str, ...] = ()
    """`-t` selections: substring or glob on case ids."""
    models: tuple[str, ...] = ()
    """Subject model matrix; empty = each case's own model, else the default model."""
    judge_model: str | None = None
    """None = the configured judge model, else the subject's model."""
    runtime: str | None = None
    """Forces a runtime for review/verify/rubric cases; task cases always use `command`."""
    agent_command: tuple[str, ...] | str | None = None
    """The agent's argv template; a string is split as a shell would (`./x` = beside the cwd)."""
    skill: Path | None = None
    """A skill file overriding the suites' skill."""
    concurrency: int | None = None
    """Attempts in flight (default 8, task cases one at a time beside them; given here,
    in `ASSAY_CONCURRENCY` or `[tool.assay]`, it applies to task cases too)."""
    repeat: int | Literal["auto"] | None = None
    """Attempts per case (default 1); `auto`: once each, then more only where they can
    change the gate (runner/adaptive.py), up to `max_repeat`."""
    max_repeat: int | None = None
    """The most attempts `repeat="auto"` gives a case (default 5)."""
    min_pass: int | None = None
    """A case passes only when at least this many of its `repeat` attempts pass (default:
    every scored attempt must pass, its score their mean)."""
    timeout_s: float | None = None
    """Per-attempt limit in seconds (default: the suite's harness timeout, else 600)."""
    threshold: float | None = None
    """The gate's score (default 0.75)."""
    max_errors: int | None = None
    """Errored cases the gate tolerates (default 0)."""
    max_cost_usd: float | None = None
    """Stop starting cases once the estimated spend reaches this (default: no limit)."""
    require_all: bool | None = None
    """A skipped case (no key, a cache miss) fails the gate (default false)."""
    gate: Literal["threshold", "regression"] | None = None
    """The gate's mode (default threshold; regression needs `baseline` or `floor`)."""
    inconclusive: Literal["score", "fail", "pass", "neutral"] | None = None
    """What an interval straddling the threshold makes the gate (default score)."""
    errors_count_as: Literal["skip", "fail"] | None = None
    """Whether the gate's score counts errors as misses (default skip)."""
    hidden_changes: Literal["warn", "fail"] | None = None
    """A task whose agent hid changes from git status (its own ignore rules): `warn`
    (default: PVYai's verdict, with a warning in every output) or `fail` the task."""
    floor: float | None = None
    """The regression gate's absolute lowest score."""
    baseline: Path | None = None
    """The report.json a regression gate compares with."""
    quarantine: tuple[str, ...] = ()
    """Case ids kept out of the gate; joined with `[tool.assay] quarantine`."""
    affected_by: str | None = None
    """Run only the cases whose inputs changed since this git ref (runner/affected.py)."""
    affects_all: tuple[str, ...] = ()
    """Globs of paths whose change selects every case; joined with `[tool.assay] affects_all`."""
    report_dir: Path | str | None = None
    """Where the report directory is written (default `assay-report`)."""
    history_dir: Path | None = None
    """Where the run history is kept (default `.assay-history` beside the report directory)."""
    work_root: Path | None = None
    """Where sandboxes are made (default: a temp dir); never inside a fixture."""
    keep_workspaces: bool | None = None
    dry_run: bool | None = None
    """Build every selected sandbox and keep it; run no agent, write no report."""
    shard: tuple[int, int] | str | None = None
    """(index, count), 1-based index, or `"I/N"`."""
    cache_dir: Path | None = None
    offline: bool | None = None
    bridge: bool | None = None
    """A preset's model calls through assay's model bridge (`assay.bridge`); default on."""
    resume_dir: Path | None = None
    strict: bool | None = None
    pvyai_report: bool | None = None
    judge_prompt: Literal["assay", "cassandra"] | None = None
    """The rubric judge's prompt; None = the format's own (Cassandra's for Cassandra suites)."""
    cassandra_report: bool | None = None
    inspect_log: bool | None = None
    """Also write the run as an inspect eval log (inspect-log.json)."""
    json_output: bool | None = None
    """The command line prints report.json on stdout (the library ignores it)."""
    extra_env: dict[str, str] = field(default_factory=dict)
    isolation: IsolationMode | None = None
    """The OS sandbox for agents and verification commands: auto (default) | bwrap | none."""
    agent_network: bool | None = None
    command_network: bool | None = None
    pass_env: tuple[str, ...] = ()
    """Credential-shaped variables verification commands may see after all (`--pass-env`);
    joined with the environment's and `[tool.assay]`'s, not replacing them."""
    sandboxing: Sandboxing | None = None
    """`isolation` resolved by the runner at the start of a run (None: nothing sandboxed)."""


@dataclass(frozen=True)
class RunSettings(RunOptions):
    """The options a run uses: every one decided (`runner.settings.resolve_settings`)."""

    agent_command: tuple[str, ...] | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    repeat: int = DEFAULT_REPEAT  # type: ignore[assignment]
    """Attempts per case; with `adaptive`, the most a case gets (`--max-repeat`)."""
    adaptive: bool = False
    """`--repeat auto`: attempts after the first are given where they can change the gate."""
    selection: str | None = None
    """Why these cases were selected (`--affected-by`); None when every case was."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """The run-wide timeout; a case's own (`runner.resolve.case_timeout`) applies when this
    one is the default."""
    threshold: float = DEFAULT_THRESHOLD
    max_errors: int = DEFAULT_MAX_ERRORS
    require_all: bool = False
    gate: Literal["threshold", "regression"] = "threshold"
    inconclusive: Literal["score", "fail", "pass", "neutral"] = "score"
    errors_count_as: Literal["skip", "fail"] = "skip"
    hidden_changes: Literal["warn", "fail"] = "warn"
    report_dir: Path = DEFAULT_REPORT_DIR
    keep_workspaces: bool = False
    dry_run: bool = False
    shard: tuple[int, int] | None = None
    offline: bool = False
    bridge: bool = True
    strict: bool = False
    pvyai_report: bool = False
    cassandra_report: bool = False
    inspect_log: bool = False
    json_output: bool = False
    isolation: IsolationMode = "auto"
    agent_network: bool = True
    command_network: bool = True
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Where each option's value came from: `option`, an `ASSAY_*` variable, the
    configuration file, or `default`."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """What deciding them found worth saying (a mistyped agent-command placeholder)."""


# -- the environment ----------------------------------------------------------------------------

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

ENV_OPTIONS: tuple[tuple[str, str, str], ...] = (
    # (RunOptions field, command-line flag, how its ASSAY_* text reads)
    ("root", "--root", "path"),
    ("patterns", "--test", "text"),
    ("models", "--model", "text"),
    ("judge_model", "--judge-model", "text"),
    ("runtime", "--runtime", "choice"),
    ("agent_command", "--agent-command", "text"),
    ("skill", "--skill", "path"),
    ("concurrency", "--concurrency", "int"),
    ("repeat", "--repeat", "repeat"),
    ("max_repeat", "--max-repeat", "int"),
    ("min_pass", "--min-pass", "int"),
    ("timeout_s", "--timeout", "float"),
    ("threshold", "--threshold", "float"),
    ("max_errors", "--max-errors", "int"),
    ("require_all", "--require-all", "flag"),
    ("gate", "--gate", "choice"),
    ("inconclusive", "--inconclusive", "choice"),
    ("errors_count_as", "--errors-count-as", "choice"),
    ("hidden_changes", "--hidden-changes", "choice"),
    ("floor", "--floor", "float"),
    ("baseline", "--baseline", "path"),
    ("quarantine", "--quarantine", "text"),
    ("affected_by", "--affected-by", "text"),
    ("affects_all", "--affects-all", "text"),
    ("max_cost_usd", "--max-cost", "float"),
    ("report_dir", "--report-dir", "path"),
    ("history_dir", "--history", "path"),
    ("work_root", "--work-root", "path"),
    ("keep_workspaces", "--keep-workspaces", "flag"),
    ("dry_run", "--dry-run", "flag"),
    ("json_output", "--json", "flag"),
    ("shard", "--shard", "text"),
    ("cache_dir", "--cache", "path"),
    ("offline", "--offline", "flag"),
    ("bridge", "--bridge", "on_off"),
    ("resume_dir", "--resume", "path"),
    ("pvyai_report", "--pvyai-report", "flag"),
    ("judge_prompt", "--judge-prompt", "choice"),
    ("cassandra_report", "--cassandra-report", "flag"),
    ("inspect_log", "--inspect-log", "flag"),
    ("strict", "--strict", "flag"),
    ("isolation", "--isolation", "choice"),
    ("agent_network", "--agent-network", "on_off"),
    ("command_network", "--command-network", "on_off"),
    ("pass_env", "--pass-env", "text"),
)
OPTION_CHOICES: dict[str, tuple[str, ...]] = {
    "gate": ("threshold", "regression"),
    "inconclusive": ("score", "fail", "pass", "neutral"),
    "errors_count_as": ("skip", "fail"),
    "hidden_changes": ("warn", "fail"),
    "judge_prompt": ("assay", "cassandra"),
    "isolation": ("auto", "bwrap", "none"),
    "agent_network": ("on", "off"),
    "bridge": ("on", "off"),
    "command_network": ("on", "off"),
}


def env_name(flag: str) -> str:
    """The variable an option also reads: `--max-errors` -> `ASSAY_MAX_ERRORS`."""
    return "ASSAY_" + flag.lstrip("-").upper().replace("-", "_")


def run_option_variables() -> tuple[str, ...]:
    """Every `ASSAY_<OPTION>` variable a run reads, for `assay.run()` and `assay run` alike."""
    return tuple(env_name(flag) for _, flag, _ in ENV_OPTIONS)


def env_flag(name: str, value: str) -> bool:
    """An `ASSAY_*` switch: 1/0, true/false, yes/no, on/off (any case)."""
    word = value.strip().lower()
    if word not in _TRUE | _FALSE:
        from assay.errors import ConfigError  # lazy: start-up (not loaded with this module)

        raise ConfigError(f"{name}={value!r}: expected 1/0, true/false, yes/no or on/off")
    return word in _TRUE


def env_number(name: str, value: str, kind: type[int] | type[float]) -> int | float:
    try:
        return read_number(value, kind)
    except ValueError as exc:
        from assay.errors import ConfigError  # lazy: start-up (not loaded with this module)

        raise ConfigError(f"{name}={value!r}: {exc}") from None


def env_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        from assay.errors import ConfigError  # lazy: start-up (not loaded with this module)

        raise ConfigError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return value


def options_from_environ(
    environ: Mapping[str, str], *, runtime_problem: Callable[[str], str | None] | None = None
) -> dict[str, tuple[object, str]]:
    """Every run option an `ASSAY_*` variable sets: field -> (value, variable name).

    The one reader of those variables, for `assay.run()` and `assay run` alike. An empty
    variable is not set. A value the option would refuse is a ConfigError naming the
    variable. `runtime_problem` says why a runtime name is unknown (None: not checked here).
    Values stay raw where the runner parses them as it parses a given one (models, agent
    command, shard, `-t`, pass-env).
    """
    found: dict[str, tuple[object, str]] = {}
    for field_name, flag, how in ENV_OPTIONS:
        name = env_name(flag)
        text = environ.get(name)
        if not text:
            continue
        value: object
        if how == "path":
            value = Path(text)
        elif how == "int" or (how == "repeat" and text != "auto"):
            value = env_number(name, text, int)
        elif how == "float":
            value = env_number(name, text, float)
        elif how == "flag":
            value = env_flag(name, text)
        elif how == "on_off":
            value = env_choice(name, text, OPTION_CHOICES[field_name]) == "on"
        elif how == "choice":
            if field_name == "runtime":
                problem = runtime_problem(text) if runtime_problem else None
                if problem:
                    # lazy: start-up (not loaded with this module)
                    from assay.errors import ConfigError

                    raise ConfigError(f"{name}={text!r}: {problem}")
                value = text
            else:
                value = env_choice(name, text, OPTION_CHOICES[field_name])
        else:
            value = text
        found[field_name] = (value, name)
    return found
