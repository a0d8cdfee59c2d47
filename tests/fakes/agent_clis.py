"""Fake agent CLIs on PATH: small Python scripts that print each real CLI's stream shape.

`install_fake_cli(bin_dir, preset)` writes an executable named like the CLI (`claude`,
`codex`, `gemini`, `opencode`, `aider`) that plays a plausible agent for any case: a
review case reads the first changed file and answers with one finding there, in a fenced
JSON block; a verify case keeps the candidate; a rubric case writes a review; a task case
runs the example agent (examples/reference_agent.py) and reports its tool calls as the
CLI's own tool events. The stream is written in the shape the CLI's public docs give
(Claude Code stream-json, Codex exec --json, Gemini CLI stream-json, opencode run
--format json, aider's text). `FAKE_CLI_MODE` changes what it prints:

- `ok` (default); `noisy`: the same, with a warning line and a half-written JSON line;
- `truncated`: the stream stops before the final message (exit 0);
- `failed`: the CLI reports an API failure and exits 1;
- `prose`: the final message holds no JSON block.

With `FAKE_CLI_LOG=<file>`, each run appends {argv, keys, files} as a JSON line: its
arguments, the names of the credential variables it could see, and the workspace's files.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["PROGRAMS", "USAGE", "install_fake_cli"]

from tests.fakes.fake_agent_cli import USAGE

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {
    "claude-code": "claude",
    "codex": "codex",
    "gemini-cli": "gemini",
    "opencode": "opencode",
    "aider": "aider",
}


def install_fake_cli(bin_dir: Path, preset: str) -> Path:
    """Write the fake CLI of `preset` into `bin_dir` (put it first on PATH)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / PROGRAMS[preset]
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.fakes.fake_agent_cli import main\n"
        f"sys.exit(main({preset!r}))\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path
