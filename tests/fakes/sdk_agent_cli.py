"""Fake `claude` and `codex` CLIs that call their model through the real SDKs (see sdk_clis.py).

Each is a small tool-use loop: it sends the task to the model at the SDK's base URL from
its environment (`ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, streamed), runs the tools the
model asks for (`read_file`; `solve`, which runs the example agent on a task), sends their
results back, and prints its stream in the real CLI's shape with the model's final
message. Like a real CLI it adds what varies per session to its requests (a random
`metadata.user_id` / `prompt_cache_key`, `cache_control`, its working directory and
today's date in the system prompt), which the bridge's cache key must not depend on.
`FAKE_CLI_STREAM=0`: claude asks for whole answers (the fake provider, called directly,
streams nothing). With `FAKE_CLI_ENV=<file>` it appends its whole environment there as a JSON line
(`scratch`: to `cli-env.jsonl` in the attempt's scratch directory, which the OS sandbox
lets it write).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CLI_USAGE = {"input": 1, "output": 1, "cost": 0.5}
"""What the fake CLI claims to have spent: not what it spent (the bridge counts that)."""

TOOLS = [
    ("read_file", "Read a file of the workspace.", {"path": {"type": "string"}}),
    ("solve", "Solve the task in the workspace.", {}),
]


def out(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


def system_prompt(kind: str) -> str:
    return (
        f"You are a fake coding agent. case kind: {kind}. Working directory: {os.getcwd()}. "
        f"Today's date is {datetime.date.today().isoformat()}."
    )


def run_tool(name: str, arguments: dict[str, Any]) -> tuple[str, list[str]]:
    """The tool's result, and the tool events it stands for (the example agent's)."""
    if name == "read_file":
        try:
            return Path(str(arguments.get("path", ""))).read_text()[:2000], ["read_file"]
        except OSError as exc:
            return f"error: {exc}", ["read_file"]
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "reference_agent.py"),
            os.environ["ASSAY_TASK_ID"],
            os.environ["ASSAY_WORKSPACE"],
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    events = []
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "tool":
            events.append(event["name"])
    return f"exit {done.returncode}", events


def model_of(default: str) -> str:
    return sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else default


def claude(kind: str) -> int:
    import anthropic

    client = anthropic.Anthropic(max_retries=0)  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
    prompt = sys.argv[sys.argv.index("-p") + 1]
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    tools = [
        {"name": n, "description": d, "input_schema": {"type": "object", "properties": p}}
        for n, d, p in TOOLS
    ]
    system = [{"type": "text", "text": system_prompt(kind), "cache_control": {"type": "ephemeral"}}]
    out({"type": "system", "subtype": "init", "session_id": str(uuid.uuid4())})
    final = ""
    for _turn in range(4):
        asked: dict[str, Any] = {
            "model": model_of("claude-sonnet-4-6"),
            "max_tokens": 1024,
            "system": system,
            "messages": messages,
            "tools": tools,
            "metadata": {"user_id": f"user_{uuid.uuid4()}"},
        }
        try:
            if os.environ.get("FAKE_CLI_STREAM") == "0":  # the fake provider streams nothing
                message = client.messages.create(**asked)
            else:
                with client.messages.stream(**asked) as stream:
                    message = stream.get_final_message()
        except anthropic.APIError as exc:
            out({"type": "result", "subtype": "error_during_execution", "is_error": True,
                 "result": str(exc)})  # fmt: skip
            return 1
        content = [block.model_dump(exclude_none=True) for block in message.content]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            final = "".join(b.get("text", "") for b in content if b["type"] == "text")
            out({"type": "assistant", "message": {"role": "assistant", "content": content}})
            break
        results = []
        for use in uses:
            result, events = run_tool(use["name"], use["input"])
            shown = [{"type": "tool_use", "id": use["id"], "name": e, "input": {}} for e in events]
            out({"type": "assistant", "message": {"role": "assistant", "content": shown}})
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": result})
        messages.append({"role": "user", "content": results})
    out(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": final,
            "total_cost_usd": CLI_USAGE["cost"],
            "usage": {"input_tokens": CLI_USAGE["input"], "output_tokens": CLI_USAGE["output"]},
        }
    )
    return 0


def codex(kind: str) -> int:
    import openai

    client = openai.OpenAI(max_retries=0)  # OPENAI_API_KEY, OPENAI_BASE_URL
    prompt = sys.argv[-1]
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
    ]
    tools = [
        {"type": "function", "name": n, "description": d, "strict": False,
         "parameters": {"type": "object", "properties": p}}
        for n, d, p in TOOLS
    ]  # fmt: skip
    out({"type": "thread.started", "thread_id": str(uuid.uuid4())})
    out({"type": "turn.started"})
    final = ""
    for _turn in range(4):
        try:
            events = client.responses.create(
                model=model_of("gpt-5"),
                instructions=system_prompt(kind),
                input=items,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                stream=True,
                store=False,
                prompt_cache_key=str(uuid.uuid4()),
            )
            response = None
            for event in events:
                if event.type in ("response.completed", "response.incomplete"):
                    response = event.response
        except openai.APIError as exc:
            out({"type": "turn.failed", "error": {"message": str(exc)}})
            return 1
        assert response is not None, "the stream ended without response.completed"
        output = [item.model_dump(exclude_none=True) for item in response.output]
        items.extend(output)
        calls = [item for item in output if item["type"] == "function_call"]
        if not calls:
            final = response.output_text
            break
        for call in calls:
            result, names = run_tool(call["name"], json.loads(call["arguments"] or "{}"))
            for name in names:
                item = {"id": call["id"], "type": "mcp_tool_call", "server": "fs", "tool": name}
                out({"type": "item.completed", "item": {**item, "status": "completed"}})
            items.append({"type": "function_call_output", "call_id": call["call_id"],
                          "output": result})  # fmt: skip
    out(
        {"type": "item.completed", "item": {"id": "item_z", "type": "agent_message", "text": final}}
    )
    usage = {"input_tokens": CLI_USAGE["input"], "output_tokens": CLI_USAGE["output"]}
    out({"type": "turn.completed", "usage": usage})
    return 0


def main(preset: str) -> int:
    if os.environ.get("FAKE_CLI_ENV"):
        where = os.environ["FAKE_CLI_ENV"]
        if where == "scratch":  # inside the OS sandbox: the attempt's own scratch directory
            where = str(Path(os.environ["ASSAY_DIFF_FILE"]).parent / "cli-env.jsonl")
        with open(where, "a") as dump:
            dump.write(json.dumps(dict(os.environ)) + "\n")
    kind = os.environ["ASSAY_CASE_KIND"]
    return claude(kind) if preset == "claude-code" else codex(kind)
