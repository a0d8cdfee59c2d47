"""Fake agent CLIs that call a model (sdk_agent_cli.py), and the fake model they talk to.

`install_sdk_cli(bin_dir, preset)` writes `claude`, `codex`, `gemini`, `opencode` or
`aider` into `bin_dir`. The model behind them is `agent_model(fallback)`: a responder for
FakeAnthropic (Messages shape; FakeGemini plays it through `messages_responder`) or
FakeOpenAI (chat shape) that plays the agent's model for requests that offer the fake CLI's
tools (first a tool call: `read_file` on the diff's first file, or
`solve` for a task; after a tool result, the answer the case asks for) and hands every
other request (the judge's) to `fallback`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.agent_clis import PROGRAMS
from tests.fakes.anthropic_api import text_reply, tool_use_reply
from tests.fakes.openai_api import chat_text_reply, chat_tool_reply

__all__ = ["PROGRAMS", "agent_answer", "anthropic_agent", "install_sdk_cli", "openai_agent"]

ROOT = Path(__file__).resolve().parents[2]
_CHANGED = re.compile(r"\+\+\+ b/([^\s\\\"]+)")
_KIND = re.compile(r"case kind: (\w+)")


def install_sdk_cli(bin_dir: Path, preset: str) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / PROGRAMS[preset]
    # The whole script, not an import of it: the OS sandbox hides the checkout.
    source = (Path(__file__).parent / "sdk_agent_cli.py").read_text(encoding="utf-8")
    source = source.replace("from __future__ import annotations\n", "").replace(
        "ROOT = Path(__file__).resolve().parents[2]", f"ROOT = Path({str(ROOT)!r})"
    )
    path.write_text(f"#!{sys.executable}\n{source}\nsys.exit(main({preset!r}))\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def agent_answer(kind: str, request_text: str, answered: bool) -> tuple[str, dict[str, Any]] | str:
    """The fake model's turn: a tool call (name, input) before any tool result, then text."""
    changed = _CHANGED.findall(request_text) or ["README.md"]
    if not answered:
        return ("solve", {}) if kind == "task" else ("read_file", {"path": changed[0]})
    if kind == "review":
        finding = {
            "severity": "high",
            "confidence": "high",
            "title": "possible crash",
            "description": "A value can be missing here and is used anyway.",
            "location": {"path": changed[0], "startLine": 1},
        }
        return "I read it.\n\n```json\n" + json.dumps({"findings": [finding]}) + "\n```"
    if kind == "verify":
        return '```json\n{"verdict": "keep", "reason": "the code does that"}\n```'
    if kind == "task":
        return "Done: the tests pass."
    return "## Review\n\nThe change is small; one edge case is unhandled."


def _offers_fake_tools(tools: Any) -> bool:
    names = {t.get("name") or (t.get("function") or {}).get("name") for t in tools or []}
    return {"read_file", "solve"} <= names


def anthropic_agent(fallback: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    def respond(request: dict[str, Any]) -> Any:
        if not _offers_fake_tools(request.get("tools")):
            return fallback(request)
        text = json.dumps(request)
        answered = any(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for message in request["messages"]
            for block in (message["content"] if isinstance(message["content"], list) else [])
        )
        kind = (_KIND.findall(text) or ["review"])[0]
        answer = agent_answer(kind, text, answered)
        if isinstance(answer, str):
            return text_reply(answer)
        return tool_use_reply(*answer)

    return respond


def openai_agent(fallback: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    def respond(request: dict[str, Any]) -> Any:
        if not _offers_fake_tools(request.get("tools")):
            return fallback(request)
        text = json.dumps(request)
        answered = any(message.get("role") == "tool" for message in request["messages"])
        kind = (_KIND.findall(text) or ["review"])[0]
        answer = agent_answer(kind, text, answered)
        if isinstance(answer, str):
            return chat_text_reply(answer)
        return chat_tool_reply(answer)

    return respond
