"""A report's JSON a case at a time: the text `model_dump_json` gives, never whole in memory.

A 5000-case report is some 20 MB of JSON; built as one string (and encoded as a second
copy to be written) it was the run's peak memory. `Report.cases` is the contract's last
field, so the text is the report without its cases, then each case in turn, indented
as its place in the whole, then the closing brackets (`tests/test_report_json_stream.py`
checks it is the same text).
"""

from __future__ import annotations

from collections.abc import Iterator

from assay.report.model import Report

__all__ = ["report_json_chunks"]


def report_json_chunks(report: Report, *, indent: int | None = None) -> Iterator[str]:
    """`report.model_dump_json(indent=indent)`, in pieces of about one case each."""
    skeleton = report.model_copy(update={"cases": []}).model_dump_json(indent=indent)
    empty = '"cases": []\n}' if indent else '"cases":[]}'
    if not report.cases or not skeleton.endswith(empty):
        yield report.model_dump_json(indent=indent)  # no cases, or not last: the plain way
        return
    yield skeleton[: -len(empty)] + ('"cases": [\n' if indent else '"cases":[')
    # A case sits two levels deep; JSON text holds no raw newline but between tokens.
    prefix = " " * (2 * indent) if indent else ""
    closing = "\n" + " " * indent + "]\n}" if indent else "]}"
    separator = ",\n" if indent else ","
    for number, case in enumerate(report.cases):
        text = case.model_dump_json(indent=indent)
        if prefix:
            text = prefix + text.replace("\n", "\n" + prefix)
        yield (separator + text) if number else text
    yield closing
