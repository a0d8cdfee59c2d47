"""The registries: each the one list of its names, fed by built-ins and entry points."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay._util.entrypoints import Registry, forget_installed_plugins
from assay.agents import RUNTIMES, register_agent
from assay.agents.base import AgentOutput
from assay.errors import ConfigError
from assay.grading import GRADERS, register_grader, resolve_grader
from assay.grading.user_graders import grader_problem
from assay.models.names import missing_credentials, parse_model
from assay.models.providers import PROVIDERS, ProviderSpec
from assay.models.registry import register_provider, unknown_provider
from assay.report.renderers import RENDERERS, Renderer
from assay.suites.case import Case, FixtureFile, VerifySpec
from assay.suites.context import LoadContext
from assay.suites.document import Document
from assay.suites.formats import FORMATS, SuiteFormat, plugin_format_of

PLUGINS = Path(__file__).parents[1] / "plugins"


@pytest.fixture(autouse=True)
def _rescan_installed_plugins() -> Iterator[None]:
    forget_installed_plugins()  # each test's sys.path holds its own distributions
    yield
    forget_installed_plugins()


def _renderer_registry() -> Registry[Renderer]:
    def adapt(name: str, obj: object) -> Renderer:
        if not isinstance(obj, Renderer):
            raise TypeError(f"expected a Renderer, got {type(obj).__name__}")
        return obj

    return Registry("assay.renderers", what="renderer", adapt=adapt)


def _distribution(
    where: Path, name: str, entry_points: str, modules: dict[str, str] | None = None
) -> None:
    info = where / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    for module, text in (modules or {}).items():
        (where / f"{module}.py").write_text(text)


@pytest.fixture
def forget_plugin_modules() -> Iterator[None]:
    yield
    for name in [m for m in sys.modules if m.startswith(("assay_testplugin", "broken_", "odd_"))]:
        del sys.modules[name]


# --- the registry itself -----------------------------------------------------------------------


def test_a_name_is_registered_once_unless_replaced() -> None:
    registry = _renderer_registry()
    first = Renderer("x", "x.txt", lambda ctx: None)
    registry.register("x", first)
    with pytest.raises(ValueError, match="renderer 'x' is registered already"):
        registry.register("x", first)
    second = Renderer("x", "y.txt", lambda ctx: None)
    registry.register("x", second, replace=True)
    assert registry.get("x") is second


@pytest.mark.usefixtures("forget_plugin_modules")
def test_entry_points_are_listed_without_importing_them_and_loaded_on_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(PLUGINS))
    registry = _renderer_registry()
    assert "digest" in registry.names()
    assert "assay_testplugin.digest" not in sys.modules
    renderer = registry.get("digest")
    assert renderer is not None and renderer.filename == "plugin-digest.txt"
    assert "assay_testplugin.digest" in sys.modules


@pytest.mark.usefixtures("forget_plugin_modules")
def test_a_plugin_that_cannot_be_imported_is_named_with_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(
        tmp_path,
        "broken-plugin",
        "[assay.renderers]\nbroken = broken_renderer:RENDERER\n",
        {"broken_renderer": "import no_such_module_anywhere\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = _renderer_registry()
    with pytest.raises(ConfigError) as caught:
        registry.get("broken")
    assert str(caught.value) == (
        "entry point 'broken' (= broken_renderer:RENDERER) of distribution 'broken-plugin' in "
        "group 'assay.renderers' could not be loaded: ModuleNotFoundError: No module named "
        "'no_such_module_anywhere'"
    )


@pytest.mark.usefixtures("forget_plugin_modules")
def test_a_plugin_naming_the_wrong_kind_of_object_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(
        tmp_path,
        "odd-plugin",
        "[assay.renderers]\nodd = odd_renderer:RENDERER\n",
        {"odd_renderer": "RENDERER = 'not a renderer'\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=r"of distribution 'odd-plugin' .* is not a renderer: "):
        _renderer_registry().get("odd")


def test_two_plugins_with_one_name_are_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(tmp_path / "a", "plugin-a", "[assay.renderers]\nsame = a_mod:R\n")
    _distribution(tmp_path / "b", "plugin-b", "[assay.renderers]\nsame = b_mod:R\n")
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    with pytest.raises(ConfigError) as caught:
        _renderer_registry().names()
    assert "two plugins register renderer 'same'" in str(caught.value)
    assert "'plugin-a'" in str(caught.value) and "'plugin-b'" in str(caught.value)


def test_a_plugin_may_not_take_a_built_in_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(tmp_path, "greedy", "[assay.renderers]\njunit = greedy_mod:R\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = _renderer_registry()
    registry.register("junit", Renderer("junit", "junit.xml", lambda ctx: None))
    with pytest.raises(ConfigError, match="registers renderer 'junit', which assay has already"):
        registry.names()


def test_every_group_has_its_registry() -> None:
    groups = {r.group for r in (PROVIDERS, RUNTIMES, GRADERS, RENDERERS)}
    assert groups == {"assay.providers", "assay.runtimes", "assay.graders", "assay.renderers"}


# --- providers ---------------------------------------------------------------------------------


@pytest.fixture
def mycloud() -> Iterator[None]:
    # Not a built-in's name: unregistering it afterwards must not remove a built-in.
    register_provider("mycloud", lambda: None)  # type: ignore[arg-type, return-value]
    yield
    PROVIDERS.unregister("mycloud")


@pytest.mark.usefixtures("mycloud")
def test_a_registered_provider_owns_its_names_and_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("MYCLOUD_API_KEY", "WARDEN_MYCLOUD_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert parse_model("mycloud/model-1").provider == "mycloud"
    assert unknown_provider("mycloud/model-1") is None
    assert missing_credentials("mycloud/model-1") == (
        "no credentials for mycloud/model-1: set MYCLOUD_API_KEY"
    )
    monkeypatch.setenv("WARDEN_MYCLOUD_API_KEY", "g-0123456789")  # Warden's rule holds for it too
    assert missing_credentials("mycloud/model-1") is None
    assert "did you mean mycloud/x" in (unknown_provider("mycluod/x") or "")


def test_a_provider_may_need_no_key() -> None:
    register_provider("local", lambda: None, key_variables=())  # type: ignore[arg-type, return-value]
    try:
        assert missing_credentials("local/llama") is None
    finally:
        PROVIDERS.unregister("local")


@pytest.mark.usefixtures("mycloud")
def test_preflight_names_the_variable_of_a_provider_without_an_action_input() -> None:
    from assay.action.preflight import MissingModelKey

    message = MissingModelKey("no credentials", "mycloud/x", ("a/b",)).message()
    assert message.startswith("this run needs a model key: set MYCLOUD_API_KEY in the step's env")
    anthropic = MissingModelKey("no credentials", "claude-x", ("a/b",)).message()
    assert "anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}" in anthropic


def test_a_spec_whose_name_differs_from_its_entry_point_is_refused() -> None:
    from assay._util.entrypoints import spec_or_factory

    adapt = spec_or_factory(ProviderSpec, factory_is="a factory")
    spec = ProviderSpec(name="other", factory=lambda: None)  # type: ignore[arg-type, return-value]
    with pytest.raises(ValueError, match="named 'other', not 'mine'"):
        adapt("mine", spec)
    with pytest.raises(TypeError, match="expected a ProviderSpec or a factory, got int"):
        adapt("mine", 3)
    assert adapt("mine", spec.factory) == ProviderSpec(name="mine", factory=spec.factory)


# --- runtimes ----------------------------------------------------------------------------------


class _Quiet:
    async def run(self, ctx: object) -> AgentOutput:
        return AgentOutput(verdict="keep")


@pytest.fixture
def myagent() -> Iterator[None]:
    register_agent("myagent", lambda options: _Quiet())
    yield
    RUNTIMES.unregister("myagent")


@pytest.mark.usefixtures("myagent")
def test_a_registered_runtime_is_valid_in_suites_and_on_the_command_line() -> None:
    from assay.cli import build_parser
    from assay.suites.wire_review import ReviewSuite

    suite = ReviewSuite.model_validate(
        {
            "skill": "s.md",
            "runtime": "myagent",
            "evals": [
                {"name": "n", "given": "g", "files": ["f"], "should_find": [{"finding": "x"}]}
            ],
        }
    )
    assert suite.runtime == "myagent"
    assert build_parser().parse_args(["run", "--runtime", "myagent"]).runtime == "myagent"


def test_an_unknown_runtime_in_a_suite_says_what_it_may_have_meant() -> None:
    from pydantic import ValidationError

    from assay.suites.wire_review import CategoryDefaults

    with pytest.raises(ValidationError, match=r"unknown runtime 'biultin' \(did you mean builtin"):
        CategoryDefaults.model_validate({"runtime": "biultin"})


def test_the_schema_of_runtime_is_a_string_with_the_built_in_names() -> None:
    from assay.suites.wire_review import CategoryDefaults

    schema = CategoryDefaults.model_json_schema()
    runtime = schema["properties"]["runtime"]["anyOf"][0]
    assert runtime["type"] == "string"
    assert runtime["examples"] == ["builtin", "command", "claude", "pi"]


# --- graders -----------------------------------------------------------------------------------


async def _always(ctx: object) -> bool:
    return True


def test_a_grader_is_named_by_registration_or_by_module_attribute() -> None:
    register_grader("always", _always)
    try:
        assert resolve_grader("always").evaluate is _always
    finally:
        GRADERS.unregister("always")
    assert resolve_grader("tests.registry.test_registries:_always").evaluate is _always


def test_bad_grader_references_say_what_is_wrong() -> None:
    assert grader_problem("tests.registry.test_registries:_nothing") == (
        "grader 'tests.registry.test_registries:_nothing': "
        "tests.registry.test_registries has no '_nothing'"
    )
    assert (grader_problem("no_such_pkg_x:f") or "").startswith(
        "grader 'no_such_pkg_x:f': cannot import no_such_pkg_x: "
    )
    assert grader_problem("tests.registry.test_registries:PLUGINS") == (
        "grader 'tests.registry.test_registries:PLUGINS': "
        "expected an async function or a class with "
        "`async def evaluate`, got PosixPath"
    )
    assert grader_problem("tests.registry.test_registries:_Quiet") == (
        "grader 'tests.registry.test_registries:_Quiet': "
        "class _Quiet needs an `async def evaluate(self, "
        "ctx)`"
    )
    assert grader_problem(3) == (
        "a grader is a non-empty string (a name or module:function), got 3"
    )


def test_a_bad_grader_in_the_config_is_located_in_it(tmp_path: Path) -> None:
    from assay.suites.config import load_config

    (tmp_path / "pyproject.toml").write_text('[tool.assay]\nx = 1\n\ngraders = ["nope:f"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.location is not None and caught.value.location.line == 4
    assert caught.value.message.startswith("grader 'nope:f': cannot import nope")


# --- renderers ---------------------------------------------------------------------------------


def test_a_registered_renderer_is_written_by_the_writer(tmp_path: Path) -> None:
    from assay.runner.writer import write_report_dir
    from tests.action.test_baseline import report_of

    report = report_of({"demo/fix-greeting": "pass", "demo/broken": "fail"})
    RENDERERS.register(
        "ids", Renderer("ids", "ids.txt", lambda ctx: "\n".join(c.id for c in ctx.report.cases))
    )
    try:
        written = write_report_dir(report, tmp_path, cases=())
    finally:
        RENDERERS.unregister("ids")
    assert [p.name for p in written] == [
        "report.json",
        "summary.md",
        "junit.xml",
        "report.html",
        "ids.txt",
    ]
    assert (tmp_path / "ids.txt").read_text() == "demo/fix-greeting\ndemo/broken"


def test_a_renderer_writes_a_plain_file_name() -> None:
    with pytest.raises(ValueError, match="'../x' is not a file name"):
        Renderer("x", "../x", lambda ctx: None)


# --- formats -----------------------------------------------------------------------------------


def _load_toy(doc: Document, *, root: Path, ctx: LoadContext) -> list[Case]:
    """A toy format: `{"toy": [{"name", "file", "verdict"}]}`, each a verification case."""
    cases = []
    for number, item in enumerate(doc.data["toy"]):
        if "file" not in item:
            ctx.problems.error("a toy case needs a file", doc.location(("toy", number)))
            continue
        spec = VerifySpec(
            given=item["name"],
            files=(FixtureFile(doc.path.parent / item["file"], item["file"]),),
            candidate={"title": item["name"]},
            expect_verdict=item["verdict"],
        )
        cases.append(
            Case(
                id=f"toy/{item['name']}",
                suite="toy",
                name=item["name"],
                kind="verify",
                format="verification",
                source_path=doc.path,
                source_line=doc.location(("toy", number)).line or 1,
                spec=spec,
            )
        )
    return cases


@pytest.fixture
def toy_format() -> Iterator[None]:
    recognises = lambda doc: isinstance(doc.data, dict) and "toy" in doc.data  # noqa: E731
    FORMATS.register("toy", SuiteFormat("toy", _load_toy, recognises))
    yield
    FORMATS.unregister("toy")


@pytest.mark.usefixtures("toy_format")
def test_a_registered_format_is_discovered_and_loaded_with_its_problems_located(
    tmp_path: Path,
) -> None:
    from assay.suites.load import SuiteLoadErrors, load_suites

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "toys.json").write_text(
        json.dumps({"toy": [{"name": "one", "file": "a.py", "verdict": "keep"}]}, indent=2)
    )
    (tmp_path / "package.json").write_text('{"name": "not a suite"}')
    loaded = load_suites([tmp_path])
    assert [case.id for case in loaded.cases] == ["toy/one"]
    (tmp_path / "toys.json").write_text(json.dumps({"toy": [{"name": "two"}]}, indent=2))
    with pytest.raises(SuiteLoadErrors) as caught:
        load_suites([tmp_path])
    assert str(caught.value).endswith("toys.json:3:5: a toy case needs a file")


def test_a_plugin_format_cannot_claim_what_assays_own_formats_read(tmp_path: Path) -> None:
    from assay.suites.document import read_document

    (tmp_path / "s.yaml").write_text("skill: s.md\nevals: []\ntoy: []\n")
    assert plugin_format_of(read_document(tmp_path / "s.yaml")) is None


def test_a_providers_own_variables_are_credentials_and_kept_from_verification_commands() -> None:
    from assay._util.secrets import holds_credential, scrubbed_environ

    ProviderSpec(
        name="vault",
        factory=lambda: None,  # type: ignore[arg-type, return-value]
        key_variables=("VAULT_MODEL_CREDENTIAL",),
        keyless_when=("VAULT_MODEL_ENDPOINT",),
    )
    assert holds_credential("VAULT_MODEL_CREDENTIAL")
    env = {"VAULT_MODEL_CREDENTIAL": "v-0123456789", "VAULT_MODEL_ENDPOINT": "http://x", "A": "1"}
    assert scrubbed_environ(env) == {"A": "1"}


def test_a_renderer_with_nothing_to_write_leaves_no_earlier_runs_file(tmp_path: Path) -> None:
    from assay.runner.writer import write_report_dir
    from tests.action.test_baseline import report_of

    report = report_of({"demo/a": "pass"})
    write_report_dir(report, tmp_path, cases=(), cassandra=True)  # a rubric-less run: none
    (tmp_path / "cassandra-results.json").write_text("[]\n")  # as an earlier run left it
    (tmp_path / "quiet.txt").write_text("an earlier run's\n")
    RENDERERS.register("quiet", Renderer("quiet", "quiet.txt", lambda ctx: None))
    try:
        write_report_dir(report, tmp_path, cases=())
    finally:
        RENDERERS.unregister("quiet")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "junit.xml",
        "report.html",
        "report.json",
        "summary.md",
    ]


def test_a_failing_renderer_does_not_stop_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.runner.writer import write_report_dir
    from tests.action.test_baseline import report_of

    def broken(ctx: object) -> str:
        raise KeyError("summary")

    (tmp_path / "broken.txt").write_text("an earlier run's\n")
    RENDERERS.register("broken", Renderer("broken", "broken.txt", broken))
    try:
        write_report_dir(report_of({"demo/broken": "fail"}), tmp_path, cases=())
    finally:
        RENDERERS.unregister("broken")
    assert capsys.readouterr().err == (
        "warning: renderer 'broken' (broken.txt) failed: KeyError: 'summary'; "
        "broken.txt was not written\n"
    )
    # An earlier run's file would pass for this run's: it is gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "junit.xml",
        "report.html",
        "report.json",
        "summary.md",
    ]
