"""Record/replay cache: keys, replay without calls, --offline, corruption, `assay cache`."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main
from assay.errors import ModelUnavailable
from assay.models import (
    OFFLINE_MISS,
    Message,
    ModelRequest,
    ModelResponse,
    ResponseCache,
    ToolSpec,
    cache_stats,
    generate,
    request_key,
)
from assay.options import RunOptions
from tests.fakes.anthropic_api import FakeAnthropic, text_reply, tool_use_reply

KEY = "sk-ant-cache-test-abcdef012345"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def ask(
    text: str = "Review this.",
    *,
    purpose: str = "agent",
    model: str = "anthropic/claude-haiku-4-5",
    **fields: object,
) -> ModelRequest:
    return ModelRequest(
        model=model,
        system="You review code.",
        messages=(Message("user", ({"type": "text", "text": text},)),),
        purpose=purpose,  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


def call(request: ModelRequest, options: RunOptions) -> ModelResponse:
    return asyncio.run(generate(request, options=options))


def entry_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_key_covers_the_request_and_nothing_else() -> None:
    base = ask()
    key = request_key("anthropic", base)
    assert len(key) == 64 and key == request_key("anthropic", ask())
    assert request_key("anthropic", ask(cache_prefix=False)) == key  # a hint, not the request
    variants = [
        ("openrouter", base),
        ("anthropic", ask("Review that.")),
        ("anthropic", ask(purpose="judge")),
        ("anthropic", ask(max_tokens=10)),
        ("anthropic", ask(temperature=0.5)),
        ("anthropic", ask(sample=1)),  # each repeat is its own recording
        ("anthropic", ask(tool_choice="any", tools=(ToolSpec("t", "d", {"type": "object"}),))),
        (
            "anthropic",
            ModelRequest(model="other", system="You review code.", messages=base.messages),
        ),
    ]
    assert len({request_key(p, r) for p, r in variants} | {key}) == len(variants) + 1


def test_replay_makes_no_call_and_reports_the_recorded_usage(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    options = RunOptions(cache_dir=tmp_path / "cache")
    fake.reply(
        tool_use_reply("submit", {"ok": True}, input_tokens=1200, output_tokens=80, cache_write=300)
    )
    recorded = call(ask(), options)
    replayed = call(ask(), options)
    assert fake.calls == 1
    assert replayed == recorded
    assert replayed.usage.cost_usd == recorded.usage.cost_usd is not None
    [entry] = entry_files(tmp_path / "cache")
    key = request_key("anthropic", ask(model="claude-haiku-4-5"))
    assert entry == tmp_path / "cache" / "agent" / key[:2] / f"{key}.json"
    stored = json.loads(entry.read_text())
    assert stored["usage"]["input_tokens"] == 1200 and stored["purpose"] == "agent"
    stats = cache_stats(options)
    assert stats is not None and (stats.hits, stats.misses, stats.writes) == (1, 1, 1)


def test_judge_calls_live_apart_from_agent_calls(fake: FakeAnthropic, tmp_path: Path) -> None:
    options = RunOptions(cache_dir=tmp_path)
    call(ask(purpose="agent"), options)
    call(ask(purpose="judge"), options)
    assert [p.relative_to(tmp_path).parts[0] for p in entry_files(tmp_path)] in (
        ["agent", "judge"],
        ["judge", "agent"],
    )
    # Dropping the judge's entries re-judges without re-running the agent.
    shutil.rmtree(tmp_path / "judge")
    call(ask(purpose="agent"), options)
    call(ask(purpose="judge"), options)
    assert fake.calls == 3


def test_offline_miss_is_unavailable_and_makes_no_call(fake: FakeAnthropic, tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=r"not in cache \(--offline\)"):
        call(ask(), RunOptions(cache_dir=tmp_path, offline=True))
    assert str(OFFLINE_MISS) == "not in cache (--offline)"
    assert fake.calls == 0
    with pytest.raises(ModelUnavailable, match="--offline"):
        call(ask(), RunOptions(offline=True))


def test_offline_replay_needs_no_credentials(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.reply(text_reply("recorded"))
    call(ask(), RunOptions(cache_dir=tmp_path))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert call(ask(), RunOptions(cache_dir=tmp_path, offline=True)).text() == "recorded"


@pytest.mark.parametrize(
    "damage",
    [b"{not json", b'{"format": 1}', b""],
    ids=["truncated", "missing-fields", "empty"],
)
def test_corrupt_entry_is_refetched_with_a_warning(
    fake: FakeAnthropic, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: bytes
) -> None:
    options = RunOptions(cache_dir=tmp_path)
    fake.reply(text_reply("first"), text_reply("second"))
    call(ask(), options)
    [entry] = entry_files(tmp_path)
    entry.write_bytes(damage)
    with caplog.at_level(logging.WARNING, logger="assay.models"):
        assert call(ask(), options).text() == "second"
    assert fake.calls == 2
    assert any(
        "corrupt cache entry" in r.getMessage() and entry.name in r.getMessage()
        for r in caplog.records
    )
    assert json.loads(entry.read_text())["response"]["content"][0]["text"] == "second"


def test_entry_for_another_key_is_not_trusted(fake: FakeAnthropic, tmp_path: Path) -> None:
    options = RunOptions(cache_dir=tmp_path)
    call(ask("one"), options)
    call(ask("two"), options)
    first, second = entry_files(tmp_path)
    second.write_bytes(first.read_bytes())
    call(ask("one"), options)
    call(ask("two"), options)
    assert fake.calls == 3


def test_writes_leave_no_temporary_files(fake: FakeAnthropic, tmp_path: Path) -> None:
    options = RunOptions(cache_dir=tmp_path)
    for index in range(5):
        call(ask(f"request {index}"), options)
    files = entry_files(tmp_path)
    assert len(files) == 5 and all(
        p.suffix == ".json" and not p.name.startswith(".") for p in files
    )


def seed(root: Path) -> ResponseCache:
    cache = ResponseCache(root)
    response = ModelResponse([{"type": "text", "text": "x" * 2000}], "end_turn")
    for index in range(3):
        cache.store("anthropic", ask(f"agent {index}", model="m"), response)
    cache.store("anthropic", ask("judge", model="m", purpose="judge"), response)
    return cache


def test_stats_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(tmp_path)
    assert main(["cache", "stats", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "agent        3 entries" in out
    assert "judge        1 entries" in out
    assert "total        4 entries" in out and "KiB" in out


def test_prune_older_than_keeps_recently_used_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = seed(tmp_path)
    entries = list(cache.entries())
    old = time.time() - 10 * 86_400
    for entry in entries[:2]:
        os.utime(entry.path, (old, old))
    assert main(["cache", "prune", "--cache", str(tmp_path), "--older-than", "7"]) == 0
    assert "removed 2 entries unused for 7 day(s)" in capsys.readouterr().out
    assert [e.path for e in cache.entries()] == [e.path for e in entries[2:]]


def test_replay_counts_as_use(fake: FakeAnthropic, tmp_path: Path) -> None:
    options = RunOptions(cache_dir=tmp_path)
    call(ask(), options)
    [entry] = entry_files(tmp_path)
    old = time.time() - 30 * 86_400
    os.utime(entry, (old, old))
    call(ask(), options)
    assert entry.stat().st_mtime > old + 86_400


def test_cache_command_rejects_a_missing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cache", "stats", "--cache", str(tmp_path / "nope")]) == 2
    assert "no such cache directory" in capsys.readouterr().err


@pytest.mark.parametrize("days", ["nan", "inf", "-1"])
def test_prune_refuses_an_age_that_is_not_a_number_of_days(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], days: str
) -> None:
    # `nan` used to be accepted and remove nothing (every comparison with NaN is False).
    seed(tmp_path)
    assert main(["cache", "prune", "--cache", str(tmp_path), "--older-than", days]) == 2
    assert f"--older-than must be a number of days >= 0, got {days}" in capsys.readouterr().err
    assert len(entry_files(tmp_path)) == 4


def strays(root: Path) -> tuple[Path, Path]:
    """A directory and a dangling symlink where entries belong (named as entries are)."""
    directory = root / "judge" / "ab" / f"{'ab' * 32}.json"
    directory.mkdir(parents=True)
    (directory / "keep.txt").write_text("not assay's\n")
    dangling = root / "agent" / "cd" / f"{'cd' * 32}.json"
    dangling.parent.mkdir(parents=True)
    dangling.symlink_to(root / "nowhere.json")
    return directory, dangling


def test_stats_and_prune_agree_on_strays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(tmp_path)
    directory, dangling = strays(tmp_path)
    assert main(["cache", "stats", "--cache", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "agent        4 entries" in captured.out  # 3 recorded + the dangling link
    assert "judge        1 entries" in captured.out  # the directory is not one
    assert f"warning: skipping {directory}: a directory, not a cache entry" in captured.err

    assert main(["cache", "prune", "--cache", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "removed 5 entries" in captured.out and "Traceback" not in captured.err
    assert f"warning: skipping {directory}: a directory" in captured.err
    assert not dangling.is_symlink()
    assert (directory / "keep.txt").read_text() == "not assay's\n"  # never removed


def test_a_directory_where_an_entry_belongs_is_a_corrupt_miss(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ResponseCache(tmp_path)
    request = ask(model="m")
    cache.path_for("agent", request_key("anthropic", request)).mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="assay.models"):
        assert cache.load("anthropic", request) is None
    assert (cache.stats.corrupt, cache.stats.misses) == (1, 1)
    assert any("corrupt cache entry" in r.getMessage() for r in caplog.records)


def test_cache_command_as_a_real_process(tmp_path: Path) -> None:
    seed(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "assay.cli", "cache", "prune", "--cache", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "removed 4 entries" in result.stdout
    assert entry_files(tmp_path) == []
