"""The `assay` console entry: parse, dispatch to the command's module, map errors to exit codes.

Every option can also come from an `ASSAY_<OPTION>` environment variable (`--max-errors`
-> `ASSAY_MAX_ERRORS`); the command line wins, and any other `ASSAY_*` variable set is
warned about (_cli/environment.py). The parser is `_cli/parser.py`. Command modules are
imported only when their command runs, so `assay --version` and `assay validate` stay fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from assay._cli.environment import unknown_variable_warnings
from assay._cli.parser import build_parser
from assay._util.heap import exit_without_teardown, settle_after_startup
from assay._util.textout import DefusedStream
from assay.core.exit_codes import (
    EXIT_GATE_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT_FAILED,
    EXIT_PASS,
    EXIT_USAGE,
)
from assay.errors import ConfigError, OutputError, RunError

__all__ = [
    "EXIT_GATE_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OUTPUT_FAILED",
    "EXIT_PASS",
    "EXIT_USAGE",
    "build_parser",
    "main",
    "run_program",
]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except ConfigError as exc:  # a bad ASSAY_* value
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in unknown_variable_warnings(os.environ, parser):  # a mistyped ASSAY_* name
        print(f"warning: {warning}", file=sys.stderr)
    # What the user typed, for messages that print a command to continue (`--resume`).
    args.argv = list(sys.argv[1:] if argv is None else argv)
    module = importlib.import_module(f"assay._cli.{args.command}")
    if argv is None:  # assay is the program: what exists now lives until it exits
        settle_after_startup()
    stderr = sys.stderr
    if args.command != "ci":  # which guards both streams itself
        sys.stderr = DefusedStream(stderr)  # type: ignore[assignment]
    try:
        return _dispatch(module, args)
    finally:
        sys.stderr = stderr


def _dispatch(module: Any, args: argparse.Namespace) -> int:
    """Run the command; a user's mistake is one line and its exit code, not a traceback."""
    try:
        return int(module.command(args))
    except ConfigError as exc:
        print(f"assay: error: {exc}" if "\n" not in str(exc) else f"{exc}", file=sys.stderr)
        return EXIT_USAGE
    except OutputError as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_OUTPUT_FAILED
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


def run_program() -> NoReturn:
    """The `assay` console script: `main()` as the process, which ends with its exit code."""
    exit_without_teardown(main())


if __name__ == "__main__":  # pragma: no cover
    run_program()
