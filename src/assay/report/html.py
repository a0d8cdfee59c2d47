"""report.html: the whole run in one self-contained file (no CDN, no server).

The page is a Jinja2 template (package data, autoescaped) holding its own CSS, a little
JavaScript and the pictures as inline SVG and CSS; the cases travel as one JSON document
in a `<script type="application/json">` element, escaped so no text can close that
element, and the script writes every untrusted string through `textContent`, never as
HTML. It opens straight from an unpacked Actions artifact.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from assay.report.html_data import (
    ArtifactBudget,
    EncodedJSON,
    viewer_cases,
    viewer_head,
    viewer_tail,
)
from assay.report.model import CaseResult, Report

if TYPE_CHECKING:
    from assay.report.compare import Comparison

__all__ = ["embed_json", "html_chunks", "render_html"]

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


_PLACEHOLDER = re.compile(r'"\\u0000([0-9a-f]{16}):(\d+)\\u0000"')
"""An `EncodedJSON` as `embed_json` first encodes it: a NUL-fenced token and index (one
pattern for every call: compiling one per call cost more than the substitution)."""


def embed_json(value: Any) -> Markup:
    """JSON safe inside a `<script>` element: `</script>`, `<!--` and `&` cannot appear.

    An `EncodedJSON` inside `value` is written as its text (the same compact encoding,
    so the page is what encoding the value itself would give).
    """
    fragments: list[str] = []
    token = secrets.token_hex(8)

    def placeholder(obj: object) -> str:
        if not isinstance(obj, EncodedJSON):
            raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
        fragments.append(obj.text)
        return f"\x00{token}:{len(fragments) - 1}\x00"

    def fragment(match: re.Match[str]) -> str:
        # A string of the data that only looks like a placeholder has another token.
        return fragments[int(match[2])] if match[1] == token else match[0]

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=placeholder)
    if fragments:
        text = _PLACEHOLDER.sub(fragment, text)
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return Markup(text)  # noqa: S704 - escaped above for the script-data context


def render_html(
    report: Report,
    *,
    report_dir: Path | None,
    history: list[dict[str, Any]] | None = None,
    comparison: Comparison | None = None,
) -> str:
    """The whole page as one string (`html_chunks` joined)."""
    return "".join(
        html_chunks(report, report_dir=report_dir, history=history, comparison=comparison)
    )


def html_chunks(
    report: Report,
    *,
    report_dir: Path | None,
    history: list[dict[str, Any]] | None = None,
    comparison: Comparison | None = None,
) -> Iterator[str]:
    """The page in pieces, a case at a time: the cases' data, and each one's diff and
    transcripts read from `report_dir`, are never all in memory at once."""
    # lazy: start-up (jinja2 only when used)
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("assay.report", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    marker = secrets.token_hex(16)  # where the data goes: nothing else on the page has it
    page = template.render(
        report=report,
        data=Markup(marker),  # noqa: S704 - a hex token, replaced by escaped JSON below
        suites=suite_scores(report.cases),
        matrix=model_matrix(report.cases),
        trend=trend_points(history or []),
    )
    before, after = page.split(marker)
    yield before
    yield from _data_chunks(report, report_dir, history, comparison)
    yield after


def _data_chunks(
    report: Report,
    report_dir: Path | None,
    history: list[dict[str, Any]] | None,
    comparison: Comparison | None,
) -> Iterator[str]:
    """`embed_json(viewer_data(...))`, the same text, one case at a time: the object's
    keys before "cases", each case, then the keys after it."""
    budget = ArtifactBudget()
    head = str(embed_json(viewer_head(report)))
    yield head[:-1] + ',"cases":['
    for number, case in enumerate(viewer_cases(report, report_dir, budget)):
        yield ("," if number else "") + str(embed_json(case))
    tail = str(embed_json(viewer_tail(budget, history=history, comparison=comparison)))
    yield "]," + tail[1:]


def suite_scores(cases: list[CaseResult]) -> list[dict[str, Any]]:
    """Per suite: its mean score over scored cases (None when none was) and case count."""
    by_suite: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        by_suite[case.suite].append(case)
    rows = []
    for suite, members in sorted(by_suite.items()):
        scores = [c.score for c in members if c.status in ("pass", "fail") and c.score is not None]
        rows.append(
            {
                "suite": suite,
                "cases": len(members),
                "score": sum(scores) / len(scores) if scores else None,
            }
        )
    return rows


def model_matrix(cases: list[CaseResult]) -> dict[str, Any]:
    """Suites x models: pass / fail / error counts and the pass rate that colours the cell."""
    models = sorted({c.model or "-" for c in cases})
    cells: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: {"pass": 0, "fail": 0, "error": 0, "skipped": 0}
    )
    for case in cases:
        cells[(case.suite, case.model or "-")][case.status] += 1
    rows = []
    for suite in sorted({c.suite for c in cases}):
        row: list[dict[str, Any] | None] = []
        for model in models:
            tally = cells.get((suite, model))
            if tally is None:
                row.append(None)
                continue
            scored = tally["pass"] + tally["fail"] + tally["error"]
            rate = tally["pass"] / scored if scored else None
            row.append({**tally, "rate": rate, "hue": None if rate is None else round(rate * 120)})
        rows.append({"suite": suite, "cells": row})
    return {"models": models, "rows": rows}


def trend_points(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The score trend as SVG polyline points (x by run, y by score), oldest first."""
    scored = [h for h in history if isinstance(h.get("score"), int | float)]
    if len(scored) < 2:
        return None
    width, height, pad = 600, 120, 10
    step = (width - 2 * pad) / (len(scored) - 1)
    points = [
        (pad + i * step, pad + (1 - float(h["score"])) * (height - 2 * pad))
        for i, h in enumerate(scored)
    ]
    return {
        "width": width,
        "height": height,
        "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in points),
        "dots": [
            {"x": x, "y": y, "label": f"{h.get('run_id', '')}: {float(h['score']):.2f}"}
            for (x, y), h in zip(points, scored, strict=True)
        ],
    }
