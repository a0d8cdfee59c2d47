"""OpenAI Codex CLI: `codex exec --json <prompt>`.

Its stream (JSONL) has `thread.started`, `turn.started`, `item.started` /
`item.completed` for each item (`command_execution`, `file_change`, `mcp_tool_call`,
`web_search`, `agent_message`, `reasoning`), `turn.completed` with the turn's `usage`,
and `turn.failed` / `error` on failure. Its tools become `tool:shell`,
`tool:apply_patch`, `tool:web_search` and `tool:<mcp tool>`; the last `agent_message` is
the final message. The skill goes to AGENTS.md in the workspace, which Codex reads.
Codex's own sandbox cannot nest inside assay's (both need user namespaces), so it is
bypassed: assay's OS sandbox is the confinement. It runs `openai/` models (`--model
gpt-5`); its key is OPENAI_API_KEY / CODEX_API_KEY.
"""

from __future__ import annotations

from typing import Any

from assay.agents.presets.base import Invocation, Preset, Stream

__all__ = ["PRESET", "Codex", "CodexStream"]

_TOOLS = {"command_execution": "shell", "file_change": "apply_patch", "web_search": "web_search"}


class CodexStream(Stream):
    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "item.completed":
            item = event.get("item") or {}
            item_type = item.get("type")
            if item_type == "agent_message" and isinstance(item.get("text"), str):
                self.final_text = item["text"]
                self.transcript.text(item["text"])
            elif item_type == "mcp_tool_call":
                self.tool(item.get("tool"), item.get("arguments"), call_id=item.get("id"))
            elif item_type in _TOOLS:
                shown = {k: v for k, v in item.items() if k not in ("id", "type", "status")}
                self.tool(_TOOLS[item_type], shown, call_id=item.get("id"))
        elif kind == "turn.completed":
            self.transcript.turns = (self.transcript.turns or 0) + 1
            usage = event.get("usage") or {}
            cached = usage.get("cached_input_tokens") or 0
            self.add_usage(
                input_tokens=(usage.get("input_tokens") or 0) - cached,
                output_tokens=usage.get("output_tokens"),
                cache_read_tokens=cached,
            )
        elif kind == "turn.failed":
            self.error = str((event.get("error") or {}).get("message") or "turn failed")
        elif kind == "error":
            self.error = str(event.get("message") or "error")


class Codex(Preset):
    name = "codex"
    key_variables = ("OPENAI_API_KEY", "CODEX_API_KEY")
    providers = {"openai": ""}
    instructions_file = "AGENTS.md"
    bridge_api = "openai"

    def bridge_environ(self, url: str, token: str, api: str) -> dict[str, str]:
        # Codex's built-in OpenAI provider reads both (its Responses API under /v1).
        return {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": token}

    def argv(self, run: Invocation) -> list[str]:
        argv = [
            self.program,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ]
        if run.model:
            argv += ["--model", run.model]
        return [*argv, run.prompt]

    def stream(self) -> Stream:
        return CodexStream()


PRESET = Codex
