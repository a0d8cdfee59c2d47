"""What every loader shares during one `load_suites` call."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import SandboxError
from assay.suites.config import AssayConfig
from assay.suites.document import Problems
from assay.suites.warden import project_root

__all__ = ["CategoryDefaults", "LoadContext"]


@dataclass(frozen=True)
class CategoryDefaults:
    """Resolved `_suite.yaml` values for the JSON scenarios of one category directory."""

    skill: Path | None = None
    runtime: str | None = None
    model: str | None = None
    agent_command: tuple[str, ...] | None = None


@dataclass
class LoadContext:
    problems: Problems
    config: AssayConfig | None
    category_defaults: dict[Path, CategoryDefaults] = field(default_factory=dict)
    """Cache by category directory, so a `_suite.yaml` is read (and reported) once."""
    _projects: dict[Path, Path] = field(default_factory=dict)
    _fixture_trees: dict[Path, str | None] = field(default_factory=dict)

    def project_for(self, eval_root: Path) -> Path:
        """The directory a skill must stay inside, for cases under `eval_root`."""
        if eval_root not in self._projects:
            config_path = self.config.path if self.config else None
            self._projects[eval_root] = project_root(eval_root, config_path)
        return self._projects[eval_root]

    def fixture_tree_problem(self, tree: Path) -> str | None:
        """Why a sandbox could not copy fixture directory `tree`, or None; each tree once.

        The same walk the sandbox builder copies with, so `validate` refuses what a run
        would (a symlink leading outside, a FIFO) instead of every case erroring later.
        """
        if tree not in self._fixture_trees:
            from assay._util.fixture_tree import check_fixture_tree

            try:
                check_fixture_tree(tree)
                self._fixture_trees[tree] = None
            except SandboxError as exc:
                self._fixture_trees[tree] = str(exc)
        return self._fixture_trees[tree]
