"""The run history across workflow runs: restored from the default branch's history artifact
before the evals, handed to action.yml's upload step after them.

`assay ci` runs for real on the tiny task suite of tests/test_action_ci.py; GitHub is the
loopback fake with the artifact routes, reached through the real PyGithub client, and the
archive is served from blob storage after a 302. The archives are what upload-artifact
makes of the history directory (its files at the top), or hostile variations of it.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.action import github_api, history_artifact
from assay.action.github_api import github_client
from assay.action.history_artifact import restore_history
from assay.report.history import read_history, record_run
from assay.report.model import Report
from tests.fakes.github import FakeGitHub
from tests.fakes.github_artifacts import (
    add_artifact,
    add_artifact_routes,
    add_workflow_run,
    blob_downloads,
    zip_of,
    zip_of_directory,
)
from tests.fakes.github_publish import add_publish_routes
from tests.fakes.loopback import Reply
from tests.test_action_baseline import ALL_PASS, CASES, REPO, TOKEN, report_of
from tests.test_action_ci import Ci, ci_environment

NAME = "assay-history"


def _run(n: int, status: str = "pass") -> Report:
    report = report_of(dict.fromkeys(CASES, status), run_id=f"{n:02d}" + "e" * 30)
    return report.model_copy(
        update={"run": report.run.model_copy(update={"started_at": f"2024-01-{n:02d}T00:00:00Z"})}
    )


def _history(where: Path, count: int) -> Path:
    """A history directory as an earlier run left it, `count` runs on main."""
    for n in range(1, count + 1):
        record_run(_run(n, "pass" if n % 2 else "fail"), where, branch="main", keep=50)
    return where


def _commands(out: str, kind: str) -> list[str]:
    sandbox = "::warning title=assay%3A no OS sandbox::"
    return [line for line in out.splitlines() if line.startswith(kind) and sandbox not in line]


# -- through `assay ci` ------------------------------------------------------------------


@pytest.fixture
def ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ci]:
    routes = (add_publish_routes, add_artifact_routes)
    with ci_environment(tmp_path, monkeypatch, token=TOKEN, routes=routes) as env:
        yield env


def _publish(fake: FakeGitHub, data: bytes, *, created_at: str, **run: object) -> int:
    workflow_run = add_workflow_run(fake, REPO, **run)  # type: ignore[arg-type]
    add_artifact(fake, REPO, run=workflow_run, data=data, name=NAME, created_at=created_at)
    return int(workflow_run["id"])


@pytest.mark.slow
def test_a_push_run_continues_the_default_branchs_history(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    earlier = zip_of_directory(_history(tmp_path / "earlier", 3))
    poisoned = zip_of_directory(_history(tmp_path / "poisoned", 6))
    good = _publish(ci.fake, earlier, created_at="2024-01-02T00:00:00Z", conclusion="failure")
    # Newer, but none of these may serve: a PR's, a fork's, a cancelled run's.
    _publish(ci.fake, poisoned, created_at="2024-01-03T00:00:00Z", event="pull_request")
    _publish(ci.fake, poisoned, created_at="2024-01-04T00:00:00Z", from_fork=True)
    _publish(ci.fake, poisoned, created_at="2024-01-05T00:00:00Z", conclusion="cancelled")
    ci.use_event("push", "push.json")
    ci.environ["INPUT_THRESHOLD"] = "0.5"
    code, out, _ = ci.run(monkeypatch, capsys)

    assert code == 0
    assert _commands(out, "::warning") == [] and _commands(out, "::notice") == []
    origin = f"the `{NAME}` artifact of run {good} on main"
    assert f"assay: restored 3 earlier runs from {origin}" in out
    assert blob_downloads(ci.fake) == 1
    history = Path(ci.outputs["history-dir"])
    assert history == ci.root / "runner-temp" / ".assay-history"
    runs = read_history(history)
    this_run = json.loads(Path(ci.outputs["report-path"]).read_text())["run"]["id"]
    assert [e.run_id for e in runs] == [_run(n).run.id for n in (1, 2, 3)] + [this_run]
    assert [e.score for e in runs[:3]] == [1.0, 0.0, 1.0]
    # The job summary's trend and report.html's span the runs.
    assert "```mermaid\nxychart-beta" in ci.summary and "last 4 runs" in ci.summary
    html = (Path(ci.outputs["report-path"]).parent / "report.html").read_text()
    assert 'id="trend"' in html and html.count("<circle") == 4


@pytest.mark.slow
def test_what_one_run_uploads_the_next_restores(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("push", "push.json")
    ci.environ["INPUT_THRESHOLD"] = "0.5"
    first_code, out, _ = ci.run(monkeypatch, capsys)
    assert first_code == 0 and f"no `{NAME}` artifact on main yet" in out
    history = Path(ci.outputs["history-dir"])
    first = [e.run_id for e in read_history(history)]
    assert len(first) == 1
    _publish(ci.fake, zip_of_directory(history), created_at="2024-02-01T00:00:00Z")

    # The next workflow run: a new runner, so a new RUNNER_TEMP with no history in it.
    fresh = ci.root / "runner-temp-2"
    fresh.mkdir()
    ci.environ["RUNNER_TEMP"] = str(fresh)
    (ci.root / "github_output").unlink()
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert "assay: restored 1 earlier run from " in out
    runs = read_history(Path(ci.outputs["history-dir"]))
    assert [e.run_id for e in runs][:1] == first and len(runs) == 2
    assert "last 2 runs" in ci.summary


@pytest.mark.slow
def test_the_history_keeps_its_bound(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _publish(
        ci.fake, zip_of_directory(_history(tmp_path / "h", 6)), created_at="2024-01-02T00:00:00Z"
    )
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_THRESHOLD="0.5", ASSAY_HISTORY_KEEP="3")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0 and "assay: restored 3 earlier runs" in out
    history = Path(ci.outputs["history-dir"])
    runs = read_history(history)
    assert [e.run_id for e in runs[:2]] == [_run(5).run.id, _run(6).run.id] and len(runs) == 3
    assert len(list((history / "reports").iterdir())) == 3


@pytest.mark.slow
def test_keep_history_false_and_shards_keep_the_history_in_the_job(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _publish(
        ci.fake, zip_of_directory(_history(tmp_path / "h", 2)), created_at="2024-01-02T00:00:00Z"
    )
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_THRESHOLD="0.5", INPUT_KEEP_HISTORY="false")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0 and "history-dir" not in ci.outputs and "restored" not in out
    (ci.root / "github_output").unlink()
    ci.environ.update(INPUT_KEEP_HISTORY="true", INPUT_SHARD="1/2")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 1 and "history-dir" not in ci.outputs and "restored" not in out
    assert blob_downloads(ci.fake) == 0


@pytest.mark.slow
def test_missing_permission_is_a_notice_and_the_run_goes_on(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.fake.inject(
        Reply(403, {"message": "Resource not accessible by integration"}),
        path=rf"/repos/{REPO}/actions/artifacts",
    )
    ci.use_event("push", "push.json")
    ci.environ["INPUT_THRESHOLD"] = "0.5"
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0 and _commands(out, "::warning") == []
    (notice,) = _commands(out, "::notice")
    assert "no run history restored (403 Resource not accessible by integration)" in notice
    assert "permissions: actions: read" in notice
    assert len(read_history(Path(ci.outputs["history-dir"]))) == 1  # this run's own


# -- hostile artifacts (restore_history through PyGithub and the fake) --------------------


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setattr(github_api, "BACKOFF_S", 0.0)
    with FakeGitHub(token=TOKEN) as fake:
        add_artifact_routes(fake)
        fake.add_repo(REPO)
        yield fake  # type: ignore[misc]


def _restore(fake: FakeGitHub, data: bytes, where: Path, *, keep: int = 20) -> int:
    add_artifact(fake, REPO, run=add_workflow_run(fake, REPO), data=data, name=NAME)
    return restore_history(
        github_client(api_url=fake.url, token=TOKEN),
        repository=REPO,
        artifact_name=NAME,
        history_dir=where,
        keep=keep,
        allow_http=True,
    )


def _files(tmp_path: Path) -> dict[str, str | bytes]:
    source = _history(tmp_path / "source", 2)
    return {
        path.relative_to(source).as_posix(): path.read_bytes()
        for path in source.rglob("*")
        if path.is_file()
    }


def _with_symlink(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        link = zipfile.ZipInfo("reports/link.json")
        link.external_attr = (0o120777 << 16) | 0x20
        archive.writestr(link, "/etc/passwd")
    return buffer.getvalue()


def _index_of(files: dict[str, str | bytes]) -> dict[str, object]:
    return json.loads(files["index.json"])


def _hostile(kind: str, files: dict[str, str | bytes]) -> bytes:
    if kind == "not a zip":
        return b"PK\x03\x04 not a zip archive at all"
    if kind == "climbing member":
        return zip_of({**files, "../escape.json": "{}"})
    if kind == "absolute member":
        return zip_of({**files, "/tmp/escape.json": "{}"})
    if kind == "symlink":
        return _with_symlink(files)
    if kind == "too many members":
        return zip_of({**files, **{f"junk/{n}": "" for n in range(1100)}})
    if kind == "no index":
        return zip_of({k: v for k, v in files.items() if k != "index.json"})
    if kind == "index not JSON":
        return zip_of({**files, "index.json": "{\n  runs: [\n"})
    if kind == "index not an index":
        return zip_of({**files, "index.json": json.dumps({"runs": [{"run_id": 1}]})})
    raise AssertionError(kind)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("not a zip", "is not a readable zip archive"),
        ("climbing member", "has an unsafe member name '../escape.json'"),
        ("absolute member", "has an unsafe member name '/tmp/escape.json'"),
        ("symlink", "holds a symlink ('reports/link.json')"),
        ("too many members", "members, more than 1000"),
        ("no index", "holds no index.json"),
        ("index not JSON", "index.json in the `assay-history` artifact of run"),
        ("index not an index", "not a history index"),
    ],
)
def test_a_bad_archive_is_one_warning_and_nothing_is_written(
    github: FakeGitHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    expected: str,
) -> None:
    where = tmp_path / "history"
    assert _restore(github, _hostile(kind, _files(tmp_path)), where) == 0
    (warning,) = _commands(capsys.readouterr().out, "::warning")
    assert warning.startswith("::warning title=assay%3A history::no run history restored: ")
    assert expected in warning
    assert not where.exists()
    assert not (tmp_path / "escape.json").exists()


def test_what_a_member_expands_to_is_capped(
    github: FakeGitHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = _files(tmp_path)
    monkeypatch.setattr(history_artifact, "MAX_EXPANDED_BYTES", 4096)
    padded = {**files, "reports/big.json": " " * 10_000}  # deflates to almost nothing
    assert _restore(github, zip_of(padded), tmp_path / "history") == 0
    (warning,) = _commands(capsys.readouterr().out, "::warning")
    assert "what the `assay-history` artifact of run" in warning
    assert "expands to is larger than" in warning
    assert not (tmp_path / "history").exists()


def test_index_json_is_capped_on_its_own(
    github: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Well under the archive's cap, yet parsed whole before the last runs are kept.
    files = _files(tmp_path)
    index = _index_of(files)
    padded = json.dumps(index)[:-1] + ", " + '"x": "' + "y" * (2 * 1024 * 1024) + '"}'
    assert _restore(github, zip_of({**files, "index.json": padded}), tmp_path / "history") == 0
    (warning,) = _commands(capsys.readouterr().out, "::warning")
    assert "index.json in the `assay-history` artifact of run" in warning
    assert "is larger than 1 MiB" in warning
    assert not (tmp_path / "history").exists()


def test_a_bad_run_is_left_out_and_the_rest_restored(
    github: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _files(tmp_path)
    index = _index_of(files)
    runs = index["runs"]
    assert isinstance(runs, list) and len(runs) == 2
    first_report = runs[0]["report"]
    broken = json.loads(files[first_report])
    broken["cases"][0]["status"] = "exploded"
    escaping = {**runs[1], "run_id": "x", "report": "../../../etc/passwd"}
    other = report_of(ALL_PASS, run_id="someone-else")
    impostor = {**runs[1], "run_id": "impostor", "report": "reports/impostor.json"}
    index["runs"] = [runs[0], escaping, impostor, runs[1]]
    archive = zip_of(
        {
            **files,
            "index.json": json.dumps(index),
            first_report: json.dumps(broken, indent=2),
            "reports/impostor.json": other.model_dump_json(),
        }
    )
    where = tmp_path / "history"
    assert _restore(github, archive, where) == 1
    (warning,) = _commands(capsys.readouterr().out, "::warning")
    assert "3 runs of the `assay-history` artifact of run" in warning
    assert f"{first_report}:" in warning and "cases[0].status" in warning
    kept = read_history(where)
    assert [e.run_id for e in kept] == [runs[1]["run_id"]]
    assert sorted(os.listdir(where / "reports")) == [Path(kept[0].report).name]


def test_restored_runs_go_before_the_ones_already_here(
    github: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "history"
    record_run(_run(9), where, branch="feature", keep=20)
    record_run(_run(2), where, branch="feature", keep=20)  # also in the artifact: kept as is
    assert _restore(github, zip_of_directory(_history(tmp_path / "src", 3)), where) == 2
    runs = read_history(where)
    assert [e.run_id for e in runs] == [_run(n).run.id for n in (1, 3, 9, 2)]
    assert runs[-1].branch == "feature"
    assert "assay: restored 2 earlier runs" in capsys.readouterr().out
