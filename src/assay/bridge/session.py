"""One attempt's bridge: its token, what its CLI spent, its transcript, why it stopped.

Every call goes through `models.api.generate` with the run's options: the cache (a call
recorded by an earlier run is replayed, `--offline` makes none), the limiter, the retries
and the pricing are assay's. Before each call the run's `--max-cost` is checked with what
the attempts in flight have spent so far; once it is reached, or a call cannot be made
(`ModelUnavailable`: an offline cache miss, no credentials), the bridge answers the CLI
with an error and keeps the reason: the attempt then ends `skipped` with it, as an attempt
of the built-in agent does.
"""

from __future__ import annotations

import hmac
import itertools
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from assay.bridge.budget import LIVE, RUN_BUDGET, over_budget
from assay.bridge.normalise import PathNames, keyed_request
from assay.bridge.stored_responses import StoredResponses
from assay.bridge.transcript import ModelCalls
from assay.core.usage import Usage, sum_usage
from assay.errors import ModelError, ModelUnavailable
from assay.models.api import generate
from assay.models.base import ModelRequest, ModelResponse

if TYPE_CHECKING:
    from assay.options import RunOptions

__all__ = ["TOKEN_PREFIX", "BridgeSession", "CallRefused"]

TOKEN_PREFIX = "assay-bridge-"
_ids = itertools.count(1)


class CallRefused(Exception):
    """The bridge answers the CLI with an error: `status`, the API's error type, why."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message


class BridgeSession:
    """The state of one attempt's bridge."""

    def __init__(
        self,
        *,
        options: RunOptions | None,
        sample: int,
        transcript: Path | None,
        environ: Mapping[str, str] | None = None,
        names: PathNames | None = None,
    ) -> None:
        self.id = next(_ids)
        # Not remembered process-wide (one more form to mask in every text, per attempt):
        # what the CLI prints is redacted with its environment, which holds the token as
        # its key, and the transcript with BRIDGE_TOKEN below.
        self.token = TOKEN_PREFIX + secrets.token_urlsafe(24)
        self.options = options
        self.sample = sample
        self.names = names or PathNames(())
        self.usage = Usage()
        self.calls = 0
        self.stopped: str | None = None
        """Why the bridge refused a call it could not make (budget, offline miss)."""
        self.closed = False
        self.responses = StoredResponses()
        """The Responses API's answers a later request may continue (`previous_response_id`)."""
        self.calls_log = ModelCalls(transcript, {**(environ or {}), "BRIDGE_TOKEN": self.token})

    def authorised(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    async def generate(self, request: ModelRequest, *, api: str, stream: bool) -> ModelResponse:
        """`request` answered through assay's model layer; CallRefused when it cannot be."""

        began = time.perf_counter()
        reason = self.stopped or over_budget(RUN_BUDGET.get())
        if reason is not None:
            self.stopped = reason
            self._log(api, request, None, began, reason, stream)
            raise CallRefused(400, "invalid_request_error", f"assay: {reason}")
        try:
            keyed = keyed_request(request, self.names)
            response = await generate(request, options=self.options, cache_as=keyed)
        except ModelUnavailable as exc:
            self.stopped = str(exc)
            self._log(api, request, None, began, str(exc), stream)
            raise CallRefused(400, "invalid_request_error", f"assay: {exc}") from None
        except ModelError as exc:
            # assay's retries are spent: the CLI retrying would only repeat them.
            self._log(api, request, None, began, str(exc), stream)
            raise CallRefused(400, "api_error", f"assay's model layer: {exc}") from None
        self.calls += 1
        self.usage = response.usage if self.calls == 1 else sum_usage([self.usage, response.usage])
        LIVE.set(self.id, self.usage.cost_usd or 0.0)
        self._log(api, request, response, began, None, stream)
        return response

    def _log(
        self,
        api: str,
        request: ModelRequest,
        response: ModelResponse | None,
        began: float,
        error: str | None,
        stream: bool,
    ) -> None:
        seconds = time.perf_counter() - began
        self.calls_log.record(
            api=api, request=request, response=response, seconds=seconds, error=error, stream=stream
        )

    def close(self, *, cli_usage: Usage | None = None) -> None:
        """The attempt is over: its spend leaves the live count (the executor counts it
        now), and the transcript ends with what was counted; once only."""
        if self.closed:
            return
        self.closed = True
        LIVE.close(self.id)
        self.calls_log.close(
            calls=self.calls,
            usage=self.usage.model_dump(mode="json"),
            cli_reported_usage=cli_usage.model_dump(mode="json") if cli_usage else None,
            stopped=self.stopped,
        )
