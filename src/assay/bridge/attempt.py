"""The bridge of one preset attempt: whether it runs, and the environment its CLI gets.

On by default (`--bridge on`, `ASSAY_BRIDGE`) for a preset whose CLI speaks an API the
bridge serves with the attempt's model (`Preset.bridge_api_for`: opencode and aider speak
Anthropic's for `anthropic/` models, OpenAI's for `openai/` ones, their own provider's API
for the rest); `--bridge off` keeps the CLI's direct calls. With the bridge the CLI sees no
real key at all: its base URL is the bridge's and its API key the attempt's token
(`Preset.bridge_environ`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from assay.bridge.normalise import PathNames
from assay.bridge.server import serve  # aiohttp's server: loaded for bridged runs only
from assay.bridge.session import BridgeSession
from assay.bridge.transcript import MODEL_CALLS_FILE
from assay.models.names import missing_credentials

if TYPE_CHECKING:
    from assay.bridge.session import BridgeSession
    from assay.options import RunOptions

__all__ = ["BridgedCli", "Bridged", "bridged_api", "open_bridge"]


class BridgedCli(Protocol):
    """What the bridge needs of a preset (`agents.presets.base.Preset`)."""

    def bridge_api_for(self, model: str | None) -> str | None: ...

    def bridge_environ(self, url: str, token: str, api: str) -> dict[str, str]: ...


def bridged_api(preset: BridgedCli, options: RunOptions | None, model: str | None) -> str | None:
    """The API by which `preset`'s calls go through the bridge in this run when its CLI runs
    `model` (None: its own default model); None: they stay direct.

    By default only when assay itself can call the provider (or replays, `--offline`): a
    CLI logged in some other way (Claude Code's `CLAUDE_CODE_OAUTH_TOKEN`) without an API
    key on the host keeps its direct calls. `--bridge on` asked for by name bridges anyway,
    and the calls are refused with the missing key's reason (the case is `skipped`)."""

    wanted = getattr(options, "bridge", None)
    api = preset.bridge_api_for(model)
    if api is None or wanted is False:
        return None
    sources = getattr(options, "sources", None)  # RunSettings: where each value came from
    named = wanted is True if sources is None else sources.get("bridge", "default") != "default"
    if named or getattr(options, "offline", False):
        return api
    return api if missing_credentials(f"{api}/*") is None else None


class Bridged:
    """An open bridge: the session and what the CLI's environment gets."""

    def __init__(self, session: BridgeSession, environ: Mapping[str, str]) -> None:
        self.session = session
        self.environ = dict(environ)


@contextlib.asynccontextmanager
async def open_bridge(
    preset: BridgedCli,
    *,
    api: str,
    options: RunOptions | None,
    sample: int,
    artifacts_dir: Path | None,
    environ: Mapping[str, str],
    names: PathNames | None = None,
) -> AsyncIterator[Bridged]:
    """A bridge for one attempt, listening while the block runs, for the CLI's `api` calls;
    its transcript in `artifacts_dir/model-calls.jsonl`."""

    transcript = artifacts_dir / MODEL_CALLS_FILE if artifacts_dir is not None else None
    session = BridgeSession(
        options=options, sample=sample, transcript=transcript, environ=environ, names=names
    )
    try:
        async with serve(session) as url:
            yield Bridged(session, preset.bridge_environ(url, session.token, api))
    finally:
        session.close()  # after the preset's own close (with the CLI's report), a no-op
