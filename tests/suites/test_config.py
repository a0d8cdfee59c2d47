"""Configuration discovery and its effect on the eval root and default paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.cli import main
from assay.errors import ConfigError, ConfigErrors
from assay.suites import AssayConfig, load_config, load_suites

DATA = Path(__file__).parents[1] / "data" / "suites"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_config(tmp_path: Path) -> None:
    assert load_config(tmp_path) is None


def test_pyproject_tool_assay(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write(
        root / "pyproject.toml",
        "[project]\nname = 'x'\n\n[tool.assay]\n"
        'root = "evals"\npaths = ["evals/a", "evals/b"]\n'
        'agent_command = ["./bin/agent", "{task_id}", "./not-first-class"]\n'
        'runtime = "command"\nmodel = "anthropic/claude-x"\njudge_model = "anthropic/claude-y"\n'
        "threshold = 0.8\nconcurrency = 4\nmax_errors = 1\ntimeout = 90\n"
        'report_dir = "out/reports"\n',
    )
    (root / "evals/a/deep").mkdir(parents=True)
    config = load_config(root / "evals/a/deep")
    assert config == AssayConfig(
        path=root / "pyproject.toml",
        root=root / "evals",
        paths=(root / "evals/a", root / "evals/b"),
        agent_command=(str(root / "bin/agent"), "{task_id}", str(root / "not-first-class")),
        runtime="command",
        model="anthropic/claude-x",
        judge_model="anthropic/claude-y",
        threshold=0.8,
        concurrency=4,
        max_errors=1,
        timeout=90,
        report_dir=root / "out/reports",
    )


def test_agent_command_string_is_split_without_a_shell(tmp_path: Path) -> None:
    write(tmp_path / "assay.toml", "agent_command = \"./agent --cwd '{workspace}' {prompt}\"\n")
    config = load_config(tmp_path)
    assert config is not None
    assert config.agent_command == (
        str(tmp_path.resolve() / "agent"),
        "--cwd",
        "{workspace}",
        "{prompt}",
    )


def test_nearest_file_wins_and_pyproject_without_table_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "assay.toml", 'model = "outer"\n')
    write(tmp_path / "sub/pyproject.toml", "[project]\nname = 'x'\n")
    assert load_config(tmp_path / "sub").model == "outer"  # type: ignore[union-attr]
    write(tmp_path / "sub/pyproject.toml", "[tool.assay]\nmodel = 'inner'\n")
    assert load_config(tmp_path / "sub").model == "inner"  # type: ignore[union-attr]
    write(tmp_path / "sub/assay.toml", 'model = "dedicated"\n')
    assert load_config(tmp_path / "sub").model == "dedicated"  # type: ignore[union-attr]


def test_unknown_keys_warn_with_their_line(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        "[tool.other]\nx = 1\n\n[tool.assay]\nmodel = 'm'\nmodle = 'n'\n",
    )
    config = load_config(tmp_path)
    assert config is not None and config.model == "m"
    assert [str(w) for w in config.warnings] == [
        f"{tmp_path.resolve() / 'pyproject.toml'}:6:1: unknown configuration key 'modle' "
        "(did you mean 'model'?)"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("threshold = 2\n", "assay.toml:1:1: threshold: Input should be less than or equal to 1"),
        ("concurrency = '4'\n", "assay.toml:1:1: concurrency: Input should be a valid integer"),
        ("runtime = 'gpt'\n", "assay.toml:1:1: runtime: unknown runtime 'gpt'; known runtimes: "),
        ("root = '../elsewhere'\n", "assay.toml:1:1: '../elsewhere' contains '..'"),
        ("paths = ['/abs']\n", "assay.toml:1:1: '/abs' is absolute"),
        ("agent_command = 'a \"b'\n", "assay.toml:1:1: agent_command: No closing quotation"),
        ("model = \n", "assay.toml:1:9: malformed TOML: Invalid value"),
        ("timeout = inf\n", "assay.toml:1:1: timeout: Input should be a finite number"),
        ("root = 'nowhere'\n", "assay.toml:1:1: root 'nowhere' is not a directory under"),
    ],
)
def test_bad_config(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path / "assay.toml", text)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert message in str(info.value)


def test_config_root_and_paths_drive_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path.resolve()
    shutil.copytree(DATA / "warden", project / "evals")
    # The YAML suite moves to suites/, yet its paths still resolve against the root.
    (project / "suites").mkdir()
    shutil.move(project / "evals/eval-bug-detection.yaml", project / "suites/bugs.yaml")
    write(project / "assay.toml", 'root = "evals"\npaths = ["suites", "evals"]\n')
    monkeypatch.chdir(project / "suites")  # config is found walking up from the cwd
    loaded = load_suites([])
    assert loaded.root == project / "evals"
    assert [c.id for c in loaded.cases][0] == "bug-detection/null-property-access"
    assert all(c.root == project / "evals" for c in loaded.cases)


def test_a_configured_path_that_is_gone_names_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "assay.toml", 'paths = ["gone"]\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        ConfigErrors, match=r"assay.toml: .*gone: no such file or directory \(listed in `paths`\)"
    ):
        load_suites([])


def test_without_config_the_path_is_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(DATA / "warden", tmp_path / "w")
    monkeypatch.chdir(tmp_path / "w")
    loaded = load_suites([])
    assert loaded.root == (tmp_path / "w").resolve()
    assert len(loaded.cases) == 3


def test_config_unknown_key_is_an_error_under_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(DATA / "pvyai", tmp_path / "pvyai")
    write(tmp_path / "assay.toml", 'paths = ["pvyai"]\ncolour = "red"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 0
    assert "assay.toml:2:1: warning: unknown configuration key 'colour'" in capsys.readouterr().err
    assert main(["validate", "--strict"]) == 2
    assert "assay.toml:2:1: unknown configuration key 'colour'" in capsys.readouterr().err


def test_malformed_config_is_reported_by_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.assay\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml:1:" in err and "malformed TOML" in err and "Traceback" not in err
