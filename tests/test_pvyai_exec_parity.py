"""How programs start and how their end is told, as PVYai's Go does it, with the OS sandbox
(real bwrap) and without it (`--isolation none`): the same answers in both.

Go starts a program with execve of the path its PATH look-up found: a script without `#!`,
a missing interpreter, a file that is no program, a NUL byte in an argument are start
failures (`fork/exec PATH: ...`, exit code -1), never an exit code, and nothing runs a
script under /bin/sh. A signal is exit code -1 (assay: -signal), `exit 143` stays 143.
Output that is not UTF-8 has one U+FFFD per invalid byte.
"""

from __future__ import annotations

import asyncio
import errno
import json
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.isolation.bwrap import probe_bwrap, resolve_sandboxing
from assay.isolation.launch import LaunchError, StartFailed, shim_outcome
from assay.isolation.limits import DEFAULT_LIMITS, limit_reason
from assay.isolation.processes import CommandResult, run_command
from tests.requires import no_bwrap_reason

BWRAP, WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason=no_bwrap_reason(WHY_NOT))
MODES = [pytest.param("none", id="none"), pytest.param("bwrap", id="bwrap", marks=needs_bwrap)]
PATH = "/usr/bin:/bin"
ECHO = shutil.which("echo", path=PATH)
assert ECHO is not None

NO_SHEBANG = "echo ran under a shell\n"
MISSING_INTERPRETER = "#!/no/such/interpreter\necho ran\n"
NOT_A_PROGRAM = b"\x7fELF but not really a program"


def _workspace(tmp_path: Path) -> Path:
    """Programs a start refuses, in the directory that is writable (so shown) in the sandbox."""
    workspace = tmp_path / "ws"
    (workspace / "bin").mkdir(parents=True)
    for name, text in {
        "noshebang.sh": NO_SHEBANG,
        "badinterp.sh": MISSING_INTERPRETER,
        "bin/on-path": NO_SHEBANG,
    }.items():
        (workspace / name).write_text(text)
    (workspace / "garbage.bin").write_bytes(NOT_A_PROGRAM)
    for path in (*workspace.glob("*.*"), workspace / "bin" / "on-path"):
        path.chmod(0o755)
    return workspace


def _run(
    mode: str, workspace: Path, argv: list[str], env: dict[str, str] | None = None
) -> CommandResult:
    sandboxing = resolve_sandboxing(mode, masked=[])  # type: ignore[arg-type]
    logs = workspace.parent / "logs"
    logs.mkdir(exist_ok=True)
    return asyncio.run(
        run_command(
            argv,
            cwd=workspace,
            env={"PATH": PATH, **(env or {})},
            timeout_s=20,
            stdout_path=logs / "out",
            stderr_path=logs / "err",
            isolation=sandboxing.for_command(workspace, argv),
        )
    )


# -- starting a program ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("program", "number", "text"),
    [
        ("./noshebang.sh", errno.ENOEXEC, "exec format error"),
        ("./garbage.bin", errno.ENOEXEC, "exec format error"),
        ("./badinterp.sh", errno.ENOENT, "no such file or directory"),
    ],
)
def test_a_program_execve_refuses_is_a_start_failure_in_gos_words(
    mode: str, program: str, number: int, text: str, tmp_path: Path
) -> None:
    """No /bin/sh runs a script without `#!` (bwrap's execvp would), and a missing
    interpreter is no exit 127 the program could have given."""
    with pytest.raises(StartFailed) as failed:
        _run(mode, _workspace(tmp_path), [program])
    assert (str(failed.value), failed.value.errno) == (f"fork/exec {program}: {text}", number)


@pytest.mark.parametrize("mode", MODES)
def test_a_bare_name_is_started_at_the_path_entry_that_holds_it(mode: str, tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    bin_dir = workspace / "bin"
    with pytest.raises(StartFailed) as failed:
        _run(mode, workspace, ["on-path"], env={"PATH": f"{bin_dir}:{PATH}"})
    assert str(failed.value) == f"fork/exec {bin_dir}/on-path: exec format error"
    # Made a program, the same name runs: the look-up found it, nothing else was wrong.
    (bin_dir / "on-path").write_text("#!/bin/sh\necho found\n")
    result = _run(mode, workspace, ["on-path"], env={"PATH": f"{bin_dir}:{PATH}"})
    assert (result.exit_code, result.stdout_tail) == (0, "found\n")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["echo", "a\0b"], {}),
        (["echo", "fine"], {"PROMPT": "a\0b"}),
    ],
    ids=["argument", "variable"],
)
def test_a_nul_byte_fails_the_start_as_go_does(
    mode: str, argv: list[str], env: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(StartFailed) as failed:
        _run(mode, _workspace(tmp_path), argv, env=env)
    assert str(failed.value) == f"fork/exec {ECHO}: invalid argument"
    assert failed.value.errno == errno.EINVAL


@pytest.mark.parametrize("mode", MODES)
def test_a_program_that_is_not_there_keeps_assays_words(mode: str, tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="command not found: ./absent") as failed:
        _run(mode, _workspace(tmp_path), ["./absent"])
    assert not isinstance(failed.value, StartFailed)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("search", "program"),
    [("bin:" + PATH, "on-path"), (".:" + PATH, "noshebang.sh"), (":" + PATH, "noshebang.sh")],
)
def test_a_program_a_relative_path_entry_finds_does_not_start_as_in_go(
    mode: str, search: str, program: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Go's LookPath resolves PATH against the harness's own directory; so does the check.
    workspace = _workspace(tmp_path)
    monkeypatch.chdir(workspace)
    with pytest.raises(LaunchError) as failed:
        _run(mode, workspace, [program], env={"PATH": search})
    assert str(failed.value) == (
        f'exec: "{program}": cannot run executable found relative to current directory'
    )
    # an absolute entry first finds it as before
    result = _run(mode, workspace, ["echo", "ran"], env={"PATH": f"{PATH}:."})
    assert result.exit_code == 0


# -- how a program ended --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("script", "exit_code"),
    [
        ("kill -TERM $$", -signal.SIGTERM),
        ("kill -ABRT $$", -signal.SIGABRT),
        ("kill -XFSZ $$", -signal.SIGXFSZ),
        ("exit 143", 143),
        ("exit 153", 153),
        ("exit 127", 127),
        ("exit 3", 3),
        # A program that signals its own process group (a test runner's `kill 0`)
        # still has its end told: the sandbox's starter is not in that group.
        ("kill 0; sleep 5", -signal.SIGTERM),
    ],
)
def test_a_signal_is_told_from_an_exit_code(
    mode: str, script: str, exit_code: int, tmp_path: Path
) -> None:
    result = _run(mode, _workspace(tmp_path), ["/bin/sh", "-c", script])
    assert (result.exit_code, result.timed_out) == (exit_code, False)


def test_only_a_real_sigxfsz_says_the_file_size_limit_stopped_it() -> None:
    assert limit_reason(153, DEFAULT_LIMITS) == ""
    assert limit_reason(-signal.SIGXFSZ, DEFAULT_LIMITS).startswith("killed by SIGXFSZ: ")


@needs_bwrap
def test_the_sandboxs_starter_leaves_the_programs_environment_and_signals_as_they_were(
    tmp_path: Path,
) -> None:
    """The starter is an interpreter, which adds LC_CTYPE to its own environment in the C
    locale and ignores SIGPIPE and SIGXFSZ: none of that reaches the program."""
    # grep reads its own status: the shell's mask, read from outside, is all blocked
    # whenever dash happens to be waiting for a child.
    script = "env; exec grep -E '^Sig(Ign|Blk)' /proc/self/status"
    env = {"LANG": "C"}
    confined = _run("bwrap", _workspace(tmp_path), ["/bin/sh", "-c", script], env=env)
    plain = _run("none", _workspace(tmp_path / "plain"), ["/bin/sh", "-c", script], env=env)
    assert confined.exit_code == 0, confined.stderr_tail
    lines = set(confined.stdout_tail.splitlines())
    assert "SigIgn:\t0000000000000000" in lines and "SigBlk:\t0000000000000000" in lines
    names = {line.split("=", 1)[0] for line in lines if "=" in line}
    unsandboxed = {line.split("=", 1)[0] for line in plain.stdout_tail.splitlines() if "=" in line}
    # The sandbox sets its own HOME and TMPDIR (and the shell PWD); nothing else differs.
    assert names - {"HOME", "TMPDIR"} == unsandboxed - {"HOME", "TMPDIR"}
    assert "LC_CTYPE" not in names


@pytest.mark.parametrize(
    ("record", "returncode", "told"),
    [
        (b"exit 0", 0, 0),
        (b"exit 9", 137, -9),  # wait status of SIGKILL: bwrap reports 128 + 9
        (b"exit 35584", 139, 139),  # exit(139): a plain exit code
        (b"exit 9", 0, None),  # bwrap disagrees: the record is not believed
        (b"exit 0exit 0", 0, None),  # two records: none is believed
        (b"", 143, None),  # bwrap was killed before anything was told
        (b"lookup", 127, "not found"),
        (b"exec 8 ./x.sh", 127, "fork/exec ./x.sh: exec format error"),
        (b"exec 8 ./x.sh", 0, None),
    ],
)
def test_the_starters_report_is_believed_only_where_bwrap_agrees(
    record: bytes, returncode: int, told: Any
) -> None:
    reported = shim_outcome(record, returncode, "./x.sh")
    if isinstance(told, str):
        assert isinstance(reported, LaunchError) and told in str(reported)
    else:
        assert reported == told


# -- output ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_output_that_is_not_utf8_has_one_replacement_per_byte(mode: str, tmp_path: Path) -> None:
    script = r"printf 'A\342\202xB\360\237\230C\355\240\200D\n'; printf 'E\377\376x\n' >&2"
    result = _run(mode, _workspace(tmp_path), ["/bin/sh", "-c", script])
    assert result.stdout_tail == "A\ufffd\ufffdxB\ufffd\ufffd\ufffdC\ufffd\ufffd\ufffdD\n"
    assert result.stderr_tail == "E\ufffd\ufffdx\n"


# -- a whole run, read as PVYai's report ----------------------------------------------------

AGENT = """\
case "$1" in
  signal) kill -TERM $$ ;;
  exit143) exit 143 ;;
  *) echo changed > a.txt ;;
esac
"""


def _command(command_id: str, *argv: str) -> dict[str, Any]:
    return {"id": command_id, "name": command_id, "command": list(argv)}


def _pvyai_run(tmp_path: Path, mode: str, tasks: list[dict[str, Any]], agent: str) -> dict:
    root = tmp_path / "suite-checkout"
    (root / "fx").mkdir(parents=True)
    (root / "fx" / "a.txt").write_text("a\n")
    (root / "fx" / "noshebang.sh").write_text(NO_SHEBANG)
    (root / "fx" / "noshebang.sh").chmod(0o755)
    (root / "agent.sh").write_text(AGENT)
    (root / "noshebang-agent.sh").write_text(NO_SHEBANG)
    (root / "noshebang-agent.sh").chmod(0o755)
    for task in tasks:
        task.setdefault("name", task["id"])
        task.setdefault("workspaceFixture", "fx")
        task.setdefault("expectedChangedFiles", ["a.txt"])
    suite = root / "suite.json"
    suite.write_text(json.dumps({"id": "exec", "name": "exec", "tasks": tasks}))
    report_dir = tmp_path / "report"
    command = agent.format(root=root)
    main(
        [
            "run", str(suite), "--agent-command", command, "--isolation", mode,
            "--report-dir", str(report_dir), "--work-root", str(tmp_path / "work"),
            "--pvyai-report", "--concurrency", "1",
        ]
    )  # fmt: skip
    benchmark = json.loads((report_dir / "agent-eval-report.json").read_text())
    return {task["taskId"]: task for task in benchmark["tasks"]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.slow
def test_verification_commands_start_and_end_as_in_pvyai(mode: str, tmp_path: Path) -> None:
    commands = {
        "noshebang": _command("c", "./noshebang.sh"),
        "killed": _command("c", "sh", "-c", "kill -TERM $$"),
        "abort": _command("c", sys.executable, "-c", "import os; os.abort()"),
        "exits153": _command("c", "sh", "-c", "exit 153"),
        "badutf8": _command("c", "sh", "-c", r"printf 'a\377b\342\202x\n'; exit 3"),
    }
    tasks = [
        {"id": name, "prompt": "edit", "verificationCommands": [command]}
        for name, command in commands.items()
    ]
    # A NUL byte fails that command's start; the task's other checks are still scored.
    tasks.append(
        {
            "id": "nul",
            "prompt": "edit",
            "verificationCommands": [_command("c", "echo", "a\0b"), _command("ok", "true")],
        }
    )
    tasks_by_id = _pvyai_run(tmp_path, mode, tasks, "/bin/sh {root}/agent.sh {{task_id}}")
    results = {
        task_id: {r["id"]: r for r in task["report"]["results"]}
        for task_id, task in tasks_by_id.items()
    }

    def command(task_id: str, check_id: str = "c") -> tuple[Any, ...]:
        result = results[task_id][check_id]
        return result["status"], result.get("exitCode"), result.get("message")

    assert command("noshebang") == ("error", -1, "fork/exec ./noshebang.sh: exec format error")
    assert command("killed") == ("fail", -1, None)
    assert command("abort") == ("fail", -1, None)
    assert command("exits153") == ("fail", 153, None)  # no word of a file-size limit
    assert command("nul") == ("error", -1, f"fork/exec {shutil.which('echo')}: invalid argument")
    assert command("nul", "ok")[:2] == ("pass", 0)
    assert results["nul"]["changed_files"]["status"] == "pass"
    assert tasks_by_id["nul"]["report"]["status"] == "error"
    assert results["badutf8"]["c"]["stdout"] == "a\ufffdb\ufffd\ufffdx\n"


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_a_signal_ends_or_that_cannot_start_blocks_its_task_as_in_pvyai(
    mode: str, tmp_path: Path
) -> None:
    tasks = [
        {"id": "signal", "prompt": "p", "verificationCommands": [_command("ok", "true")]},
        {"id": "exit143", "prompt": "p", "verificationCommands": [_command("ok", "true")]},
        {"id": "fine", "prompt": "p", "verificationCommands": [_command("ok", "true")]},
    ]
    by_id = _pvyai_run(tmp_path, mode, tasks, "/bin/sh {root}/agent.sh {{task_id}}")

    def blocked(task_id: str) -> tuple[Any, ...]:
        task = by_id[task_id]
        messages = {r.get("message") for r in task["report"]["results"]}
        return task["agent"]["exitCode"], task["report"]["status"], messages

    assert blocked("signal") == (-1, "blocked", {"run blocked: agent exited with code -1"})
    assert blocked("exit143") == (143, "blocked", {"run blocked: agent exited with code 143"})
    assert by_id["fine"]["report"]["status"] == "pass"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("agent", "prompt", "why"),
    [
        ("{root}/noshebang-agent.sh {{prompt}}", "p", "exec format error"),
        ("/bin/sh {root}/agent.sh {{prompt}}", "echo changed > a.txt\0", "invalid argument"),
    ],
    ids=["no-shebang", "nul-in-prompt"],
)
def test_an_agent_whose_start_fails_blocks_its_task_with_gos_reason(
    mode: str, agent: str, prompt: str, why: str, tmp_path: Path
) -> None:
    tasks = [{"id": "t", "prompt": prompt, "verificationCommands": [_command("ok", "true")]}]
    task = _pvyai_run(tmp_path, mode, tasks, agent)["t"]
    program = agent.format(root=tmp_path / "suite-checkout").split()[0]
    reason = f"fork/exec {program}: {why}"
    assert (task["agent"]["exitCode"], task["agent"].get("error")) == (-1, reason)
    assert task["report"]["status"] == "blocked"
    assert {r["message"] for r in task["report"]["results"]} == {f"run blocked: {reason}"}
