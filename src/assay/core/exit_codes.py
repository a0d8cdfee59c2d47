"""assay's exit codes: the one place each is defined (the CLI, `assay ci`, the Action's
decision step and `assay validate` all return these)."""

from __future__ import annotations

__all__ = ["EXIT_GATE_FAILED", "EXIT_INTERRUPTED", "EXIT_OUTPUT_FAILED", "EXIT_PASS", "EXIT_USAGE"]

EXIT_PASS = 0
"""The gate passed (or there was nothing to gate: evals skipped, a valid suite)."""
EXIT_GATE_FAILED = 1
"""The gate failed."""
EXIT_USAGE = 2
"""A configuration or usage error: bad input, an invalid suite, a missing model key."""
EXIT_OUTPUT_FAILED = 4
"""assay could not write its own files (full disk, read-only report dir). Not 3: PVYai's
own CLI uses 3, and a wrapper may pass either code through."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C, SIGINT): 128 + the signal's number, as a shell reports it."""
