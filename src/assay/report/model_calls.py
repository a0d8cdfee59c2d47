"""An attempt's model-calls.jsonl (the model bridge's transcript) as a conversation to show.

Each call line adds the messages its request added and the model's answer; the last line
(what the bridge counted, and what the CLI said it spent) becomes the closing note. A line
that is not JSON is shown as text: the file is assay's, but the viewer trusts nothing.
"""

from __future__ import annotations

import json
from typing import Any

from assay._util import json_text

__all__ = ["model_calls_view"]


def model_calls_view(text: str | None) -> dict[str, Any] | None:
    """`{"messages": [...], "error": summary}` for the page's transcript view; None: no file."""
    if text is None:
        return None
    messages: list[dict[str, Any]] = []
    note: str | None = None
    for line in text.splitlines():
        try:
            call = json_text.loads(line)
        except ValueError:
            messages.append({"role": "unreadable line", "content": line})
            continue
        if not isinstance(call, dict):
            continue
        if "summary" in call:
            note = "bridge: " + json.dumps(call["summary"], sort_keys=True)
            continue
        for message in call.get("messages") or []:
            if isinstance(message, dict):
                messages.append(message)
        head = f"{call.get('api')} {call.get('model')} ({call.get('seconds')} s)"
        if isinstance(call.get("response"), dict):
            content = call["response"].get("content")
            messages.append({"role": f"assistant · {head}", "content": content or ""})
        if call.get("error"):
            messages.append({"role": f"refused · {head}", "content": str(call["error"])})
    return {"messages": messages, "error": note}
