"""Publishing a report: summary, annotations, outputs, sticky comment and check run.

Reports are built by hand here; tests/test_action_ci.py runs the whole `assay ci`.
GitHub calls go through the real PyGithub client to the loopback fake.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.action import github_api
from assay.action.environment import RunnerEnvironment
from assay.action.event import PullRequestRef
from assay.action.github_api import github_client
from assay.action.inputs import read_inputs
from assay.action.outputs import UnsafeOutput, write_outputs
from assay.action.publish import PublishTarget, publish_report
from assay.report.model import CaseResult, Report, RunInfo, Summary
from tests.fakes.github import FakeGitHub
from tests.fakes.github_publish import (
    BOT_LOGIN,
    add_comment,
    add_publish_routes,
    check_runs,
    comments,
)
from tests.fakes.loopback import Reply

REPO = "acme/widgets"
TOKEN = "ghs_publish_token"
MARKER = "<!-- assay:evals workflow=Evals job=evals -->"


@pytest.fixture(autouse=True)
def _fast_github(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the workspace: suite paths in reports are relative to it
    monkeypatch.setattr(github_api, "WRITE_INTERVAL_S", 0.0)
    monkeypatch.setattr(github_api, "BACKOFF_S", 0.0)


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        add_publish_routes(server)
        server.add_pull(REPO, 7, title="Tighten the parser")
        yield server  # type: ignore[misc]


def make_case(
    i: int,
    status: str = "fail",
    *,
    reason: str = "",
    path: str = "evals/suite.yaml",
    model: str | None = None,
) -> CaseResult:
    return CaseResult.model_validate(
        {
            "id": f"suite/case-{i}",
            "suite": "suite",
            "kind": "task",
            "source": {"path": path, "line": 10 + i},
            "model": model,
            "status": status,
            "score": {"pass": 1.0, "fail": 0.0}.get(status),
            "reason": reason or f"check {i} failed",
        }
    )


def make_report(cases: list[CaseResult], *, threshold: float = 0.75) -> Report:
    scored = [c.score for c in cases if c.score is not None]
    score = sum(scored) / len(scored) if scored else None
    count = {
        s: sum(1 for c in cases if c.status == s) for s in ("pass", "fail", "error", "skipped")
    }
    return Report(
        run=RunInfo(
            id=uuid.uuid4().hex,
            started_at="2024-01-01T00:00:00Z",
            assay_version="0",
            threshold=threshold,
        ),
        summary=Summary(
            total=len(cases),
            passed=count["pass"],
            failed=count["fail"],
            errors=count["error"],
            skipped=count["skipped"],
            score=score,
            gate="pass" if score is not None and score >= threshold else "fail",
        ),
        cases=list(cases),
    )


def parse_outputs(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it; every entry must use a ghadelimiter_ heredoc."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i]:
            i += 1
            continue
        name, delimiter = lines[i].split("<<", 1)
        assert delimiter.startswith("ghadelimiter_"), lines[i]
        end = lines.index(delimiter, i + 1)
        assert name not in values, f"output {name} written twice"
        values[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return values


def make_target(
    tmp_path: Path,
    fake: FakeGitHub | None,
    *,
    job: str = "evals",
    api_url: str | None = None,
    pull: bool = True,
    **inputs: str,
) -> PublishTarget:
    environ = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_WORKFLOW": "Evals",
        "GITHUB_JOB": job,
        "GITHUB_SHA": "4" * 40,
        "GITHUB_RUN_ID": "99",
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    }
    env = RunnerEnvironment.from_environ(environ)
    url = api_url or (fake.url if fake else "")
    pull_ref = PullRequestRef(7, "Tighten the parser", (), REPO, REPO, "1" * 40, "2" * 40, 2)
    return PublishTarget(
        env=env,
        inputs=read_inputs(environ),
        pull_request=pull_ref if pull else None,
        client=github_client(api_url=url, token=TOKEN) if url else None,
    )


def _commands(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("::")]


def test_summary_outputs_and_capped_annotations(
    tmp_path: Path,
    fake: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    cases = [make_case(i) for i in range(12)] + [make_case(99, "pass")]
    cases[0] = make_case(0, "error", reason="agent \x1b[8mcrashed\u202e")
    cases[1] = make_case(1, path=str(tmp_path.parent / "elsewhere.yaml"))
    report = make_report(cases)
    report_dir = tmp_path / "report"
    report_dir.mkdir()
    (report_dir / "summary.md").write_text("## from the runner\n")

    publish_report(
        report, report_dir=report_dir, target=make_target(tmp_path, fake, comment="false")
    )

    assert (tmp_path / "summary.md").read_text() == "## from the runner\n"
    outputs = parse_outputs((tmp_path / "output.txt").read_text())
    assert outputs == {
        "score": f"{1 / 12:.4f}",
        "passed": "1",
        "total": "13",
        "failed": "11",
        "errors": "1",
        "verdict": "fail",
        "report-path": str(report_dir.resolve() / "report.json"),
    }
    lines = _commands(capsys.readouterr().out)
    assert len(lines) == 11
    assert (
        lines[0]
        == "::error file=evals/suite.yaml,line=10,title=suite/case-0 (error)::agent [8mcrashed"
    )
    assert (
        lines[1] == "::error title=suite/case-1::check 1 failed"
    )  # outside the workspace: no file
    assert lines[2] == "::error file=evals/suite.yaml,line=12,title=suite/case-2::check 2 failed"
    assert lines[-1] == "::notice::2 more failures not annotated; see the job summary"
    assert comments(fake, REPO) == [] and check_runs(fake, REPO) == []


def test_sticky_comment_is_created_then_edited_never_duplicated(
    tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    add_comment(fake, REPO, 7, MARKER + "\nI copied the marker", login="mallory")
    add_comment(fake, REPO, 7, "LGTM")
    first = make_report([make_case(1, reason="@octocat look here"), make_case(2, "pass")])
    publish_report(first, report_dir=tmp_path, target=make_target(tmp_path, fake))
    ours = [c for c in comments(fake, REPO) if c["user"]["login"] == BOT_LOGIN]
    assert len(ours) == 1
    body = ours[0]["body"]
    assert body.startswith(MARKER + "\n")
    assert "Score 0.50" in body and "threshold 0.75" in body and "suite/case-1" in body
    assert "@octocat" not in body and "@\u200doctocat" in body
    assert "https://github.com/acme/widgets/actions/runs/99" in body

    second = make_report([make_case(1, "pass"), make_case(2, "pass")])
    publish_report(second, report_dir=tmp_path, target=make_target(tmp_path, fake))
    ours = [c for c in comments(fake, REPO) if c["user"]["login"] == BOT_LOGIN]
    assert len(ours) == 1 and ours[0]["edits"] == 1
    assert "Score 1.00" in ours[0]["body"]
    assert comments(fake, REPO)[0]["body"] == MARKER + "\nI copied the marker"
    assert fake.count(rf"/repos/{REPO}/issues/7/comments", "POST") == 1

    # Another eval job keeps its own comment.
    publish_report(
        second, report_dir=tmp_path, target=make_target(tmp_path, fake, job="evals-nightly")
    )
    ours = [c for c in comments(fake, REPO) if c["user"]["login"] == BOT_LOGIN]
    assert len(ours) == 2 and ours[1]["body"].startswith(
        "<!-- assay:evals workflow=Evals job=evals-nightly -->"
    )
    assert "::warning" not in capsys.readouterr().out


def test_two_runs_creating_the_comment_at_once_leave_one(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A label and a push start two runs; both find no comment and create one, and the
    stale one stayed forever."""
    from tests.fakes import github_publish
    from tests.fakes.loopback import Request

    create = github_publish._create_comment

    def another_run_got_there_first(fake: FakeGitHub, request: Request) -> Reply:
        add_comment(fake, REPO, 7, MARKER + "\nthe other run's results", login=BOT_LOGIN)
        return create(fake, request)

    monkeypatch.setattr(github_publish, "_create_comment", another_run_got_there_first)
    report = make_report([make_case(1, "pass"), make_case(2, "pass")])
    publish_report(report, report_dir=tmp_path, target=make_target(tmp_path, fake))
    ours = [c for c in comments(fake, REPO) if c["user"]["login"] == BOT_LOGIN]
    assert len(ours) == 1 and "Score 1.00" in ours[0]["body"]


@pytest.mark.parametrize(
    "login",
    [BOT_LOGIN, "evals-app[bot]", "maintainer"],
    ids=["actions-token", "app-token", "personal-token"],
)
def test_a_lookalike_comment_by_anyone_else_is_left_alone(tmp_path: Path, login: str) -> None:
    """GitHub lets the token edit any comment, so only the author tells ours apart."""
    forged = MARKER + "\n## ✅ Evaluation Results\nScore 1.00 (threshold 0.75), gate **pass**"
    with FakeGitHub(token=TOKEN, login=login) as fake:
        add_publish_routes(fake)
        fake.add_pull(REPO, 7)
        others = ("mallory", BOT_LOGIN, "evals-app[bot]", "maintainer")
        lookalikes = [
            add_comment(fake, REPO, 7, forged, login=other) for other in others if other != login
        ]
        failing = make_report([make_case(1), make_case(2, "pass")])
        publish_report(failing, report_dir=tmp_path, target=make_target(tmp_path, fake))
        publish_report(failing, report_dir=tmp_path, target=make_target(tmp_path, fake))

        ours = [c for c in comments(fake, REPO) if c["user"]["login"] == login]
        assert len(ours) == 1 and ours[0]["edits"] == 1  # created, then edited in place
        assert "gate **fail**" in ours[0]["body"]
        assert all(c["body"] == forged and "edits" not in c for c in lookalikes)
        assert fake.count(rf"/repos/{REPO}/issues/comments/\d+", "PATCH") == 1


def test_an_unknown_token_identity_edits_nothing(
    tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    mallorys = add_comment(fake, REPO, 7, MARKER + "\nmine now", login="mallory")
    fake.inject(Reply(403, {"message": "Resource not accessible by integration"}), path="/graphql")
    report = make_report([make_case(1, "pass")])
    publish_report(report, report_dir=tmp_path, target=make_target(tmp_path, fake))
    (warning,) = [line for line in _commands(capsys.readouterr().out) if "warning" in line]
    assert "could not comment on PR #7 (403 Resource not accessible by integration)" in warning
    assert comments(fake, REPO) == [mallorys] and "edits" not in mallorys


def test_existing_comment_is_found_on_a_later_page(tmp_path: Path, fake: FakeGitHub) -> None:
    for i in range(120):
        add_comment(fake, REPO, 7, f"chatter {i}")
    report = make_report([make_case(1, "pass")])
    publish_report(report, report_dir=tmp_path, target=make_target(tmp_path, fake))
    publish_report(report, report_dir=tmp_path, target=make_target(tmp_path, fake))
    ours = [c for c in comments(fake, REPO) if c["user"]["login"] == BOT_LOGIN]
    assert len(ours) == 1 and ours[0]["edits"] == 1


def test_comment_body_stays_under_the_limit(tmp_path: Path, fake: FakeGitHub) -> None:
    cases = [make_case(i, reason="x" * 3000 + f" reason {i}") for i in range(600)]
    publish_report(make_report(cases), report_dir=tmp_path, target=make_target(tmp_path, fake))
    (comment,) = comments(fake, REPO)
    assert len(comment["body"]) < 65_000
    assert comment["body"].startswith(MARKER)


def test_check_run_sends_annotations_in_batches_of_50(tmp_path: Path, fake: FakeGitHub) -> None:
    cases = [make_case(i) for i in range(120)] + [make_case(500, "pass")]
    publish_report(
        make_report(cases),
        report_dir=tmp_path,
        target=make_target(tmp_path, fake, comment="false", check_run="true"),
    )
    (run,) = check_runs(fake, REPO)
    assert run["name"] == "Evaluation Results"
    assert run["head_sha"] == "2" * 40  # the PR head, not the merge commit
    assert run["conclusion"] == "failure" and run["status"] == "completed"
    assert run["annotation_batches"] == [50, 50, 20]
    assert run["annotations"][0] == {
        "path": "evals/suite.yaml",
        "start_line": 10,
        "end_line": 10,
        "annotation_level": "failure",
        "title": "suite/case-0",
        "message": "check 0 failed",
    }
    assert run["output"]["title"] == "score 0.01 (threshold 0.75): gate failed"
    assert run["output"]["summary"].startswith("## ❌ Evaluation Results")
    assert run["details_url"] == "https://github.com/acme/widgets/actions/runs/99"


def test_a_failed_duplicate_check_after_creating_the_comment_names_that_cause(
    tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """The comment was created; only GraphQL (whom the token acts as, asked to find a
    concurrent run's copy) refused. Blaming `pull-requests: write` would send the user to
    fix a permission the job has."""
    fake.graphql_refusal = Reply(403, {"message": "Resource not accessible by integration"})
    publish_report(
        make_report([make_case(1)]), report_dir=tmp_path, target=make_target(tmp_path, fake)
    )
    (comment,) = comments(fake, REPO)
    warnings = [w for w in _commands(capsys.readouterr().out) if w.startswith("::warning")]
    (warning,) = warnings
    assert "created the results comment" in warning and comment["html_url"] in warning
    assert "403 Resource not accessible by integration" in warning
    assert "whom the token acts as" in warning
    assert "pull-requests" not in warning


def test_check_run_on_push_uses_the_pushed_commit(tmp_path: Path, fake: FakeGitHub) -> None:
    target = make_target(tmp_path, fake, pull=False, check_run="true")
    publish_report(make_report([make_case(1, "pass")]), report_dir=tmp_path, target=target)
    (run,) = check_runs(fake, REPO)
    assert run["head_sha"] == "4" * 40 and run["conclusion"] == "success"
    assert run["annotation_batches"] == [0]
    assert comments(fake, REPO) == []  # not a pull request: no comment


def test_forbidden_comment_and_check_run_only_warn(
    tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.repos[REPO].extra["permissions"] = {"pull_requests": "read", "checks": "read"}
    report = make_report([make_case(1), make_case(2, "pass")])
    publish_report(
        report, report_dir=tmp_path, target=make_target(tmp_path, fake, check_run="true")
    )
    lines = _commands(capsys.readouterr().out)
    assert lines[0].startswith("::error file=evals/suite.yaml")  # annotations still there
    warnings = [line for line in lines if line.startswith("::warning")]
    assert len(warnings) == 2
    assert "403 Resource not accessible by integration" in warnings[0]
    assert "pull-requests: write" in warnings[0]
    assert "checks: write" in warnings[1]
    assert (tmp_path / "summary.md").read_text().startswith("## ❌ Evaluation Results")
    assert parse_outputs((tmp_path / "output.txt").read_text())["failed"] == "1"


def test_unreachable_github_only_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeGitHub() as stopped:
        dead_url = stopped.url  # nothing listens here once the block ends
    target = make_target(tmp_path, None, api_url=dead_url, check_run="true")
    publish_report(make_report([make_case(1, "pass")]), report_dir=tmp_path, target=target)
    warnings = [line for line in _commands(capsys.readouterr().out) if line.startswith("::warning")]
    assert len(warnings) == 2 and all("ConnectionError" in w for w in warnings)


def test_no_token_skips_comment_and_check_run_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = make_target(tmp_path, None, check_run="true")
    publish_report(make_report([make_case(1, "pass")]), report_dir=tmp_path, target=target)
    lines = _commands(capsys.readouterr().out)
    assert lines == [
        "::warning::no github-token: skipping the PR comment",
        "::warning::no github-token: skipping the check run",
    ]


def test_outputs_refuse_a_value_holding_the_delimiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed = uuid.UUID(int=7)
    monkeypatch.setattr(uuid, "uuid4", lambda: fixed)
    out = tmp_path / "output.txt"
    with pytest.raises(UnsafeOutput):
        write_outputs(out, {"reason": f"x\nghadelimiter_{fixed}\nforged=1"})
    with pytest.raises(UnsafeOutput):
        write_outputs(out, {"bad name\n": "x"})
    assert not out.exists()
    write_outputs(out, {"reason": "two\nlines"})
    assert parse_outputs(out.read_text()) == {"reason": "two\nlines"}


def test_the_job_summary_draws_the_history_trend(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.report.history import record_run

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_HISTORY", raising=False)
    report_dir = tmp_path / "report"
    report_dir.mkdir()
    for n, status in enumerate(("pass", "fail")):
        report = make_report([make_case(1, status)]).model_copy(deep=True)
        report.run.id = f"run-{n}"
        record_run(report, tmp_path / ".assay-history", branch="main")
    publish_report(
        report, report_dir=report_dir, target=make_target(tmp_path, fake, comment="false")
    )
    summary = (tmp_path / "summary.md").read_text()
    assert "```mermaid\nxychart-beta\n" in summary
    assert 'x-axis ["run-0", "run-1"]' in summary and "line [1.000, 0.000]" in summary


def test_an_odd_answer_from_github_only_warns_and_the_check_run_is_still_made(
    tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    # A 200 whose body is not the list PyGithub expects raises no GithubException.
    fake.inject(Reply(200, {"x": 1}), path=rf"/repos/{REPO}/issues/7/comments", times=10)
    report = make_report([make_case(1, "pass")])
    publish_report(
        report, report_dir=tmp_path, target=make_target(tmp_path, fake, check_run="true")
    )
    warnings = [line for line in _commands(capsys.readouterr().out) if line.startswith("::warning")]
    assert len(warnings) == 1 and "could not comment on PR #7" in warnings[0]
    assert len(check_runs(fake, REPO)) == 1


def test_a_failure_quoting_a_signed_url_leaves_its_query_out() -> None:
    from assay.action.github_api import describe_error

    failure = ConnectionError(
        "HTTPSConnectionPool(host='blob.example'): Max retries exceeded with url: "
        "/zip/1?sv=2023&sig=SECRET_SIGNATURE (Caused by NewConnectionError)"
    )
    described = describe_error(failure)
    assert "SECRET" not in described
    assert described.endswith("url: /zip/1?... (Caused by NewConnectionError)")
    assert "sig=" not in describe_error(OSError("https://blob.example/x?se=1&sig=S2"))
