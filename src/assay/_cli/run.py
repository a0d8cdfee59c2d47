"""`assay run`: parse what was typed, run it through the library, print, exit.

Only what the user typed goes into RunOptions; the runner decides the rest as it does for
`assay.run()` (`runner/settings.py`: ASSAY_* variables, `[tool.assay]`, the suite, the
defaults) and refuses what it refuses, with the same messages. Exit codes: 0 gate passed,
1 gate failed, 2 usage/config error (raised as ConfigError, printed by assay.cli), 130
interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assay.core.exit_codes import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASS
from assay.core.files import RESULTS_FILE
from assay.errors import OutputError
from assay.options import RunOptions

__all__ = ["build_options", "command", "resume_command"]


def command(args: argparse.Namespace) -> int:
    # lazy: start-up (a command loads only what it runs)
    import asyncio

    from assay.runner.session import prepare_run, run_prepared

    prepared = prepare_run(build_options(args))
    for warning in prepared.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    settings = prepared.settings

    if settings.dry_run:
        # lazy: start-up (a command loads only what it runs)
        from assay._cli.dry_run import print_dry_run
        from assay.runner.dry_run import build_dry_run

        built = build_dry_run(
            prepared.cases, work_root=settings.work_root, skill_override=settings.skill
        )
        return print_dry_run(built, keep=settings.keep_workspaces, out=sys.stdout)

    # lazy: start-up (a command loads only what it runs)
    from assay.report.terminal import make_listener, print_summary

    out = sys.stderr if settings.json_output else sys.stdout
    report_dir = settings.resume_dir or settings.report_dir
    try:
        report = asyncio.run(run_prepared(prepared, listener=make_listener(out)))
    except OutputError as exc:
        if exc.report_dir is None:
            raise
        again = resume_command(args, exc.report_dir)
        hint = f"the results written so far are kept; continue with: {again}"
        raise OutputError(f"{exc}; {hint}", report_dir=exc.report_dir) from None
    except KeyboardInterrupt:
        # Outside the cases (starting, or writing the report), where the runner's own
        # handler does not stop the run gracefully: whatever finished is in results.jsonl.
        print("assay: interrupted", file=sys.stderr)
        if (Path(report_dir) / RESULTS_FILE).is_file():
            print(f"continue with: {resume_command(args, report_dir)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print_summary(report, report_dir=str(report_dir), stream=out)
    if settings.json_output:
        # lazy: start-up (a command loads only what it runs)
        from assay._util.textout import write_in_slices
        from assay.report.json_stream import report_json_chunks

        write_in_slices(sys.stdout, report_json_chunks(report, indent=2))
        sys.stdout.write("\n")
        sys.stdout.flush()
    if report.run.interrupted:
        print(f"continue with: {resume_command(args, report_dir)}", file=out)
        return EXIT_INTERRUPTED
    return EXIT_PASS if report.summary.gate == "pass" else EXIT_GATE_FAILED


def resume_command(args: argparse.Namespace, report_dir: Path | str) -> str:
    """The command line that continues this run: the same arguments, `--resume DIR`."""
    import shlex  # lazy: start-up (shlex only on this path)

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


def build_options(args: argparse.Namespace) -> RunOptions:
    """RunOptions holding exactly what was typed (None where nothing was)."""

    def path(value: str | None) -> Path | None:
        # The parser refuses an empty path (`--report-dir ""`: cli._path); one set by a
        # caller (`assay ci`) is not given, as an empty ASSAY_REPORT_DIR is: never the cwd.
        return Path(value) if value else None

    def switch(value: bool) -> bool | None:
        return True if value else None  # a store_true flag can only say yes

    return RunOptions(
        paths=tuple(args.paths),
        root=path(getattr(args, "root", None)),
        patterns=tuple(args.patterns),
        models=tuple(args.models),
        judge_model=args.judge_model,
        runtime=args.runtime,
        agent_command=args.agent_command,
        skill=path(args.skill),
        concurrency=args.concurrency,
        repeat=args.repeat,
        max_repeat=args.max_repeat,
        min_pass=args.min_pass,
        timeout_s=args.timeout,
        threshold=args.threshold,
        max_errors=args.max_errors,
        max_cost_usd=args.max_cost,
        require_all=switch(args.require_all),
        gate=args.gate,
        baseline=path(args.baseline),
        floor=args.floor,
        inconclusive=args.inconclusive,
        errors_count_as=args.errors_count_as,
        hidden_changes=args.hidden_changes,
        affected_by=args.affected_by,
        affects_all=tuple(args.affects_all or ()),
        quarantine=tuple(args.quarantine or ()),
        report_dir=path(args.report_dir),
        history_dir=path(args.history),
        work_root=path(args.work_root),
        keep_workspaces=switch(args.keep_workspaces),
        dry_run=switch(args.dry_run),
        shard=args.shard or None,
        cache_dir=path(args.cache),
        offline=switch(args.offline),
        bridge=_on_off(getattr(args, "bridge", None)),
        resume_dir=path(args.resume),
        strict=switch(args.strict),
        pvyai_report=switch(args.pvyai_report),
        judge_prompt=args.judge_prompt,
        cassandra_report=switch(args.cassandra_report),
        inspect_log=switch(args.inspect_log),
        json_output=switch(args.json),
        isolation=getattr(args, "isolation", None),
        agent_network=_on_off(getattr(args, "agent_network", None)),
        command_network=_on_off(getattr(args, "command_network", None)),
        pass_env=tuple(getattr(args, "pass_env", None) or ()),
    )


def _on_off(value: str | None) -> bool | None:
    return None if value is None else value == "on"
