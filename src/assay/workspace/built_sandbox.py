"""What a built sandbox is, as every other component sees it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.suites.case import CaseKind
from assay.workspace.baseline import Baseline

__all__ = ["Sandbox"]


@dataclass(frozen=True)
class Sandbox:
    """A case's git work tree, inside a private directory that holds nothing else of note.

    The private directory (`root`) holds the repo (`path`) and `scratch`; anything else
    that appears in it later was written by the agent outside its workspace.
    """

    path: Path
    """The git work tree the agent works in (HEAD checked out, index matching)."""
    kind: CaseKind
    base_commit: str
    """review/verify/rubric: the `main` commit; task: the baseline commit."""
    head_commit: str
    """review/verify: the `eval` tip; rubric: the applied-diff commit; task: == base_commit."""
    diff: str = field(repr=False)
    """`git diff main...eval` (review/verify/rubric); "" for task."""
    changed_files: tuple[str, ...]
    """The paths that diff touches (both names of a rename), in git's order."""
    repository: str | None
    """`owner/repo` when the origin remote was set."""
    baseline: Baseline | None = field(default=None, repr=False)
    """task: the workspace as built, kept in memory, what the agent's changes are judged
    against (its `.git` is the agent's to change); None for the other kinds."""

    @property
    def root(self) -> Path:
        """The private directory owned by this sandbox alone."""
        return self.path.parent

    @property
    def scratch(self) -> Path:
        """An empty private directory for the runner's per-attempt files, outside the workspace."""
        return self.path.parent / "scratch"
