"""Claude on Google Vertex AI: the Messages adapter over anthropic's `AsyncAnthropicVertex`.

Vertex takes the Messages body at
`POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`
with an OAuth bearer token; the SDK builds the path. The token comes from
`GOOGLE_OAUTH_ACCESS_TOKEN` when set (what `google-github-actions/auth` can hand over
as `access_token`), else from Application Default Credentials
(`GOOGLE_APPLICATION_CREDENTIALS`, a workload identity federation file).
"""

from __future__ import annotations

import os

from anthropic import AsyncAnthropicVertex

from assay.errors import ModelUnavailable
from assay.models.anthropic_provider import AnthropicProvider, client_options
from assay.models.provider_spec import missing_provider_credentials
from assay.models.retry import RetryPolicy

__all__ = ["VertexProvider", "vertex_from_env", "vertex_project"]

ACCESS_TOKEN_VARIABLE = "GOOGLE_OAUTH_ACCESS_TOKEN"
PROJECT_VARIABLES = ("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT")
REGION_VARIABLE = "CLOUD_ML_REGION"
BASE_URL_VARIABLE = "ANTHROPIC_VERTEX_BASE_URL"
"""The SDK's own override of the endpoint (a private endpoint, the tests' fake)."""


class VertexProvider(AnthropicProvider):
    name = "vertex"


def vertex_project() -> str | None:
    return next((os.environ[v] for v in PROJECT_VARIABLES if os.environ.get(v)), None)


def vertex_from_env(*, policy: RetryPolicy | None = None) -> VertexProvider:
    """An adapter for the project and region in the environment.

    Both are required up front: without them the SDK would find out only at the first
    call (the project from the credentials file, which a token alone does not name).
    """
    reason = missing_provider_credentials("vertex")
    if reason:
        raise ModelUnavailable(reason)
    project = vertex_project()
    if project is None:
        raise ModelUnavailable(f"no Google Cloud project for vertex/*: set {PROJECT_VARIABLES[0]}")
    region = os.environ.get(REGION_VARIABLE)
    if not region:
        raise ModelUnavailable(f"no Vertex region for vertex/*: set {REGION_VARIABLE}")
    token = os.environ.get(ACCESS_TOKEN_VARIABLE) or None
    if token is None:
        try:
            # lazy: optional SDK
            import google.auth  # noqa: F401  # the SDK loads ADC with it
        except ImportError:  # pragma: no cover - depends on the installed extras
            raise ModelUnavailable(
                "vertex/* needs the vertex extra: pip install 'assay[vertex]'"
            ) from None

    client = AsyncAnthropicVertex(
        project_id=project,
        region=region,
        access_token=token,
        base_url=os.environ.get(BASE_URL_VARIABLE) or None,
        **client_options(policy),
    )
    return VertexProvider(client)  # type: ignore[arg-type]  # same Messages surface
