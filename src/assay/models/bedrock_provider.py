"""Claude on AWS Bedrock: the Messages adapter over anthropic's `AsyncAnthropicBedrock`.

Bedrock speaks the Messages body at `POST /model/{model id}/invoke`, signed with SigV4;
the SDK builds both, so the adapter is the Anthropic one with a Bedrock client. The
credentials are AWS's standard chain (keys, session token, profile, web identity) and
the region `AWS_REGION` / `AWS_DEFAULT_REGION`, all resolved by the SDK through boto3.
"""

from __future__ import annotations

import os

from anthropic import AsyncAnthropicBedrock

from assay.errors import ModelUnavailable
from assay.models.anthropic_provider import AnthropicProvider, client_options
from assay.models.provider_spec import missing_provider_credentials
from assay.models.retry import RetryPolicy

__all__ = ["BedrockProvider", "bedrock_from_env", "bedrock_region"]

BASE_URL_VARIABLE = "ANTHROPIC_BEDROCK_BASE_URL"
"""The SDK's own override of the endpoint (a VPC endpoint, a proxy, the tests' fake)."""


class BedrockProvider(AnthropicProvider):
    name = "bedrock"


def bedrock_region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None


def bedrock_from_env(*, policy: RetryPolicy | None = None) -> BedrockProvider:
    """An adapter whose client signs with the AWS credential chain in `AWS_REGION`.

    The region is required here rather than looked up in the profile: the SDK's own
    fallback asks boto3, which reads config files the run should not depend on silently.
    """
    reason = missing_provider_credentials("bedrock")
    if reason:
        raise ModelUnavailable(reason)
    region = bedrock_region()
    if region is None:
        raise ModelUnavailable("no AWS region for bedrock/*: set AWS_REGION")
    try:
        # lazy: optional SDK
        import boto3  # noqa: F401  # the SDK signs with it; fail here, not mid-run
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ModelUnavailable(
            "bedrock/* needs the bedrock extra: pip install 'assay[bedrock]'"
        ) from None

    bearer = os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
    client = AsyncAnthropicBedrock(
        aws_region=region,
        # A Bedrock API key and AWS credentials are exclusive; the SDK reads the key itself.
        aws_profile=None if bearer else os.environ.get("AWS_PROFILE") or None,
        base_url=os.environ.get(BASE_URL_VARIABLE) or None,
        **client_options(policy),
    )
    return BedrockProvider(client)  # type: ignore[arg-type]  # same Messages surface
