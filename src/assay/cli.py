"""The `assay` console entry: moved to assay._cli.parser (this commit only re-exports it)."""

from __future__ import annotations

from assay._cli.parser import (  # noqa: F401
    EXIT_GATE_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT_FAILED,
    EXIT_PASS,
    EXIT_USAGE,
    build_parser,
    commands,
    main,
    option_variable,
    run_program,
)
