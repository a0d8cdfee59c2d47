"""Which API `assay scaffold PR_URL` calls, and the only places a token may go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.scaffold import api_access, parse_pull_request_url
from tests.fakes.github import FakeGitHub
from tests.fakes.loopback import Reply
from tests.scaffold.test_helpers import (
    BASE_SHA,
    REPOSITORY,
    TITLE,
    run_cli,
    serving,
    simple_pull,
    snapshot,
)

SECRET = "ghp_not_for_this_host"
ENTERPRISE_SECRET = "ghe_enterprise_secret"
TOKEN_VARIABLES = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GH_HOST",
    "GITHUB_API_URL",
)


@pytest.fixture(autouse=True)
def _no_token_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in TOKEN_VARIABLES:  # the suite-wide fixture leaves the GitHub CLI's alone
        monkeypatch.delenv(name, raising=False)


def _as_an_enterprise_server(fake: FakeGitHub) -> None:
    """Serve the API under /api/v3, and link to it there, as GitHub Enterprise does."""
    fake.path_prefix = "/api/v3"
    pull = fake.repos[REPOSITORY].pulls[7]
    pull["url"] = pull["url"].replace(fake.url, fake.url + "/api/v3")


@pytest.mark.parametrize(
    ("url", "environ", "api_url", "token"),
    [
        (
            "https://github.com/o/r/pull/1",
            {"GITHUB_TOKEN": "T0KEN-1"},
            "https://api.github.com",
            "T0KEN-1",
        ),
        (
            "http://github.com/o/r/pull/1",
            {"GH_TOKEN": "T0KEN-1"},
            "https://api.github.com",
            "T0KEN-1",
        ),
        (
            "https://github.com./o/r/pull/1",
            {"GH_TOKEN": "T0KEN-1"},
            "https://api.github.com",
            "T0KEN-1",
        ),
        (
            "https://WWW.GitHub.com../o/r/pull/1",
            {"GH_TOKEN": "T0KEN-1"},
            "https://api.github.com",
            "T0KEN-1",
        ),
        # GITHUB_API_URL is the user's (or the Actions runner's) choice, http included.
        (
            "https://ghe.example.com/o/r/pull/1",
            {"GITHUB_API_URL": "http://127.0.0.1:9/", "GITHUB_TOKEN": "T0KEN-1"},
            "http://127.0.0.1:9",
            "T0KEN-1",
        ),
        (
            "https://github.com/o/r/pull/1",
            {"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GITHUB_TOKEN": "T0KEN-1"},
            "https://ghe.example.com/api/v3",
            "T0KEN-1",
        ),
        # A URL alone is not a choice: the github.com token stays home.
        ("https://ghe.example.com/o/r/pull/1", {}, "https://ghe.example.com/api/v3", None),
        (
            "https://ghe.example.com/o/r/pull/1",
            {"GITHUB_TOKEN": "T0KEN-1", "GH_TOKEN": "T0KEN-2"},
            "https://ghe.example.com/api/v3",
            None,
        ),
        (
            "https://ghe.example.com./o/r/pull/1",
            {"GH_ENTERPRISE_TOKEN": "T0KEN-E", "GH_HOST": "GHE.example.com"},
            "https://ghe.example.com/api/v3",
            "T0KEN-E",
        ),
        (
            "https://ghe.example.com:8443/o/r/pull/1",
            {"GITHUB_ENTERPRISE_TOKEN": "T0KEN-E", "GH_HOST": "ghe.example.com:8443"},
            "https://ghe.example.com:8443/api/v3",
            "T0KEN-E",
        ),
        (
            "https://evil.example/o/r/pull/1",
            {"GH_ENTERPRISE_TOKEN": "T0KEN-E", "GH_HOST": "ghe.example.com"},
            "https://evil.example/api/v3",
            None,
        ),
        (
            "http://ghe.example.com/o/r/pull/1",
            {"GH_ENTERPRISE_TOKEN": "T0KEN-E", "GH_HOST": "ghe.example.com"},
            "http://ghe.example.com/api/v3",
            None,
        ),
    ],
)
def test_a_token_goes_only_to_the_api_the_user_chose(
    url: str, environ: dict[str, str], api_url: str, token: str | None
) -> None:
    access = api_access(parse_pull_request_url(url), environ)
    assert (access.api_url, access.token) == (api_url, token)
    assert (access.withheld is not None) == (token is None and bool(environ))
    assert "T0KEN" not in repr(access)


@pytest.mark.parametrize(
    ("environ", "warning"),
    [
        (
            {"GITHUB_TOKEN": SECRET},
            "no token sent to {host}: GITHUB_TOKEN goes only to api.github.com; set "
            "GH_ENTERPRISE_TOKEN and GH_HOST={host}, or GITHUB_API_URL",
        ),
        (
            {"GH_ENTERPRISE_TOKEN": ENTERPRISE_SECRET},
            "no token sent to {host}: GH_ENTERPRISE_TOKEN goes only to the host GH_HOST names; "
            "set GH_HOST={host}",
        ),
        (
            {"GITHUB_ENTERPRISE_TOKEN": ENTERPRISE_SECRET, "GH_HOST": "{host}"},
            "no token sent to {host}: GITHUB_ENTERPRISE_TOKEN never goes over plain http; "
            "use the https URL",
        ),
    ],
)
def test_a_pull_request_url_on_another_host_gets_no_token_and_one_warning(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    environ: dict[str, str],
    warning: str,
) -> None:
    with serving(monkeypatch) as fake:
        monkeypatch.delenv("GITHUB_API_URL")
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        _as_an_enterprise_server(fake)
        host = fake.url.removeprefix("http://")
        for name, value in environ.items():
            monkeypatch.setenv(name, value.format(host=host))
        url = f"{fake.url}/{REPOSITORY}/pull/7"
        code, out, err = run_cli(capsys, "scaffold", url, "--root", str(tmp_path), "--name", "c")

    assert code == 0
    assert err == f"warning: {warning.format(host=host)}\n"
    assert fake.requests[0].path == f"/api/v3/repos/{REPOSITORY}/pulls/7"
    assert not [r for r in fake.requests if "authorization" in r.headers]
    written = json.dumps(snapshot(tmp_path), default=repr)
    for secret in (SECRET, ENTERPRISE_SECRET):
        assert secret not in out + err + written


def test_a_private_repository_elsewhere_says_why_no_token_was_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    with serving(monkeypatch, token=SECRET) as fake:
        monkeypatch.delenv("GITHUB_API_URL")
        fake.add_repo(REPOSITORY, private=True)
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        _as_an_enterprise_server(fake)
        url = f"{fake.url}/{REPOSITORY}/pull/7"
        code, out, err = run_cli(capsys, "scaffold", url, "--root", str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("assay: error: pull request acme/widgets#7 not found (404)")
    assert "a token may be needed, set GH_ENTERPRISE_TOKEN and GH_HOST=127.0.0.1:" in err
    assert "(no token was sent: GITHUB_TOKEN goes only to api.github.com)" in err
    assert SECRET not in err
    assert not [r for r in fake.requests if "authorization" in r.headers]


def test_the_tokens_go_where_github_api_url_points_even_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """GitHub Actions on GitHub Enterprise works this way, and so do these loopback fakes."""
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    with serving(monkeypatch, token=SECRET) as fake:
        fake.add_repo(REPOSITORY, private=True)
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        url = f"https://ghe.example.com/{REPOSITORY}/pull/7"
        code, _, err = run_cli(capsys, "scaffold", url, "--root", str(tmp_path), "--name", "c")
    assert (code, err) == (0, "")
    assert all(r.headers["authorization"] == f"token {SECRET}" for r in fake.requests)
    scenario = json.loads((tmp_path / "security-review" / "c.json").read_text())
    assert (scenario["given"], scenario["notes"]["source_ref"]) == (TITLE, BASE_SHA)


def test_a_server_that_wants_a_token_says_which_one_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GH_TOKEN", SECRET)
    with serving(monkeypatch) as fake:
        monkeypatch.delenv("GITHUB_API_URL")
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        _as_an_enterprise_server(fake)
        fake.inject(Reply(401, {"message": "Must authenticate to access this API."}))
        url = f"{fake.url}/{REPOSITORY}/pull/7"
        code, _, err = run_cli(capsys, "scaffold", url, "--root", str(tmp_path))
        host = fake.url.removeprefix("http://")
    assert code == 2
    assert err == (
        f"assay: error: GitHub at {host} answered 401 without a token: set GH_ENTERPRISE_TOKEN "
        f"and GH_HOST={host}, or GITHUB_API_URL (no token was sent: GH_TOKEN goes only to "
        "api.github.com)\n"
    )
