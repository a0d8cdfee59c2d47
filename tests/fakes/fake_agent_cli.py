"""The fake agent CLI itself (see agent_clis.py), run as `claude`, `codex`, ... by a wrapper."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
USAGE = {"input": 1200, "output": 80, "cache_read": 300}
"""What every fake run reports spending (where the CLI reports each count)."""


def out(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


def noise(mode: str) -> None:
    if mode == "noisy":
        print("warning: telemetry disabled", flush=True)
        print('{"type": "assistant", "message": {"content": [', flush=True)


def main(PRESET: str) -> int:  # noqa: N803, C901, PLR0912, PLR0915 - a script, read top to bottom
    mode = os.environ.get("FAKE_CLI_MODE", "ok")
    CREDENTIAL = re.compile(r"(_API_KEY|_TOKEN|_SECRET_ACCESS_KEY|_ACCESS_KEY_ID)$")
    if os.environ.get("FAKE_CLI_LOG"):
        with open(os.environ["FAKE_CLI_LOG"], "a") as log:
            log.write(
                json.dumps(
                    {
                        "argv": sys.argv[1:],
                        "keys": sorted(k for k in os.environ if CREDENTIAL.search(k)),
                        "files": sorted(os.listdir(".")),
                    }
                )
                + "\n"
            )

    kind = os.environ["ASSAY_CASE_KIND"]
    tools: list[str] = []
    final = ""
    if kind == "task":
        done = subprocess.run(
            [
                sys.executable,
                os.path.join(str(ROOT), "examples", "reference_agent.py"),
                os.environ["ASSAY_TASK_ID"],
                os.environ["ASSAY_WORKSPACE"],
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        for line in done.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == "tool":
                tools.append(event["name"])
        final = "Done: the tests pass."
    else:
        diff = open(os.environ["ASSAY_DIFF_FILE"]).read()
        paths = re.findall(r"^\+\+\+ b/(.+)$", diff, re.M) or ["README.md"]
        tools.append("read_file")
        if kind == "review":
            answer = {
                "findings": [
                    {
                        "severity": "high",
                        "confidence": "high",
                        "title": "possible crash",
                        "description": "A value can be missing here and is used anyway.",
                        "location": {"path": paths[0], "startLine": 1},
                    }
                ]
            }
            final = "I read the change.\n\n```json\n" + json.dumps(answer, indent=1) + "\n```"
        elif kind == "verify":
            verdict = {"verdict": "keep", "reason": "the code does that"}
            final = "Checked the code.\n```json\n" + json.dumps(verdict) + "\n```"
        else:
            final = "## Review\n\nThe change is small and reads well; one edge case is unhandled."
    if mode == "prose":
        final = "Looks good to me."

    IN, OUT, CACHED = USAGE["input"], USAGE["output"], USAGE["cache_read"]
    complete = mode not in ("truncated",)
    failed = mode == "failed"

    if PRESET == "claude-code":
        out(
            {
                "type": "system",
                "subtype": "init",
                "session_id": "s1",
                "model": "claude-sonnet-4-6",
                "tools": ["Read", "Edit", "Bash"],
            }
        )
        for i, name in enumerate(tools):
            out(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"m{i}",
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": f"t{i}", "name": name, "input": {}}],
                    },
                    "session_id": "s1",
                }
            )
            noise(mode)
            out(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}
                        ],
                    },
                    "session_id": "s1",
                }
            )
        if complete:
            out(
                {
                    "type": "assistant",
                    "message": {
                        "id": "mz",
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": final}],
                    },
                    "session_id": "s1",
                }
            )
            out(
                {
                    "type": "result",
                    "subtype": "error_during_execution" if failed else "success",
                    "is_error": failed,
                    "duration_ms": 1200,
                    "num_turns": len(tools) + 1,
                    "result": "API Error: 529 overloaded" if failed else final,
                    "session_id": "s1",
                    "total_cost_usd": 0.0123,
                    "usage": {
                        "input_tokens": IN - CACHED,
                        "cache_read_input_tokens": CACHED,
                        "cache_creation_input_tokens": 0,
                        "output_tokens": OUT,
                    },
                }
            )
    elif PRESET == "codex":
        out({"type": "thread.started", "thread_id": "th_1"})
        out({"type": "turn.started"})
        for i, name in enumerate(tools):
            item = {
                "id": f"item_{i}",
                "type": "mcp_tool_call",
                "server": "fs",
                "tool": name,
                "status": "in_progress",
            }
            out({"type": "item.started", "item": item})
            noise(mode)
            out({"type": "item.completed", "item": {**item, "status": "completed"}})
        out(
            {
                "type": "item.completed",
                "item": {
                    "id": "item_c",
                    "type": "command_execution",
                    "command": "bash -lc ls",
                    "aggregated_output": "",
                    "exit_code": 0,
                    "status": "completed",
                },
            }
        )
        if failed:
            out({"type": "error", "message": "stream error: 429 Too Many Requests"})
            out({"type": "turn.failed", "error": {"message": "429 Too Many Requests"}})
        elif complete:
            out(
                {
                    "type": "item.completed",
                    "item": {"id": "item_z", "type": "agent_message", "text": final},
                }
            )
            out(
                {
                    "type": "turn.completed",
                    "usage": {
                        "input_tokens": IN,
                        "cached_input_tokens": CACHED,
                        "output_tokens": OUT,
                    },
                }
            )
    elif PRESET == "gemini-cli":
        out(
            {
                "type": "init",
                "timestamp": "2026-12-01T10:00:00Z",
                "session_id": "g1",
                "model": "gemini-2.5-pro",
            }
        )
        out(
            {
                "type": "message",
                "timestamp": "2026-12-01T10:00:00Z",
                "role": "user",
                "content": "the prompt",
            }
        )
        for i, name in enumerate(tools):
            out({"type": "message", "role": "assistant", "content": "Let me look.", "delta": True})
            out(
                {
                    "type": "tool_use",
                    "timestamp": "2026-12-01T10:00:01Z",
                    "tool_name": name,
                    "tool_id": f"c{i}",
                    "parameters": {},
                }
            )
            noise(mode)
            out(
                {
                    "type": "tool_result",
                    "timestamp": "2026-12-01T10:00:01Z",
                    "tool_id": f"c{i}",
                    "status": "success",
                    "output": "ok",
                }
            )
        if complete:
            half = len(final) // 2
            out({"type": "message", "role": "assistant", "content": final[:half], "delta": True})
            out({"type": "message", "role": "assistant", "content": final[half:], "delta": True})
            result = {
                "type": "result",
                "timestamp": "2026-12-01T10:00:02Z",
                "status": "error" if failed else "success",
                "stats": {
                    "total_tokens": IN + OUT,
                    "input_tokens": IN,
                    "output_tokens": OUT,
                    "cached": CACHED,
                    "duration_ms": 900,
                    "tool_calls": len(tools),
                },
            }
            if failed:
                result["error"] = {"type": "ApiError", "message": "quota exceeded"}
            out(result)
    elif PRESET == "opencode":

        def part(kind: str, **fields: Any) -> dict[str, Any]:
            return {
                "id": "prt_1",
                "sessionID": "ses_1",
                "messageID": "msg_1",
                "type": kind,
                **fields,
            }

        out(
            {"type": "step_start", "timestamp": 1, "sessionID": "ses_1", "part": part("step-start")}
        )
        for i, name in enumerate(tools):
            out(
                {
                    "type": "tool_use",
                    "timestamp": 2,
                    "sessionID": "ses_1",
                    "part": part(
                        "tool",
                        callID=f"c{i}",
                        tool=name,
                        state={"status": "completed", "input": {}, "output": "ok"},
                    ),
                }
            )
            noise(mode)
        out(
            {
                "type": "step_finish",
                "timestamp": 3,
                "sessionID": "ses_1",
                "part": part(
                    "step-finish",
                    reason="tool-calls",
                    tokens={
                        "input": IN - CACHED - 200,
                        "output": OUT // 2,
                        "reasoning": 0,
                        "cache": {"read": CACHED, "write": 0},
                    },
                    cost=0.004,
                ),
            }
        )
        if failed:
            out(
                {
                    "type": "error",
                    "timestamp": 4,
                    "sessionID": "ses_1",
                    "error": {"name": "APIError", "data": {"message": "rate limited"}},
                }
            )
        elif complete:
            out(
                {
                    "type": "step_start",
                    "timestamp": 4,
                    "sessionID": "ses_1",
                    "part": part("step-start"),
                }
            )
            out(
                {
                    "type": "text",
                    "timestamp": 5,
                    "sessionID": "ses_1",
                    "part": part("text", text=final),
                }
            )
            out(
                {
                    "type": "step_finish",
                    "timestamp": 6,
                    "sessionID": "ses_1",
                    "part": part(
                        "step-finish",
                        reason="stop",
                        tokens={
                            "input": 200,
                            "output": OUT - OUT // 2,
                            "reasoning": 0,
                            "cache": {"read": 0, "write": 0},
                        },
                        cost=0.006,
                    ),
                }
            )
    elif PRESET == "aider":
        print("Aider v0.86.1")
        print("Main model: anthropic/claude-sonnet-4-6 with diff edit format")
        for name in tools:
            if name == "edit_file":
                print("Applied edit to src/app.py")
        if mode == "noisy":
            print("\x1b[0m")
        if failed:
            print("litellm.RateLimitError: AnthropicException - rate limited", file=sys.stderr)
            return 1
        if complete:
            print(final)
            print(
                f"Tokens: {IN / 1000:.1f}k sent, {CACHED} cache hit, {OUT} received. "
                "Cost: $0.01 message, $0.02 session."
            )
    return 1 if failed else 0
