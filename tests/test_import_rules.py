"""The direction of assay's imports, read from the source (ast), not from a run.

Every import counts: at module level, inside functions (the lazy imports that keep start-up
cheap) and under `if TYPE_CHECKING:` (a type-only import is still a dependency a reader has
to follow, and mypy would follow it into a cycle). See docs/architecture.md, "Import rules".
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "assay"

CLI_LAYER = frozenset({"cli", "_cli"})
"""`cli.py` and `_cli/` are one layer: the parser dispatches into its commands."""

FORBIDDEN: dict[str, frozenset[str]] = {
    "suites": frozenset({"runner"}),
    "models": frozenset({"agents", "grading", "report"}),
    "agents": frozenset({"report"}),
    "grading": frozenset({"agents", "report"}),
    "_util": frozenset({"report"}),
    "errors": frozenset({"report"}),
    "report": frozenset({"runner"}),
    "workspace": frozenset({"models"}),
    # The OS sandbox and the process door sit below everything that runs a case.
    "isolation": frozenset(
        {"agents", "grading", "models", "report", "runner", "suites", "workspace", "action"}
    ),
    # The upstream rules are leaves: ordinary modules call them, never the other way.
    "upstream": frozenset(
        {
            "agents",
            "grading",
            "models",
            "report",
            "runner",
            "suites",
            "workspace",
            "action",
            "isolation",
            "scaffold",
            "options",
            "_util",
        }
    ),
}
"""Package -> the packages it must never import (beyond the rules for core and the CLI)."""

PROVIDER_ADAPTERS = (
    "assay.models.anthropic_provider",
    "assay.models.openai_provider",
    "assay.models.bedrock_provider",
    "assay.models.vertex_provider",
    "assay.models.gemini_provider",
)
PROVIDER_WIRE = ("assay.models.openai_wire", "assay.models.gemini_wire")
"""A provider's own modules: only the model layer reaches into them (through its registry)."""

CORE_MAY_IMPORT = frozenset({"pydantic", "pydantic_core", "typing_extensions"})
"""Besides the standard library: pydantic, because the core's value types are the report
contract's own models."""


@dataclass(frozen=True)
class Import:
    importer: str
    """Dotted module name, e.g. `assay.grading.findings_judge`."""
    target: str
    """Dotted name imported: the deepest module it names."""
    where: str
    """`src/assay/...py:LINE`, for the failure message."""
    type_only: bool

    @property
    def edge(self) -> str:
        flag = " (under TYPE_CHECKING)" if self.type_only else ""
        return f"{self.where}: {self.importer} imports {self.target}{flag}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    base = SRC.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for child in ast.walk(inner):
                    if isinstance(child, ast.stmt):
                        lines.add(child.lineno)
    return lines


def _imports_of(path: Path) -> Iterator[Import]:
    name = _module_name(path)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    type_only = _type_checking_lines(tree)
    where = path.relative_to(SRC.parent).as_posix()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                deeper = f"{module}.{alias.name}"
                targets.append(deeper if _is_module(deeper) else module)
        for target in targets:
            yield Import(name, target, f"{where}:{node.lineno}", node.lineno in type_only)


def _all_imports() -> list[Import]:
    return [found for path in sorted(PACKAGE.rglob("*.py")) for found in _imports_of(path)]


IMPORTS = _all_imports()
ASSAY_IMPORTS = [i for i in IMPORTS if i.target == "assay" or i.target.startswith("assay.")]


def package_of(module: str) -> str:
    """`assay.grading.judging` -> `grading`; `assay.errors` -> `errors`; `assay` -> `assay`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _violations(importer: str, forbidden: frozenset[str]) -> list[str]:
    return [
        i.edge
        for i in ASSAY_IMPORTS
        if package_of(i.importer) == importer and package_of(i.target) in forbidden
    ]


def test_the_graph_is_read() -> None:
    # A parser that found nothing would pass every rule below.
    assert len(ASSAY_IMPORTS) > 500
    assert any(i.type_only for i in ASSAY_IMPORTS)
    assert any(i.importer == "assay.runner.attempt" for i in ASSAY_IMPORTS)


@pytest.mark.parametrize("importer", sorted(FORBIDDEN))
def test_package_never_imports_what_it_must_not(importer: str) -> None:
    found = _violations(importer, FORBIDDEN[importer])
    assert not found, f"{importer} must not import {sorted(FORBIDDEN[importer])}:\n" + "\n".join(
        found
    )


def test_core_imports_nothing_of_assay_and_only_pydantic_beyond_the_standard_library() -> None:
    found = []
    for i in IMPORTS:
        if package_of(i.importer) != "core" or i.target == "__future__":
            continue
        top = i.target.split(".")[0]
        if top == "assay":
            if package_of(i.target) != "core":
                found.append(i.edge)
        elif top not in sys.stdlib_module_names and top not in CORE_MAY_IMPORT:
            found.append(i.edge)
    assert not found, "assay.core must depend on nothing of assay:\n" + "\n".join(found)


def test_nothing_outside_the_cli_imports_the_cli() -> None:
    found = [
        i.edge
        for i in ASSAY_IMPORTS
        if package_of(i.target) in CLI_LAYER and package_of(i.importer) not in CLI_LAYER
    ]
    entry = "only the console entry (assay.cli:run_program) reaches the CLI"
    assert not found, f"{entry}:\n" + "\n".join(found)


def test_only_the_model_layer_reaches_into_a_provider() -> None:
    found = [
        i.edge
        for i in ASSAY_IMPORTS
        if i.target.startswith(PROVIDER_ADAPTERS + PROVIDER_WIRE)
        and package_of(i.importer) != "models"
    ]
    assert not found, "go through assay.models (its registry and base types):\n" + "\n".join(found)


def _package_graph() -> dict[str, dict[str, Import]]:
    """Package -> {package it imports: the first import that makes the edge}."""
    graph: dict[str, dict[str, Import]] = {}
    for i in ASSAY_IMPORTS:
        source, target = (
            "cli" if package_of(m) in CLI_LAYER else package_of(m) for m in (i.importer, i.target)
        )
        graph.setdefault(source, {})
        if source != target:
            graph[source].setdefault(target, i)
    return graph


def _cycles(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_package_cycles() -> None:
    graph = _package_graph()
    cycles = _cycles(graph)
    lines = []
    for component in cycles:
        lines.append(" <-> ".join(component))
        for source in component:
            for target, first in sorted(graph[source].items()):
                if target in component:
                    lines.append(f"    {first.edge}")
    assert not cycles, "packages import each other in a cycle:\n" + "\n".join(lines)


def test_the_cycle_finder_finds_a_cycle() -> None:
    edge = Import("assay.a.x", "assay.b.y", "src/assay/a/x.py:1", type_only=False)
    graph = {"a": {"b": edge}, "b": {"c": edge}, "c": {"a": edge}, "d": {"a": edge}}
    assert _cycles(graph) == [["a", "b", "c"]]


PROCESS_DOOR = "assay.isolation.processes"
"""The one module that starts a process (agents, commands, git, the bwrap probe, workers)."""

SANDBOX_PROGRAM = "assay.isolation.exec_shim"
"""Not run in assay's process: its source is the first program inside every bwrap sandbox,
which forks and execs the confined command there (`isolation/bwrap.py: Confinement.wrap`)."""

_PROCESS_MODULES = frozenset({"subprocess", "multiprocessing", "pty", "asyncio.subprocess"})
_PROCESS_CALLS = re.compile(
    r"^(?:os|posix)\.(?:exec\w*|fork\w*|spawn\w*|posix_spawn\w*|system|popen)$"
    r"|\.create_subprocess_(?:exec|shell)$|^pty\.(?:fork|spawn)$"
)
_PROCESS_NAMES = re.compile(r"^(?:exec\w*|fork\w*|spawn\w*|posix_spawn\w*|system|popen)$")


def process_starts(source: str, where: str) -> list[str]:
    """Each place in `source` that starts a process or imports what starts one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _PROCESS_MODULES or alias.name.startswith("multiprocessing."):
                    found.append(f"{line}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [alias.name for alias in node.names]
            if module in _PROCESS_MODULES or module.startswith("multiprocessing."):
                found.append(f"{line}: from {module} import {', '.join(names)}")
            elif module == "asyncio" and "subprocess" in names:
                found.append(f"{line}: from asyncio import subprocess")
            elif module in ("os", "posix") and any(_PROCESS_NAMES.match(n) for n in names):
                found.append(f"{line}: from {module} import {', '.join(names)}")
        elif isinstance(node, ast.Attribute):
            dotted = ast.unparse(node)
            if _PROCESS_CALLS.search(dotted):
                found.append(f"{line}: {dotted}")
    return found


def test_only_the_process_module_starts_a_process() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if _module_name(path) in (PROCESS_DOOR, SANDBOX_PROGRAM):
            continue
        where = path.relative_to(SRC.parent).as_posix()
        found += process_starts(path.read_text(encoding="utf-8"), where)
    assert not found, f"start processes through {PROCESS_DOOR}:\n" + "\n".join(found)


def test_the_process_scan_finds_every_way_to_start_one() -> None:
    source = (
        "import subprocess\nfrom asyncio import subprocess as sp\nimport os, asyncio\n"
        "os.execv('a', [])\nos.posix_spawn('a', [], {})\nasyncio.create_subprocess_exec('a')\n"
        "from os import fork\nimport multiprocessing.pool\n"
    )
    assert len(process_starts(source, "x.py")) == 7
    assert process_starts("import os\nos.path.join('a')\nos.environ.copy()\n", "x.py") == []
    door = (PACKAGE / "isolation" / "processes.py").read_text(encoding="utf-8")
    assert process_starts(door, "processes.py")  # the door itself is seen to start them


def _module_graph() -> dict[str, dict[str, Import]]:
    """Module -> {module it imports: the first import that makes the edge}: every import,
    at module level, inside functions and under TYPE_CHECKING alike."""
    modules = {_module_name(path) for path in PACKAGE.rglob("*.py")}
    graph: dict[str, dict[str, Import]] = {name: {} for name in modules}
    for i in ASSAY_IMPORTS:
        target = i.target
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]  # `from assay.x import name` -> assay.x
        if target != i.importer and target in modules:
            graph[i.importer].setdefault(target, i)
    return graph


def test_no_module_cycles() -> None:
    graph = _module_graph()
    cycles = _cycles(graph)
    lines = []
    for component in cycles:
        lines.append(" <-> ".join(component))
        for source in component:
            for target, first in sorted(graph[source].items()):
                if target in component:
                    lines.append(f"    {first.edge}")
    assert not cycles, (
        "modules import each other in a cycle (move the shared fact down into a module of "
        "its own; an import inside a function still counts):\n" + "\n".join(lines)
    )


LAZY_REASON = "# lazy:"
"""An import inside a function says why it is there: an optional SDK or start-up cost."""


def lazy_imports_without_reason(source: str, where: str) -> list[str]:
    """The imports inside functions of `source` whose block has no `# lazy: <reason>`.

    A block is a run of import statements one after another in one body; the reason is a
    comment on the line above it or on any of its lines (import sorting may move it).
    """
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            for body in (getattr(inner, name, None) for name in ("body", "orelse", "finalbody")):
                if not isinstance(body, list):
                    continue
                block: list[ast.stmt] = []
                for statement in [*body, None]:
                    if isinstance(statement, ast.Import | ast.ImportFrom):
                        block.append(statement)
                        continue
                    if block:
                        first, last = block[0].lineno, block[-1].end_lineno or block[-1].lineno
                        text = "\n".join(lines[max(first - 2, 0) : last])
                        if LAZY_REASON not in text:
                            found += [f"{where}:{s.lineno}: {ast.unparse(s)}" for s in block]
                    block = []
    return sorted(set(found))


def test_every_import_inside_a_function_says_why() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(SRC.parent).as_posix()
        found += lazy_imports_without_reason(path.read_text(encoding="utf-8"), where)
    assert not found, (
        "an import inside a function is for an optional SDK or start-up cost only, and says "
        f"so (`{LAZY_REASON} <reason>` above it); otherwise import at the top:\n" + "\n".join(found)
    )


def test_the_lazy_import_check_finds_one_without_a_reason() -> None:
    source = (
        "def f():\n    import json\n    return json\n\n"
        "def g():\n    # lazy: optional SDK\n    import openai\n    import google\n"
        "    return openai, google\n\n"
        "def h():\n    if True:\n        from os import path  # lazy: start-up\n"
    )
    assert lazy_imports_without_reason(source, "x.py") == ["x.py:2: import json"]


def test_the_module_graph_counts_imports_inside_functions() -> None:
    # `assay ci` imports the runner only inside `run_ci` (start-up): still an edge.
    assert "assay.runner.session" in _module_graph()["assay._cli.ci"]


AGENT_COMMAND_DOOR = "assay.suites.command"
"""The one reading of an agent command (`read_agent_command`): argv and placeholder typos."""


def test_the_agent_command_is_read_in_one_place() -> None:
    readers = {"parse_agent_command", "placeholder_typos", "split"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if _module_name(path) == AGENT_COMMAND_DOOR:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if name in readers and (name != "split" or ast.unparse(node) == "shlex.split"):
                where = f"{path.relative_to(SRC.parent).as_posix()}:{node.lineno}"  # type: ignore[attr-defined]
                found.append(f"{where}: {ast.unparse(node)}")
    assert not found, f"read agent commands through {AGENT_COMMAND_DOOR}:\n" + "\n".join(found)


def test_the_runner_dispatches_on_the_kind_registry_not_on_kind_names() -> None:
    # runner/kinds.py holds what differs by kind (CaseKindSpec); the executor and the
    # planner ask it (`kind_of(case).one_at_a_time`), never `case.kind == "task"`.
    found = []
    for name in ("execute.py", "plan.py"):
        path = PACKAGE / "runner" / name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "kind":
                found.append(f"src/assay/runner/{name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "dispatch through runner/kinds.py:\n" + "\n".join(found)


EXIT_CODES = "assay.core.exit_codes"


def test_exit_codes_are_defined_once() -> None:
    # Every EXIT_* elsewhere is a name for one of them (`EXIT_DECIDED = EXIT_PASS`), never
    # a number written again.
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if _module_name(path) == EXIT_CODES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Assign):
                continue
            names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            numbers = [n for n in ast.walk(node.value) if isinstance(n, ast.Constant)]
            if any(name.startswith("EXIT_") for name in names) and any(
                isinstance(n.value, int) for n in numbers
            ):
                found.append(f"{path.relative_to(SRC.parent).as_posix()}:{node.lineno}")
    assert not found, f"exit codes come from {EXIT_CODES}:\n" + "\n".join(found)
