"""Gemini CLI: `gemini -p <prompt> --output-format stream-json`.

Its stream (JSONL) has `init`, `message` (user and assistant chunks; assistant ones with
`delta: true` are parts of one reply), `tool_use` (`tool_name`, `parameters`),
`tool_result`, `error` and a last `result` with `status` and `stats` (token counts). The
final message is the assistant's text after its last tool call. The skill goes to
GEMINI.md in the workspace; `--approval-mode yolo` approves its tools unattended. It runs
`gemini/` models (`--model gemini-2.5-pro`); its key is GEMINI_API_KEY (or GOOGLE_API_KEY).
Its calls go through assay's model bridge on Gemini's API: gemini-cli (and the
`@google/genai` SDK under it) reads the base URL from GOOGLE_GEMINI_BASE_URL and calls
`<base>/v1beta/models/<model>:streamGenerateContent?alt=sse` with GEMINI_API_KEY as its
`x-goog-api-key`.
"""

from __future__ import annotations

from typing import Any

from assay.agents.presets.base import Invocation, Preset, Stream

__all__ = ["PRESET", "GeminiCli", "GeminiCliStream"]


class GeminiCliStream(Stream):
    def __init__(self) -> None:
        super().__init__()
        self._reply: list[str] = []

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            if isinstance(event.get("content"), str):
                if not event.get("delta"):
                    self._reply = []
                self._reply.append(event["content"])
        elif kind == "tool_use":
            self.tool(event.get("tool_name"), event.get("parameters"), call_id=event.get("tool_id"))
            self._reply = []  # text before a tool call is narration, not the answer
        elif kind == "tool_result":
            self.transcript.tool_result(
                event.get("output"),
                call_id=event.get("tool_id"),
                is_error=event.get("status") == "error",
            )
        elif kind == "result":
            stats = event.get("stats") or {}
            cached = stats.get("cached") or 0
            self.add_usage(
                input_tokens=(stats.get("input_tokens") or 0) - cached,
                output_tokens=stats.get("output_tokens"),
                cache_read_tokens=cached,
            )
            if event.get("status") not in (None, "success"):
                error = event.get("error") or {}
                self.error = str(error.get("message") if isinstance(error, dict) else error)
            elif self._reply:
                self.final_text = "".join(self._reply)
        elif kind == "error" and event.get("severity") == "error":
            self.error = str(event.get("message") or "error")


class GeminiCli(Preset):
    name = "gemini-cli"
    key_variables = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    providers = {"gemini": ""}
    instructions_file = "GEMINI.md"
    bridge_api = "gemini"

    def bridge_environ(self, url: str, token: str, api: str) -> dict[str, str]:
        # With a base URL set and no auth chosen in its settings, gemini-cli authenticates
        # with GEMINI_API_KEY (its "gateway" auth); a host's GOOGLE_GENAI_USE_VERTEXAI or
        # GOOGLE_GENAI_USE_GCA would choose Vertex AI or a Google login over it.
        return {
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_API_KEY": token,
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
            "GOOGLE_GENAI_USE_GCA": "false",
        }

    def argv(self, run: Invocation) -> list[str]:
        argv = [
            self.program,
            "-p",
            run.prompt,
            "--output-format",
            "stream-json",
            "--approval-mode",
            "yolo",
        ]
        if run.model:
            argv += ["--model", run.model]
        return argv

    def stream(self) -> Stream:
        return GeminiCliStream()


PRESET = GeminiCli
