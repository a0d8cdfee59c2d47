"""Two user graders: a function (registered by entry point) and a class (named as module:Class)."""

from __future__ import annotations

from assay.plugins import Check, GraderContext


async def no_todo_comments(ctx: GraderContext) -> Check:
    """Fails when any file of the sandbox's work tree holds a TODO comment."""
    offenders = sorted(
        path.relative_to(ctx.sandbox.path).as_posix()
        for path in ctx.sandbox.path.rglob("*")
        if path.is_file() and ".git" not in path.parts and "TODO" in path.read_text("utf-8")
    )
    return Check(
        id="no_todo_comments",
        kind="grader",
        status="fail" if offenders else "pass",
        message=f"TODO in {', '.join(offenders)}" if offenders else "",
    )


class VerdictGiven:
    """pydantic-evals style: one async method over the typed context."""

    async def evaluate(self, ctx: GraderContext) -> bool:
        return ctx.output.verdict is not None
