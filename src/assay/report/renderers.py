"""The renderer registry: every file written beside report.json, by `run` and `merge` alike.

A renderer turns the finished report into the text of one file in the report directory
(summary.md, junit.xml, report.html, PVYai's agent-eval-report.json, Cassandra's results JSON,
the inspect eval log, or a plugin's own), or says there is nothing to write for this report
(None). `assay run` and `assay merge` both write every registered renderer through
`runner.writer`, so an output cannot be forgotten by one of them. Plugins add renderers
through the `assay.renderers` entry point group, naming a `Renderer`, whose file must be its
own: one that another renderer writes, or that the report directory keeps for itself, is
refused before a run starts. Each renderer imports its formatting code only when it renders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util.entrypoints import Registry
from assay.core.files import (
    CASES_DIR,
    CASSANDRA_FILE,
    HTML_FILE,
    INSPECT_LOG_FILE,
    JUNIT_FILE,
    LOCK_FILE,
    PVYAI_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
)
from assay.errors import ConfigError
from assay.report.inspect_log import inspect_log_chunks

if TYPE_CHECKING:
    from assay.report.compare import Comparison
    from assay.report.model import Report
    from assay.suites.case import Case

__all__ = [
    "BUILTIN_RENDERERS",
    "JUNIT_FILE",
    "PVYAI_FILE",
    "RENDERERS",
    "REPORT_FILE",
    "SUMMARY_FILE",
    "RenderContext",
    "Renderer",
    "pvyai_reports",
    "renderers_in_order",
]


@dataclass(frozen=True)
class RenderContext:
    """What a renderer may use besides the report itself."""

    report: Report
    cases: Sequence[Case]
    """The loaded cases of the run (empty for `assay merge`, which has only reports)."""
    report_dir: Path
    pvyai: bool = False
    """`--pvyai-report` was asked for."""
    cassandra: bool = False
    """`--cassandra-report` was asked for."""
    inspect_log: bool = False
    """`--inspect-log` was asked for."""
    history_dir: Path | None = None
    """The run history this run was recorded in (report.html draws its trend)."""
    baseline: Report | None = None
    """The report this run is compared with (`--baseline`): summary.md and report.html lead
    with what changed."""

    @cached_property
    def comparison(self) -> Comparison | None:
        """The run compared with `baseline` (made once for every renderer that shows it)."""
        if self.baseline is None:
            return None
        # lazy: start-up (not loaded with this module)
        from assay.report.compare import compare_reports

        return compare_reports(self.baseline, self.report)


@dataclass(frozen=True)
class Renderer:
    """One file of the report directory."""

    name: str
    filename: str
    """Its name in the report directory (a plain file name, no directories)."""
    render: Callable[[RenderContext], str | Iterable[str] | None]
    """The file's text (whole, or in pieces for a large file), or None when this report
    has nothing for it."""

    def __post_init__(self) -> None:
        if not self.filename or "/" in self.filename or self.filename in (".", ".."):
            raise ValueError(f"renderer {self.name!r}: {self.filename!r} is not a file name")


def _adapt(name: str, obj: object) -> Renderer:
    if not isinstance(obj, Renderer):
        raise TypeError(f"expected an assay.report.renderers.Renderer, got {type(obj).__name__}")
    return obj


RENDERERS: Registry[Renderer] = Registry("assay.renderers", what="renderer", adapt=_adapt)


def _report_json(ctx: RenderContext) -> Iterator[str]:
    # lazy: start-up (not loaded with this module)
    from assay.report.json_stream import report_json_chunks

    yield from report_json_chunks(ctx.report, indent=2)
    yield "\n"


def _summary(ctx: RenderContext) -> str:
    comparison = ctx.comparison
    if comparison is not None:
        # lazy: start-up (not loaded with this module)
        from assay.report.summary_compared import render_compared_summary

        return render_compared_summary(ctx.report, comparison)
    from assay.report.markdown import render_summary  # lazy: start-up (not loaded with this module)

    return render_summary(ctx.report)


def _junit(ctx: RenderContext) -> str:
    from assay.report.junit import render_junit  # lazy: start-up (not loaded with this module)

    return render_junit(ctx.report)


def _html(ctx: RenderContext) -> Iterator[str]:
    # lazy: start-up (not loaded with this module)
    from assay.report.history import history_for_viewer
    from assay.report.html import html_chunks

    return html_chunks(
        ctx.report,
        report_dir=ctx.report_dir,
        history=history_for_viewer(ctx.history_dir),
        comparison=ctx.comparison,
    )


def pvyai_reports(
    report: Report, cases: Sequence[Case], *, report_dir: Path | None = None
) -> list[dict[str, Any]]:
    """One PVYai benchmark report per task suite that has results, in the order run."""
    from assay.report.pvyai import benchmark_report  # lazy: start-up (not loaded with this module)

    suites = dict.fromkeys(c.suite for c in report.cases if c.kind == "task")
    return [
        benchmark_report(report, cases, suite_id=suite, report_dir=report_dir) for suite in suites
    ]


def _pvyai(ctx: RenderContext) -> str | None:
    if not ctx.pvyai:
        return None
    documents = pvyai_reports(ctx.report, ctx.cases, report_dir=ctx.report_dir)
    if not documents:
        return None
    from assay.upstream.go.fmt import go_json_indent  # lazy: start-up (not loaded with this module)

    body: Any = documents[0] if len(documents) == 1 else documents
    return go_json_indent(body) + "\n"  # as PVYai's json.MarshalIndent writes it


def _cassandra(ctx: RenderContext) -> str | None:
    if not ctx.cassandra or not any(c.kind == "rubric" for c in ctx.report.cases):
        return None
    # lazy: start-up (not loaded with this module)
    from assay.report.cassandra import cassandra_json, cassandra_names, to_cassandra_results

    return cassandra_json(to_cassandra_results(ctx.report, cassandra_names(ctx.cases)))


def _inspect_log(ctx: RenderContext) -> Iterator[str] | None:
    if not ctx.inspect_log:
        return None

    return inspect_log_chunks(ctx.report, ctx.report_dir)


# The report first: a reader polling the directory sees report.json before its renderings.
RENDERERS.register("report", Renderer("report", REPORT_FILE, _report_json))
RENDERERS.register("summary", Renderer("summary", SUMMARY_FILE, _summary))
RENDERERS.register("junit", Renderer("junit", JUNIT_FILE, _junit))
RENDERERS.register("html", Renderer("html", HTML_FILE, _html))
RENDERERS.register("pvyai", Renderer("pvyai", PVYAI_FILE, _pvyai))
RENDERERS.register("cassandra", Renderer("cassandra", CASSANDRA_FILE, _cassandra))
RENDERERS.register("inspect", Renderer("inspect", INSPECT_LOG_FILE, _inspect_log))
_BUILTIN_ORDER = ("report", "summary", "junit", "html", "pvyai", "cassandra", "inspect")


BUILTIN_RENDERERS = _BUILTIN_ORDER
"""assay's own renderers; any other is a plugin's (or a library user's)."""


def renderers_in_order() -> list[Renderer]:
    """Every renderer: the built-ins in their order, then plugins' by name (each imported now).

    ConfigError when one would write another's file, or one the report directory keeps for
    itself (see `_refuse_taken_files`): found before a run starts, which asks for this list
    to check the report directory."""
    names = [*_BUILTIN_ORDER, *(n for n in RENDERERS.names() if n not in _BUILTIN_ORDER)]
    renderers = [renderer for name in names if (renderer := RENDERERS.get(name)) is not None]
    _refuse_taken_files(renderers)
    return renderers


def _refuse_taken_files(renderers: Sequence[Renderer]) -> None:
    """ConfigError naming the first renderer whose file is taken: by an earlier renderer
    (a plugin's is written after assay's, so it would replace report.json without a word),
    or by the report directory itself (results.jsonl, which --resume reads; the lock; the
    cases' artifacts; a history kept there). Names are compared case-folded: on macOS and
    Windows `Report.json` is report.json."""
    # lazy: start-up (not loaded with this module)
    from assay.registry.plugin_calls import plugin_origin
    from assay.report.history import HISTORY_DIRNAME

    kept = {name.casefold() for name in (RESULTS_FILE, LOCK_FILE, CASES_DIR, HISTORY_DIRNAME)}
    written_by: dict[str, Renderer] = {}
    for renderer in renderers:
        name = renderer.filename.casefold()
        if name in kept:
            taken = "a name the report directory keeps for itself"
        elif name in written_by:
            taken = f"the file of {plugin_origin(RENDERERS, written_by[name].name)}"
        else:
            written_by[name] = renderer
            continue
        raise ConfigError(
            f"{plugin_origin(RENDERERS, renderer.name)} writes {renderer.filename}, {taken}: "
            "a renderer must write a file of its own; uninstall the plugin, or have its file "
            "renamed"
        )
