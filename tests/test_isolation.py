"""The OS sandbox (bubblewrap) against the attacks a hostile pull request can mount.

The agent under test and the verification commands of a task run the same attack script:
read every process's environment (assay's tokens), append to $GITHUB_ENV, drop a `.pth`
into site-packages, overwrite the suite's fixture, forge a results.jsonl line, write into
the host's /tmp, and leave a double-forked daemon behind. assay runs as a real
subprocess (so its /proc/<pid>/environ holds the tokens from its start), with bwrap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path

import pytest

from assay.isolation.bwrap import probe_bwrap
from assay.runner.results import read_results
from assay.runner.signing import load_key
from tests.requires import no_bwrap_reason

BWRAP, WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason=no_bwrap_reason(WHY_NOT))

TOKEN = "ghs_" + "T0ken" * 8
RUNTIME_TOKEN = "actions-runtime-" + "r" * 24
SERVICE_TOKEN = "svc-" + "s" * 24
DB_PASSWORD = "hunter2hunter2"

ATTACK = r"""
import json, os, subprocess, sys
from pathlib import Path

# The canary comes reversed: the suite (and so the report, which records each command)
# never holds it as written, only the environment of assay does.
role, canary = sys.argv[1], sys.argv[2][::-1]
found = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            text = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if canary in text:
            found.append(pid)
print("CANARY-SEEN" if found else "canary not seen", flush=True)
if os.environ.get("MY_SERVICE_TOKEN") or "hunter2" in os.environ.get("DATABASE_URL", ""):
    print("CREDENTIAL-SEEN", flush=True)
attempts = json.loads(Path(sys.argv[3]).read_text())
for path, text in attempts.items():
    try:
        with open(path, "a") as out:
            out.write(text)
        print(f"WROTE {path}", flush=True)
    except OSError as exc:
        print(f"refused {path}: {exc.strerror}", flush=True)
# A daemon: double fork, new session, outliving its parent.
DAEMON = "import os, time\nif os.fork(): os._exit(0)\nos.setsid()\ntime.sleep(%s)"
subprocess.Popen([sys.executable, "-c", DAEMON % sys.argv[4]], start_new_session=True)
"""


def survivors(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(pid))
    return found


def build_project(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    root = tmp_path / "suite-checkout"
    fixture = root / "fixtures" / "calc"
    fixture.mkdir(parents=True)
    (fixture / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "attack.py").write_text(ATTACK)
    tag = uuid.uuid4().hex[:10]
    site_packages = Path(sysconfig.get_paths()["purelib"])
    victims = {
        "github_env": tmp_path / "runner" / "github_env",
        "pth": site_packages / f"assay_attack_{tag}.pth",
        "fixture": fixture / "calc.py",
        "results": tmp_path / "report" / "results.jsonl",
        "host_tmp": Path("/tmp") / f"assay-escape-{tag}",
    }
    victims["github_env"].parent.mkdir()
    victims["github_env"].write_text("")
    return root, victims


def suite(root: Path, victims: dict[str, Path], *, canary: str, sleep: str) -> Path:
    attempts = {
        str(victims["github_env"]): "LD_PRELOAD=/tmp/evil.so\n",
        str(victims["pth"]): "import os; os._exit(0)\n",
        str(victims["fixture"]): "\ndef add(a, b): return a + b\n",
        str(victims["results"]): '{"id": "calc/attack", "status": "pass"}\n',
        str(victims["host_tmp"]): "escaped\n",
    }
    (root / "attempts.json").write_text(json.dumps(attempts))
    argv = [str(root / "attack.py"), "command", canary[::-1], str(root / "attempts.json"), sleep]
    task = {
        "id": "attack",
        "name": "attack",
        "difficulty": "easy",
        "prompt": "attack",
        "workspaceFixture": "fixtures/calc",
        "verificationCommands": [
            {"id": "attack", "name": "attack", "command": [sys.executable, *argv]},
        ],
        "expectedChangedFiles": ["calc.py"],
    }
    path = root / "calc.json"
    path.write_text(json.dumps({"id": "calc", "name": "calc", "tasks": [task]}))
    (root / "agent-args.json").write_text(json.dumps(argv))
    return path


def run_assay(
    tmp_path: Path, suite_file: Path, argv: list[str], *extra: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    agent = " ".join([sys.executable, *(f"'{a}'" for a in argv)])
    command = [
        sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())",
        "run", str(suite_file), "--agent-command", agent,
        "--report-dir", str(tmp_path / "report"), "--work-root", str(tmp_path / "work"),
        "--concurrency", "1", *extra,
    ]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def hostile_environment(tmp_path: Path, victims: dict[str, Path], canary: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(
        GITHUB_TOKEN=TOKEN,
        ACTIONS_RUNTIME_TOKEN=RUNTIME_TOKEN,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN=RUNTIME_TOKEN + "id",
        GITHUB_ENV=str(victims["github_env"]),
        # Belongs to the job, so the agent never gets it: seeing it means reading assay.
        INPUT_CANARY=canary,
        MY_SERVICE_TOKEN=SERVICE_TOKEN,
        DATABASE_URL=f"postgres://app:{DB_PASSWORD}@db.internal/app",
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    return env


@needs_bwrap
@pytest.mark.slow
def test_the_sandbox_stops_every_attack_of_agent_and_verification_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, victims = build_project(tmp_path)
    canary = "canary-" + uuid.uuid4().hex
    sleep = f"31{uuid.uuid4().int % 1000}.25"
    suite_file = suite(root, victims, canary=canary, sleep=sleep)
    argv = json.loads((root / "agent-args.json").read_text())
    argv[1] = "agent"
    fixture_before = victims["fixture"].read_bytes()
    env = hostile_environment(tmp_path, victims, canary)
    try:
        done = run_assay(tmp_path, suite_file, argv, "--isolation", "bwrap", env=env)
    finally:
        for path in (victims["pth"], victims["host_tmp"]):
            path.unlink(missing_ok=True)  # never leave a poisoned interpreter behind
    assert done.returncode == 1, done.stderr
    report_dir = tmp_path / "report"
    report = json.loads((report_dir / "report.json").read_text())
    assert report["run"]["isolation"]["mode"] == "bwrap"

    # Every output file: no token, no key, no password; the canary never seen.
    outputs = [p for p in report_dir.rglob("*") if p.is_file()]
    agent_out = next(p for p in outputs if p.name == "agent.stdout").read_text()
    command_log = next(p for p in outputs if p.name == "attack.log").read_text()
    for text in (agent_out, command_log):
        assert "canary not seen" in text and "CANARY-SEEN" not in text
        # A write may land in a private tmpfs (the masked report dir, /tmp): never on the host.
        assert "refused " in text
    assert "CREDENTIAL-SEEN" not in command_log
    for path in outputs:
        data = path.read_bytes()
        for secret in (TOKEN, RUNTIME_TOKEN, SERVICE_TOKEN, DB_PASSWORD, canary):
            assert secret.encode() not in data, (path, secret)

    assert victims["github_env"].read_text() == ""
    assert not victims["pth"].exists()
    assert not victims["host_tmp"].exists()
    assert victims["fixture"].read_bytes() == fixture_before
    assert survivors(sleep) == []
    # The stream holds only what assay wrote, and every line of it verifies.
    lines = victims["results"].read_text().splitlines()
    assert len(lines) == 1
    monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
    key = load_key(report_dir)
    assert key is not None
    resumed = read_results(victims["results"], verify=True, key=key)
    assert list(resumed) == [("calc/attack", None)]


@needs_bwrap
@pytest.mark.slow
def test_without_the_sandbox_the_same_attacks_get_through_which_is_why_it_warns(
    tmp_path: Path,
) -> None:
    # The control experiment: the attacks above are real, and `none` says so loudly.
    root, victims = build_project(tmp_path)
    canary = "canary-" + uuid.uuid4().hex
    sleep = f"32{uuid.uuid4().int % 1000}.25"
    del victims["pth"]  # never poison the test interpreter, not even here
    suite_file = suite(
        root, {**victims, "pth": tmp_path / "not-site.pth"}, canary=canary, sleep=sleep
    )
    argv = json.loads((root / "agent-args.json").read_text())
    env = hostile_environment(tmp_path, victims, canary)
    try:
        done = run_assay(tmp_path, suite_file, argv, "--isolation", "none", env=env)
        assert "WARNING: agents and verification commands run WITHOUT an OS sandbox" in done.stderr
        assert victims["github_env"].read_text() != ""
        report = json.loads((tmp_path / "report" / "report.json").read_text())
        assert report["run"]["isolation"]["mode"] == "none"
        assert "WITHOUT an OS sandbox" in report["run"]["isolation"]["warning"]
        summary = (tmp_path / "report" / "summary.md").read_text()
        assert "WITHOUT an OS sandbox" in summary
        # Redaction holds even so: no token in any output file.
        for path in (tmp_path / "report").rglob("*"):
            if path.is_file():
                for secret in (TOKEN, RUNTIME_TOKEN, SERVICE_TOKEN, DB_PASSWORD):
                    assert secret.encode() not in path.read_bytes(), (path, secret)
    finally:
        victims["host_tmp"].unlink(missing_ok=True)
        for pid in survivors(sleep):
            os.kill(pid, 9)


def test_bwrap_asked_for_but_missing_is_exit_2(tmp_path: Path) -> None:
    root, victims = build_project(tmp_path)
    suite_file = suite(root, victims, canary="c", sleep="0")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env["PATH"] = str(tmp_path / "empty-path")  # no bwrap on it
    command = [
        sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())",
        "run", str(suite_file), "--agent-command", shutil.which("true"), "--isolation", "bwrap",
        "--report-dir", str(tmp_path / "report"),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--isolation bwrap: bwrap (bubblewrap) is not installed" in done.stderr
    assert "Traceback" not in done.stderr


def test_auto_without_bwrap_falls_back_to_none_with_the_warning(tmp_path: Path) -> None:
    from assay.isolation.bwrap import resolve_sandboxing

    saved = os.environ["PATH"]
    os.environ["PATH"] = str(tmp_path)
    try:
        sandboxing = resolve_sandboxing("auto", masked=[])
    finally:
        os.environ["PATH"] = saved
    assert sandboxing.mode == "none"
    assert sandboxing.warning is not None and "bwrap (bubblewrap) is not installed" in (
        sandboxing.warning
    )


@needs_bwrap
def test_network_off_leaves_only_loopback(tmp_path: Path) -> None:
    import asyncio

    from assay.isolation.bwrap import resolve_sandboxing
    from assay.isolation.processes import run_command

    sandboxing = resolve_sandboxing("bwrap", masked=[], command_network=False)
    confinement = sandboxing.for_command(tmp_path)
    assert confinement is not None and not confinement.network
    script = "import socket; print(sorted(n for _, n in socket.if_nameindex()))"
    result = asyncio.run(
        run_command(
            [sys.executable, "-c", script],
            cwd=tmp_path,
            env=dict(os.environ),
            timeout_s=30,
            stdout_path=tmp_path / "out",
            stderr_path=tmp_path / "err",
            isolation=confinement,
        )
    )
    assert result.exit_code == 0, result.stderr_tail
    assert (tmp_path / "out").read_text().strip() == "['lo']"


def test_assay_makes_itself_undumpable() -> None:
    script = (
        "import ctypes; from assay.isolation.bwrap import harden_process\n"
        "assert harden_process()\n"
        "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"  # PR_GET_DUMPABLE
    )
    if not sys.platform.startswith("linux"):
        pytest.skip("prctl is Linux only")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "0"


def test_verification_commands_get_no_credential_shaped_variables_unless_passed() -> None:
    from assay._util.secrets import scrubbed_environ

    env = {
        "PATH": "/bin",
        "MY_SERVICE_TOKEN": "t" * 20,
        "DEPLOY_KEY": "k" * 20,
        "APP_SECRET": "s" * 20,
        "DB_PASSWORD_FILE": "/run/x",
        "DATABASE_URL": "postgres://u:pw-long-enough@h/db",
        "PLAIN_URL": "https://example.com/x",
        "GITHUB_TOKEN": "g" * 20,
    }
    assert scrubbed_environ(env) == {"PATH": "/bin", "PLAIN_URL": "https://example.com/x"}
    passed = scrubbed_environ(env, pass_names=["DATABASE_URL", "GITHUB_TOKEN"])
    # What belongs to the CI job never passes, whatever is asked.
    assert set(passed) == {"PATH", "PLAIN_URL", "DATABASE_URL"}


def test_redaction_covers_remembered_secrets_and_url_passwords() -> None:
    from assay._util.secrets import redact, remember_secret

    remember_secret("input-key-" + "x" * 12)
    text = redact("a input-key-xxxxxxxxxxxx b", {})
    assert text == "a [redacted] b"
    env = {"DATABASE_URL": "postgres://u:pw-long-enough@h/db"}
    assert "pw-long-enough" not in redact("password pw-long-enough leaked", env)


def test_add_mask_is_printed_only_on_a_runner(capsys: pytest.CaptureFixture[str]) -> None:
    from assay._cli.ci import _mask_secrets
    from assay._util.secrets import redact

    _mask_secrets({"INPUT_ANTHROPIC-API-KEY": "sk-ant-" + "a" * 20})
    assert "::add-mask::" not in capsys.readouterr().out
    assert redact("sk-ant-" + "a" * 20) == "[redacted]"  # still redacted by assay itself
    _mask_secrets({"GITHUB_ACTIONS": "true", "INPUT_ANTHROPIC-API-KEY": "sk-ant-" + "b" * 20})
    assert capsys.readouterr().out == f"::add-mask::sk-ant-{'b' * 20}\n"


def test_bwrap_is_on_the_ci_apt_line() -> None:
    ci = (Path(__file__).parents[1] / ".ci" / "run").read_text()
    assert "bubblewrap" in ci
    assert shutil.which("bash")


def _sandboxed_agent_run(tmp_path: Path, kind: str, body: str, *, timeout_s: float = 30.0):  # type: ignore[no-untyped-def]
    import asyncio

    from assay.agents.command import CommandAgent
    from assay.isolation.bwrap import resolve_sandboxing
    from assay.options import RunOptions
    from assay.subject import AttemptContext
    from tests.test_command_agent import _agent, _case, _sandbox

    script = _agent(tmp_path, body)
    # tmp_path stands for the suite's checkout (no git): masked, the script shown from it.
    sandboxing = resolve_sandboxing("bwrap", masked=[tmp_path])
    ctx = AttemptContext(
        case=_case(kind, tmp_path),
        sandbox=_sandbox(tmp_path, kind, diff="diff --git a/app.py b/app.py\n"),
        model="test/model",
        judge_model=None,
        timeout_s=timeout_s,
        attempt=0,
        artifacts_dir=tmp_path / "artifacts",
        agent_command=(sys.executable, str(script)),
    )
    agent = CommandAgent(options=RunOptions(sandboxing=sandboxing))
    return asyncio.run(agent.run(ctx))


@needs_bwrap
def test_a_sandboxed_review_agent_reads_its_diff_and_writes_its_findings(tmp_path: Path) -> None:
    body = """
    diff = pathlib.Path(os.environ["ASSAY_DIFF_FILE"]).read_text()
    finding = {"severity": "high", "title": diff.split()[2], "description": os.environ["HOME"]}
    pathlib.Path(os.environ["ASSAY_FINDINGS_FILE"]).write_text(json.dumps({"findings": [finding]}))
    """
    output = _sandboxed_agent_run(tmp_path, "review", body)
    assert output.findings[0]["title"] == "a/app.py"
    assert output.findings[0]["description"] == os.environ["HOME"]  # a private tmpfs there


@needs_bwrap
@pytest.mark.slow
def test_a_timed_out_sandboxed_agent_leaves_no_survivor(tmp_path: Path) -> None:
    from assay.errors import AgentError

    marker = f"33{uuid.uuid4().int % 1000}.75"
    body = f"""
    import subprocess, time
    daemon = "import os, time\\nif os.fork(): os._exit(0)\\nos.setsid()\\ntime.sleep({marker})"
    subprocess.Popen([sys.executable, "-c", daemon], start_new_session=True)
    time.sleep(600)
    """
    with pytest.raises(AgentError, match="timed out"):
        _sandboxed_agent_run(tmp_path, "task", body, timeout_s=1.0)
    assert survivors(marker) == []


@needs_bwrap
def test_a_case_sees_its_own_sandbox_not_the_others_beside_it(tmp_path: Path) -> None:
    import asyncio

    from assay.isolation.bwrap import resolve_sandboxing
    from assay.isolation.processes import run_command

    work_root = tmp_path / "work-root"
    mine, theirs = work_root / "case-a", work_root / "case-b"
    for directory in (mine, theirs):
        directory.mkdir(parents=True)
        (directory / "answer.txt").write_text(directory.name)
    sandboxing = resolve_sandboxing("bwrap", masked=[work_root])
    script = f"import os; print(sorted(os.listdir({str(work_root)!r})))"
    result = asyncio.run(
        run_command(
            [sys.executable, "-c", script],
            cwd=mine,
            env=dict(os.environ),
            timeout_s=30,
            stdout_path=tmp_path / "out",
            stderr_path=tmp_path / "err",
            isolation=sandboxing.for_agent(mine),
        )
    )
    assert result.exit_code == 0, result.stderr_tail
    assert (tmp_path / "out").read_text().strip() == "['case-a']"
