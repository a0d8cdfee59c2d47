"""`assay ci` given a broken runner environment or a surprising input: a clear error (or
the intended match), the right exit code, never a traceback.

Same setup as tests/test_action_ci.py: the loopback fake GitHub through the real
PyGithub client, a real run of the tiny task suite.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.github_publish import comments
from tests.test_action_ci import REPORT_KEYS, TOKEN, Ci, ci_environment

PR_FILES = r"/repos/acme/widgets/pulls/\d+/files"


@pytest.fixture
def ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ci]:
    with ci_environment(tmp_path, monkeypatch, token=TOKEN) as env:
        yield env


def _errors(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("::error")]


def _runner_file_error(variable: str, path: Path, reason: str, lost: str) -> str:
    return (
        f"::error title=assay%3A runner environment::cannot write {variable} ({path}): "
        f"{reason}, so {lost}; the runner creates this file for each step: leave {variable} "
        "as the runner sets it, and if the step runs in a container or as another user, "
        "mount the file writable"
    )


OUTPUTS_LOST = "later steps get none of this step's outputs"


def _unwritable(root: Path, kind: str) -> Path:
    """A path the runner would never hand out: a directory, or a file in a missing one."""
    if kind == "directory":
        (root / "a-directory").mkdir()
        return root / "a-directory"
    return root / "missing" / "file"


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("directory", "Is a directory"), ("missing-dir", "No such file or directory")],
)
def test_unwritable_outputs_on_a_skipped_event_are_a_usage_error(
    ci: Ci,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    reason: str,
) -> None:
    broken = _unwritable(ci.root, kind)
    ci.environ["GITHUB_OUTPUT"] = str(broken)
    ci.fake.add_pull("acme/widgets", 7, files=[{"filename": "README.md"}])
    ci.use_event("pull_request", "pull_request_synchronize.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 2  # a skip that lost its `ran`/`reason` outputs must not look green
    assert _errors(out) == [_runner_file_error("GITHUB_OUTPUT", broken, reason, OUTPUTS_LOST)]
    assert "Traceback" not in out + err


@pytest.mark.slow
def test_unwritable_outputs_on_a_run_are_one_error_and_everything_else_is_published(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run writes outputs three times (the decision, the results, the history
    directory); the one fault is said once, and outranks the gate that passed."""
    broken = _unwritable(ci.root, "missing-dir")
    ci.environ.update(GITHUB_OUTPUT=str(broken), INPUT_THRESHOLD="0.5")
    ci.fake.add_pull("acme/widgets", 7, files=[{"filename": "evals/tasks.json"}])
    ci.use_event("pull_request", "pull_request_opened.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 2
    runner_errors = [line for line in _errors(out) if "runner environment" in line]
    assert runner_errors == [
        _runner_file_error("GITHUB_OUTPUT", broken, "No such file or directory", OUTPUTS_LOST)
    ]
    assert "Evaluation Results" in ci.summary
    (comment,) = comments(ci.fake, "acme/widgets")
    assert "Evaluation Results" in comment["body"]
    assert "Traceback" not in out + err


@pytest.mark.slow
def test_unwritable_summary_still_publishes_everything_else(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _unwritable(ci.root, "missing-dir")
    ci.environ.update(GITHUB_STEP_SUMMARY=str(broken), INPUT_THRESHOLD="0.5")
    ci.fake.add_pull("acme/widgets", 7, files=[{"filename": "evals/tasks.json"}])
    ci.use_event("pull_request", "pull_request_opened.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 2  # the gate passed (0.5 >= 0.5), but the job summary is lost
    errors = _errors(out)
    assert errors[0] == _runner_file_error(
        "GITHUB_STEP_SUMMARY", broken, "No such file or directory", "the job summary is lost"
    )
    assert len(errors) == 2 and errors[1].startswith("::error file=evals/tasks.json,")
    assert set(ci.outputs) == REPORT_KEYS and ci.outputs["score"] == "0.5000"
    (comment,) = comments(ci.fake, "acme/widgets")
    assert "Evaluation Results" in comment["body"]
    assert "Traceback" not in out + err


def test_an_invalid_trigger_path_is_a_usage_error(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.environ["INPUT_TRIGGER_PATHS"] = "evals/[z-a]*"
    ci.fake.add_pull("acme/widgets", 7, files=[{"filename": "evals/tasks.json"}])
    ci.use_event("pull_request", "pull_request_synchronize.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 2
    assert _errors(out) == [
        "::error title=assay%3A configuration::input `trigger-paths`: invalid pattern "
        "'evals/[z-a]*': bad character range z-a (got 'evals/[z-a]*')"
    ]
    assert ci.outputs == {} and ci.fake.count(PR_FILES) == 0  # refused before deciding
    assert "Traceback" not in out + err


def test_a_bracket_in_a_class_is_a_literal_without_a_warning(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.environ["INPUT_TRIGGER_PATHS"] = "src/[[:alpha:]]*.py"
    ci.fake.add_pull("acme/widgets", 7, files=[{"filename": "src/app.py"}])
    ci.use_event("pull_request", "pull_request_synchronize.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 0 and err == ""  # no FutureWarning (and filterwarnings=error agrees)
    assert ci.outputs["ran"] == "false"  # `[[:alpha:]` + `]`: src/app.py does not match


@pytest.mark.parametrize("label", ["run-evals\n", " run-evals ", "Run-Evals"])
@pytest.mark.slow
def test_the_label_matches_whatever_its_spacing_and_case(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], label: str
) -> None:
    ci.environ.update(INPUT_LABEL=label, INPUT_COMMENT="false")
    ci.use_event("pull_request", "pull_request_labeled_run_evals.json")
    code, _, _ = ci.run(monkeypatch, capsys)
    assert code == 1  # it ran: 0.5 < 0.75
    assert ci.outputs["ran"] == "true"
    assert ci.outputs["reason"] == f"PR #7 carries the {label.strip()!r} label"
    assert ci.fake.count(PR_FILES) == 0  # the label alone decided


@pytest.mark.slow
def test_workflows_whose_names_differ_in_punctuation_keep_a_comment_each(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`Evals: fast` and `Evals; fast` both clean to `Evals_ fast`; they overwrote each
    other's sticky comment."""
    ci.fake.add_pull("acme/widgets", 7, files=[{"filename": "evals/tasks.json"}])
    ci.use_event("pull_request", "pull_request_opened.json")
    for workflow in ("Evals: fast", "Evals; fast", "Evals: fast"):
        ci.environ["GITHUB_WORKFLOW"] = workflow
        ci.run(monkeypatch, capsys)
    first, second = comments(ci.fake, "acme/widgets")
    assert first["body"].startswith("<!-- assay:evals workflow=Evals_ fast~")
    assert second["body"].startswith("<!-- assay:evals workflow=Evals_ fast~")
    assert first["body"].split("\n", 1)[0] != second["body"].split("\n", 1)[0]
    assert (first.get("edits"), second.get("edits")) == (1, None)  # the third edited the first


def test_a_pattern_of_many_stars_decides_at_once_on_long_names(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The workflow's pattern, the PR author's names: the regex took 4.5 s for one name of
    50 `a`s against this pattern, and a 5,000-character one never finished."""
    ci.environ["INPUT_TRIGGER_PATHS"] = "*a*a*a*a*a*a*a*b"
    names = [{"filename": "a" * 5_000 + str(i)} for i in range(100)]
    ci.fake.add_pull("acme/widgets", 7, files=names)
    ci.use_event("pull_request", "pull_request_synchronize.json")
    started = time.perf_counter()
    code, out, err = ci.run(monkeypatch, capsys)
    assert time.perf_counter() - started < 10
    assert code == 0 and ci.outputs["ran"] == "false"
    assert ci.outputs["reason"].startswith("PR #7 changes no file matching trigger-paths")
