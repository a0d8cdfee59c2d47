"""Fake `claude`, `codex`, `gemini`, `opencode` and `aider` CLIs that call their model
through the real SDKs (see sdk_clis.py).

Each is a small tool-use loop: it sends the task to the model at the base URL it finds
where the real CLI looks for it (claude: `ANTHROPIC_BASE_URL`; codex: `OPENAI_BASE_URL`;
gemini: `GOOGLE_GEMINI_BASE_URL` with GEMINI_API_KEY as its `x-goog-api-key`; opencode:
its inline config, OPENCODE_CONFIG_CONTENT; aider: LiteLLM's variables, and for Gemini
the `api_base` of its --model-settings-file; OpenRouter's: Chat Completions, with its own
body fields and app headers), on
the API the real CLI speaks for the model's provider, runs the tools the model asks for
(`read_file`; `solve`, which runs the example agent on a task), sends their results back,
and prints its output in the real CLI's shape with the model's final message. Like a real
CLI it adds what varies per session to its requests (a random `metadata.user_id` /
`prompt_cache_key`, `cache_control`, its working directory and today's date in the system
prompt; gemini: a session context naming the date in a locale's words and a project
directory whose name counts the runs), which the bridge's cache key must not depend on.
`FAKE_CLI_STREAM=0`: claude asks for whole answers (the fake provider, called directly,
streams nothing). With `FAKE_CLI_ENV=<file>` it appends its whole environment there as a
JSON line (`scratch`: to `cli-env.jsonl` in the attempt's scratch directory, which the OS
sandbox lets it write).
With `FAKE_CLI_PROBE=<port>` it first tries a TCP connection to 127.0.0.1:<port> and
writes what came of it (`connected`, or the error) to `probe.txt` in that directory.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable
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


def system_prompt(kind: str, today: str = "") -> str:
    return (
        f"You are a fake coding agent. case kind: {kind}. Working directory: {os.getcwd()}. "
        f"Today's date is {today or datetime.date.today().isoformat()}."
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


def fake_tools(shape: str) -> list[dict[str, Any]]:
    """The fake CLI's tools, as the API `shape` declares them."""
    schemas = [(n, d, {"type": "object", "properties": p}) for n, d, p in TOOLS]
    if shape == "messages":
        return [{"name": n, "description": d, "input_schema": s} for n, d, s in schemas]
    if shape == "responses":
        return [{"type": "function", "name": n, "description": d, "strict": False,
                 "parameters": s} for n, d, s in schemas]  # fmt: skip
    return [{"type": "function", "function": {"name": n, "description": d, "parameters": s}}
            for n, d, s in schemas]  # fmt: skip


OPENROUTER_HEADERS = {"HTTP-Referer": "https://opencode.ai/", "X-Title": "opencode"}
"""opencode's app headers on its OpenRouter calls."""
LITELLM_OPENROUTER_HEADERS = {"HTTP-Referer": "https://litellm.ai", "X-Title": "liteLLM"}
"""LiteLLM's, without OR_SITE_URL and OR_APP_NAME."""

Shown = Callable[[str, list[str]], None]
"""Prints a tool call as the CLI does: its id and the tool events it stands for."""


def messages_turns(
    client: Any, model: str, system_text: str, prompt: str, shown: Shown, *, stream: bool
) -> str:
    """The tool loop on the Messages API: the final text."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    system = [{"type": "text", "text": system_text, "cache_control": {"type": "ephemeral"}}]
    for _turn in range(4):
        asked: dict[str, Any] = {
            "model": model,
            "max_tokens": 1024,
            "system": system,
            "messages": messages,
            "tools": fake_tools("messages"),
            "metadata": {"user_id": f"user_{uuid.uuid4()}"},
        }
        if stream:
            with client.messages.stream(**asked) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**asked)
        content = [block.model_dump(exclude_none=True) for block in message.content]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            return "".join(b.get("text", "") for b in content if b["type"] == "text")
        results = []
        for use in uses:
            result, events = run_tool(use["name"], use["input"])
            shown(use["id"], events)
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": result})
        messages.append({"role": "user", "content": results})
    return ""


def responses_turns(client: Any, model: str, system_text: str, prompt: str, shown: Shown) -> str:
    """The tool loop on the Responses API, streamed, storing nothing: the final text."""
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
    ]
    for _turn in range(4):
        events = client.responses.create(
            model=model,
            instructions=system_text,
            input=items,
            tools=fake_tools("responses"),
            stream=True,
            store=False,
            prompt_cache_key=str(uuid.uuid4()),
        )
        response = None
        for event in events:
            if event.type in ("response.completed", "response.incomplete"):
                response = event.response
        assert response is not None, "the stream ended without response.completed"
        output = [item.model_dump(exclude_none=True) for item in response.output]
        items.extend(output)
        calls = [item for item in output if item["type"] == "function_call"]
        if not calls:
            return str(response.output_text)
        for call in calls:
            result, names = run_tool(call["name"], json.loads(call["arguments"] or "{}"))
            shown(call["id"], names)
            items.append({"type": "function_call_output", "call_id": call["call_id"],
                          "output": result})  # fmt: skip
    return ""


def chat_turns(
    client: Any,
    model: str,
    system_text: str,
    prompt: str,
    shown: Shown,
    *,
    stream: bool = False,
    extra_body: dict[str, Any] | None = None,
) -> str:
    """The tool loop on Chat Completions, whole answers or streamed ones (OpenRouter's SDK,
    asking for the usage in the last chunk): the final text. `extra_body`: fields a CLI
    adds for the API it calls (OpenRouter's `usage`)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_text},
        {"role": "user", "content": prompt},
    ]
    for _turn in range(4):
        asked = {"model": model, "messages": messages, "tools": fake_tools("chat"),
                 "extra_body": extra_body}  # fmt: skip
        if stream:
            content, calls = streamed_chat(client, asked)
        else:
            answer = client.chat.completions.create(**asked).choices[0].message
            content = answer.content
            calls = [call.model_dump(exclude_none=True) for call in answer.tool_calls or []]
        messages.append({"role": "assistant", "content": content, "tool_calls": calls}
                        if calls else {"role": "assistant", "content": content})  # fmt: skip
        if not calls:
            return str(content or "")
        for call in calls:
            function = call["function"]
            result, names = run_tool(function["name"], json.loads(function["arguments"] or "{}"))
            shown(call["id"], names)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return ""


def streamed_chat(client: Any, asked: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """One streamed chat.completions call: its text and tool calls, put together from the
    chunks as an SDK does (a call's arguments arrive in pieces, by index)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    options = {"include_usage": True}
    for chunk in client.chat.completions.create(**asked, stream=True, stream_options=options):
        for choice in chunk.choices:
            delta = choice.delta
            text.append(delta.content or "")
            for piece in delta.tool_calls or []:
                call = calls.setdefault(piece.index, {"id": "", "type": "function",
                                        "function": {"name": "", "arguments": ""}})  # fmt: skip
                call["id"] = piece.id or call["id"]
                if piece.function is not None:
                    call["function"]["name"] += piece.function.name or ""
                    call["function"]["arguments"] += piece.function.arguments or ""
    return "".join(text) or None, [calls[index] for index in sorted(calls)]


def gemini_turns(
    client: Any, model: str, system_text: str, contents: list[Any], shown: Shown, *, ids: bool
) -> str:
    """The tool loop on Gemini's generateContent, streamed (`alt=sse`): the final text.
    Without `ids` the function calls and responses go back with none (the AI SDK's way)."""
    from google.genai import types

    declarations = [
        types.FunctionDeclaration(name=n, description=d, parameters_json_schema=s)
        for n, d, s in [(n, d, {"type": "object", "properties": p}) for n, d, p in TOOLS]
    ]
    config = types.GenerateContentConfig(
        system_instruction=system_text,
        tools=[types.Tool(function_declarations=declarations)],
        temperature=0,
        top_p=0.95,  # not in the canonical request: dropped before the cache key
    )
    for _turn in range(4):
        parts: list[Any] = []
        for chunk in client.models.generate_content_stream(
            model=model, contents=contents, config=config
        ):
            for candidate in chunk.candidates or []:
                parts.extend(candidate.content.parts or [] if candidate.content else [])
        calls = [part.function_call for part in parts if part.function_call]
        if not ids:
            for call in calls:
                call.id = None
        contents.append(types.Content(role="model", parts=parts))
        if not calls:
            return "".join(part.text or "" for part in parts if not part.thought)
        answers = []
        for call in calls:
            result, events = run_tool(call.name, dict(call.args or {}))
            shown(call.id or call.name, events)
            response = types.FunctionResponse(
                id=call.id, name=call.name, response={"output": result}
            )
            answers.append(types.Part(function_response=response))
        contents.append(types.Content(role="user", parts=answers))
    return ""


def gemini(kind: str) -> int:
    """gemini-cli: GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY; its first user turn is a
    session context (the date as the locale says it, the project's directory under
    ~/.gemini/tmp, named anew for each new workspace), then the prompt."""
    from google import genai
    from google.genai import errors, types

    base = os.environ.get("GOOGLE_GEMINI_BASE_URL")
    options = types.HttpOptions(base_url=base) if base else None
    client = genai.Client(api_key=os.environ.get("GEMINI_API_KEY"), http_options=options)
    prompt = sys.argv[sys.argv.index("-p") + 1]
    today = datetime.date.today().strftime("%A, %B %-d, %Y")
    project = f"~/.gemini/tmp/workspace-{random.randint(1, 999)}"
    context = (
        f"This is the Gemini CLI. Today's date is {today} (formatted according to the "
        f"user's locale).\nThe project's temporary directory is: {project}"
    )
    contents: list[Any] = [
        types.Content(role="user", parts=[types.Part(text=context)]),
        types.Content(role="user", parts=[types.Part(text=prompt)]),
    ]

    def shown(call_id: str, events: list[str]) -> None:
        for name in events:
            out({"type": "tool_use", "tool_name": name, "tool_id": call_id, "parameters": {}})
            out({"type": "tool_result", "tool_id": call_id, "status": "success", "output": ""})

    out({"type": "init", "session_id": str(uuid.uuid4()), "model": model_of("gemini-2.5-pro")})
    try:
        final = gemini_turns(
            client, model_of("gemini-2.5-pro"), system_prompt(kind), contents, shown, ids=True
        )
    except errors.APIError as exc:
        out({"type": "result", "status": "error", "error": {"message": str(exc)}})
        return 1
    out({"type": "message", "role": "assistant", "content": final, "delta": True})
    stats = {"input_tokens": CLI_USAGE["input"], "output_tokens": CLI_USAGE["output"]}
    out({"type": "result", "status": "success", "stats": stats})
    return 0


def claude(kind: str) -> int:
    import anthropic

    client = anthropic.Anthropic(max_retries=0)  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
    prompt = sys.argv[sys.argv.index("-p") + 1]

    def shown(call_id: str, events: list[str]) -> None:
        uses = [{"type": "tool_use", "id": call_id, "name": e, "input": {}} for e in events]
        out({"type": "assistant", "message": {"role": "assistant", "content": uses}})

    out({"type": "system", "subtype": "init", "session_id": str(uuid.uuid4())})
    try:
        streamed = os.environ.get("FAKE_CLI_STREAM") != "0"  # the fake provider streams nothing
        model = model_of("claude-sonnet-4-6")
        final = messages_turns(client, model, system_prompt(kind), prompt, shown, stream=streamed)
    except anthropic.APIError as exc:
        out({"type": "result", "subtype": "error_during_execution", "is_error": True,
             "result": str(exc)})  # fmt: skip
        return 1
    text = [{"type": "text", "text": final}]
    out({"type": "assistant", "message": {"role": "assistant", "content": text}})
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

    def shown(call_id: str, events: list[str]) -> None:
        for name in events:
            item = {"id": call_id, "type": "mcp_tool_call", "server": "fs", "tool": name}
            out({"type": "item.completed", "item": {**item, "status": "completed"}})

    out({"type": "thread.started", "thread_id": str(uuid.uuid4())})
    out({"type": "turn.started"})
    try:
        final = responses_turns(client, model_of("gpt-5"), system_prompt(kind), sys.argv[-1], shown)
    except openai.APIError as exc:
        out({"type": "turn.failed", "error": {"message": str(exc)}})
        return 1
    out(
        {"type": "item.completed", "item": {"id": "item_z", "type": "agent_message", "text": final}}
    )
    usage = {"input_tokens": CLI_USAGE["input"], "output_tokens": CLI_USAGE["output"]}
    out({"type": "turn.completed", "usage": usage})
    return 0


def opencode(kind: str) -> int:
    """opencode: a provider's base URL and key from its config (OPENCODE_CONFIG_CONTENT, the
    inline config it merges last), as the AI SDK takes them (the base URL ends in /v1, or
    Google's in /v1beta); Anthropic's models on the Messages API, OpenAI's on the Responses
    API, Google's on generateContent with no ids on its function calls and responses,
    OpenRouter's on Chat Completions under its base URL (`<base>/chat/completions`), streamed."""
    import anthropic
    import openai

    provider, model = model_of("anthropic/claude-sonnet-4-6").split("/", 1)
    config = json.loads(os.environ.get("OPENCODE_CONFIG_CONTENT") or "{}")
    options = config.get("provider", {}).get(provider, {}).get("options", {})
    base_url, api_key = options.get("baseURL"), options.get("apiKey")

    def shown(call_id: str, events: list[str]) -> None:
        for name in events:
            state = {"status": "completed", "input": {}}
            out({"type": "tool_use", "part": {"tool": name, "callID": call_id, "state": state}})

    # Its environment block dates the day as JavaScript's Date.toDateString does.
    system = system_prompt(kind, datetime.date.today().strftime("%a %b %d %Y"))
    out({"type": "step_start", "part": {}})
    try:
        if provider == "anthropic":
            # The AI SDK's base URL holds the /v1 the Python SDK adds itself.
            root = base_url.removesuffix("/v1") if base_url else None
            client: Any = anthropic.Anthropic(base_url=root, api_key=api_key, max_retries=0)
            final = messages_turns(client, model, system, sys.argv[-1], shown, stream=True)
        elif provider == "google":
            from google import genai
            from google.genai import types

            root = base_url.removesuffix("/v1beta") if base_url else None
            options = types.HttpOptions(base_url=root) if root else None
            client = genai.Client(api_key=api_key, http_options=options)
            prompt = [types.Content(role="user", parts=[types.Part(text=sys.argv[-1])])]
            final = gemini_turns(client, model, system, prompt, shown, ids=False)
        elif provider == "openrouter":
            # OpenRouter's AI SDK provider: Chat Completions under its base URL, streamed,
            # asking for OpenRouter's usage accounting, with opencode's app headers.
            client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0,
                                   default_headers=OPENROUTER_HEADERS)  # fmt: skip
            final = chat_turns(client, model, system, sys.argv[-1], shown, stream=True,
                               extra_body={"usage": {"include": True}})  # fmt: skip
        else:
            client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
            final = responses_turns(client, model, system, sys.argv[-1], shown)
    except (anthropic.APIError, openai.APIError) as exc:
        out({"type": "error", "error": {"name": "APIError", "data": {"message": str(exc)}}})
        return 1
    except Exception as exc:  # google.genai's errors.APIError, imported above only for it
        if type(exc).__module__ != "google.genai.errors":
            raise
        out({"type": "error", "error": {"name": "APIError", "data": {"message": str(exc)}}})
        return 1
    out({"type": "text", "part": {"text": final}})
    tokens = {"input": CLI_USAGE["input"], "output": CLI_USAGE["output"], "reasoning": 0,
              "cache": {"read": 0, "write": 0}}  # fmt: skip
    out({"type": "step_finish", "part": {"tokens": tokens, "cost": CLI_USAGE["cost"]}})
    return 0


def litellm_gemini_turns(model: str, system_text: str, prompt: str, shown: Shown) -> str:
    """The tool loop on Gemini's generateContent as LiteLLM calls it for aider, whole (its
    --no-stream): to the `api_base` of aider's model settings (`--model-settings-file`, a
    YAML list: `aider/extra_params`, else the model's entry), with GEMINI_API_KEY. Since
    LiteLLM's PR 14604 (September 2025) at `<api_base>/models/<model>:generateContent` with
    the key as `x-goog-api-key`; before it (`FAKE_LITELLM=before-14604`) at
    `<api_base>:generateContent` with the key as a Bearer token. Its calls and their
    results carry no ids, as LiteLLM's do not. With `FAKE_CLI_ENV=<file>` it appends the
    settings file's path and text to `<file>.settings`."""
    import urllib.request

    import yaml

    settings_file = sys.argv[sys.argv.index("--model-settings-file") + 1]
    text = Path(settings_file).read_text(encoding="utf-8")
    entries = yaml.safe_load(text)
    if os.environ.get("FAKE_CLI_ENV", "scratch") != "scratch":  # what it read, for the test
        with open(os.environ["FAKE_CLI_ENV"] + ".settings", "a") as dump:
            dump.write(json.dumps({"path": settings_file, "text": text, "cwd": os.getcwd()}) + "\n")
    named = {entry["name"]: entry.get("extra_params") or {} for entry in entries}
    api_base = {**named.get("aider/extra_params", {}), **named.get(f"gemini/{model}", {})}[
        "api_base"
    ]
    key = os.environ["GEMINI_API_KEY"]
    if os.environ.get("FAKE_LITELLM") == "before-14604":
        url, auth = f"{api_base}:generateContent", {"Authorization": f"Bearer {key}"}
    else:
        url, auth = f"{api_base}/models/{model}:generateContent", {"x-goog-api-key": key}
    declarations = [{"name": n, "description": d, "parameters": {"type": "object",
                     "properties": p}} for n, d, p in TOOLS]  # fmt: skip
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": prompt}]}]
    for _turn in range(4):
        body = {
            "contents": contents,
            "system_instruction": {"parts": [{"text": system_text}]},
            "tools": [{"function_declarations": declarations}],
            "generationConfig": {"temperature": 0},
        }
        request = urllib.request.Request(
            url, json.dumps(body).encode(), {"Content-Type": "application/json", **auth}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
        parts = answer["candidates"][0]["content"].get("parts") or []
        contents.append({"role": "model", "parts": parts})
        calls = [part["functionCall"] for part in parts if "functionCall" in part]
        if not calls:
            return "".join(part.get("text", "") for part in parts if not part.get("thought"))
        answers = []
        for call in calls:
            result, events = run_tool(call["name"], dict(call.get("args") or {}))
            shown(call["name"], events)
            answers.append({"functionResponse": {"name": call["name"],
                                                 "response": {"content": result}}})  # fmt: skip
        contents.append({"role": "user", "parts": answers})
    return ""


def aider(kind: str) -> int:
    """aider (LiteLLM): ANTHROPIC_API_BASE, else ANTHROPIC_BASE_URL (LiteLLM adds
    /v1/messages), OPENAI_BASE_URL, else OPENAI_API_BASE (with /v1), OPENROUTER_API_BASE
    (it adds /chat/completions), Gemini's `api_base` from its model settings
    (`litellm_gemini_turns`), whole answers (its --no-stream);
    text on stdout, its usage on a `Tokens:` line. aider itself offers the model no tools:
    the fake keeps the one loop so that the fake model answers it alike."""
    import urllib.error

    import anthropic
    import openai

    provider, model = model_of("anthropic/claude-sonnet-4-6").split("/", 1)
    prompt = sys.argv[sys.argv.index("--message") + 1]
    system = system_prompt(kind)

    def shown(_call_id: str, _events: list[str]) -> None:
        pass  # aider prints no tool calls

    print("Aider v0.86.1", flush=True)
    print(f"Main model: {provider}/{model} with diff edit format", flush=True)
    try:
        if provider == "anthropic":
            root = os.environ.get("ANTHROPIC_API_BASE") or os.environ.get("ANTHROPIC_BASE_URL")
            client: Any = anthropic.Anthropic(base_url=root, max_retries=0)
            final = messages_turns(client, model, system, prompt, shown, stream=False)
        elif provider == "gemini":
            final = litellm_gemini_turns(model, system, prompt, shown)
        elif provider == "openrouter":
            # LiteLLM: OPENROUTER_API_BASE (default https://openrouter.ai/api/v1) and
            # OPENROUTER_API_KEY; its headers from OR_SITE_URL / OR_APP_NAME; it always asks
            # for OpenRouter's usage accounting, and sends `transforms` when given.
            base = os.environ.get("OPENROUTER_API_BASE") or "https://openrouter.ai/api/v1"
            key = os.environ.get("OPENROUTER_API_KEY")
            headers = LITELLM_OPENROUTER_HEADERS
            client = openai.OpenAI(
                base_url=base, api_key=key, max_retries=0, default_headers=headers
            )
            # aider's model settings may add `transforms` (its `extra_params`): the fake does.
            extra = {"usage": {"include": True}, "transforms": ["middle-out"]}
            final = chat_turns(client, model, system, prompt, shown, extra_body=extra)
        else:
            base = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
            client = openai.OpenAI(base_url=base, max_retries=0)
            final = chat_turns(client, model, system, prompt, shown)
    except (anthropic.APIError, openai.APIError, urllib.error.HTTPError) as exc:
        print(f"litellm.APIError: {exc}", flush=True)
        return 1
    print(final, flush=True)
    cost = CLI_USAGE["cost"]
    print(f"Tokens: {CLI_USAGE['input']} sent, {CLI_USAGE['output']} received. "
          f"Cost: ${cost:.2f} message, ${cost:.2f} session.", flush=True)  # fmt: skip
    return 0


CLIS = {
    "claude-code": claude,
    "codex": codex,
    "gemini-cli": gemini,
    "opencode": opencode,
    "aider": aider,
}


def main(preset: str) -> int:
    if os.environ.get("FAKE_CLI_ENV"):
        where = os.environ["FAKE_CLI_ENV"]
        if where == "scratch":  # inside the OS sandbox: the attempt's own scratch directory
            where = str(Path(os.environ["ASSAY_DIFF_FILE"]).parent / "cli-env.jsonl")
        with open(where, "a") as dump:
            dump.write(json.dumps(dict(os.environ)) + "\n")
    if os.environ.get("FAKE_CLI_PROBE"):
        try:
            with socket.create_connection(("127.0.0.1", int(os.environ["FAKE_CLI_PROBE"])), 5):
                outcome = "connected"
        except OSError as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        probe = Path(os.environ["ASSAY_DIFF_FILE"]).parent / "probe.txt"
        probe.write_text(outcome, encoding="utf-8")
    return CLIS[preset](os.environ["ASSAY_CASE_KIND"])
