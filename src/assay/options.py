"""Run-wide options: what `assay run` (and the Action) decided, shared by every component."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from assay._util.isolation import IsolationMode, Sandboxing

__all__ = ["RunOptions"]


@dataclass(frozen=True)
class RunOptions:
    paths: tuple[str, ...] = ()
    root: Path | None = None
    """`--root`: the eval root, beating `[tool.assay] root`."""
    patterns: tuple[str, ...] = ()
    """`-t` selections: substring or glob on case ids."""
    models: tuple[str, ...] = ()
    """Subject model matrix; empty = each case's own model, else the default model."""
    judge_model: str | None = None
    """None = the subject's model."""
    runtime: str | None = None
    """Forces a runtime for review/verify/rubric cases; task cases always use `command`."""
    agent_command: tuple[str, ...] | None = None
    skill: Path | None = None
    concurrency: int = 8
    repeat: int = 1
    timeout_s: float = 600.0
    threshold: float = 0.75
    max_errors: int = 0
    max_cost_usd: float | None = None
    require_all: bool = False
    """A skipped case (no key, a cache miss) fails the gate."""
    report_dir: Path = Path("assay-report")
    work_root: Path | None = None
    keep_workspaces: bool = False
    dry_run: bool = False
    shard: tuple[int, int] | None = None
    """(index, count), 1-based index."""
    cache_dir: Path | None = None
    offline: bool = False
    resume_dir: Path | None = None
    strict: bool = False
    pvyai_report: bool = False
    judge_prompt: Literal["assay", "cassandra"] | None = None
    """The rubric judge's prompt; None = the format's own (Cassandra's for Cassandra suites)."""
    cassandra_report: bool = False
    json_output: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    isolation: IsolationMode = "auto"
    """The OS sandbox for agents and verification commands: auto|bwrap|none."""
    agent_network: bool = True
    command_network: bool = True
    pass_env: tuple[str, ...] = ()
    """Credential-shaped variables verification commands may see after all (`--pass-env`)."""
    sandboxing: Sandboxing | None = None
    """`isolation` resolved by the runner at the start of a run (None: nothing sandboxed)."""
