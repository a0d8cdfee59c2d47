"""`assay doctor [PATH...] [--json]`: what a run here would do, and why, before running it.

It reports the OS sandbox (bwrap, user namespaces, what `--isolation` would pick: the
run's own probe, `probe_bwrap`), each provider's credentials (variable names, never
values), git, which cases would be skipped and why (the suites loaded and planned as
`assay run` plans them, `runner.preflight`), and the GitHub Actions environment when run
inside one. Exit 0 when a run would score something, 1 when something blocks it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._cli.validate import problem_json
from assay.core.exit_codes import EXIT_GATE_FAILED, EXIT_PASS
from assay.errors import ConfigError, SandboxError
from assay.isolation.bwrap import probe_bwrap
from assay.isolation.git import run_git
from assay.models.providers import PROVIDERS
from assay.options import RunOptions
from assay.runner.preflight import preflight
from assay.runner.settings import resolve_settings
from assay.suites.load import SuiteLoadErrors, load_suites

if TYPE_CHECKING:
    from assay.suites.config import AssayConfig

__all__ = ["command", "diagnose"]

EXIT_READY = EXIT_PASS
EXIT_BLOCKED = EXIT_GATE_FAILED  # something stops a run here

_USERNS_FILES = (
    ("unprivileged_userns_clone", "/proc/sys/kernel/unprivileged_userns_clone", "0"),
    ("max_user_namespaces", "/proc/sys/user/max_user_namespaces", "0"),
    (
        "apparmor_restrict_unprivileged_userns",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        "1",
    ),
)
"""Kernel switches that forbid unprivileged user namespaces (bwrap's need), and the value
that forbids them."""

_ACTION_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN", "INPUT_GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN")


def command(args: argparse.Namespace) -> int:
    found = diagnose(args.paths, root=args.root)
    if args.json:
        json.dump(found, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(found))
    return EXIT_READY if found["ready"] else EXIT_BLOCKED


def diagnose(
    paths: list[str], *, root: str | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Everything doctor reports, as JSON-ready data; `ready` is the exit status."""
    env = os.environ if environ is None else environ
    blockers: list[str] = []
    cases, config = _cases(paths, root, env, blockers)
    sandbox = _sandbox(paths, config, env, blockers)
    return {
        "ready": not blockers,
        "blockers": blockers,
        "sandbox": sandbox,
        "credentials": _credentials(env),
        "git": _git(blockers),
        "cases": cases,
        "github_actions": _github_actions(env),
    }


def _sandbox(
    paths: list[str], config: AssayConfig | None, env: Mapping[str, str], blockers: list[str]
) -> dict[str, Any]:

    requested, source = _requested_isolation(paths, config, env)
    bwrap = shutil.which("bwrap")
    working, why_not = probe_bwrap() if requested != "none" or bwrap else (None, "")
    if requested == "none":
        picks, reason = "none", f"--isolation none ({source})"
    elif working is not None:
        picks, reason = "bwrap", "bwrap runs here"
    else:
        picks, reason = "none", why_not or "bwrap (bubblewrap) is not installed"
        if requested == "bwrap":
            blockers.append(f"--isolation bwrap ({source}), but {reason}")
    return {
        "bwrap": bwrap,
        "bwrap_works": working is not None,
        "why_not": None if working is not None else (why_not or None),
        "user_namespaces": _user_namespaces(),
        "isolation": requested,
        "isolation_from": source,
        "picks": picks,
        "reason": reason,
    }


def _requested_isolation(
    paths: list[str], config: AssayConfig | None, env: Mapping[str, str]
) -> tuple[str, str]:
    """What `--isolation` a plain `assay run` would ask for, and where that comes from."""

    try:
        settings = resolve_settings(RunOptions(paths=tuple(paths)), config=config, environ=env)
    except ConfigError:
        return "auto", "default"
    return settings.isolation, settings.sources.get("isolation", "default")


def _user_namespaces() -> dict[str, Any]:
    """Whether the kernel lets an unprivileged user make namespaces, and which switch says so."""
    switches: dict[str, str] = {}
    refused = []
    for name, path, forbids in _USERNS_FILES:
        try:
            value = Path(path).read_text().strip()
        except OSError:
            continue
        switches[name] = value
        if value == forbids:
            refused.append(f"{path} is {value}")
    return {"allowed": not refused, "switches": switches, "refused_by": refused}


def _credentials(env: Mapping[str, str]) -> list[dict[str, Any]]:

    rows = []
    for name in PROVIDERS.names():
        spec = PROVIDERS.get(name)
        if spec is None:
            continue
        found = [v for v in spec.credential_variables() if env.get(v)]
        keyless = [v for v in spec.keyless_when if env.get(v)]
        rows.append(
            {
                "provider": name,
                "found": found,
                "keyless_via": keyless,
                "needs_one_of": list(spec.credential_variables()),
                "ready": bool(found or keyless or not spec.keys),
            }
        )
    return rows


def _git(blockers: list[str]) -> dict[str, Any]:
    git = shutil.which("git")
    if git is None:
        blockers.append("git is not on PATH: every sandbox is a git repository")
        return {"path": None, "version": None}
    try:
        done = run_git(["--version"], cwd=Path.cwd(), timeout_s=10)
        version = done.stdout.decode("utf-8", "replace").strip() or None
    except SandboxError:  # git could not start, or did not answer in time
        version = None
    return {"path": git, "version": version}


def _cases(
    paths: list[str], root: str | None, env: Mapping[str, str], blockers: list[str]
) -> tuple[dict[str, Any], AssayConfig | None]:

    try:
        loaded = load_suites(paths, root=root)
        planned = preflight(loaded.cases, paths=paths, config=loaded.config, environ=env)
    except SuiteLoadErrors as exc:
        blockers.append(f"the suites do not load ({_plural(len(exc.errors), 'error')})")
        return {"errors": [problem_json(e) for e in exc.errors], "planned": 0, "scored": 0}, None
    except ConfigError as exc:
        blockers.append(str(exc))
        return {"errors": [problem_json(exc)], "planned": 0, "scored": 0}, None
    skipped = Counter(run.skip_reason for run in planned.runs if run.skip_reason is not None)
    if planned.problems:
        blockers += [str(problem) for problem in planned.problems]
    elif planned.scored == 0:
        blockers.append("no case would be scored: every one would be skipped")
    return {
        "errors": [problem_json(p) for p in planned.problems],
        "planned": len(planned.runs),
        "scored": planned.scored,
        "skipped": [{"reason": r, "runs": n} for r, n in skipped.items()],
        "models": sorted({run.model for run in planned.runs if run.model}),
        "runtimes": sorted({run.runtime for run in planned.runs}),
        "warnings": list(planned.warnings),
        "notes": list(planned.notes),
    }, loaded.config


def _github_actions(env: Mapping[str, str]) -> dict[str, Any] | None:
    if env.get("GITHUB_ACTIONS") != "true":
        return None
    return {
        "event": env.get("GITHUB_EVENT_NAME"),
        "repository": env.get("GITHUB_REPOSITORY"),
        "tokens": [name for name in _ACTION_VARIABLES if env.get(name)],
    }


def render(found: dict[str, Any]) -> str:
    """The plain-text report."""
    lines = ["sandbox"]
    box = found["sandbox"]
    lines.append(f"  bwrap            {box['bwrap'] or 'not installed'}")
    userns = box["user_namespaces"]
    allowed = "allowed" if userns["allowed"] else "refused: " + "; ".join(userns["refused_by"])
    lines.append(f"  user namespaces  {allowed}")
    lines.append(
        f"  --isolation      {box['isolation']} ({box['isolation_from']}) -> {box['picks']}: "
        f"{box['reason']}"
    )
    if box["picks"] == "none":
        lines.append(
            "                   agents and verification commands would run WITHOUT an OS "
            "sandbox (apt-get install bubblewrap)"
        )
    lines.append("credentials (variable names only)")
    for row in found["credentials"]:
        if row["found"] or row["keyless_via"]:
            have = ", ".join(row["found"] + row["keyless_via"])
        else:
            have = "none (set " + " or ".join(row["needs_one_of"][:2]) + ")"
        lines.append(f"  {row['provider']:<16} {have}")
    git = found["git"]
    lines.append(f"git                {git['version'] or git['path'] or 'not on PATH'}")
    cases = found["cases"]
    lines.append(
        f"cases              {_plural(cases['planned'], 'run')} planned, "
        f"{cases['scored']} would be scored"
    )
    for skip in cases.get("skipped", []):
        lines.append(f"  skipped ({skip['runs']}): {skip['reason']}")
    for error in cases["errors"]:
        where = f"{error['path']}: " if error["path"] else ""
        lines.append(f"  error: {where}{error['message']}")
    lines += [f"  needs: {w}" for w in cases.get("warnings", [])]
    lines += [f"  note: {n}" for n in cases.get("notes", [])]
    action = found["github_actions"]
    if action is None:
        lines.append("github actions     not running inside one")
    else:
        tokens = ", ".join(action["tokens"]) or "none"
        lines.append(
            f"github actions     event {action['event']}, repository "
            f"{action['repository']}, tokens: {tokens}"
        )
    if found["ready"]:
        lines.append(f"ready: a run would score {_plural(cases['scored'], 'run')}")
    else:
        lines += [f"blocked: {b}" for b in found["blockers"]]
    return "\n".join(lines) + "\n"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
