"""No key value in any exception message, log line, cache file or command output."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import tracemalloc
from pathlib import Path

import pytest

from assay._util import secrets
from assay._util.secrets import MASK, redact, redact_file, secret_values
from assay.cli import main
from assay.errors import ModelError
from assay.models import Message, ModelRequest, generate
from assay.models import retry as retry_module
from assay.options import RunOptions
from tests.fakes.anthropic_api import FakeAnthropic, anthropic_error, rate_limited, text_reply

SECRET = "sk-ant-api03-SECRET-do-not-leak-7f3a9c"


def ask(text: str) -> ModelRequest:
    return ModelRequest(
        model="anthropic/claude-sonnet-4-6",
        system="You review code.",
        messages=(Message("user", ({"type": "text", "text": text},)),),
    )


def test_the_key_never_leaks(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def no_wait(seconds: float) -> None:
        pass

    monkeypatch.setattr(retry_module, "sleep", no_wait)
    cache = tmp_path / "cache"
    options = RunOptions(cache_dir=cache)
    messages: list[str] = []
    caplog.set_level(logging.DEBUG)  # every logger, the SDKs' and httpx's included

    with FakeAnthropic(api_key=SECRET) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        fake.inject(rate_limited(retry_after="1"))
        fake.reply(text_reply("recorded"))
        assert asyncio.run(generate(ask("a"), options=options)).text() == "recorded"
        # A misbehaving proxy that echoes the request's headers in its error.
        fake.inject(
            anthropic_error(400, "invalid_request_error", f"bad header x-api-key: {SECRET}")
        )
        with pytest.raises(ModelError) as echoed:
            asyncio.run(generate(ask("b"), options=options))
        messages.append(str(echoed.value))
        fake.api_key = "sk-ant-a-different-valid-key"
        with pytest.raises(ModelError) as rejected:
            asyncio.run(generate(ask("c"), options=options))
        messages.append(str(rejected.value))
        assert fake.requests[0].headers["authorization"] == f"Bearer {SECRET}"  # it was sent

    assert main(["cache", "stats", "--cache", str(cache)]) == 0
    assert "[redacted]" in messages[0] and "rejected" in messages[1]
    assert "retrying" in caplog.text and "anthropic" in {
        r.name.split(".")[0] for r in caplog.records
    }

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the cache recorded the successful call"
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    captured = capsys.readouterr()
    for text in (*messages, caplog.text, captured.out, captured.err):
        assert SECRET not in text


def test_redact_masks_every_credential_variable() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-aaaaaaaaaaaa",
        "GITHUB_TOKEN": "ghp_bbbbbbbbbbbbbbbb",
        "MY_SECRET": "cccccccccccccccc",
        "SHORT_TOKEN": "abc",  # too short to be a real secret; left alone
        "PATH": "/usr/bin",
    }
    text = "key sk-ant-aaaaaaaaaaaa token ghp_bbbbbbbbbbbbbbbb other cccccccccccccccc abc /usr/bin"
    assert redact(text, env, mask="***") == "key *** token *** other *** abc /usr/bin"
    assert secret_values(env)[0] == "ghp_bbbbbbbbbbbbbbbb"  # longest first


@pytest.mark.slow
def test_a_transcript_file_is_masked_in_pieces_as_whole_text_would_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Secrets straddling pieces, overlapping or containing one another, amid bytes that
    are not UTF-8 and NULs (looked through); a file holding none is left as it was."""
    rng = random.Random(20261201)
    groups = [["abcd"], ["sk-ant-XYZXYZ", "XYZ12"], ["aaaaaa", "aaaa"], ["ab", "ba"]]
    path = tmp_path / "agent.stdout"
    for _ in range(1000):
        values = rng.choice(groups)
        monkeypatch.setattr(secrets, "_known_secrets", lambda environ, v=values: v)
        monkeypatch.setattr(secrets, "_REDACT_BATCH", rng.choice([1, 3, 16]))
        data = bytes(rng.choice(b"abXYZ12sk-ant\xff\x00") for _ in range(rng.randint(0, 120)))
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(data))
            data = data[:at] + rng.choice(values).encode() + data[at:]
        path.write_bytes(data)
        before = os.stat(path)
        redact_file(path)
        expected = data
        for value in values:
            # NUL is a control character: a secret with NULs inside is masked with them
            spaced = b"\x00*".join(re.escape(bytes([byte])) for byte in value.encode())
            expected = re.sub(spaced, MASK.encode(), expected)
        assert path.read_bytes() == expected, (values, data)
        if expected == data:  # not rewritten
            after = os.stat(path)
            assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_large_transcript_is_masked_without_being_held_whole(tmp_path: Path) -> None:
    # An agent's capture is kept up to 64 MiB; masking it must not hold it in memory.
    line = b"x" * 1000 + b"\n"
    data = (line * 12_000 + SECRET.encode()) * 2  # 24 MB, a secret after each half
    path = tmp_path / "agent.stdout"
    path.write_bytes(data)
    path.chmod(0o640)
    tracemalloc.start()
    try:
        redact_file(path, {"ANTHROPIC_API_KEY": SECRET})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert path.read_bytes() == data.replace(SECRET.encode(), MASK.encode())
    assert path.stat().st_mode & 0o777 == 0o640
    assert not list(tmp_path.glob(".*")), "the masked copy replaced the file"
    assert peak < 8 * 2**20, f"{peak / 2**20:.0f} MiB held to mask a 24 MB file"
