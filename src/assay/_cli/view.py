"""`assay view [REPORT_DIR]`: open the run's report.html in a browser (or print its path)."""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path

from assay.cli import EXIT_PASS
from assay.core.files import HTML_FILE
from assay.errors import ConfigError
from assay.options import DEFAULT_REPORT_DIR

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    folder = Path(args.report_dir) if args.report_dir else DEFAULT_REPORT_DIR
    page = folder / HTML_FILE if folder.is_dir() or not folder.suffix else folder
    if not page.is_file():
        raise ConfigError(
            f"{page}: no report.html here; run `assay run --report-dir {folder}` "
            "(or `assay merge`) first"
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
