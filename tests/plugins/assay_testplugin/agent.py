"""The `oracle` runtime: asks the subject model whether to keep the candidate finding."""

from __future__ import annotations

from assay.plugins import (
    AgentError,
    AgentOutput,
    AttemptContext,
    Message,
    ModelRequest,
    RunOptions,
    RuntimeSpec,
    VerifySpec,
    generate,
)


class OracleAgent:
    def __init__(self, options: RunOptions) -> None:
        self.options = options

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        spec = ctx.case.spec
        if not isinstance(spec, VerifySpec) or ctx.model is None:
            raise AgentError("the oracle only verifies candidate findings, with a model")
        question = f"Keep or reject this finding? {spec.candidate.get('title', '')}"
        request = ModelRequest(
            model=ctx.model,
            system="Answer keep or reject.",
            messages=(Message("user", ({"type": "text", "text": question},)),),
        )
        response = await generate(request, options=self.options)
        verdict = response.text().strip()
        if verdict not in ("keep", "reject"):
            raise AgentError(f"the oracle answered {verdict!r}")
        return AgentOutput(verdict=verdict, usage=response.usage)


RUNTIME = RuntimeSpec("oracle", OracleAgent, calls_model=True)
