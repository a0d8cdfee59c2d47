"""The public library API is pinned: adding or removing a name is a deliberate change."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys

import assay

PUBLIC_API = [
    "AssayConfig",
    "AssayError",
    "Case",
    "CaseResult",
    "ConfigError",
    "LoadedSuites",
    "OutputError",
    "Report",
    "RunError",
    "RunListener",
    "RunOptions",
    "RunSettings",
    "__version__",
    "compare_reports",
    "load_config",
    "load_suites",
    "merge_reports",
    "read_report",
    "resolve_settings",
    "run",
    "run_async",
    "select_cases",
]


def test_all_names_are_pinned_and_sorted() -> None:
    assert assay.__all__ == PUBLIC_API
    assert assay.__all__ == sorted(assay.__all__)


HOMES = {
    "AssayConfig": "assay.suites.config",
    "AssayError": "assay.errors",
    "Case": "assay.suites.case",
    "CaseResult": "assay.report.model",
    "ConfigError": "assay.errors",
    "LoadedSuites": "assay.suites.load",
    "OutputError": "assay.errors",
    "Report": "assay.report.model",
    "RunError": "assay.errors",
    "RunListener": "assay.runner.events",
    "RunOptions": "assay.options",
    "RunSettings": "assay.options",
    "compare_reports": "assay.report.compare",
    "load_config": "assay.suites.config",
    "load_suites": "assay.suites.load",
    "merge_reports": "assay.report.merge",
    "read_report": "assay.report.read",
    "resolve_settings": "assay.runner.settings",
    "run": "assay.runner.session",
    "run_async": "assay.runner.session",
    "select_cases": "assay.suites.select",
}


def test_every_exported_name_resolves_to_its_home() -> None:
    assert sorted(HOMES) == [name for name in PUBLIC_API if name != "__version__"]
    for name in PUBLIC_API:
        value = getattr(assay, name)
        if name in HOMES:
            assert value.__module__ == HOMES[name], name
    assert isinstance(assay.__version__, str)
    assert set(PUBLIC_API) <= set(dir(assay))


def test_run_options_are_all_optional_and_unset_by_default() -> None:
    """A library user names only what they mean; everything else is decided by the run."""
    options = assay.RunOptions()
    for field in dataclasses.fields(assay.RunOptions):
        has_default = field.default is not dataclasses.MISSING
        assert has_default or field.default_factory is not dataclasses.MISSING, field.name
    assert options.threshold is None and options.concurrency is None
    assert issubclass(assay.RunSettings, assay.RunOptions)


def test_run_signatures() -> None:
    for function in (assay.run, assay.run_async):
        parameters = inspect.signature(function).parameters
        assert list(parameters)[:2] == ["options", "cases"]
        assert parameters["cases"].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters["cases"].default is None
    assert inspect.iscoroutinefunction(assay.run_async)


def test_unknown_attributes_raise_attribute_error() -> None:
    try:
        assay.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_assay_loads_no_sdk_and_no_terminal_library() -> None:
    heavy = ["anthropic", "openai", "github", "rich", "pydantic", "httpx", "httpx2", "aiohttp"]
    code = f"import sys, assay, assay.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_runner_loads_no_model_sdk_until_a_model_case_runs() -> None:
    heavy = ("anthropic", "openai", "github", "rich", "aiohttp")
    code = (
        "import sys, assay, assay.runner, assay._cli.run; assay.RunOptions; assay.Report; "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


PLUGIN_API = {
    "Agent": "assay.agents.base",
    "AgentError": "assay.errors",
    "AgentOutput": "assay.subject",
    "AttemptContext": "assay.subject",
    "Case": "assay.suites.case",
    "CaseResult": "assay.report.model",
    "Check": "assay.core.checks",
    "ConfigError": "assay.errors",
    "FORMATS": "assay.formats",
    "GRADERS": "assay.graders",
    "GraderContext": "assay.grading.user_graders",
    "Message": "assay.models.base",
    "ModelRequest": "assay.models.base",
    "ModelResponse": "assay.models.base",
    "ModelUnavailable": "assay.errors",
    "PROVIDERS": "assay.providers",
    "Provider": "assay.models.base",
    "ProviderSpec": "assay.models.provider_spec",
    "RENDERERS": "assay.renderers",
    "RUNTIMES": "assay.runtimes",
    "RenderContext": "assay.report.renderers",
    "Renderer": "assay.report.renderers",
    "Report": "assay.report.model",
    "ReviewSpec": "assay.suites.case",
    "RubricSpec": "assay.suites.case",
    "RunOptions": "assay.options",
    "RuntimeSpec": "assay.registry.runtimes",
    "SuiteFormat": "assay.suites.formats",
    "TaskSpec": "assay.suites.case",
    "ToolSpec": "assay.models.base",
    "Usage": "assay.core.usage",
    "VerifySpec": "assay.suites.case",
    "generate": "assay.models.api",
    "register_agent": "assay.agents",
    "register_grader": "assay.registry.graders",
    "register_provider": "assay.models.registry",
}
"""The extension surface (`assay.plugins`): each name and where it is defined; for a
registry, the entry point group it reads."""


def test_the_plugin_surface_is_pinned_and_each_name_is_its_home_s() -> None:
    import assay.plugins
    from assay._util.entrypoints import Registry

    assert assay.plugins.__all__ == sorted(PLUGIN_API)
    for name, home in PLUGIN_API.items():
        value = getattr(assay.plugins, name)
        if isinstance(value, Registry):
            assert value.group == home, name
        else:
            assert value.__module__ == home, name


def test_importing_the_plugin_surface_loads_no_sdk() -> None:
    heavy = ["anthropic", "openai", "github", "rich", "aiohttp", "google.genai"]
    code = f"import sys, assay.plugins; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
