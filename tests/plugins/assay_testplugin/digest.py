"""A renderer: one line per case, `<status> <id>`, in plugin-digest.txt."""

from __future__ import annotations

from assay.plugins import RenderContext, Renderer


def _digest(ctx: RenderContext) -> str:
    lines = [f"{case.status} {case.id}" for case in ctx.report.cases]
    return "\n".join([f"score {ctx.report.summary.score}", *lines]) + "\n"


RENDERER = Renderer("digest", "plugin-digest.txt", _digest)
