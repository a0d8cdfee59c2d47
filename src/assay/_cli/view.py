"""`assay view [REPORT_DIR]`: open the run's report.html in a browser (or print its path).

REPORT_DIR may also name report.html, or another file of the report (report.json): its page
is the report.html beside it.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path

from assay.core.exit_codes import EXIT_PASS
from assay.core.files import HTML_FILE
from assay.errors import ConfigError
from assay.options import DEFAULT_REPORT_DIR
from assay.report.unfinished import unfinished_run_note

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    folder = Path(args.report_dir) if args.report_dir else DEFAULT_REPORT_DIR
    page = _page(folder)
    if not page.is_file():
        unfinished = unfinished_run_note(page.parent)
        raise ConfigError(
            f"{page}: no report.html here"
            + (unfinished or f"; run `assay run --report-dir {folder}` (or `assay merge`) first")
        )
    url = page.resolve().as_uri()
    opened = False
    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    # Said either way: over SSH or in CI there is no browser, and the path is what is needed.
    print(f"{'opened' if opened else 'report'}: {page.resolve()}", file=sys.stdout)
    return EXIT_PASS


def _page(given: Path) -> Path:
    """The report.html a path means: in a directory, the page itself, or the one beside
    another file of the report (`assay view out/report.json` opens out/report.html)."""
    if given.is_dir() or not given.suffix:
        return given / HTML_FILE
    if given.suffix.lower() in (".html", ".htm"):
        return given
    return given.parent / HTML_FILE
