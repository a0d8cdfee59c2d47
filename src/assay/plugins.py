"""The public extension surface: the registries, and the types a plugin implements or uses.

A plugin imports from here and nowhere else in assay, as an `inspect_ai` scorer imports
from `inspect_ai.scorer`: every name is re-exported from the private module that defines
it, and those modules may move. See docs/extending.md.

- a model provider: a `ProviderSpec` whose factory builds a `Provider` (`ModelRequest` ->
  `ModelResponse`), registered in `PROVIDERS` (entry point group `assay.providers`);
- a runtime (the agent under test): a `RuntimeSpec` whose factory builds an `Agent`
  (`AttemptContext` -> `AgentOutput`), in `RUNTIMES` (`assay.runtimes`);
- a grader: an async function or class taking a `GraderContext`, returning `Check`s,
  in `GRADERS` (`assay.graders`);
- a renderer: a `Renderer` (a `RenderContext` -> a file of the report directory), in
  `RENDERERS` (`assay.renderers`);
- a suite format: a `SuiteFormat` (a document -> `Case`s), in `FORMATS` (`assay.formats`).
"""

from __future__ import annotations

from assay.agents import register_agent
from assay.agents.base import Agent
from assay.core.checks import Check
from assay.core.usage import Usage
from assay.errors import AgentError, ConfigError, ModelUnavailable
from assay.grading.user_graders import GraderContext
from assay.models.api import generate
from assay.models.base import Message, ModelRequest, ModelResponse, Provider, ToolSpec
from assay.models.provider_spec import PROVIDERS, ProviderSpec
from assay.models.registry import register_provider
from assay.options import RunOptions
from assay.registry.graders import GRADERS, register_grader
from assay.registry.runtimes import RUNTIMES, RuntimeSpec
from assay.report.model import CaseResult, Report
from assay.report.renderers import RENDERERS, RenderContext, Renderer
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from assay.suites.formats import FORMATS, SuiteFormat

__all__ = [
    "Agent",
    "AgentError",
    "AgentOutput",
    "AttemptContext",
    "Case",
    "CaseResult",
    "Check",
    "ConfigError",
    "FORMATS",
    "GRADERS",
    "GraderContext",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "ModelUnavailable",
    "PROVIDERS",
    "Provider",
    "ProviderSpec",
    "RENDERERS",
    "RUNTIMES",
    "RenderContext",
    "Renderer",
    "Report",
    "ReviewSpec",
    "RubricSpec",
    "RunOptions",
    "RuntimeSpec",
    "SuiteFormat",
    "TaskSpec",
    "ToolSpec",
    "Usage",
    "VerifySpec",
    "generate",
    "register_agent",
    "register_grader",
    "register_provider",
]
