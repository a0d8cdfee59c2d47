"""`assay run`: load, select, run, report, gate.

Option precedence: the command line (which already folded in `ASSAY_*` variables), then
`[tool.assay]`, then RunOptions' defaults. Exit codes: 0 gate passed, 1 gate failed,
2 usage/config error (raised as ConfigError, printed by assay.cli), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.cli import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASS
from assay.errors import ConfigError, OutputError
from assay.options import RunOptions
from assay.runner.plan import check_options, parse_shard, shard_cases
from assay.runner.resolve import parse_models
from assay.suites.case import Case, TaskSpec
from assay.suites.command import parse_agent_command, placeholder_typos
from assay.suites.select import nothing_selected

if TYPE_CHECKING:
    from assay.suites.config import AssayConfig

__all__ = ["build_options", "command"]


def command(args: argparse.Namespace) -> int:
    from assay.suites import load_suites, select_cases

    check_options(build_options(args, None))  # fail fast on bad flags, before loading
    loaded = load_suites(list(args.paths), strict=args.strict, root=args.root)
    for warning in loaded.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    options = build_options(args, loaded.config)
    check_options(options)
    selected = select_cases(list(loaded.cases), list(options.patterns))
    if not selected:
        raise nothing_selected(options.patterns)
    if options.work_root is not None:
        _check_work_root(options.work_root, selected)

    if options.dry_run:
        from assay._cli.dry_run import dry_run

        return dry_run(
            shard_cases(selected, options.shard),
            work_root=options.work_root,
            keep=options.keep_workspaces,
            skill_override=options.skill,
            out=sys.stdout,
        )

    from assay.report.terminal import make_listener, print_summary
    from assay.runner import run

    out = sys.stderr if options.json_output else sys.stdout
    report_dir = options.resume_dir or options.report_dir
    try:
        report = run(options, cases=selected, config=loaded.config, listener=make_listener(out))
    except OutputError as exc:
        if exc.report_dir is None:
            raise
        again = resume_command(args, exc.report_dir)
        hint = f"the results written so far are kept; continue with: {again}"
        raise OutputError(f"{exc}; {hint}", report_dir=exc.report_dir) from None
    print_summary(report, report_dir=str(report_dir), stream=out)
    if options.json_output:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        sys.stdout.flush()
    if report.run.interrupted:
        print(f"continue with: {resume_command(args, report_dir)}", file=out)
        return EXIT_INTERRUPTED
    return EXIT_PASS if report.summary.gate == "pass" else EXIT_GATE_FAILED


def resume_command(args: argparse.Namespace, report_dir: Path | str) -> str:
    """The command line that continues this run: the same arguments, `--resume DIR`."""
    import shlex

    given: list[str] = list(getattr(args, "argv", None) or ["run", *args.paths])
    kept: list[str] = []
    skip_next = False
    for word in given:
        if skip_next:
            skip_next = False
            continue
        if word in ("--resume", "--report-dir"):
            skip_next = True
            continue
        if word.startswith(("--resume=", "--report-dir=")):
            continue
        kept.append(word)
    return shlex.join(["assay", *kept, "--resume", str(report_dir)])


def _check_work_root(work_root: Path, cases: Sequence[Case]) -> None:
    """Sandboxes copy fixture directories: one made inside such a directory would copy
    itself into itself, level after level, and leave itself behind in the fixture."""
    real_root = Path(os.path.realpath(work_root))
    for case in cases:
        spec = case.spec
        tree = spec.workspace if isinstance(spec, TaskSpec) else getattr(spec, "base", None)
        if tree is None or not tree.is_dir():
            continue
        real_tree = Path(os.path.realpath(tree))
        if real_root == real_tree or real_tree in real_root.parents:
            raise ConfigError(
                f"--work-root {work_root} is inside the fixture {tree} of {case.id}; "
                "put sandboxes outside the suites' fixtures"
            )


def build_options(args: argparse.Namespace, config: AssayConfig | None) -> RunOptions:
    """RunOptions from the parsed command line, with `config` filling what was not given."""
    values: dict[str, Any] = {
        "paths": tuple(args.paths),
        "root": Path(args.root) if getattr(args, "root", None) else None,
        "patterns": tuple(args.patterns),
        "models": parse_models(args.models),
        "judge_model": args.judge_model,
        "runtime": args.runtime,
        "agent_command": _agent_command(args.agent_command),
        "skill": _existing(args.skill, "--skill"),
        "repeat": args.repeat,
        "max_cost_usd": args.max_cost,
        "require_all": bool(args.require_all or getattr(config, "require_all", None)),
        "work_root": Path(args.work_root) if args.work_root else None,
        "keep_workspaces": args.keep_workspaces,
        "dry_run": args.dry_run,
        "shard": parse_shard(args.shard) if args.shard else None,
        "cache_dir": Path(args.cache) if args.cache else None,
        "offline": args.offline,
        "resume_dir": Path(args.resume) if args.resume else None,
        "strict": args.strict,
        "pvyai_report": args.pvyai_report,
        "judge_prompt": args.judge_prompt,
        "cassandra_report": args.cassandra_report,
        "json_output": args.json,
    }
    # `--report-dir ""` means not given, as an empty ASSAY_REPORT_DIR does: never the cwd.
    report_dir = args.report_dir or None
    fallbacks = {
        "concurrency": (args.concurrency, "concurrency"),
        "timeout_s": (args.timeout, "timeout"),
        "threshold": (args.threshold, "threshold"),
        "max_errors": (args.max_errors, "max_errors"),
        "report_dir": (report_dir, "report_dir"),
    }
    for field_name, (given, config_key) in fallbacks.items():
        value = given if given is not None else getattr(config, config_key, None)
        if value is not None:
            values[field_name] = value
    if "report_dir" in values:
        values["report_dir"] = _report_dir(values["report_dir"], given=report_dir, config=config)
    values.update(_isolation_values(args, config))
    return RunOptions(**values)


def _isolation_values(args: argparse.Namespace, config: AssayConfig | None) -> dict[str, Any]:
    """--isolation, --agent-network, --command-network, --pass-env over [tool.assay]."""
    values: dict[str, Any] = {}
    isolation = getattr(args, "isolation", None) or getattr(config, "isolation", None)
    if isolation is not None:
        values["isolation"] = isolation
    for name in ("agent_network", "command_network"):
        given = getattr(args, name, None)
        configured = getattr(config, name, None)
        if given is not None:
            values[name] = given == "on"
        elif configured is not None:
            values[name] = configured
    given = getattr(args, "pass_env", None) or []
    named = [name.strip() for entry in given for name in entry.split(",")]  # ASSAY_PASS_ENV=A,B
    passed = [*getattr(config, "pass_env", ()), *named]
    values["pass_env"] = tuple(dict.fromkeys(name for name in passed if name))
    return values


def _agent_command(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    try:
        # `./agent.sh` on the command line means beside the caller, as in a shell.
        argv = parse_agent_command(text, base_dir=Path.cwd())
    except ValueError as exc:
        raise ConfigError(f"--agent-command {text!r}: {exc}") from None
    for typo in placeholder_typos(argv):
        print(f"warning: --agent-command: {typo}", file=sys.stderr)
    return argv


def _existing(raw: str | None, flag: str) -> Path | None:
    if raw is None:
        return None
    path = Path(raw)
    if not path.exists():
        raise ConfigError(f"{flag} {raw}: no such file or directory")
    return path


def _report_dir(value: str | Path, *, given: str | None, config: AssayConfig | None) -> Path:
    """A configured report_dir is relative to its config file; a given one to the cwd."""
    path = Path(value)
    if given is None and config is not None and not path.is_absolute():
        return Path(config.path).parent / path
    return path
