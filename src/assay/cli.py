"""The `assay` command line: a thin parser over the library, one module per command.

Every option can also come from an `ASSAY_<OPTION>` environment variable (`--max-errors`
-> `ASSAY_MAX_ERRORS`); the command line wins. Command modules are imported only when
their command runs, so `assay --version` and `assay validate` stay fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from assay._util.heap import settle_after_startup
from assay._version import __version__
from assay.errors import ConfigError, RunError

EXIT_PASS, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _paths(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="suite files or directories (default: configured paths or .)",
    )


def _select(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t",
        "--test",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only cases whose id contains PATTERN or matches it as a glob (repeatable)",
    )


def _json(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON on stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assay",
        description="Behavioural evals for AI code-review and coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("validate", help="check suites without running anything")
    _paths(p)
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _json(p, "the result")

    p = sub.add_parser("list", help="print the ids of the selected cases")
    _paths(p)
    _select(p)
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _json(p, "the cases")

    p = sub.add_parser("run", help="run the selected cases and gate on the score")
    _paths(p)
    _select(p)
    _run_options(p)

    p = sub.add_parser(
        "score", help="score an already-changed workspace for one task (PVYai run mode)"
    )
    p.add_argument("--suite", required=True, help="the task suite JSON file")
    p.add_argument("--task", required=True, help="the task id")
    p.add_argument("--workspace", required=True, help="the git workspace the agent changed")
    p.add_argument("--trace", help="a file of JSON-line trace events (the agent's stdout)")
    _json(p, "the result")

    p = sub.add_parser(
        "scaffold", help="turn a PR (URL or two local refs) into fixtures and a stub case"
    )
    p.add_argument(
        "pr_url", nargs="?", metavar="PR_URL", help="https://github.com/OWNER/REPO/pull/N"
    )
    p.add_argument("--repo", help="a local clone (use with --base and --head instead of a URL)")
    p.add_argument("--base", help="base ref in --repo")
    p.add_argument("--head", help="head ref in --repo")
    p.add_argument("--category", default=None, help="scenario directory (default: security-review)")
    p.add_argument(
        "--side", choices=["base", "head"], default="base", help="which side's files to capture"
    )
    p.add_argument("--name", help="case name (default: the slugified PR title)")
    p.add_argument(
        "--root", default=None, help="eval root to write into (default: configured root or .)"
    )
    p.add_argument("--format", choices=["review", "rubric"], default="review", dest="fmt")
    p.add_argument(
        "--max-file-size", type=int, default=256 * 1024, help="skip files larger than this (bytes)"
    )
    p.add_argument("--force", action="store_true", help="overwrite existing files")

    sub.add_parser("ci", help="the GitHub Action's entry point; reads the GitHub environment")

    p = sub.add_parser("merge", help="combine shard reports and re-apply the gate")
    p.add_argument("reports", nargs="+", metavar="REPORT")
    p.add_argument("-o", "--output", required=True, help="where to write the merged report.json")
    p.add_argument("--threshold", type=float, default=None)
    p.add_argument("--max-errors", type=int, default=None)

    p = sub.add_parser("compare", help="per-case deltas between two reports")
    p.add_argument("base", metavar="BASE")
    p.add_argument("head", metavar="HEAD")
    _json(p, "the comparison")
    p.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when any case newly fails"
    )

    p = sub.add_parser("schema", help="print the JSON Schema of a suite format or the report")
    p.add_argument("format", nargs="?", metavar="FORMAT", help="omit to list the formats")

    p = sub.add_parser("cache", help="inspect or prune a record/replay cache")
    p.add_argument("action", choices=["stats", "prune"])
    p.add_argument("--cache", required=True, metavar="DIR")
    p.add_argument(
        "--older-than",
        type=float,
        default=None,
        metavar="DAYS",
        help="prune: remove entries not used for this many days (default: all)",
    )

    _apply_env_defaults(parser)
    return parser


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        dest="models",
        action="append",
        default=[],
        metavar="M",
        help="model(s) for the agent; repeat or comma-separate for a matrix",
    )
    p.add_argument(
        "--judge-model", metavar="M", help="model for the judge (default: the subject's model)"
    )
    p.add_argument(
        "--runtime",
        choices=["builtin", "command", "claude", "pi"],
        help="agent runtime (default: command with --agent-command, else builtin)",
    )
    p.add_argument(
        "--agent-command",
        metavar="CMD",
        help="argv template of the agent under test, e.g. 'my-agent --cwd {workspace} {prompt}'",
    )
    p.add_argument("--skill", metavar="PATH", help="skill file overriding the suites' skill")
    # None = not given: [tool.assay] config, then RunOptions' defaults, fill these in.
    p.add_argument(
        "--concurrency", type=int, default=None, metavar="N", help="attempts in flight (default 8)"
    )
    p.add_argument("--repeat", type=int, default=1, metavar="K")
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="per-case agent timeout (default 600)",
    )
    p.add_argument(
        "--threshold", type=float, default=None, metavar="X", help="gate score (default 0.75)"
    )
    p.add_argument(
        "--max-errors",
        type=int,
        default=None,
        metavar="N",
        help="errors the gate tolerates (default 0)",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        default=None,
        metavar="USD",
        help="stop starting cases once the estimated spend reaches USD",
    )
    p.add_argument(
        "--report-dir", default=None, metavar="DIR", help="where reports go (default assay-report)"
    )
    p.add_argument(
        "--work-root",
        default=None,
        metavar="DIR",
        help="where sandboxes are made (default: a temp dir)",
    )
    p.add_argument("--keep-workspaces", action="store_true")
    p.add_argument(
        "--dry-run", action="store_true", help="build every sandbox and print it; run nothing"
    )
    _json(p, "report.json")
    p.add_argument("--shard", metavar="I/N", help="run only shard I of N (1-based)")
    p.add_argument("--cache", metavar="DIR", help="record/replay model calls under DIR")
    p.add_argument(
        "--offline", action="store_true", help="replay from --cache only; misses are skipped"
    )
    p.add_argument("--resume", metavar="DIR", help="continue the run whose report dir is DIR")
    p.add_argument(
        "--pvyai-report",
        action="store_true",
        help="also write task results as pvyai.agenteval.report.v1 (pvyai-report.json)",
    )
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _isolation_options(p)


def _isolation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--isolation",
        choices=["auto", "bwrap", "none"],
        default=None,
        help="OS sandbox for agents and verification commands (default auto: bwrap if it works)",
    )
    for who in ("agent", "command"):
        p.add_argument(
            f"--{who}-network",
            choices=["on", "off"],
            default=None,
            help=f"network for {who}s inside the sandbox (default on)",
        )
    p.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="let verification commands see this credential-shaped variable (repeatable)",
    )


_BOOL_TRUE = {"1", "true", "yes", "on"}
_BOOL_FALSE = {"0", "false", "no", "off"}


def _apply_env_defaults(parser: argparse.ArgumentParser) -> None:
    """Let `ASSAY_<OPTION>` set any option's default (the command line still wins).

    A value the option would refuse on the command line is refused here too, naming the
    variable: ConfigError, before any command runs.
    """
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for group in subparsers:
        for sub in group.choices.values():
            for action in sub._actions:
                if not action.option_strings or action.dest == "help":
                    continue
                long = max(action.option_strings, key=len).lstrip("-")
                name = "ASSAY_" + long.upper().replace("-", "_")
                value = os.environ.get(name)
                if value is None or value == "":
                    continue
                action.default = _env_value(action, name, value)
                if action.required:
                    action.required = False


def _env_value(action: argparse.Action, name: str, value: str) -> object:
    if isinstance(action, argparse._StoreTrueAction):
        flag = value.strip().lower()
        if flag not in _BOOL_TRUE | _BOOL_FALSE:
            raise ConfigError(f"{name}={value!r}: expected 1/0, true/false, yes/no or on/off")
        return flag in _BOOL_TRUE
    if isinstance(action, argparse._AppendAction):
        return [value]
    try:
        converted = action.type(value) if callable(action.type) else value
    except (TypeError, ValueError, argparse.ArgumentTypeError):
        kind = {int: "whole number", float: "number"}.get(action.type, "value")  # type: ignore[call-overload]
        raise ConfigError(f"{name}={value!r}: not a {kind}") from None
    if action.choices is not None and converted not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise ConfigError(f"{name}={value!r}: expected one of {choices}")
    return converted


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except ConfigError as exc:  # a bad ASSAY_* value
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    module = importlib.import_module(f"assay._cli.{args.command}")
    if argv is None:  # assay is the program: what exists now lives until it exits
        settle_after_startup()
    try:
        return int(module.command(args))
    except ConfigError as exc:
        print(f"assay: error: {exc}" if "\n" not in str(exc) else f"{exc}", file=sys.stderr)
        return EXIT_USAGE
    except RunError as exc:  # outside a run, where attempts keep their own (`assay score`)
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("assay: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader left early (`assay list | head -1`): nothing is wrong and nothing more
        # can be said. Point stdout at /dev/null so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_GATE_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
