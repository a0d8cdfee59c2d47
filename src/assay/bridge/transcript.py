"""The attempt's model calls through the bridge, as a JSON-lines file beside its transcripts.

One line per call: the API it came in by, the model, what the request added to the
conversation since the call before (a CLI sends the whole conversation every turn: writing
it whole each time would grow as its square), the answer's blocks, its usage, how long it
took, and the error when there was one. Lines are redacted (the attempt's token and every
secret assay knows) and the file is bounded: past MAX_BYTES a last line says what was left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay._util.secrets import redact_json
from assay.core.files import MODEL_CALLS_FILE
from assay.models.base import Message, ModelRequest, ModelResponse

__all__ = ["MAX_BYTES", "MODEL_CALLS_FILE", "ModelCalls"]

MAX_BYTES = 4 * 1024 * 1024
"""The most one attempt's file holds (CI artifacts are kept for every attempt)."""


class ModelCalls:
    """Appends each call to `path` (None: kept nowhere), redacted with `environ`'s secrets."""

    def __init__(self, path: Path | None, environ: Mapping[str, str]) -> None:
        self.path = path
        self.environ = dict(environ)
        self.written = 0
        self.left_out = 0
        self._seen: tuple[Message, ...] = ()
        self._system: str | None = None

    def record(
        self,
        *,
        api: str,
        request: ModelRequest,
        response: ModelResponse | None,
        seconds: float,
        error: str | None = None,
        stream: bool = False,
    ) -> None:
        line: dict[str, Any] = {"api": api, "model": request.model, "stream": stream}
        if request.system != self._system:
            line["system"] = request.system
            self._system = request.system
        added = _added(self._seen, request.messages)
        line["messages"] = [{"role": m.role, "content": list(m.content)} for m in added]
        line["tools"] = [tool.name for tool in request.tools]
        if request.thinking is not None:
            line["thinking"] = request.thinking
        if response is not None:
            line["response"] = {"content": response.content, "stop_reason": response.stop_reason}
            line["usage"] = response.usage.model_dump(mode="json")
            self._seen = (*request.messages, Message("assistant", tuple(response.content)))
        if error is not None:
            line["error"] = error
        line["seconds"] = round(seconds, 4)
        self.write(line)

    def write(self, line: dict[str, Any]) -> None:
        if self.path is None:
            return
        text = redact_json(json.dumps(line, ensure_ascii=False), self.environ) + "\n"
        size = len(text.encode("utf-8"))
        if self.written + size > MAX_BYTES:
            self.left_out += 1
            return
        with self.path.open("a", encoding="utf-8") as out:
            out.write(text)
        self.written += size

    def close(self, **summary: Any) -> None:
        """The last line: what the bridge counted (and what the CLI said, as a cross-check)."""
        if self.path is None:
            return
        line = {"summary": summary, "left_out": self.left_out}
        text = redact_json(json.dumps(line, ensure_ascii=False), self.environ) + "\n"
        with self.path.open("a", encoding="utf-8") as out:  # past the bound: it is small
            out.write(text)


def _added(seen: tuple[Message, ...], messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The messages after the conversation already written, or all when it is another one."""
    if seen and messages[: len(seen)] == seen:
        return messages[len(seen) :]
    return messages
