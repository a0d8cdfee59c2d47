"""`assay schema [FORMAT]`: list the formats, or print one's JSON Schema."""

from __future__ import annotations

import argparse
import sys

from assay.core.exit_codes import EXIT_PASS
from assay.errors import ConfigError
from assay.suites.schema import SCHEMA_NAMES, shipped_schema

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    if not args.format:
        for name in SCHEMA_NAMES:
            print(name)
        return EXIT_PASS
    if args.format not in SCHEMA_NAMES:
        raise ConfigError(
            f"unknown format {args.format!r}; choose one of: {', '.join(SCHEMA_NAMES)}"
        )
    sys.stdout.write(shipped_schema(args.format))
    return EXIT_PASS
