"""The real keys the bridge tests set for their loopback providers, and a bridge session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.bridge.session import BridgeSession
from assay.options import RunOptions

KEY = "sk-ant-real-0123456789abcdef"
OPENAI_KEY = "sk-proj-real-0123456789abcdef"
GEMINI_KEY = "AIzaSy-real-gemini-key-0123456789abcdef"


def session(tmp_path: Path, **options: Any) -> BridgeSession:
    """An attempt's bridge session under `options`, its transcript in `tmp_path`."""
    tmp_path.mkdir(exist_ok=True)
    return BridgeSession(
        options=RunOptions(**options), sample=0, transcript=tmp_path / "model-calls.jsonl"
    )
