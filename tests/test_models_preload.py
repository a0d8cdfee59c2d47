"""The background SDK import: which modules a run's models need comes from each provider's
ProviderSpec (`sdk_modules`), and the thread imports exactly those."""

from __future__ import annotations

import asyncio
import builtins
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from assay.models.preload import sdk_imports_done, sdk_modules_for, start_sdk_imports
from assay.models.providers import PROVIDERS, ProviderSpec
from assay.models.registry import register_provider


@pytest.mark.parametrize(
    ("models", "modules"),
    [
        (["anthropic/claude-sonnet-4-6", "claude-haiku-4-5"], ["anthropic"]),
        (["openai/gpt-5", "openrouter/anthropic/claude-sonnet-4.6"], ["openai"]),
        (["bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0"], ["anthropic", "boto3"]),
        (["vertex/claude-sonnet-4-5@20250929"], ["anthropic", "google.auth"]),
        (["gemini/gemini-2.5-flash", "gemini-2.5-pro"], ["google.genai", "httpx2"]),
        ([], []),
    ],
)
def test_the_modules_are_the_providers_own(models: list[str], modules: list[str]) -> None:
    assert sdk_modules_for(models) == modules


def test_a_plugin_provider_declares_its_own_and_an_undeclared_one_imports_nothing() -> None:
    register_provider(
        "declared",
        spec=ProviderSpec(name="declared", factory=lambda: None, sdk_modules=("colorsys",)),  # type: ignore[arg-type, return-value]
    )
    register_provider("quiet", lambda: None, key_variables=())  # type: ignore[arg-type, return-value]
    try:
        assert sdk_modules_for(["declared/x"]) == ["colorsys"]
        assert start_sdk_imports(["quiet/x"]) is None
    finally:
        PROVIDERS.unregister("declared")
        PROVIDERS.unregister("quiet")


@pytest.mark.parametrize(
    ("model", "wanted", "not_wanted"),
    [
        ("gemini/gemini-2.5-flash", ["google.genai"], ["anthropic", "openai"]),
        ("bedrock/anthropic.claude-haiku-4-5-v1:0", ["anthropic", "boto3"], ["google.genai"]),
    ],
)
@pytest.mark.slow
def test_the_thread_imports_them_in_a_fresh_interpreter(
    model: str, wanted: list[str], not_wanted: list[str]
) -> None:
    script = (
        "import json, sys\n"
        "from assay.models.preload import start_sdk_imports\n"
        f"thread = start_sdk_imports([{model!r}])\n"
        "thread.join()\n"
        f"print(json.dumps({{m: m in sys.modules for m in {[*wanted, *not_wanted]!r}}}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert {m: loaded[m] for m in wanted} == dict.fromkeys(wanted, True), done.stderr
    assert {m: loaded[m] for m in not_wanted} == dict.fromkeys(not_wanted, False)


@pytest.mark.slow
def test_the_thread_parses_no_source_for_any_built_in_provider() -> None:
    # On CPython 3.11 two threads in `ast` at once corrupt its recursion counter, and the
    # main thread parses (docstrings for schemas) while the thread imports: an SDK release
    # that starts parsing at import must fail here, not as a SystemError in a run.
    models = ["anthropic/x", "openai/x", "bedrock/x", "vertex/x", "gemini/x"]
    script = (
        "import ast, builtins, json, threading\n"
        "from assay.models.preload import start_sdk_imports\n"
        "parsed, compile_ = [], builtins.compile\n"
        "def hooked(source, filename, mode, flags=0, *args, **kwargs):\n"
        "    if flags & ast.PyCF_ONLY_AST and threading.current_thread().name != 'MainThread':\n"
        "        parsed.append(str(filename))\n"
        "    return compile_(source, filename, mode, flags, *args, **kwargs)\n"
        "builtins.compile = hooked\n"
        f"start_sdk_imports({models!r}).join()\n"
        "import sys\n"
        "print(json.dumps([parsed, sorted(set(sys.modules) & {'anthropic', 'google.genai'})]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=180
    )
    parsed, imported = json.loads(done.stdout.splitlines()[-1])
    assert (parsed, imported) == ([], ["anthropic", "google.genai"]), done.stderr


def test_waiting_for_the_import_takes_no_worker_thread_and_survives_a_cancelled_waiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every case of the first round waits at once; the sandboxes still to build need the
    loop's thread pool meanwhile, and one waiter cancelled (a timeout) leaves the rest."""
    gate = threading.Event()
    monkeypatch.setattr(builtins, "_assay_test_import_gate", gate, raising=False)
    (tmp_path / "assay_test_slow_sdk.py").write_text(
        "import builtins\nbuiltins._assay_test_import_gate.wait(30)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = ProviderSpec(name="slowsdk", factory=lambda: None, sdk_modules=("assay_test_slow_sdk",))  # type: ignore[arg-type, return-value]
    register_provider("slowsdk", spec=spec)

    async def scenario() -> None:
        start_sdk_imports(["slowsdk/x"])
        waiters = [asyncio.create_task(sdk_imports_done()) for _ in range(40)]
        await asyncio.sleep(0.05)
        # the default pool has at most 32 workers: 40 waiters holding one each would starve it
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "built"), 5) == "built"
        waiters[0].cancel()
        await asyncio.sleep(0.05)
        assert not any(w.done() for w in waiters[1:])
        gate.set()
        await asyncio.wait_for(asyncio.gather(*waiters[1:]), 30)

    try:
        asyncio.run(scenario())
    finally:
        gate.set()
        PROVIDERS.unregister("slowsdk")
        sys.modules.pop("assay_test_slow_sdk", None)
