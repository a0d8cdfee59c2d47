"""report.json's `run.isolation.agent_network_relay`: which runs' agent CLIs had no
network but the relay to their model bridge (the end-to-end check, under bwrap, is
tests/bridge/test_bridge.py's `test_a_sandboxed_cli_reaches_its_bridge_and_nothing_else`).
"""

from __future__ import annotations

import json

import pytest

from assay.agents import runtime_spec
from assay.options import RunOptions, RunSettings
from assay.report.merge import _weakest_isolation
from assay.report.model import IsolationInfo

CLAUDE = "anthropic/claude-sonnet-4-6"


def test_the_runtimes_say_when_their_cli_is_relayed_to_its_bridge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    claude = runtime_spec("claude-code")
    gemini = runtime_spec("gemini-cli")
    builtin = runtime_spec("builtin")
    assert claude is not None and claude.relays_to_bridge is not None
    assert claude.relays_to_bridge(RunOptions(), CLAUDE)
    assert claude.relays_to_bridge(RunOptions(), None)  # its own default model: bridged too
    assert not claude.relays_to_bridge(RunOptions(bridge=False), CLAUDE)  # direct calls
    network_on = RunSettings(agent_network=True, sources={"agent_network": "option"})
    assert not claude.relays_to_bridge(network_on, CLAUDE)  # the host's network, by name
    network_off = RunSettings(agent_network=False, sources={"agent_network": "option"})
    assert claude.relays_to_bridge(network_off, CLAUDE)
    assert gemini is not None and gemini.relays_to_bridge is not None
    assert not gemini.relays_to_bridge(RunOptions(), "gemini/gemini-2.5-pro")  # not bridged
    assert builtin is not None and builtin.relays_to_bridge is None


def test_the_field_is_written_only_when_set_and_merged_from_any_sandboxed_shard() -> None:
    plain = IsolationInfo(mode="bwrap")
    relayed = IsolationInfo(mode="bwrap", agent_network_relay="bridge")
    assert "agent_network_relay" not in json.loads(plain.model_dump_json())  # as before
    assert json.loads(relayed.model_dump_json())["agent_network_relay"] == "bridge"

    merged = _weakest_isolation([plain, relayed])
    assert merged is not None and merged.agent_network_relay == "bridge"
    unsandboxed = IsolationInfo(mode="none", warning="not sandboxed")
    weakest = _weakest_isolation([relayed, unsandboxed])
    assert weakest is not None and weakest.mode == "none" and weakest.agent_network_relay is None
