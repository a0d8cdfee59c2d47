"""A provider answering in process: `keep`, unless the candidate's title says `bogus`."""

from __future__ import annotations

import os

from assay.plugins import ModelRequest, ModelResponse, ProviderSpec, Usage


class OracleProvider:
    def __init__(self, key: str) -> None:
        self.key = key

    async def generate(self, request: ModelRequest) -> ModelResponse:
        prompt = "".join(block.get("text", "") for block in request.messages[-1].content)
        answer = "reject" if "bogus" in prompt else "keep"
        return ModelResponse(
            content=[{"type": "text", "text": answer}],
            stop_reason="end_turn",
            usage=Usage(input_tokens=len(prompt.split()), output_tokens=1),
        )


def _from_env() -> OracleProvider:
    return OracleProvider(os.environ["TESTPLUGIN_API_KEY"])


def _price(model: str, usage: Usage) -> float | None:
    # One cent per thousand input tokens, whatever the model: the plugin's own price list.
    return usage.input_tokens / 100_000 if model.startswith("oracle") else None


PROVIDER = ProviderSpec(
    name="testplugin",
    factory=_from_env,
    key_variables=("TESTPLUGIN_API_KEY",),
    price=_price,
)
