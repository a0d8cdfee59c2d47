"""The sandbox's resource limits and its /sys, against hostile programs (real bwrap).

The kernel never applies RLIMIT_NPROC to root, so where the tests run as root the fork
bomb runs as `nobody` (bwrap started through `setpriv`), as assay itself runs on GitHub's
runners: an ordinary user, whose sandbox gets its own user namespace and process count.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.grading.task_checks import score_workspace
from assay.isolation.bwrap import Sandboxing, probe_bwrap, resolve_sandboxing
from assay.isolation.limits import (
    DEFAULT_LIMITS,
    UNLIMITED,
    Limits,
    limit_argv,
    limits_from_environ,
)
from assay.isolation.processes import CommandResult, run_command
from assay.suites.case import TaskSpec, VerificationCommand
from tests.requires import no_bwrap_reason

BWRAP, WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason=no_bwrap_reason(WHY_NOT))
PRLIMIT = shutil.which("prlimit")
SMALL = Limits(max_processes=64, max_file_size=1024 * 1024, tmp_size=2 * 1024 * 1024)
PATH = {"PATH": "/usr/bin:/bin"}


def _count(marker: str) -> int:
    found = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                found += marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
    return found


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A workspace an unprivileged sandbox can write (pytest's tmp dirs are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="assay-limits-", dir="/tmp"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _unprivileged(open_dir: Path, limits: Limits = SMALL) -> Sandboxing:
    """A bwrap sandbox whose processes are not root on the host (see the module docstring)."""
    assert BWRAP is not None
    if os.geteuid() != 0:
        return Sandboxing(mode="bwrap", bwrap=BWRAP, limits=limits, prlimit=PRLIMIT)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and no setpriv to drop to an ordinary user")
    # The sandbox's first program, the exec shim, runs on assay's interpreter, which
    # `nobody` may not reach (under /root): a system one stands in.
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("running as root and no system python3 that nobody can run")
    bwrap = str(open_dir / "bwrap-as-nobody")
    drop = f"{setpriv} --reuid=65534 --regid=65534 --clear-groups --"
    Path(bwrap).write_text(f'#!/bin/sh\nexec {drop} {BWRAP} "$@"\n')
    os.chmod(bwrap, 0o755)
    return Sandboxing(mode="bwrap", bwrap=bwrap, limits=limits, prlimit=PRLIMIT, python=python)


def _run(sandboxing: Sandboxing, workspace: Path, argv: list[str], timeout_s: float = 20):
    logs = Path(tempfile.mkdtemp(prefix="assay-limits-logs-"))
    try:
        result: CommandResult = asyncio.run(
            run_command(
                argv,
                cwd=workspace,
                env=PATH,
                timeout_s=timeout_s,
                stdout_path=logs / "out",
                stderr_path=logs / "err",
                isolation=sandboxing.for_command(workspace, argv),
            )
        )
        return result
    finally:
        shutil.rmtree(logs, ignore_errors=True)


# -- the settings ---------------------------------------------------------------------------


def test_the_variables_set_the_limits_and_bad_values_name_the_variable() -> None:
    limits = limits_from_environ(
        {
            "ASSAY_SANDBOX_MAX_PROCESSES": "512",
            "ASSAY_SANDBOX_MAX_FILE_SIZE": "unlimited",
            "ASSAY_SANDBOX_TMP_SIZE": "512M",
        }
    )
    assert limits == Limits(max_processes=512, max_file_size=UNLIMITED, tmp_size=512 * 1024**2)
    assert limits_from_environ({"ASSAY_SANDBOX_TMP_SIZE": ""}) == DEFAULT_LIMITS
    assert limits_from_environ({"ASSAY_SANDBOX_MAX_FILE_SIZE": "2GiB"}).max_file_size == 2 * 1024**3
    for variable, text in (
        ("ASSAY_SANDBOX_MAX_PROCESSES", "many"),
        ("ASSAY_SANDBOX_MAX_PROCESSES", "0"),
        ("ASSAY_SANDBOX_TMP_SIZE", "unlimited"),
        ("ASSAY_SANDBOX_MAX_FILE_SIZE", "-1"),
    ):
        with pytest.raises(ConfigError, match=f"{variable}={text!r}"):
            limits_from_environ({variable: text})


def test_tool_assay_sets_the_limits_and_the_variables_beat_it(tmp_path: Path) -> None:
    from assay.suites.config import load_config

    (tmp_path / "pyproject.toml").write_text(
        '[tool.assay]\nsandbox_max_processes = 8192\nsandbox_max_file_size = "16G"\n'
        'sandbox_tmp_size = "1G"\n'
    )
    config = load_config(tmp_path)
    assert config is not None
    limits = limits_from_environ({}, config.sandbox_limits)
    assert limits == Limits(max_processes=8192, max_file_size=16 * 1024**3, tmp_size=1024**3)
    env = {"ASSAY_SANDBOX_MAX_PROCESSES": "100"}
    assert limits_from_environ(env, config.sandbox_limits).max_processes == 100


def test_a_bad_limit_in_tool_assay_names_its_line(tmp_path: Path) -> None:
    from assay.suites.config import load_config

    (tmp_path / "pyproject.toml").write_text('[tool.assay]\n\nsandbox_tmp_size = "lots"\n')
    with pytest.raises(ConfigError, match="sandbox_tmp_size='lots'") as caught:
        load_config(tmp_path)
    assert caught.value.location is not None and caught.value.location.line == 3


def test_a_bad_limit_stops_the_run_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_SANDBOX_MAX_PROCESSES", "lots")
    with pytest.raises(ConfigError, match="ASSAY_SANDBOX_MAX_PROCESSES"):
        resolve_sandboxing("none", masked=[])


def test_the_defaults_are_generous_and_never_exceed_assays_own_hard_limits() -> None:
    assert DEFAULT_LIMITS.max_processes >= 4096
    assert DEFAULT_LIMITS.max_file_size >= 4 * 1024**3
    assert DEFAULT_LIMITS.tmp_size >= 4 * 1024**3
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    lowered = Limits(max_processes=UNLIMITED).within_hard_limits().max_processes
    assert lowered == (UNLIMITED if hard == resource.RLIM_INFINITY else hard)


def test_limits_are_set_by_the_sandboxes_first_program_without_preexec_fn(tmp_path: Path) -> None:
    assert limit_argv(SMALL, prlimit="/usr/bin/prlimit") == [
        "/usr/bin/prlimit",
        "--nproc=64:64",
        "--fsize=1048576:1048576",
        "--core=0:0",
        "--",
    ]
    sandboxing = Sandboxing(mode="bwrap", bwrap="/usr/bin/bwrap", limits=SMALL, prlimit="prlimit")
    confinement = sandboxing.for_command(tmp_path, ["true"])
    assert confinement is not None
    argv, _ = confinement.wrap(["true"], cwd=tmp_path, env={})
    rest = argv[argv.index("--") + 1 :]
    assert rest[0] == "prlimit" and rest[-1] == "true"
    at = argv.index("/tmp")
    assert argv[at - 3 : at] == ["--size", str(SMALL.tmp_size), "--tmpfs"]


# -- hostile programs -----------------------------------------------------------------------


@needs_bwrap
def test_a_fork_bomb_is_held_to_the_process_limit_and_leaves_nothing(open_dir: Path) -> None:
    marker = f"bomb-{uuid.uuid4().hex}"
    bomb = f"b() {{ b | b & }}; while :; do b; sleep 0.05; done # {marker}"
    peak = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _count(marker))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    try:
        result = _run(_unprivileged(open_dir), open_dir, ["/bin/sh", "-c", bomb], timeout_s=3)
    finally:
        done.set()
        watcher.join()
    # dash gives up at the first fork it cannot make; when the first process ends, the
    # sandbox's PID namespace ends, and every process of the bomb with it.
    assert time.monotonic() - started < 15
    assert "cannot fork" in result.stderr_tail.lower()
    assert 0 < peak <= SMALL.max_processes
    time.sleep(0.2)
    assert _count(marker) == 0


@needs_bwrap
@pytest.mark.slow
def test_the_process_limit_counts_each_sandbox_on_its_own(open_dir: Path) -> None:
    """Two sandboxes of the same user each get the whole limit (their own user namespace)."""
    spawn = "i=0; while [ $i -lt 40 ]; do sleep 2 & i=$((i+1)); done; wait; echo spawned"
    sandboxing = _unprivileged(open_dir)

    async def both() -> list[CommandResult]:
        logs = Path(tempfile.mkdtemp(prefix="assay-limits-logs-"))
        runs = [
            run_command(
                ["/bin/sh", "-c", spawn],
                cwd=open_dir,
                env=PATH,
                timeout_s=20,
                stdout_path=logs / f"out{i}",
                stderr_path=logs / f"err{i}",
                isolation=sandboxing.for_command(open_dir, ["/bin/sh"]),
            )
            for i in range(2)
        ]
        try:
            return list(await asyncio.gather(*runs))
        finally:
            shutil.rmtree(logs, ignore_errors=True)

    for result in asyncio.run(both()):
        assert (result.exit_code, result.stdout_tail.strip()) == (0, "spawned"), result


@needs_bwrap
def test_a_huge_file_stops_at_the_size_limit(open_dir: Path) -> None:
    script = (
        "dd if=/dev/zero of=huge bs=64k count=1000 2>/dev/null; echo dd=$?; "
        "dd if=/dev/zero of=/tmp/huge bs=64k count=1000 2>/dev/null; echo tmp=$?"
    )
    result = _run(_unprivileged(open_dir), open_dir, ["/bin/sh", "-c", script])
    assert result.stdout_tail.split() == ["dd=153", "tmp=153"]  # 128 + SIGXFSZ
    assert (open_dir / "huge").stat().st_size == SMALL.max_file_size


@needs_bwrap
def test_tmp_and_home_are_size_capped_tmpfs(open_dir: Path) -> None:
    roomy = Limits(max_processes=64, max_file_size=UNLIMITED, tmp_size=2 * 1024 * 1024)
    script = (
        'dd if=/dev/zero of=/tmp/fill bs=64k count=100 2>&1 | grep -c "No space"; '
        'dd if=/dev/zero of="$HOME/fill" bs=64k count=100 2>&1 | grep -c "No space"'
    )
    result = _run(_unprivileged(open_dir, roomy), open_dir, ["/bin/sh", "-c", script])
    assert result.stdout_tail.split() == ["1", "1"], result


@needs_bwrap
def test_without_prlimit_a_python_shim_sets_the_same_limits(tmp_path: Path) -> None:
    sandboxing = Sandboxing(
        mode="bwrap", bwrap=BWRAP, limits=SMALL, prlimit=None, exposed=_python_exposed()
    )
    script = "grep -E 'processes|file size|core file' /proc/self/limits"
    result = _run(sandboxing, tmp_path, ["/bin/sh", "-c", script])
    assert result.exit_code == 0, result.stderr_tail
    limits = {
        " ".join(line.split()[:-3]): line.split()[-3:-1] for line in result.stdout_tail.splitlines()
    }
    assert limits == {
        "Max file size": [str(SMALL.max_file_size)] * 2,
        "Max core file size": ["0", "0"],
        "Max processes": ["64", "64"],
    }


def _python_exposed() -> tuple[Path, ...]:
    import sys

    return tuple({Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix)})


@needs_bwrap
@pytest.mark.slow
def test_a_runaway_verification_command_fails_its_check_with_the_reason_and_the_rest_run(
    open_dir: Path,
) -> None:
    workspace = open_dir / "ws"
    workspace.mkdir()
    workspace.chmod(0o777)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    for args in (["add", "-A"], ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=workspace, check=True
        )
    subprocess.run(["chmod", "-R", "a+rwX", str(workspace)], check=True)
    # A bomb that does not give up: every process forks again and again until the timeout.
    bomb = "import os, time\nwhile True:\n    try: os.fork()\n    except OSError: time.sleep(0.01)"
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 for the retrying fork bomb")
    spec = TaskSpec(
        prompt="p",
        workspace=workspace,
        commands=(
            VerificationCommand(id="writer", name="w", argv=("dd", "if=/dev/zero", "of=out.bin")),
            VerificationCommand(id="bomb", name="b", argv=(python, "-c", bomb), timeout_s=2),
            VerificationCommand(id="fine", name="f", argv=("/bin/true",)),
        ),
    )
    grade = asyncio.run(
        score_workspace(
            spec, workspace, baseline=None, trace_events=[], sandboxing=_unprivileged(open_dir)
        )
    )
    by_id = {check.id: check for check in grade.checks}
    assert by_id["writer"].status == "fail"
    assert "SIGXFSZ" in by_id["writer"].message and "1 MiB" in by_id["writer"].message
    # A command its timeout kills fails with exit code -1, as PVYai reports it.
    assert (by_id["bomb"].status, (by_id["bomb"].model_extra or {})["timedOutAfterS"]) == (
        "fail",
        2,
    )
    assert by_id["fine"].status == "pass"
    assert grade.status == "fail" and "writer" in grade.reason and "bomb" in grade.reason
    time.sleep(0.2)
    assert _count("os.fork()") == 0


# -- /sys -----------------------------------------------------------------------------------


@needs_bwrap
def test_sys_shows_only_what_runtimes_size_themselves_with(tmp_path: Path) -> None:
    sandboxing = resolve_sandboxing("bwrap", masked=[])
    script = (
        "ls /sys; ls /sys/class/net 2>&1 | head -1; ls /sys/fs/cgroup 2>&1 | head -1; "
        "ls /sys/class/dmi 2>&1 | head -1; cat /sys/devices/system/cpu/online; "
        "touch /sys/x 2>/dev/null || echo read-only"
    )
    result = _run(sandboxing, tmp_path, ["/bin/sh", "-c", script])
    lines = result.stdout_tail.splitlines()
    assert lines[:2] == ["devices", "kernel"]
    assert all("No such file" in line for line in lines[2:5]), lines
    assert lines[5] == Path("/sys/devices/system/cpu/online").read_text().strip()
    assert lines[6] == "read-only"


@needs_bwrap
@pytest.mark.slow
def test_common_tools_still_work_with_the_limits_and_sys_masked(tmp_path: Path) -> None:
    import sys

    sandboxing = resolve_sandboxing("bwrap", masked=[])
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.txt").write_text("a\n")
    python = _run(sandboxing, tmp_path, [sys.executable, "-c", "import os; print(os.cpu_count())"])
    assert (python.exit_code, python.stdout_tail.strip()) == (0, str(os.cpu_count()))
    git = _run(sandboxing, tmp_path, ["git", "status", "--porcelain"])
    assert (git.exit_code, git.stdout_tail.strip()) == (0, "?? a.txt")
    if shutil.which("node"):
        node = _run(
            sandboxing, tmp_path, ["node", "-e", "console.log(require('os').cpus().length)"]
        )
        assert (node.exit_code, node.stdout_tail.strip()) == (0, str(os.cpu_count()))
    if shutil.which("go"):
        go = _run(sandboxing, tmp_path, ["go", "env", "GOROOT"])
        assert go.exit_code == 0, go.stderr_tail


# -- a whole run ----------------------------------------------------------------------------

# The hog dies of the signal, as a program that writes the file itself does (a shell's
# `exit $?` would be a plain exit 153, which says nothing of a limit).
AGENT = """\
if [ "$1" = hog ]; then head -c 5000000 /dev/zero > big.bin || kill -XFSZ $$; fi
printf 'def add(a, b):\\n    return a + b\\n' > calc.py
"""


@needs_bwrap
@pytest.mark.slow
def test_a_run_goes_on_past_an_agent_the_size_limit_stopped(tmp_path: Path) -> None:
    """The file-size limit applies to root too, so this runs `assay run` as it is."""
    root = tmp_path / "suite-checkout"
    (root / "fixtures" / "calc").mkdir(parents=True)
    (root / "fixtures" / "calc" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "agent.sh").write_text(AGENT)
    tasks = [
        {
            "id": name,
            "name": name,
            "prompt": "fix add",
            "workspaceFixture": "fixtures/calc",
            "verificationCommands": [{"id": "ok", "name": "ok", "command": ["/bin/true"]}],
            "expectedChangedFiles": ["calc.py"],
        }
        for name in ("hog", "fine")
    ]
    suite_file = root / "calc.json"
    suite_file.write_text(json.dumps({"id": "calc", "name": "calc", "tasks": tasks}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env["ASSAY_SANDBOX_MAX_FILE_SIZE"] = "1M"
    command = [
        sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())",
        "run", str(suite_file), "--agent-command", f"/bin/sh {root / 'agent.sh'} {{task_id}}",
        "--report-dir", str(tmp_path / "report"), "--work-root", str(tmp_path / "work"),
        "--isolation", "bwrap", "--keep-workspaces",
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    cases = {case["id"]: case for case in report["cases"]}
    assert cases["calc/fine"]["status"] == "pass"
    hog = cases["calc/hog"]
    assert hog["status"] == "error"
    # PVYai's reason is what the agent said on stderr (the shell's word), else its exit code.
    assert "(killed by SIGXFSZ" in hog["reason"]
    assert "1 MiB (ASSAY_SANDBOX_MAX_FILE_SIZE)" in hog["reason"]
    big = [path for path in (tmp_path / "work").rglob("big.bin")]
    assert [path.stat().st_size for path in big] == [1024 * 1024]


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the kernel enforces the limit for other users")
def test_as_root_the_sandbox_is_counted_from_outside_and_stopped_past_the_limit(
    tmp_path: Path,
) -> None:
    """RLIMIT_NPROC does not bind root: run_command counts the namespace's processes."""
    marker = f"many-{uuid.uuid4().hex}"
    sandboxing = resolve_sandboxing("bwrap", masked=[], limits=Limits(max_processes=10))
    nap = f"29.{uuid.uuid4().int % 10**6}"  # names the sleeps apart from every other
    spawn = f"i=0; while [ $i -lt 30 ]; do sleep {nap} & i=$((i+1)); done; wait # {marker}"
    started = time.monotonic()
    result = _run(sandboxing, tmp_path, ["/bin/sh", "-c", spawn], timeout_s=20)
    assert time.monotonic() - started < 5 and not result.timed_out
    assert result.stopped == "stopped: more than 10 processes in the sandbox"
    assert "assay: stopped: more than 10 processes" in result.stderr_tail
    time.sleep(0.2)
    assert _count(marker) == 0 and _count(nap) == 0


@needs_bwrap
def test_a_sandbox_within_its_limit_is_left_alone(tmp_path: Path) -> None:
    sandboxing = resolve_sandboxing("bwrap", masked=[], limits=Limits(max_processes=20))
    spawn = "i=0; while [ $i -lt 5 ]; do sleep 0.3 & i=$((i+1)); done; wait; echo done"
    result = _run(sandboxing, tmp_path, ["/bin/sh", "-c", spawn])
    assert (result.exit_code, result.stdout_tail.strip(), result.stopped) == (0, "done", "")


@needs_bwrap
def test_home_spelled_with_a_trailing_slash_is_still_the_private_writable_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", f"{home}/")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandboxing = resolve_sandboxing("bwrap", masked=[])
    result = _run(sandboxing, workspace, ["/bin/sh", "-c", 'touch "$HOME/x" && echo ok'])
    assert (result.exit_code, result.stdout_tail.strip()) == (0, "ok"), result.stderr_tail
    assert not (home / "x").exists()  # a private tmpfs, not the host's HOME
