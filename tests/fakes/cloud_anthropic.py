"""Loopback fakes of Claude on AWS Bedrock and on Google Vertex AI, for the real SDK.

Both take the Messages body, less `model` (which moves into the path) and plus
`anthropic_version`, and answer with a Messages response, exactly as
`AsyncAnthropicBedrock` and `AsyncAnthropicVertex` send and read them:

- Bedrock: `POST /model/{model id}/invoke`, signed with SigV4 (`Authorization:
  AWS4-HMAC-SHA256 Credential=<key id>/<date>/<region>/bedrock/aws4_request, ...`).
  Point the SDK at it with `ANTHROPIC_BEDROCK_BASE_URL=fake.url` and dummy AWS keys.
- Vertex: `POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/
  {model}:rawPredict` with `Authorization: Bearer <token>`. Point the SDK at it with
  `ANTHROPIC_VERTEX_BASE_URL=fake.url + "/v1"` and an access token (no ADC lookup).

Scripted answers and faults work as in `anthropic_api.py`, whose helpers build them.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.anthropic_api import FakeAnthropic, anthropic_error
from tests.fakes.loopback import Reply, Request

__all__ = ["FakeBedrock", "FakeVertex"]

_SIGV4 = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/\d{8}/(?P<region>[a-z0-9-]+)/bedrock/aws4_request,"
    r" SignedHeaders=[^,]+, Signature=[0-9a-f]{64}"
)


class _CloudMessages(FakeAnthropic):
    def model_of(self, request: Request) -> str:
        return request.params.get("model", "")

    def _serve_scripted(self, request: Request) -> Reply:
        reply = super()._serve_scripted(request)
        if reply.status == 200 and isinstance(reply.body, dict):
            reply.body["model"] = self.model_of(request)
        return reply

    def invalid(self, body: Any) -> Reply | None:
        if isinstance(body, dict):
            if "model" in body:
                return anthropic_error(
                    400, "invalid_request_error", "model: Extra inputs are not permitted"
                )
            # The API version travels in the body (the SDK's own version string).
            if not isinstance(body.get("anthropic_version"), str):
                return anthropic_error(
                    400, "invalid_request_error", "anthropic_version: Field required"
                )
            body = {**body, "model": "in-the-path"}
        return super().invalid(body)


class FakeBedrock(_CloudMessages):
    """`api_key` here is the AWS access key id the signature must name; `region` its region."""

    PATH = r"/model/(?P<model>[^/]+)/invoke"

    def __init__(self, *, region: str = "us-east-1", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.region = region

    def authorised(self, request: Request) -> bool:
        signed = _SIGV4.fullmatch(request.headers.get("authorization", ""))
        return (
            signed is not None
            and signed["key"] == self.api_key
            and signed["region"] == self.region
            and "x-amz-date" in request.headers
        )

    def unauthorised(self) -> Reply:
        return Reply(403, {"message": "The security token included in the request is invalid."})


class FakeVertex(_CloudMessages):
    """`api_key` here is the OAuth access token the bearer header must carry."""

    PATH = (
        r"/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)"
        r"/publishers/anthropic/models/(?P<model>[^/:]+):rawPredict"
    )

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def authorised(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.api_key}"

    def unauthorised(self) -> Reply:
        return Reply(
            401,
            {"error": {"code": 401, "message": "invalid credentials", "status": "UNAUTHENTICATED"}},
        )
