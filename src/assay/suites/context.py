"""What every loader shares during one `load_suites` call."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.fixture_tree import check_fixture_tree
from assay.errors import SandboxError
from assay.suites.config import AssayConfig
from assay.suites.document import Problems
from assay.suites.warden import project_root
from assay.upstream.warden.evalts import read_eval_declarations

if TYPE_CHECKING:
    from assay.upstream.warden.evalts import EvalDeclaration

__all__ = ["CategoryDefaults", "LoadContext"]


@dataclass(frozen=True)
class CategoryDefaults:
    """What the JSON scenarios of one category directory run with, and where each came from.

    Sources, weakest first: assay's conventional skill location, Warden's `src/**/*.eval.ts`
    declaration, the category's `_suite.yaml` (the command line beats them all at run time).
    """

    skill: Path | None = None
    runtime: str | None = None
    model: str | None = None
    agent_command: tuple[str, ...] | None = None
    max_turns: int | None = None
    """Warden's harness `maxTurns`: the builtin reviewer's turn limit."""
    timeout_ms: int | float | None = None
    """Warden's harness `timeoutMs`: the cases' timeout unless the run sets one explicitly."""
    graders: tuple[str, ...] = ()
    """User graders the category's `_suite.yaml` names."""
    harness: frozenset[str] = frozenset()
    """Which of `runtime` and `model` Warden's harness options set: those beat a scenario's
    own `runtime` / `model` (Warden's runner: `options.model ?? meta.model`)."""
    call: str | None = None
    """The eval.ts call that declares this run of the category (`discoverEvalScenarios`,
    `discoverVerificationEvalScenarios`), or None for a category no eval.ts declares."""
    meta_runtime: str | None = None
    """The runtime Warden's metas carry (the declaration's or `_suite.yaml`'s, else Warden's
    default; never the harness's): with the scenario's own, it names the case in Warden's
    full id, `<skill>/<runtime>/<model>/<name>`."""
    meta_model: str | None = None
    """The model Warden's metas carry, as `meta_runtime`."""
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    """Per field above: `_suite.yaml`, `<file>.eval.ts:<line>`, `Warden default`, `default`."""


@dataclass
class LoadContext:
    problems: Problems
    config: AssayConfig | None
    category_defaults: dict[Path, tuple[CategoryDefaults, ...]] = field(default_factory=dict)
    """Cache by category directory, so a `_suite.yaml` is read (and reported) once: one
    entry per eval.ts declaration of the category (its JSON scenarios run once per entry),
    one for a category no eval.ts declares."""
    yaml_suite_defaults: dict[Path, CategoryDefaults | None] = field(default_factory=dict)
    """What Warden's e2e harness gives the YAML suites of an eval root, checked once per root."""
    eval_declarations: dict[Path, list[EvalDeclaration]] = field(default_factory=dict)
    """Warden's `src/**/*.eval.ts` declarations, by eval root, read (and reported) once."""
    said: set[tuple[str, str]] = field(default_factory=set)
    """Problems already reported once, by (what, where): a harness that runs several
    declarations is checked with each."""
    _projects: dict[Path, Path] = field(default_factory=dict)
    _fixture_trees: dict[Path, str | None] = field(default_factory=dict)

    def project_for(self, eval_root: Path) -> Path:
        """The directory a skill must stay inside, for cases under `eval_root`."""
        if eval_root not in self._projects:
            config_path = self.config.path if self.config else None
            self._projects[eval_root] = project_root(eval_root, config_path)
        return self._projects[eval_root]

    def declarations_for(self, eval_root: Path) -> list[EvalDeclaration]:
        """The suite declarations of `<eval_root>/src/**/*.eval.ts` (Warden's layout)."""
        if eval_root not in self.eval_declarations:
            found, warnings = read_eval_declarations(eval_root)
            self.problems.warnings += warnings
            self.eval_declarations[eval_root] = found
        return self.eval_declarations[eval_root]

    def fixture_tree_problem(self, tree: Path) -> str | None:
        """Why a sandbox could not copy fixture directory `tree`, or None; each tree once.

        The same walk the sandbox builder copies with, so `validate` refuses what a run
        would (a symlink leading outside, a FIFO) instead of every case erroring later.
        """
        if tree not in self._fixture_trees:
            try:
                check_fixture_tree(tree)
                self._fixture_trees[tree] = None
            except SandboxError as exc:
                self._fixture_trees[tree] = str(exc)
        return self._fixture_trees[tree]
