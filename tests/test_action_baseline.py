"""The Action's scale inputs: `baseline-report` (a path, or `auto`: the default branch's
latest report artifact) and `shard`.

`assay ci` runs for real on a tiny task suite (see tests/test_action_ci.py); GitHub is the
loopback fake with the artifact routes, reached through the real PyGithub client; the
artifact zip is served from a second route after a 302, as GitHub's blob storage does.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.action import baseline_report as baseline_module
from assay.action import github_api
from assay.action.baseline_report import load_baseline_report
from assay.action.comment import COMMENT_LIMIT, comment_body
from assay.action.github_api import github_client
from assay.action.inputs import read_inputs
from assay.errors import ConfigErrors
from assay.report.compare import compare_reports
from assay.report.model import CaseResult, Report, RunInfo, Summary
from tests.fakes.github import FakeGitHub
from tests.fakes.github_artifacts import (
    add_artifact,
    add_artifact_routes,
    add_workflow_run,
    blob_downloads,
    zip_of,
)
from tests.fakes.github_publish import add_publish_routes, comments
from tests.fakes.loopback import Reply
from tests.test_action_ci import Ci, ci_environment

REPO = "acme/widgets"
TOKEN = "ghs_baseline_token_77"
CASES = ("demo/fix-greeting", "demo/broken")


def report_of(statuses: dict[str, str], *, run_id: str | None = None) -> Report:
    """A report of the demo task suite with the given case statuses."""
    cases = [
        CaseResult.model_validate(
            {
                "id": case_id,
                "suite": "demo",
                "kind": "task",
                "source": {"path": "evals/tasks.json", "line": 4 + n},
                "status": status,
                "score": {"pass": 1.0, "fail": 0.0}.get(status),
                "reason": "" if status == "pass" else "never: exit code 1",
            }
        )
        for n, (case_id, status) in enumerate(statuses.items())
    ]
    scored = [c.score for c in cases if c.score is not None]
    score = sum(scored) / len(scored) if scored else None
    count = {s: sum(c.status == s for c in cases) for s in ("pass", "fail", "error", "skipped")}
    return Report(
        run=RunInfo(
            id=run_id or uuid.uuid4().hex,
            started_at="2024-01-01T00:00:00Z",
            assay_version="0",
            threshold=0.75,
        ),
        summary=Summary(
            total=len(cases),
            passed=count["pass"],
            failed=count["fail"],
            errors=count["error"],
            skipped=count["skipped"],
            score=score,
            gate="pass" if score is not None and score >= 0.75 else "fail",
        ),
        cases=cases,
    )


ALL_PASS = dict.fromkeys(CASES, "pass")


def report_json(report: Report) -> str:
    return report.model_dump_json(indent=2)


def _commands(out: str) -> list[str]:
    # Tests run with ASSAY_ISOLATION=none (tests/conftest.py); that warning is not theirs.
    sandbox = "::warning title=assay%3A no OS sandbox::"
    return [line for line in out.splitlines() if line.startswith("::") and sandbox not in line]


def _warnings(out: str) -> list[str]:
    return [line for line in _commands(out) if line.startswith("::warning")]


@pytest.fixture
def ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ci]:
    routes = (add_publish_routes, add_artifact_routes)
    with ci_environment(tmp_path, monkeypatch, token=TOKEN, routes=routes) as env:
        yield env


def _pull_request(ci: Ci) -> None:
    ci.fake.add_pull(REPO, 7, files=[{"filename": "evals/tasks.json"}])
    ci.use_event("pull_request", "pull_request_opened.json")


# -- shard -----------------------------------------------------------------------------


@pytest.mark.slow
def test_shard_input_runs_one_shard(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("push", "push.json")
    ci.environ["INPUT_SHARD"] = " 2/2 "
    code, _, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    report = json.loads(Path(ci.outputs["report-path"]).read_text())
    assert report["run"]["shard"] == "2/2"
    assert [c["id"] for c in report["cases"]] == ["demo/fix-greeting"]  # sorted ids, stride 2
    assert ci.outputs["total"] == "1" and ci.outputs["score"] == "1.0000"


@pytest.mark.parametrize("shard", ["3/2", "0/2", "1", "one/two"])
def test_bad_shard_input_is_a_config_error(shard: str) -> None:
    with pytest.raises(ConfigErrors) as caught:
        read_inputs({"INPUT_SHARD": shard})
    assert str(caught.value).startswith("input `shard`: ") and f"(got '{shard}')" in str(
        caught.value
    )


# -- baseline from a path ----------------------------------------------------------------


@pytest.mark.slow
def test_path_baseline_goes_to_the_summary_comment_and_outputs(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (ci.workspace / "baseline").mkdir()
    (ci.workspace / "baseline" / "report.json").write_text(report_json(report_of(ALL_PASS)))
    _pull_request(ci)
    ci.environ["INPUT_BASELINE_REPORT"] = "baseline"  # a directory, relative to the workspace
    code, out, _ = ci.run(monkeypatch, capsys)

    assert code == 1  # the gate is this run's own (0.5 < 0.75), whatever the baseline
    assert ci.outputs["regressions"] == "1"
    assert _warnings(out) == []
    assert "assay: comparing with baseline" in out
    assert "assay: compared with baseline: 1 newly failing, 0 newly passing" in out
    # The job summary leads as the comment does: the verdict, what changed, then the rest;
    # the newly failing case is listed (with why) once.
    summary = ci.summary
    order = [
        summary.index(text)
        for text in (
            "## ❌ Evaluation Results",
            "**Score 0.50**",
            "2 cases: 1 passed, 1 failed, 0 errors, 0 skipped · 95% interval 0.09–0.91 · verdict",
            "## ➖ Compared with baseline: score 1.00 → 0.50",
            "### ❌ Newly failing",
            "<summary>❌ <code>demo/broken</code> ✅ → ❌",
            "### Results by suite",
            "base run `",
        )
    ]
    assert order == sorted(order)
    assert summary.count("<code>demo/broken</code>") == 1 and "Still failing" not in summary
    (comment,) = comments(ci.fake, REPO)
    body = comment["body"]
    assert (
        "Evaluation Results" in body and "### Compared with baseline\n\nScore 1.00 → 0.50" in body
    )
    assert body.index("### Compared with baseline") < body.index("### ❌ Newly failing")
    assert "<code>demo/broken</code> ✅ → ❌ — " in body


@pytest.mark.slow
def test_unreadable_path_baseline_warns_and_the_run_goes_on(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (ci.workspace / "old.json").write_text('{\n  "contract": "assay.report.v1",\n  "run": [\n')
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_BASELINE_REPORT="old.json", INPUT_THRESHOLD="0.5")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 0
    (warning,) = _warnings(out)
    assert warning.startswith(
        "::warning title=assay%3A baseline::no baseline comparison: old.json:4:1: "
        "not a report: invalid JSON: Expecting value"
    )
    assert "regressions" not in ci.outputs and "Compared with" not in ci.summary
    assert "Traceback" not in out + err


# -- baseline: auto --------------------------------------------------------------------


def _artifact(ci: Ci, report: Report, *, created_at: str, **run: object) -> dict[str, object]:
    workflow_run = add_workflow_run(ci.fake, REPO, **run)  # type: ignore[arg-type]
    data = zip_of({"report.json": report_json(report), "summary.md": "## old\n"})
    return add_artifact(ci.fake, REPO, run=workflow_run, data=data, created_at=created_at)


@pytest.mark.slow
def test_auto_baseline_is_the_newest_trusted_artifact_of_the_default_branch(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    chosen_run = "c" * 32
    wanted = report_of(ALL_PASS, run_id=chosen_run)
    older = report_of({"demo/fix-greeting": "fail", "demo/broken": "fail"})
    poisoned = report_of({"demo/fix-greeting": "fail", "demo/broken": "fail"})
    _artifact(ci, older, created_at="2024-01-01T00:00:00Z")
    good = _artifact(ci, wanted, created_at="2024-01-02T00:00:00Z")
    # Newer, but none of these may serve: expired, failed, a PR branch, a fork's `main`.
    _artifact(ci, older, created_at="2024-01-03T00:00:00Z")["expired"] = True
    _artifact(ci, poisoned, created_at="2024-01-04T00:00:00Z", conclusion="failure")
    _artifact(
        ci, poisoned, created_at="2024-01-05T00:00:00Z", head_branch="feature", event="pull_request"
    )
    _artifact(ci, poisoned, created_at="2024-01-06T00:00:00Z", event="pull_request", from_fork=True)
    _artifact(ci, poisoned, created_at="2024-01-07T00:00:00Z", event="pull_request_target")
    _pull_request(ci)
    ci.environ["INPUT_BASELINE_REPORT"] = "auto"
    code, out, _ = ci.run(monkeypatch, capsys)

    assert code == 1
    assert _warnings(out) == []
    assert blob_downloads(ci.fake) == 1  # only the chosen archive is downloaded
    run_id = good["workflow_run"]["id"]  # type: ignore[index]
    assert f"assay: comparing with the `assay-report` artifact of run {run_id} on main" in out
    assert ci.outputs["regressions"] == "1"
    assert "Compared with main" in ci.summary and f"base run `{chosen_run}`" in ci.summary
    (comment,) = comments(ci.fake, REPO)
    assert "### Compared with main\n\nScore 1.00 → 0.50" in comment["body"]
    listed = [r for r in ci.fake.requests if r.path == f"/repos/{REPO}/actions/artifacts"]
    # The baseline's, then the run history's (tests/test_action_history.py).
    assert [r.query.get("name") for r in listed] == [["assay-report"], ["assay-history"]]


def test_auto_without_an_artifact_warns_and_the_run_goes_on(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_BASELINE_REPORT="auto", INPUT_THRESHOLD="0.5")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    (warning,) = _warnings(out)
    assert "no baseline comparison: no unexpired `assay-report` artifact" in warning
    assert "successful run on main" in warning
    assert ci.outputs["passed"] == "1" and "regressions" not in ci.outputs
    assert "Evaluation Results" in ci.summary and "Compared with" not in ci.summary


@pytest.mark.slow
def test_the_regression_gate_without_a_baseline_yet_gates_on_the_threshold(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first run on main: were it refused, it would never upload the baseline.
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_BASELINE_REPORT="auto", INPUT_GATE="regression", INPUT_THRESHOLD="0.5")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    baseline_warning, gate_warning = _warnings(out)
    assert "no baseline comparison" in baseline_warning
    assert gate_warning == (
        "::warning title=assay%3A regression gate::gate: regression has no baseline to "
        "compare with; gating on the threshold (0.5) instead"
    )
    assert ci.outputs["total"] == "2" and ci.outputs["verdict"] != "fail"


# -- what cannot be a baseline (load_baseline_report through PyGithub and the fake) -------------


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setattr(github_api, "BACKOFF_S", 0.0)
    with FakeGitHub(token=TOKEN) as fake:
        add_artifact_routes(fake)
        fake.add_repo(REPO)
        yield fake  # type: ignore[misc]


def _auto(fake: FakeGitHub, *, allow_http: bool = True, token: str = TOKEN) -> object:
    return load_baseline_report(
        "auto",
        workspace=Path.cwd(),
        repository=REPO,
        client=github_client(api_url=fake.url, token=token),
        artifact_name="assay-report",
        allow_http=allow_http,
    )


def _publish_archive(fake: FakeGitHub, data: bytes) -> None:
    add_artifact(fake, REPO, run=add_workflow_run(fake, REPO), data=data)


GOOD = report_json(report_of(ALL_PASS))


@pytest.mark.parametrize(
    ("archive", "expected"),
    [
        (b"PK\x03\x04 this is not a zip archive", "is not a readable zip archive"),
        (zip_of({"../report.json": GOOD}), "has an unsafe member name '../report.json'"),
        (zip_of({"/tmp/report.json": GOOD}), "has an unsafe member name '/tmp/report.json'"),
        (zip_of({"x\\..\\..\\report.json": GOOD}), "has an unsafe member name"),
        (zip_of({"summary.md": "## hi\n"}), "holds no report.json"),
        (
            zip_of({"a/report.json": GOOD, "b/report.json": GOOD}),
            "holds several report.json files (a/report.json, b/report.json)",
        ),
        (
            zip_of({"report.json": '{"contract": "assay.report.v1"}'}),
            "report.json in the `assay-report` artifact of run",
        ),
    ],
)
def test_a_bad_archive_is_a_warning(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str], archive: bytes, expected: str
) -> None:
    _publish_archive(github, archive)
    assert _auto(github) is None
    (warning,) = _warnings(capsys.readouterr().out)
    assert warning.startswith("::warning title=assay%3A baseline::no baseline comparison: ")
    assert expected in warning


def test_an_invalid_report_is_named_with_its_line(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = json.loads(GOOD)
    broken["cases"][1]["status"] = "exploded"
    _publish_archive(github, zip_of({"report.json": json.dumps(broken, indent=2)}))
    assert _auto(github) is None
    (warning,) = _warnings(capsys.readouterr().out)
    assert "not a valid report: report.json in the `assay-report` artifact of run " in warning
    assert re.search(r"on main:\d+:\d+: cases\[1\]\.status: ", warning), warning


def test_a_single_nested_report_is_found(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    _publish_archive(github, zip_of({"merged/report.json": GOOD, "merged/summary.md": "x"}))
    found = _auto(github)
    assert isinstance(found, baseline_module.BaselineReport)
    assert found.label == "main" and [c.id for c in found.report.cases] == list(CASES)
    assert _warnings(capsys.readouterr().out) == []


def test_archives_and_reports_over_the_cap_are_refused(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(baseline_module, "MAX_BYTES", 2048)
    padded = GOOD + " " * 4000  # still valid JSON; deflates to almost nothing
    _publish_archive(github, zip_of({"report.json": padded}))
    assert _auto(github) is None  # deflated, the archive fits; the report inside does not
    monkeypatch.setattr(baseline_module, "MAX_BYTES", 200)
    assert _auto(github) is None  # now the archive itself is over the cap
    first, second = _warnings(capsys.readouterr().out)
    assert "report.json in the `assay-report` artifact" in first and "larger than" in first
    assert "the artifact archive is larger than" in second


def test_an_expired_artifact_is_passed_over(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    run = add_workflow_run(github, REPO)
    add_artifact(github, REPO, run=run, data=zip_of({"report.json": GOOD}), expired=True)
    assert _auto(github) is None
    assert "no unexpired `assay-report` artifact" in capsys.readouterr().out
    assert blob_downloads(github) == 0


def test_a_plain_http_download_redirect_is_refused(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    _publish_archive(github, zip_of({"report.json": GOOD}))
    assert _auto(github, allow_http=False) is None
    assert "refusing to download the artifact over http" in capsys.readouterr().out
    assert blob_downloads(github) == 0


def test_missing_permission_names_actions_read(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github.inject(
        Reply(403, {"message": "Resource not accessible by integration"}),
        path=rf"/repos/{REPO}/actions/artifacts",
    )
    assert _auto(github) is None
    (warning,) = _warnings(capsys.readouterr().out)
    assert "403 Resource not accessible by integration" in warning
    assert "permissions: actions: read" in warning


def test_auto_without_a_token_warns(capsys: pytest.CaptureFixture[str]) -> None:
    found = load_baseline_report(
        "AUTO", workspace=Path.cwd(), repository=REPO, client=None, artifact_name="assay-report"
    )
    assert found is None
    assert "needs the github-token input" in capsys.readouterr().out


# -- the comment keeps to GitHub's limit ----------------------------------------------------


@pytest.mark.slow
def test_comment_with_a_large_comparison_stays_under_the_limit() -> None:
    many = [f"suite/case-{i:04d}-{'long-name-' * 8}" for i in range(3000)]
    base = report_of(dict.fromkeys(many, "pass"))
    head = report_of(dict.fromkeys(many, "fail"))
    body = comment_body(
        head,
        marker="<!-- assay:evals workflow=Evals job=evals -->",
        run_url="https://github.com/acme/widgets/actions/runs/1",
        comparison=compare_reports(base, head),
        comparison_title="Compared with main",
    )
    assert len(body) < COMMENT_LIMIT
    assert body.index("Evaluation Results") < body.index("Compared with main")
    assert body.rstrip().endswith("</sub>")


def test_a_malformed_api_answer_is_a_warning_not_a_crash(
    github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github.inject(
        Reply(200, {"total_count": 1, "artifacts": [{"id": "not a number", "expired": "no"}]}),
        path=rf"/repos/{REPO}/actions/artifacts",
    )
    assert _auto(github) is None
    (warning,) = _warnings(capsys.readouterr().out)
    assert warning.startswith("::warning title=assay%3A baseline::no baseline comparison: ")
