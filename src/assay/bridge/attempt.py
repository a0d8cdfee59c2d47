"""The bridge of one preset attempt: whether it runs, and the environment its CLI gets.

On by default (`--bridge on`, `ASSAY_BRIDGE`) for a preset whose CLI speaks an API the
bridge serves with the attempt's model (`Preset.bridge_api_for`: opencode and aider speak
Anthropic's for `anthropic/` models, OpenAI's for `openai/` ones, Gemini's for `gemini/`
ones, OpenRouter's for `openrouter/` ones, their own provider's API for the rest);
`--bridge off` keeps the CLI's
direct calls. With the bridge the CLI sees no real key at all: its base URL is the
bridge's and its API key the attempt's token (`Preset.bridge_environ`).

In the OS sandbox a bridged CLI gets no network at all by default (`--unshare-net`): the
bridge also listens on a Unix socket in a private directory, which is bound into the
sandbox, and the sandbox's exec shim relays 127.0.0.1:<the bridge's port> to it, so the
bridge is all the CLI can reach (`relayed`). `--agent-network on`, asked for by name,
shares the host's network instead, as for any agent.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from assay.bridge.normalise import PathNames
from assay.bridge.server import serve  # aiohttp's server: loaded for bridged runs only
from assay.bridge.session import BridgeSession
from assay.bridge.transcript import MODEL_CALLS_FILE
from assay.isolation.bwrap import BridgeRelay
from assay.models.names import missing_credentials

if TYPE_CHECKING:
    from assay.bridge.session import BridgeSession
    from assay.options import RunOptions

__all__ = ["BridgedCli", "Bridged", "bridged_api", "open_bridge", "relayed"]

_SOCKET_NAME = "bridge.sock"
_MAX_SOCKET_PATH = 100
"""A Unix socket's path holds at most 107 bytes: a longer TMPDIR gives way to /tmp."""


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


def relayed(options: RunOptions | None) -> bool:
    """Whether a bridged CLI runs in a sandbox with no network but the relay to its bridge:
    yes, unless the user asked for `--agent-network on` by name (a CLI that needs the
    network for more than its model calls)."""
    sources = getattr(options, "sources", None) or {}
    asked = sources.get("agent_network", "default") != "default"
    return not (asked and getattr(options, "agent_network", True))


class Bridged:
    """An open bridge: the session, what the CLI's environment gets, and the relay that
    reaches it from a sandbox with a network of its own."""

    def __init__(
        self,
        session: BridgeSession,
        environ: Mapping[str, str],
        relay: BridgeRelay | None = None,
        url: str = "",
    ) -> None:
        self.session = session
        self.environ = dict(environ)
        self.relay = relay
        self.url = url
        """The bridge's base URL (`http://127.0.0.1:PORT`), the same inside the OS sandbox."""


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
    private = _private_directory()
    socket = private / _SOCKET_NAME
    try:
        async with serve(session, unix_socket=socket) as url:
            relay = BridgeRelay(socket=socket, port=int(url.rsplit(":", 1)[1]))
            environ = preset.bridge_environ(url, session.token, api)
            yield Bridged(session, environ, relay, url)
    finally:
        session.close()  # after the preset's own close (with the CLI's report), a no-op
        shutil.rmtree(private, ignore_errors=True)


def _private_directory() -> Path:
    """A new directory only assay's user can enter (mode 0700), short enough for a socket."""
    made = Path(tempfile.mkdtemp(prefix="assay-bridge-"))
    if len(str(made / _SOCKET_NAME)) > _MAX_SOCKET_PATH:
        made.rmdir()
        made = Path(tempfile.mkdtemp(prefix="assay-bridge-", dir="/tmp"))
    return made
