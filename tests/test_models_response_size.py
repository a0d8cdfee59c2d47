"""Every model response body is read under a bound, counted decoded (`_http.MAX_RESPONSE_BYTES`).

A gzip bomb (a small compressed body that inflates to far more than any answer) and a
plain oversized body go through the real SDKs to the loopback fakes: the read stops
shortly past the bound (tracemalloc's peak over the call stays near it, where reading the
whole body would hold it twice), the call is a ModelError naming the endpoint, it is not
retried, and the client's next call works. An ordinary gzip-compressed answer is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import threading
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from assay.errors import ModelError
from assay.models import Message, ModelRequest, ModelResponse, generate
from assay.models import retry as retry_module
from assay.models._http import MAX_RESPONSE_BYTES
from assay.models.scope import aclose_scope
from tests.fakes.anthropic_api import FakeAnthropic, text_reply
from tests.fakes.cloud import OPENAI_COMPATIBLE, SETUPS, CloudSetup
from tests.fakes.loopback import Reply
from tests.fakes.scripted import Responder, ScriptedModelServer

ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef"


def _anthropic(monkeypatch: pytest.MonkeyPatch, responder: Responder | None) -> FakeAnthropic:
    fake = FakeAnthropic(api_key=ANTHROPIC_KEY, responder=responder).start()
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    return fake


ANTHROPIC = CloudSetup("anthropic", "anthropic/claude-sonnet-4-6", ANTHROPIC_KEY, _anthropic)
EVERY_PROVIDER = (ANTHROPIC, *SETUPS, *OPENAI_COMPATIBLE)
"""Each kind of client assay builds: anthropic's (direct, Bedrock, Vertex), openai's
(OpenAI, OpenRouter) and google-genai's (Gemini)."""
ONE_PER_SDK = (ANTHROPIC, OPENAI_COMPATIBLE[0], SETUPS[2])
MEMORY_MARGIN = 8 * 1024 * 1024
"""What the call may allocate beyond the bound: the piece that crossed it, buffers."""


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waited: list[float] = []

    async def no_wait(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(retry_module, "sleep", no_wait)
    return waited


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """Twice the bound of JSON once inflated (a text block of spaces), 64 KB compressed."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # the gzip format
    parts = [packer.compress(b'{"type": "message", "content": [{"type": "text", "text": "')]
    spaces = b" " * (1024 * 1024)
    parts += [packer.compress(spaces) for _ in range(2 * MAX_RESPONSE_BYTES // len(spaces))]
    parts += [packer.compress(b'"}]}'), packer.flush()]
    return b"".join(parts)


@pytest.fixture(scope="module")
def oversized_body() -> bytes:
    """A plain body a quarter past the bound, made before any call is traced."""
    return b'{"padding": "' + b"x" * (MAX_RESPONSE_BYTES // 4 * 5) + b'"}'


def ask(model: str) -> ModelRequest:
    return ModelRequest(
        model=model,
        system="You review code.",
        messages=(Message("user", ({"type": "text", "text": "Review this diff."},)),),
    )


def refused_then_served(
    setup: CloudSetup, fake: ScriptedModelServer, reply: Reply
) -> tuple[ModelError, int, ModelResponse]:
    """Warm the client up, have `reply` answer one call under tracemalloc, call again.

    Returns that call's ModelError, the peak bytes allocated during it, and the answer of
    the call after it on the same client (its connection was given up mid-body).
    """

    async def scenario() -> tuple[ModelError, int, ModelResponse]:
        await generate(ask(setup.model))  # the client, its TLS context and a connection exist
        fake.inject(reply)
        tracemalloc.start()
        try:
            with pytest.raises(ModelError) as caught:
                await generate(ask(setup.model))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return caught.value, peak, await generate(ask(setup.model))

    return asyncio.run(scenario())


def assert_refused_as_too_large(
    setup: CloudSetup, fake: ScriptedModelServer, error: ModelError, status: int = 200
) -> None:
    message = str(error)
    assert message.startswith(
        f"{setup.model}: HTTP {status} (response_too_large: response body larger than "
        f"{MAX_RESPONSE_BYTES >> 20} MiB, not read further;"
    ), message
    assert f"the endpoint at {fake.url.removeprefix('http://')} " in message


@pytest.mark.parametrize("setup", EVERY_PROVIDER, ids=str)
@pytest.mark.slow
def test_a_gzip_bomb_stops_at_the_bound_and_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, setup: CloudSetup, gzip_bomb: bytes, no_backoff: list[float]
) -> None:
    with setup.serving(monkeypatch) as fake:
        bomb = Reply(raw=gzip_bomb, headers={"content-encoding": "gzip"})
        error, peak, after = refused_then_served(setup, fake, bomb)
        assert peak < MAX_RESPONSE_BYTES + MEMORY_MARGIN, f"peak {peak >> 20} MiB"
        assert_refused_as_too_large(setup, fake, error)
        assert fake.calls == 3 and no_backoff == []  # warm-up, the bomb, the call after
        assert after.text()


@pytest.mark.parametrize("setup", ONE_PER_SDK, ids=str)
@pytest.mark.slow
def test_a_plain_body_past_the_bound_stops_there(
    monkeypatch: pytest.MonkeyPatch, setup: CloudSetup, oversized_body: bytes
) -> None:
    with setup.serving(monkeypatch) as fake:
        error, peak, after = refused_then_served(setup, fake, Reply(raw=oversized_body))
        assert peak < MAX_RESPONSE_BYTES + MEMORY_MARGIN, f"peak {peak >> 20} MiB"
        assert_refused_as_too_large(setup, fake, error)
        assert fake.calls == 3 and after.text()


@pytest.mark.parametrize("setup", ONE_PER_SDK, ids=str)
def test_an_error_status_with_a_bomb_is_not_retried_like_a_5xx(
    monkeypatch: pytest.MonkeyPatch, setup: CloudSetup, gzip_bomb: bytes, no_backoff: list[float]
) -> None:
    """The SDKs read an error's body too (for its message); that read is bounded as well."""
    with setup.serving(monkeypatch) as fake:
        bomb = Reply(500, raw=gzip_bomb, headers={"content-encoding": "gzip"})
        error, peak, _ = refused_then_served(setup, fake, bomb)
        assert peak < MAX_RESPONSE_BYTES + MEMORY_MARGIN, f"peak {peak >> 20} MiB"
        assert_refused_as_too_large(setup, fake, error, status=500)
        assert fake.calls == 3 and no_backoff == []


@pytest.mark.parametrize("setup", EVERY_PROVIDER, ids=str)
def test_an_ordinary_gzip_answer_is_read_like_a_plain_one(
    monkeypatch: pytest.MonkeyPatch, setup: CloudSetup
) -> None:
    with setup.serving(monkeypatch) as fake:
        body = json.dumps(fake.wrap(fake.default_answer(), {})).encode()
        fake.reply(
            Reply(raw=body),
            Reply(raw=gzip.compress(body), headers={"content-encoding": "gzip"}),
        )

        async def both() -> list[Any]:
            return [await generate(ask(setup.model)) for _ in range(2)]

        plain, zipped = asyncio.run(both())
        assert zipped == plain and plain.text()
        assert fake.calls == 2


class RawHTTPServer:
    """Answers every request with `head` then `body`, as given: a server whose headers
    need not tell the truth about its body. `close` stops it whole: nothing it started
    outlives the test (a thread still sending would reach the next test's connections)."""

    def __init__(self, head: bytes, body: Callable[[], Iterator[bytes]]) -> None:
        self._head, self._body = head, body
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []
        self._connections: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._start(self._accept)

    def _start(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while not self._stopped.is_set():
                connection, _ = self._listener.accept()
                self._connections.append(connection)
                self._start(self._answer, connection)

    def _answer(self, connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            connection.recv(65536)  # the request (small; no body worth reading)
            connection.sendall(self._head)
            for piece in self._body():
                if self._stopped.is_set():
                    return
                connection.sendall(piece)

    def close(self) -> None:
        self._stopped.set()
        for open_socket in (self._listener, *self._connections):
            with contextlib.suppress(OSError):
                open_socket.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept or send
            open_socket.close()
        for thread in self._threads:
            thread.join(timeout=10)


def _answer_json() -> bytes:
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m"}
    return json.dumps({**reply, **text_reply("ok")}).encode()


def _call_raw(monkeypatch: pytest.MonkeyPatch, server: RawHTTPServer) -> tuple[Any, int]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)

    async def once() -> tuple[Any, int]:
        tracemalloc.start()
        try:
            try:
                outcome: Any = await generate(ask(ANTHROPIC.model))
            except ModelError as error:
                outcome = error
            return outcome, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            await aclose_scope()

    return asyncio.run(once())


def test_a_declared_length_is_all_that_is_read_of_a_body(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An uncompressed body with a Content-Length is read without the counting wrapper: the
    HTTP parser takes that many bytes and no more. Twice the bound sent after them is
    never a body: the call fails as a broken answer (retried), holding none of it."""
    answer = _answer_json()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    head += b"content-length: %d\r\n\r\n" % len(answer)
    server = RawHTTPServer(head, lambda: iter([answer]))
    try:
        response, _ = _call_raw(monkeypatch, server)
    finally:
        server.close()
    assert isinstance(response, ModelResponse) and response.text() == "ok"

    flood = b" " * (1024 * 1024)
    server = RawHTTPServer(head, lambda: iter([answer, *[flood] * (2 * MAX_RESPONSE_BYTES >> 20)]))
    try:
        outcome, peak = _call_raw(monkeypatch, server)
    finally:
        server.close()
    assert peak < MEMORY_MARGIN, f"peak {peak >> 20} MiB"
    if isinstance(outcome, ModelError):
        assert "response_too_large" not in str(outcome), outcome


def test_a_chunked_body_past_the_bound_stops_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunked body declares no size: it is counted as it is read, whatever is sent."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    head += b"transfer-encoding: chunked\r\n\r\n"
    piece = b" " * (1024 * 1024)
    chunk = b"%x\r\n%s\r\n" % (len(piece), piece)

    def chunks() -> Iterator[bytes]:
        yield b"1\r\n{\r\n"
        for _ in range(8 * MAX_RESPONSE_BYTES // len(piece)):
            yield chunk
        yield b"0\r\n\r\n"

    server = RawHTTPServer(head, chunks)
    try:
        error, peak = _call_raw(monkeypatch, server)
    finally:
        server.close()
    assert isinstance(error, ModelError), error
    assert "response_too_large" in str(error), error
    # Bounded by the bound, not by the eight times as much sent: aiohttp's chunk parser
    # holds pieces beside the ones read, so the peak is a small multiple of the bound.
    assert peak < 3 * MAX_RESPONSE_BYTES, f"peak {peak >> 20} MiB"
