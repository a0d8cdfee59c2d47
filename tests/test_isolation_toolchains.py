"""Toolchains under HOME stay runnable in the OS sandbox; nothing else of HOME shows.

A fake HOME holds a rustup layout (`~/.cargo/bin/cargo`, a proxy that reads
`$RUSTUP_HOME`), a pyenv layout, a pipx tool, and the credentials a hostile agent would
want (`~/.ssh/id_rsa`, `~/.cargo/credentials.toml`, `~/.config/gh/hosts.yml`). Programs
run under real bwrap through `run_command`, as the runner runs them, and one whole
`assay.run` of a PVYai task suite runs `cargo` as its verification command.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from assay.isolation.bwrap import probe_bwrap, resolve_sandboxing
from assay.isolation.processes import run_command
from assay.isolation.toolchains import home_toolchains
from tests.requires import no_bwrap_reason

BWRAP, WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason=no_bwrap_reason(WHY_NOT))


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    toolchain = home / ".rustup" / "toolchains" / "stable" / "bin"
    executable(toolchain / "cargo", '#!/bin/sh\necho "cargo 1.95.0 $*"\n')
    (home / ".rustup" / "settings.toml").write_text('default_toolchain = "stable"\n')
    # As rustup's proxy: $RUSTUP_HOME, else ~/.rustup (a verification command's scrubbed
    # environment keeps HOME, pointed at the sandbox's own).
    proxy = '#!/bin/sh\nexec "${RUSTUP_HOME:-$HOME/.rustup}/toolchains/stable/bin/cargo" "$@"\n'
    executable(home / ".cargo" / "bin" / "cargo", proxy)
    (home / ".cargo" / "credentials.toml").write_text('[registry]\ntoken = "cio-SECRET"\n')
    (home / ".cargo" / "bin" / "credentials.toml").write_text("token = cio-SECRET\n")
    executable(home / ".pyenv" / "versions" / "9.9" / "bin" / "python9", "#!/bin/sh\necho py9\n")
    shim = '#!/bin/sh\nexec "$PYENV_ROOT/versions/9.9/bin/python9"\n'
    executable(home / ".pyenv" / "shims" / "python9", shim)
    executable(home / ".local" / "bin" / "tool", "#!/bin/sh\necho tool ran\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN SECRET-----\n")
    executable(home / ".config" / "gh" / "bin" / "gh-token", "#!/bin/sh\necho gh-SECRET\n")
    (home / "notes.txt").write_text("SECRET notes\n")
    path_entries = [
        home / ".cargo" / "bin",
        home / ".pyenv" / "shims",
        home / ".local" / "bin",
        home / ".config" / "gh" / "bin",
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
    ]
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", os.pathsep.join(str(entry) for entry in path_entries))
    monkeypatch.setenv("RUSTUP_HOME", str(home / ".rustup"))
    monkeypatch.setenv("PYENV_ROOT", str(home / ".pyenv"))
    for name in ("CARGO_HOME", "NVM_DIR", "VOLTA_HOME", "ASDF_DATA_DIR", "GOROOT"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_what_of_home_is_shown_is_what_path_runs_and_its_data(home: Path) -> None:
    shown = home_toolchains(os.environ, masked=[])
    assert set(shown.exposed) == {
        home / ".cargo" / "bin",
        home / ".rustup",
        home / ".pyenv" / "shims",
        home / ".pyenv",
        home / ".local" / "bin",
    }
    assert shown.covered == (home / ".cargo" / "bin" / "credentials.toml",)


def test_a_path_entry_inside_a_masked_checkout_or_linked_out_is_not_shown(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = home / "work" / "repo"
    (checkout / "node_modules" / ".bin").mkdir(parents=True)
    (home / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    entries = [checkout / "node_modules" / ".bin", home / "linked", home]
    monkeypatch.setenv("PATH", os.pathsep.join(map(str, entries)))
    assert home_toolchains(os.environ, masked=[checkout]).exposed == ()


def run(argv: list[str], cwd: Path, tmp_path: Path) -> tuple[int | None, str]:
    sandboxing = resolve_sandboxing("bwrap", masked=[])
    confinement = sandboxing.for_command(cwd, argv)
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}.txt"
    result = asyncio.run(
        run_command(
            argv,
            cwd=cwd,
            env=dict(os.environ),
            timeout_s=30,
            stdout_path=out,
            stderr_path=None,
            isolation=confinement,
        )
    )
    return result.exit_code, out.read_text()


@needs_bwrap
def test_toolchains_under_home_run_confined_and_credentials_do_not_show(
    home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    assert run(["cargo", "test"], workspace, tmp_path) == (0, "cargo 1.95.0 test\n")
    assert run(["python9"], workspace, tmp_path) == (0, "py9\n")
    assert run(["tool"], workspace, tmp_path) == (0, "tool ran\n")
    peek = (
        "for f in .ssh/id_rsa .cargo/credentials.toml .cargo/bin/credentials.toml "
        '.config/gh/bin/gh-token notes.txt; do cat "$HOME/$f" 2>/dev/null && echo "READ $f"; '
        'done; touch "$HOME/.cargo/bin/planted" 2>/dev/null && echo WROTE; echo done'
    )
    code, out = run(["sh", "-c", peek], workspace, tmp_path)
    assert (code, out) == (0, "done\n"), out
    assert not (home / ".cargo" / "bin" / "planted").exists()


@needs_bwrap
def test_a_pvyai_task_verified_with_cargo_passes_as_it_does_unconfined(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay
    from assay.options import RunOptions

    evals = tmp_path / "project" / "evals"
    fixture = evals / "fixtures" / "crate"
    fixture.mkdir(parents=True)
    (fixture / "lib.rs").write_text("pub fn add(a: i32, b: i32) -> i32 { a - b }\n")
    agent = executable(tmp_path / "agent.sh", '#!/bin/sh\necho fixed >> "$1/lib.rs"\n')
    suite = {
        "id": "rust",
        "name": "Rust",
        "tasks": [
            {
                "id": "build",
                "name": "Build",
                "prompt": "Build it.",
                "workspaceFixture": "fixtures/crate",
                "expectedChangedFiles": ["lib.rs"],
                "verificationCommands": [
                    {"id": "cargo", "name": "cargo test", "command": ["cargo", "test"]}
                ],
            }
        ],
    }
    (evals / "rust.json").write_text(json.dumps(suite))
    monkeypatch.chdir(tmp_path / "project")
    report = assay.run(
        RunOptions(
            paths=(evals,),
            agent_command=(str(agent), "{workspace}"),
            isolation="bwrap",
            report_dir=tmp_path / "report",
            # Not the system temp directory (the default), which holds this fake HOME and
            # is masked whole: a real HOME is never under the work root.
            work_root=tmp_path / "work",
        )
    )
    (case,) = report.cases
    (command,) = [check for check in case.checks if check.kind == "command"]
    assert command.status == "pass", (command.message, case.reason)
