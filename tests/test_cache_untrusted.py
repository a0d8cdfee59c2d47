"""A cache directory is not trusted: what sits where an entry belongs is read only when it
is a regular file of a sane size, reached through no link; prune removes entries only.

(A cache may be restored from a CI cache or shared: a FIFO there used to hang the run past
SIGTERM, a link to /dev/zero to exhaust memory, and a linked directory let `assay cache
prune` delete files outside the cache.)
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import assay
from assay.cli import main
from assay.errors import ConfigError, ModelUnavailable
from assay.models import ModelResponse, ResponseCache, generate, request_key
from assay.models.cache import MAX_ENTRY_BYTES
from assay.options import RunOptions
from tests.fakes.anthropic_api import FakeAnthropic, text_reply
from tests.fakes.corpus_responder import corpus_responder
from tests.test_cache import KEY, ask

MODEL_ID = "claude-haiku-4-5"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def entry_path(root: Path, text: str = "Review this.", purpose: str = "agent") -> Path:
    """Where `ask(text)` is recorded under `root` (the provider's own model id is the key's)."""
    key = request_key("anthropic", ask(text, model=MODEL_ID, purpose=purpose))
    return root / purpose / key[:2] / f"{key}.json"


def recorded(tmp_path: Path, text: str = "Review this.") -> tuple[Path, bytes]:
    """A cache under tmp_path/cache holding one real entry for `ask(text)`, and its bytes."""
    cache = ResponseCache(tmp_path / "cache")
    response = ModelResponse([{"type": "text", "text": "recorded"}], "end_turn")
    path = cache.store("anthropic", ask(text, model=MODEL_ID), response)
    assert path == entry_path(tmp_path / "cache", text)
    return path, path.read_bytes()


def fifo(path: Path, recording: bytes) -> None:
    os.mkfifo(path)


def dev_zero(path: Path, recording: bytes) -> None:
    path.symlink_to("/dev/zero")


def link_to_a_good_entry(path: Path, recording: bytes) -> None:
    # Even a link to a valid recording is not followed: the cache holds only its own files.
    outside = path.parents[3] / "outside.json"
    outside.write_bytes(recording)
    path.symlink_to(outside)


def oversized(path: Path, recording: bytes) -> None:
    with path.open("wb") as handle:  # sparse: no disk, and never read
        handle.truncate(MAX_ENTRY_BYTES + 1)


def directory(path: Path, recording: bytes) -> None:
    path.mkdir()


HOSTILE: dict[str, tuple[Callable[[Path, bytes], None], str]] = {
    "fifo": (fifo, "is a FIFO (named pipe), not a regular file"),
    "dev-zero": (dev_zero, "is a symbolic link; assay follows no symbolic link inside its cache"),
    "link": (link_to_a_good_entry, "is a symbolic link"),
    "oversized": (
        oversized,
        f"is {MAX_ENTRY_BYTES + 1} bytes, over the {MAX_ENTRY_BYTES} byte limit",
    ),
    "directory": (directory, "is a directory, not a regular file"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_an_entry_that_is_not_a_plain_file_is_a_miss_and_never_read(
    fake: FakeAnthropic, tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    make, reason = HOSTILE[name]
    path, recording = recorded(tmp_path)
    path.unlink()
    make(path, recording)
    offline = RunOptions(cache_dir=tmp_path / "cache", offline=True)
    with caplog.at_level(logging.WARNING, logger="assay.models"):
        with pytest.raises(ModelUnavailable, match="not in cache"):
            asyncio.run(generate(ask(), options=offline))
    [warning] = [r.getMessage() for r in caplog.records if "corrupt cache entry" in r.getMessage()]
    assert f"ignoring corrupt cache entry {path}: the file {reason}" in warning
    assert warning.endswith("; treated as a miss")  # not "fetching again": offline, it is not
    assert fake.calls == 0
    if name == "directory":
        return  # assay did not make it and does not replace it
    # Online, the fresh answer replaces what was there (a link itself, never its target).
    fake.reply(text_reply("fresh"))
    online = RunOptions(cache_dir=tmp_path / "cache")
    assert asyncio.run(generate(ask(), options=online)).text() == "fresh"
    assert path.is_file() and not path.is_symlink()
    if name == "link":
        assert b'"recorded"' in (tmp_path / "outside.json").read_bytes()


def test_a_linked_directory_in_the_cache_is_neither_read_nor_written_through(
    fake: FakeAnthropic, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _ = recorded(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (tmp_path / "cache" / "agent").rename(elsewhere)
    (tmp_path / "cache" / "agent").symlink_to(elsewhere)  # a valid recording behind the link
    before = sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*"))
    options = RunOptions(cache_dir=tmp_path / "cache")
    fake.reply(text_reply("fresh"))
    with caplog.at_level(logging.WARNING, logger="assay.models"):
        assert asyncio.run(generate(ask(), options=options)).text() == "fresh"
    messages = [r.getMessage() for r in caplog.records]
    linked = f"in {tmp_path / 'cache' / 'agent'}, which is a symbolic link"
    assert any("corrupt cache entry" in m and linked in m for m in messages)
    assert any(m.startswith(f"not recording {path}: it is {linked}") for m in messages)
    assert sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*")) == before


def test_prune_removes_only_entries_and_never_through_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    kept_entry, _ = recorded(tmp_path)
    victim = tmp_path / "victim"
    precious = victim / "ab" / "precious.json"
    shaped = victim / "ab" / f"{'ab' * 32}.json"  # named like an entry, yet not the cache's
    precious.parent.mkdir(parents=True)
    precious.write_text("{}")
    shaped.write_text("{}")
    (cache / "judge").symlink_to(victim)  # the probe's case: a purpose directory
    shard = cache / "agent" / ("cd" if kept_entry.parent.name != "cd" else "ef")
    shard.symlink_to(victim / "ab")  # and a shard directory
    notes = kept_entry.parent / "notes.json"
    notes.write_text("mine")

    assert main(["cache", "prune", "--cache", str(cache)]) == 0
    captured = capsys.readouterr()
    assert "removed 1 entry" in captured.out  # the one real recording
    assert not kept_entry.exists()
    assert precious.read_text() == "{}" and shaped.read_text() == "{}"
    assert notes.read_text() == "mine"
    assert f"skipping {cache / 'judge'}: a symbolic link, not a cache directory" in captured.err
    assert f"skipping {shard}: not part of the cache" in captured.err
    assert f"skipping {notes}: not a cache entry" in captured.err


def write_review_suite(root: Path) -> Path:
    """Two review cases the corpus responder can play (agent and judge)."""
    evals = root / "evals"
    (evals / "skills").mkdir(parents=True)
    (evals / "skills" / "bugs.md").write_text("Find functional bugs in the change.\n")
    entries = []
    for n in range(2):
        fixture = evals / "fixtures" / f"case-{n}" / "handler.ts"
        fixture.parent.mkdir(parents=True)
        fixture.write_text("export const name = (u: {name: string}[]) => u.find(Boolean).name;\n")
        entries.append(
            f"  - name: case-{n}\n"
            "    given: reads a property of a user that may be missing\n"
            "    files:\n"
            f"      - fixtures/case-{n}/handler.ts\n"
            "    should_find:\n"
            "      - finding: reads .name of a user that find() may not return\n"
        )
    (evals / "review.yaml").write_text(
        "skill: skills/bugs.md\nmodel: anthropic/claude-haiku-4-5\nevals:\n" + "".join(entries)
    )
    return evals


@pytest.mark.slow
def test_a_run_replaying_fifo_entries_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The probe's hang: offline, every entry a FIFO; the run used to block in open().
    evals = write_review_suite(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv("ASSAY_ISOLATION", "none")
    with FakeAnthropic(api_key=KEY, responder=corpus_responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        args = ["run", str(evals), "--cache", str(cache), "--report-dir"]
        assert main([*args, str(tmp_path / "r1")]) == 0
    entries = sorted(cache.rglob("*.json"))
    assert entries
    for entry in entries:
        entry.unlink()
        os.mkfifo(entry)
    env = {**os.environ, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # nothing to reach
    done = subprocess.run(
        [sys.executable, "-m", "assay.cli", *args, str(tmp_path / "r2"), "--offline"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # nothing scored: every case skipped
    assert "is a FIFO (named pipe), not a regular file; treated as a miss" in done.stderr
    report = assay.read_report(tmp_path / "r2")
    assert {c.status for c in report.cases} == {"skipped"}


def test_a_file_as_the_cache_directory_is_refused_before_any_call(
    fake: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evals = write_review_suite(tmp_path)
    cache_file = tmp_path / "cachefile"
    cache_file.write_text("hi\n")
    expected = f"--cache {cache_file}: is a file, not a cache directory"
    run = ["run", str(evals), "--report-dir", str(tmp_path / "r")]
    assert main([*run, "--cache", str(cache_file)]) == 2
    assert expected in capsys.readouterr().err
    options = RunOptions(paths=str(evals), cache_dir=cache_file, report_dir=tmp_path / "r")
    with pytest.raises(ConfigError, match="is a file, not a cache directory"):
        assay.run(options)
    inside = cache_file / "sub"
    assert main([*run, "--cache", str(inside)]) == 2
    assert f"cannot be made: {cache_file} is a file, not a directory" in capsys.readouterr().err
    assert fake.calls == 0 and not (tmp_path / "r").exists()
    for action in ("stats", "prune"):
        assert main(["cache", action, "--cache", str(cache_file)]) == 2
        assert expected in capsys.readouterr().err
    assert cache_file.read_text() == "hi\n"


def test_a_corrupt_entry_says_what_is_wrong_with_it(
    fake: FakeAnthropic, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _ = recorded(tmp_path)
    path.write_text('{"format": 1}')
    with caplog.at_level(logging.WARNING, logger="assay.models"):
        with pytest.raises(ModelUnavailable):
            asyncio.run(
                generate(ask(), options=RunOptions(cache_dir=tmp_path / "cache", offline=True))
            )
    [message] = [r.getMessage() for r in caplog.records]
    assert "validation error for" not in message
    assert f"{path}: key: Field required (and 6 more); treated as a miss" in message
