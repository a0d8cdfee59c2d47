"""Claude Code: `claude -p <prompt> --output-format stream-json --verbose`.

Its stream is one JSON object a line: `system` (init), `assistant` and `user` messages in
the Messages shape (`tool_use` blocks are its tool calls), and a last `result` with the
final text, `total_cost_usd` and `usage`. The skill is appended to its system prompt;
`--permission-mode bypassPermissions` lets it edit and run commands unattended, which the
OS sandbox makes safe. It runs `anthropic/` models (`--model claude-sonnet-4-6`); its key
is ANTHROPIC_API_KEY (or a CLAUDE_CODE_OAUTH_TOKEN).
"""

from __future__ import annotations

from typing import Any

from assay.agents.presets.base import Invocation, Preset, Stream

__all__ = ["PRESET", "ClaudeCode", "ClaudeCodeStream"]


class ClaudeCodeStream(Stream):
    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "assistant":
            message = event.get("message") or {}
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    self.tool(block.get("name"), block.get("input"), call_id=block.get("id"))
                elif block.get("type") == "text" and isinstance(block.get("text"), str):
                    self.transcript.text(block["text"])
        elif kind == "user":
            message = event.get("message") or {}
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.transcript.tool_result(
                        block.get("content"),
                        call_id=block.get("tool_use_id"),
                        is_error=block.get("is_error") is True,
                    )
        elif kind == "result":
            if isinstance(event.get("num_turns"), int):
                self.transcript.turns = event["num_turns"]
            usage = event.get("usage") or {}
            self.add_usage(
                input_tokens=usage.get("input_tokens"),
                output_tokens=usage.get("output_tokens"),
                cache_read_tokens=usage.get("cache_read_input_tokens"),
                cache_write_tokens=usage.get("cache_creation_input_tokens"),
            )
            cost = event.get("total_cost_usd")
            if isinstance(cost, int | float) and cost >= 0:
                self.usage = self.usage.model_copy(update={"cost_usd": float(cost)})
            if event.get("is_error") or event.get("subtype") != "success":
                self.error = str(event.get("result") or event.get("subtype") or "error")
            elif isinstance(event.get("result"), str):
                self.final_text = event["result"]


class ClaudeCode(Preset):
    name = "claude-code"
    key_variables = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
    providers = {"anthropic": ""}
    bridge_api = "anthropic"

    def bridge_environ(self, url: str, token: str, api: str) -> dict[str, str]:
        # No telemetry, error reports or update checks: only model calls leave the CLI.
        return {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": token,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def argv(self, run: Invocation) -> list[str]:
        argv = [
            self.program,
            "-p",
            run.prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
        ]
        if run.model:
            argv += ["--model", run.model]
        if run.skill:
            argv += ["--append-system-prompt", run.skill]
        return argv

    def stream(self) -> Stream:
        return ClaudeCodeStream()


PRESET = ClaudeCode
