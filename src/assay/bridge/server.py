"""The bridge's loopback HTTP server: one per attempt, on 127.0.0.1, for the CLI it runs.

It listens on a port of its own (chosen by the kernel) and answers only requests that
carry the attempt's token as their API key (`x-api-key`, `Authorization: Bearer`, or
Gemini's `x-goog-api-key` header and `?key=` parameter), so another program on the host
cannot spend through it. Four APIs, by path: `/v1/messages` (Anthropic),
`/v1/chat/completions` and `/v1/responses` (OpenAI; Chat Completions also under
`/openrouter/api/v1`, OpenRouter's shape of it, whose models are assay's `openrouter/` ones), and
`/v1beta/models/<model>:generateContent` / `:streamGenerateContent` (Gemini; `/v1` too;
and under `/v1beta/models/<any>/`, where LiteLLM's Gemini chat calls given a base URL that
already names a model: see `gemini`).
A request is translated into the canonical request, answered by the session (assay's model
layer), and the answer translated back: a whole JSON body, or server-sent events when the
request asked for `stream: true` (Gemini: streamGenerateContent, as events with `alt=sse`,
else as one JSON array of chunks). A body that is not the API's shape is a 400 in the
API's error shape; so is a call the session refuses (budget, offline miss: see session.py).

It can also listen on a Unix socket (`unix_socket`), the one door an OS sandbox without a
network of its own gets: the sandbox's exec shim relays its own 127.0.0.1:PORT to it
(`assay.isolation.exec_shim`), so the CLI's base URL is the same either way.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aiohttp import web

from assay.bridge import anthropic_api, gemini_api, openai_chat, openai_responses
from assay.bridge.session import BridgeSession, CallRefused
from assay.models.base import ModelRequest, ModelResponse

__all__ = ["MAX_REQUEST_BYTES", "OPENROUTER_BASE_PATH", "serve"]

MAX_REQUEST_BYTES = 32 * 1024 * 1024
"""A CLI sends its whole conversation every turn; past this, the call is refused (413)."""
OPENROUTER_BASE_PATH = "/openrouter/api/v1"
"""Where a CLI pointed at OpenRouter calls the bridge (its base URL is the bridge's URL and
this; it adds `/chat/completions`): the body's model (`anthropic/claude-sonnet-4.5`) is
then assay's `openrouter/` one. The path, not the model name, says so: OpenRouter's ids
look like assay's own `anthropic/...` and `openai/...` names."""


@dataclass(frozen=True)
class _Api:
    name: str
    translate: Callable[..., ModelRequest]
    error: Callable[[str, str], dict[str, Any]]


_ANTHROPIC = _Api(
    "anthropic-messages", anthropic_api.from_messages_request, anthropic_api.error_body
)
_CHAT = _Api("openai-chat", openai_chat.from_chat_request, openai_chat.error_body)
_OPENROUTER_CHAT = _Api(
    "openrouter-chat",
    functools.partial(openai_chat.from_chat_request, provider="openrouter"),
    openai_chat.error_body,
)
_RESPONSES = _Api(
    "openai-responses", openai_responses.from_responses_request, openai_responses.error_body
)


class _Bridge:
    def __init__(self, session: BridgeSession) -> None:
        self.session = session
        # A Responses request may continue a response of this attempt's: its translator
        # reads them from the session's store.
        continued = functools.partial(_RESPONSES.translate, stored=session.responses)
        self.responses_api = replace(_RESPONSES, translate=continued)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post("/v1/messages", self.messages)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post(f"{OPENROUTER_BASE_PATH}/chat/completions", self.openrouter_chat)
        app.router.add_post("/v1/responses", self.responses)
        app.router.add_post(r"/{version:v1beta|v1}/models/{call}", self.gemini)
        app.router.add_post(r"/{version:v1beta|v1}/models/{base}/models/{call}", self.gemini)
        return app

    async def _call(
        self, request: web.Request, api: _Api, *, stream: bool | None = None
    ) -> tuple[dict[str, Any], ModelRequest, ModelResponse] | web.Response:
        if not self.session.authorised(_api_key(request)):
            body = api.error("authentication_error", "assay's bridge: not this attempt's key")
            return web.json_response(body, status=401)
        try:
            raw = await request.read()
            body = json.loads(raw)
            canonical = api.translate(body, sample=self.session.sample)
        except web.HTTPRequestEntityTooLarge:
            raise
        except openai_responses.ResponseNotFound as exc:
            return web.json_response(exc.body, status=400)
        except (ValueError, UnicodeDecodeError) as exc:
            message = f"assay's bridge: {exc}"
            return web.json_response(api.error("invalid_request_error", message), status=400)
        if stream is None:  # the API says so in the body
            stream = bool(body.get("stream"))
        try:
            answer = await self.session.generate(canonical, api=api.name, stream=stream)
        except CallRefused as refused:
            body_out = api.error(refused.error_type, refused.message)
            return web.json_response(body_out, status=refused.status)
        return body, canonical, answer

    async def messages(self, request: web.Request) -> web.StreamResponse:
        called = await self._call(request, _ANTHROPIC)
        if isinstance(called, web.Response):
            return called
        body, canonical, answer = called
        message = anthropic_api.to_message(answer, str(body["model"]))
        if not body.get("stream"):
            return web.json_response(message)
        events = (
            f"event: {name}\ndata: {json.dumps(data)}\n\n"
            for name, data in anthropic_api.message_events(message)
        )
        return _sse(events)

    async def chat(self, request: web.Request, api: _Api = _CHAT) -> web.StreamResponse:
        called = await self._call(request, api)
        if isinstance(called, web.Response):
            return called
        body, _, answer = called
        completion = openai_chat.to_completion(answer, str(body["model"]))
        if not body.get("stream"):
            return web.json_response(completion)
        options = body.get("stream_options") or {}
        usage = isinstance(options, dict) and bool(options.get("include_usage"))
        chunks = openai_chat.completion_chunks(completion, include_usage=usage)
        lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
        return _sse([*lines, "data: [DONE]\n\n"])

    async def openrouter_chat(self, request: web.Request) -> web.StreamResponse:
        return await self.chat(request, _OPENROUTER_CHAT)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        called = await self._call(request, self.responses_api)
        if isinstance(called, web.Response):
            return called
        body, _, answer = called
        response = openai_responses.answer(body, answer, self.session.responses)
        if not body.get("stream"):
            return web.json_response(response)
        events = (
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            for event in openai_responses.response_events(response)
        )
        return _sse(events)

    async def gemini(self, request: web.Request) -> web.StreamResponse:
        # Given a base URL (`api_base`), LiteLLM's Gemini chat calls `<base>:<method>` in
        # releases before September 2025 and `<base>/models/<model>:<method>` since: aider
        # is given `<bridge>/v1beta/models/<model>`, so both reach a path here, and the
        # model named last is the one called.
        model, _, method = request.match_info["call"].rpartition(":")
        if method not in gemini_api.METHODS or not model:
            body = gemini_api.error_body("not_found", f"assay's bridge serves no {method!r}")
            return web.json_response(body, status=404)
        translate = functools.partial(gemini_api.from_generate_request, model=model)
        api = _Api("gemini-generate-content", translate, gemini_api.error_body)
        called = await self._call(request, api, stream=gemini_api.METHODS[method])
        if isinstance(called, web.Response):
            return called
        _, _, answer = called
        whole = gemini_api.to_generate_response(answer, model)
        if not gemini_api.METHODS[method]:
            return web.json_response(whole)
        chunks = gemini_api.response_chunks(whole)
        if request.query.get("alt") == "sse":
            return _sse(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks)
        return web.json_response(chunks)


def _api_key(request: web.Request) -> str | None:
    given = request.headers.get("x-api-key") or request.headers.get("x-goog-api-key")
    given = given or request.query.get("key")
    bearer = request.headers.get("authorization", "")
    if given is None and bearer[:7].lower() == "bearer ":
        given = bearer[7:].strip()
    return given


def _sse(chunks: Iterable[str]) -> web.Response:
    """The events as one response: the answer is whole already, and headers and body sent
    in one write spare the client a round of TCP's delayed acknowledgement (about 15 ms a
    call when the body followed the headers in a second write)."""
    return web.Response(
        body="".join(chunks).encode("utf-8"),
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
    )


@contextlib.asynccontextmanager
async def serve(session: BridgeSession, unix_socket: Path | None = None) -> AsyncIterator[str]:
    """The bridge of `session`, listening on 127.0.0.1 (and at `unix_socket`, when given)
    while the block runs: its base URL."""
    runner = web.AppRunner(_Bridge(session).app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        if unix_socket is not None:
            await web.UnixSite(runner, str(unix_socket)).start()
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()
