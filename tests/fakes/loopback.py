"""A tiny loopback HTTP server that fakes build on: routes, a request log, and faults.

A fake registers handlers with `route(method, pattern)`; a handler gets a `Request` and
returns a `Reply`. Faults queued with `inject()` are served before the handler runs, so a
test can script "429 with retry-after, then the real answer". Everything binds 127.0.0.1.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    params: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False
    """Close the connection without answering (a reset connection)."""
    raw: bytes | None = None


Handler = Callable[[Request], Reply]


class LoopbackServer:
    """Start with `with FakeX() as fake:`; `fake.url` is the base URL."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._faults: list[tuple[re.Pattern[str] | None, Reply]] = []
        self.requests: list[Request] = []
        self.latency_s = 0.0
        self.path_prefix = ""
        """Routes are also served under this prefix (GitHub Enterprise's API is at /api/v3)."""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- configuration -------------------------------------------------------------
    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Serve `method` requests whose path fully matches `pattern` (named groups -> params)."""
        self._routes.append((method.upper(), re.compile(pattern), handler))

    def inject(self, reply: Reply, *, path: str | None = None, times: int = 1) -> None:
        """Serve `reply` instead of the real answer for the next `times` matching requests."""
        with self._lock:
            for _ in range(times):
                self._faults.append((re.compile(path) if path else None, reply))

    def count(self, path_pattern: str = ".*", method: str | None = None) -> int:
        rx = re.compile(path_pattern)
        return sum(
            1
            for r in self.requests
            if rx.fullmatch(r.path) and (method is None or r.method == method)
        )

    # -- lifecycle -------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LoopbackServer:
        fake = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, the body waits for
            # the client's delayed ACK (~40 ms a request).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _serve(self) -> None:
                fake._dispatch(self)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        # A short poll interval: stop() waits for it, and every test stops a server.
        serve = functools.partial(self._server.serve_forever, poll_interval=0.02)
        threading.Thread(target=serve, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------
    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        split = urlsplit(h.path)
        length = int(h.headers.get("content-length") or 0)
        request = Request(
            method=h.command,
            path=split.path,
            query=parse_qs(split.query),
            headers={k.lower(): v for k, v in h.headers.items()},
            body=h.rfile.read(length) if length else b"",
        )
        with self._lock:
            self.requests.append(request)
            fault = next(
                (f for f in self._faults if f[0] is None or f[0].fullmatch(request.path)), None
            )
            if fault is not None:
                self._faults.remove(fault)
        if self.latency_s:
            time.sleep(self.latency_s)
        reply = fault[1] if fault else self._handle(request)
        try:
            self._write(h, reply)
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True  # the client gave up first (a timeout test)

    def _handle(self, request: Request) -> Reply:
        path = request.path.removeprefix(self.path_prefix)
        for method, rx, handler in self._routes:
            match = rx.fullmatch(path)
            if match and method == request.method:
                request.params = match.groupdict()
                try:
                    return handler(request)
                except Exception as exc:  # a bug in the fake must be visible, not a hang
                    return Reply(500, {"message": f"fake server error: {exc!r}"})
        return Reply(404, {"message": "Not Found"})

    @staticmethod
    def _write(h: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.drop:
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            h.close_connection = True
            return
        if reply.raw is not None:
            payload = reply.raw
        elif reply.body is None:
            payload = b""
        else:
            payload = json.dumps(reply.body).encode()
        h.send_response(reply.status)
        headers = {"content-type": "application/json", **reply.headers}
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("content-length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)
