"""The model key never leaves assay, however the agent wrote it (issue 34, point 1).

An agent printed the key with one control or format character inside; redaction matched
first and the character was stripped after, which joined the key again: the check run's
summary carried it whole, its annotation, report.json and junit.xml with the invisible
character. Each publisher is fed a case whose reason holds the key split by each such
character, or encoded (base64 at its three offsets, URL, hex), and what it sends or writes
is read the way a person or a program would read it: decoded, invisible characters gone.
"""

from __future__ import annotations

import base64
import binascii
import html
import io
import json
import random
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from assay._util import secrets
from assay._util.secrets import (
    MASK,
    holds_credential,
    redact,
    redact_chunks,
    redact_file,
    redact_json,
    scrubbed_environ,
    secret_values,
)
from assay.action import commands, github_api
from assay.action.environment import RunnerEnvironment
from assay.action.event import PullRequestRef
from assay.action.github_api import github_client
from assay.action.inputs import read_inputs
from assay.action.publish import PublishTarget, publish_report
from assay.report.model import CaseResult, Report, RunInfo, Summary
from assay.report.terminal import case_line, print_summary
from assay.runner.reporting import _redacted
from assay.runner.writer import write_report_dir
from tests.fakes.github import FakeGitHub
from tests.fakes.github_publish import add_publish_routes, check_runs, comments

KEY = "sk-ant-api03-Q7_vX9zR2mK4pL8nW3yT6hJ1cF5"
"""With `_`, which Markdown escapes: masking the rendered text alone would miss it."""
REPO = "acme/widgets"
TOKEN = "ghs_publish_token_for_the_fake"

INVISIBLE = {
    "soh": "\x01",
    "del": "\x7f",
    "esc": "\x1b",
    "bs": "\x08",
    "c1-csi": "\x9b",
    "cr": "\r",
    "ff": "\x0c",
    "rlo": "\u202e",
    "zwsp": "\u200b",
}


_SHOWN_AS_NOTHING = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
"""What a terminal or a browser shows as nothing (this test's own reading, not assay's)."""


def strip_invisible(text: str) -> str:
    return _SHOWN_AS_NOTHING.sub("", text)


def _split(character: str) -> str:
    middle = len(KEY) // 2
    return KEY[:middle] + character + KEY[middle:]


def _in_base64(offset: int, *, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(b"Bearer:"[:offset] + KEY.encode() + b" and more").decode()


ENCODED = {
    "base64-0": _in_base64(0),
    "base64-1": _in_base64(1),
    "base64-2": _in_base64(2),
    "base64url-1": _in_base64(1, urlsafe=True),
    "raw": quote(KEY, safe=""),  # URL-safe as it is: the key itself, masked before too
    "url-every-byte": "".join(f"%{b:02X}" for b in KEY.encode()),
    "hex": binascii.hexlify(KEY.encode()).decode(),
    "HEX": binascii.hexlify(KEY.encode()).decode().upper(),
}
VARIANTS = {**{name: _split(c) for name, c in INVISIBLE.items()}, **ENCODED}


def _read_as_shown(text: str) -> str:
    """`text` as a reader gets it: JSON `\\u` escapes, HTML entities and the runner's
    `%XX` decoded, then without invisible characters (a viewer shows none of them)."""
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), text)
    text = unquote(html.unescape(text))
    return strip_invisible(text.replace("\\_", "_"))


def _assert_no_key(where: str, text: str, variant: str) -> None:
    assert variant not in text, f"{where} holds the key as the agent wrote it"
    shown = re.sub(r"\s", "", _read_as_shown(text))  # a space in place of a control too
    pieces = {KEY[i : i + 12] for i in range(len(KEY) - 11)}
    assert not [p for p in pieces if p in shown], f"{where} shows the key, or part of it"
    for name, form in ENCODED.items():
        core = form[4:-12] if name.startswith("base64") else form
        assert core not in text, f"{where} holds the key's {name} form"


def test_the_variants_are_the_key() -> None:
    """The attack text does hold the key: shown (or decoded), it is the key."""
    for name, variant in VARIANTS.items():
        if name in INVISIBLE:
            assert KEY in _read_as_shown(variant), name
    assert KEY.encode() in base64.b64decode(ENCODED["base64-2"])
    assert bytes.fromhex(ENCODED["HEX"]).decode() == KEY


@pytest.mark.parametrize("name", list(VARIANTS))
def test_redact_masks_the_key_however_written(name: str) -> None:
    env = {"ANTHROPIC_API_KEY": KEY}
    text = f"line one\nthe key: {VARIANTS[name]}\r\nline three"
    masked = redact(text, env)
    _assert_no_key("redact", masked, VARIANTS[name])
    assert MASK in masked
    # Only what lies inside the secret's span goes: the lines around it are kept.
    assert masked.startswith("line one\nthe key: ") and masked.endswith("\r\nline three")


def test_only_the_characters_inside_a_secret_are_removed() -> None:
    env = {"ANTHROPIC_API_KEY": KEY}
    text = f"\x1b[31m{KEY[:5]}\r\n{KEY[5:]}\x1b[0m\u202e\n"
    assert redact(text, env) == f"\x1b[31m{MASK}\x1b[0m\u202e\n"
    assert redact("a\r\nb\x01c\u200bd", env) == "a\r\nb\x01c\u200bd"


def test_a_split_key_straddling_pieces_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut anywhere, with runs of invisible characters inside, in batches of any size."""
    rng = random.Random(34)
    for _ in range(300):
        monkeypatch.setattr(secrets, "_REDACT_BATCH", rng.choice([1, 7, 64, 1 << 20]))
        key = "".join(
            c + "".join(rng.choices("\x01\r\u200b\x9b", k=rng.randint(0, 3))) for c in KEY
        )
        text = "x" * rng.randint(0, 50) + key + "\n" + "y" * rng.randint(0, 50)
        cuts = sorted(rng.sample(range(len(text) + 1), rng.randint(0, 12)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        joined = "".join(redact_chunks(pieces, {"ANTHROPIC_API_KEY": KEY}))
        assert joined == redact(text, {"ANTHROPIC_API_KEY": KEY}), (key, cuts)
        assert MASK in joined and KEY not in strip_invisible(joined)


def test_redacting_in_pieces_is_redacting_the_whole_through_controls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Secrets that overlap or hold one another, with controls inside and around them,
    straddling pieces: the pieces give what the whole text gives."""
    rng = random.Random(20261206)
    groups = [["abcd"], ["sk-ant-XYZXYZ", "XYZ12"], ["aaaaaa", "aaaa"], ["ab", "ba"]]
    for _ in range(1500):
        values = rng.choice(groups)
        monkeypatch.setattr(secrets, "_known_secrets", lambda environ, v=values: v)
        monkeypatch.setattr(secrets, "_REDACT_BATCH", rng.choice([1, 3, 16]))
        text = "".join(rng.choice("abXYZ12sk-ant\x01\n\u200b") for _ in range(rng.randint(0, 80)))
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(text))
            value = "".join(c + rng.choice(["", "", "\x01", "\r\n"]) for c in rng.choice(values))
            text = text[:at] + value + text[at:]
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 20))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        assert "".join(redact_chunks(pieces)) == redact(text), (values, text, pieces)


def test_a_file_with_a_raw_c1_byte_inside_the_key_is_masked(tmp_path: Path) -> None:
    """A one-byte CSI (0x9B, not UTF-8) in an agent's transcript."""
    path = tmp_path / "agent.stdout"
    middle = len(KEY) // 2
    data = b"before \xff\n" + KEY[:middle].encode() + b"\x9b" + KEY[middle:].encode() + b"\n"
    path.write_bytes(data)
    redact_file(path, {"ANTHROPIC_API_KEY": KEY})
    assert path.read_bytes() == b"before \xff\n" + MASK.encode() + b"\n"


def test_json_with_an_escaped_control_character_inside_the_key_is_masked() -> None:
    env = {"ANTHROPIC_API_KEY": KEY}
    for name, variant in VARIANTS.items():
        text = json.dumps({"reason": f"printed {variant}", "n": 1})
        masked = json.loads(redact_json(text, env))
        if name in INVISIBLE:
            assert masked == {"reason": f"printed {MASK}", "n": 1}
        _assert_no_key(name, masked["reason"], variant)


# --- which variables are secrets --------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "NPM_AUTH",
        "X_AUTH_HEADER",
        "HTTP_AUTHORIZATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "MY_CREDENTIAL",
        "SLACK_WEBHOOK_URL",
        "DISCORD_WEBHOOK",
        "DB_PASSWORD_FILE",
        "DEPLOY_KEY",
        "SESSION_SECRET",
        "VAULT_TOKEN",
    ],
)
def test_a_credential_by_its_name(name: str) -> None:
    value = "v" * 12
    assert holds_credential(name, value)
    assert secret_values({name: value}) == [value]
    assert name not in scrubbed_environ({name: value})


@pytest.mark.parametrize(
    "value",
    [
        "sk-proj-" + "a" * 40,
        "ghp_" + "b" * 36,
        "ghs_" + "c" * 36,
        "github_pat_11ABCDEFG0" + "d" * 40,
        "xoxb-1234567890-abcdefghijkl",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyD" + "e" * 32,
        "postgres://user:pw-long-enough@db/app",
    ],
)
def test_a_credential_by_its_value(value: str) -> None:
    """Under a name that says nothing (a CI variable, a tool's setting)."""
    assert holds_credential("SETTING", value)
    assert value in secret_values({"SETTING": value})
    assert "SETTING" not in scrubbed_environ({"SETTING": value})
    assert redact(f"it was {value}.", {"SETTING": value}) == f"it was {MASK}."


def test_a_key_inside_a_longer_value_is_a_secret_of_its_own() -> None:
    token = "ghp_" + "k" * 36
    env = {"EXTRA_HEADER": f"Authorization: Bearer {token}"}
    assert token in secret_values(env)
    assert redact(f"the token {token} alone", env) == f"the token {MASK} alone"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GIT_AUTHOR_NAME", "Jane Developer"),
        ("GIT_AUTHOR_EMAIL", "jane@example.com"),
        ("PACKAGES", "sk-learn numpy"),  # a prefix without a key's length
        ("HOMEPAGE", "https://example.com/sk-" + "x" * 30),  # not at a word's start
        ("SHORT_TOKEN", "abc"),  # credential-shaped, too short to mask
        ("WEBHOOK_ON", "1"),
    ],
)
def test_what_is_no_secret(name: str, value: str) -> None:
    assert secret_values({name: value}) == []
    assert redact(f"{name}={value}", {name: value}) == f"{name}={value}"


# --- every publisher ----------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeGitHub]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(github_api, "WRITE_INTERVAL_S", 0.0)
    monkeypatch.setattr(github_api, "BACKOFF_S", 0.0)
    with FakeGitHub(token=TOKEN) as server:
        add_publish_routes(server)
        server.add_pull(REPO, 7, title="Tighten the parser")
        yield server  # type: ignore[misc]


def _report(reason: str) -> Report:
    cases = [
        CaseResult.model_validate(
            {
                "id": f"suite/case-{i}",
                "suite": "suite",
                "kind": "task",
                "source": {"path": "evals/suite.yaml", "line": 10 + i},
                "status": status,
                "score": 1.0 if status == "pass" else 0.0,
                "reason": reason if status != "pass" else "",
            }
        )
        for i, status in enumerate(["fail", "pass", "fail"])
    ]
    return Report(
        run=RunInfo(
            id=uuid.uuid4().hex,
            started_at="2024-01-01T00:00:00Z",
            assay_version="0",
            threshold=0.75,
        ),
        summary=Summary(total=3, passed=1, failed=2, errors=0, skipped=0, score=1 / 3, gate="fail"),
        cases=cases,
    )


def _target(tmp_path: Path, fake: FakeGitHub) -> PublishTarget:
    environ = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_WORKFLOW": "Evals",
        "GITHUB_JOB": "evals",
        "GITHUB_SHA": "4" * 40,
        "GITHUB_RUN_ID": "99",
        "INPUT_CHECK-RUN": "true",
        "INPUT_COMMENT": "true",
    }
    pull = PullRequestRef(7, "Tighten the parser", (), REPO, REPO, "1" * 40, "2" * 40, 2)
    return PublishTarget(
        env=RunnerEnvironment.from_environ(environ),
        inputs=read_inputs(environ),
        pull_request=pull,
        client=github_client(api_url=fake.url, token=TOKEN),
    )


def _github_action(tmp_path: Path, fake: FakeGitHub, report: Report) -> dict[str, str]:
    """The job summary, the workflow commands, the PR comment and the check run."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        with commands.guarded_output():
            publish_report(report, report_dir=tmp_path / "nowhere", target=_target(tmp_path, fake))
    (run,) = check_runs(fake, REPO)
    (comment,) = comments(fake, REPO)
    sent = {
        "job summary": (tmp_path / "step-summary.md").read_text(),
        "workflow commands": out.getvalue(),
        "PR comment": comment["body"],
        "check run summary": run["output"]["summary"],
        "check run title": run["output"]["title"],
        "check run annotations": json.dumps(run["annotations"], ensure_ascii=False),
    }
    assert "Evaluation Results" in sent["check run summary"]
    assert "::error file=evals/suite.yaml" in sent["workflow commands"]
    assert len(run["annotations"]) == 2 and MASK in run["annotations"][0]["message"]
    return sent


def _report_dir(tmp_path: Path, _fake: FakeGitHub, report: Report) -> dict[str, str]:
    """Every file `assay run` writes from its report (redacted as the run does)."""
    folder = tmp_path / "report"
    folder.mkdir()
    write_report_dir(_redacted(report), folder, cases=())
    files = {
        str(path.relative_to(folder)): path.read_text(errors="replace")
        for path in folder.rglob("*")
        if path.is_file()
    }
    assert {"report.json", "summary.md", "junit.xml", "report.html"} <= set(files)
    return files


def _terminal(_tmp_path: Path, _fake: FakeGitHub, report: Report) -> dict[str, str]:
    """The progress line of each case, and the summary at the end."""
    stream = io.StringIO()
    print_summary(report, report_dir="report", stream=stream, colour=False)
    return {
        "progress lines": "\n".join(case_line(case) for case in report.cases),
        "summary": stream.getvalue(),
    }


PUBLISHERS: dict[str, Callable[[Path, FakeGitHub, Report], dict[str, str]]] = {
    "github action": _github_action,
    "report dir": _report_dir,
    "terminal": _terminal,
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("publisher", list(PUBLISHERS))
def test_no_publisher_lets_the_key_out(
    publisher: str,
    variant: str,
    tmp_path: Path,
    fake: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    written = VARIANTS[variant]
    report = _report(f"the agent printed {written} and stopped")
    sent = PUBLISHERS[publisher](tmp_path, fake, report)
    assert sent
    for where, text in sent.items():
        _assert_no_key(f"{publisher}: {where}", text, written)


def test_the_builtin_agents_transcript_masks_a_split_key(tmp_path: Path) -> None:
    """transcript.json (a report-dir file) is JSON: a control character inside the key is
    a `\\u` escape there, which looking for the key in the encoded text missed."""
    from assay.agents.transcript import Transcript

    transcript = Transcript(case_id="s/c", kind="review", model="anthropic/x")
    transcript.messages.append({"role": "assistant", "content": f"key {VARIANTS['soh']}"})
    path = transcript.write(
        tmp_path / "transcript.json", usage={}, environments=[{"ANTHROPIC_API_KEY": KEY}]
    )
    text = path.read_text()
    assert json.loads(text)["messages"][0]["content"] == f"key {MASK}"
    _assert_no_key("transcript.json", text, VARIANTS["soh"])


def test_every_format_and_control_character_is_looked_through() -> None:
    """The set in core/text.py holds every Cc and Cf character of this Python's Unicode."""
    import sys
    import unicodedata

    from assay.core.text import strip_invisible as looked_through

    missing = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cf") and looked_through(chr(code))
    ]
    assert not missing


def test_the_ci_log_masks_a_key_with_a_cr_inside_written_in_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A component printing an agent's line wrote it, then its line break: cut at the CR,
    each half was masked alone, and the log showed both."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        with commands.guarded_output():
            import sys

            sys.stdout.write(f"the agent said: {VARIANTS['cr']}")
            sys.stdout.write("\n")
    assert out.getvalue() == f"the agent said: {MASK}\n"
