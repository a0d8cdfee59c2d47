"""What `assay run` and `assay merge` print: untrusted text can start no workflow command.

A GitHub Actions runner reads every line a step prints, splitting at LF, CR and CRLF, and
obeys a line that starts with `::` after its leading whitespace, or holds `##[` anywhere.
`assay ci` guards its whole output; `run` and `merge`, also run in workflows, print unguarded.
"""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest

from assay.cli import main
from assay.report.gate.stats import summarize
from assay.report.model import CaseResult, Check, IsolationInfo, Report, RunInfo, Source
from assay.report.terminal import clean, print_summary, printable

HOSTILE_OUTPUT = (
    "line one\n"
    "::add-mask::FAIL\n"
    "::error file=README.md,line=1::forged annotation\n"
    "  ::stop-commands::pwned\n"
    "\t::warning::tab\n"
    "##[error]legacy forged\n"
    "x\r::notice::after a carriage return\n"
    "\u2003::group::after an em space\n"
)


def command_lines(text: str) -> list[str]:
    """The lines of `text` a runner would obey."""
    return [
        line
        for line in re.split(r"\r\n|\r|\n", text)
        if line.lstrip().startswith("::") or "##[" in line
    ]


def _hostile_report() -> Report:
    check = Check.model_validate(
        {
            "id": "show",
            "kind": "command",
            "status": "fail",
            "message": "::error::message",
            "expected": "  ::error::expected",
            "outputTail": HOSTILE_OUTPUT,
        }
    )
    case = CaseResult(
        id="hostile/t1",
        suite="hostile",
        kind="task",
        source=Source(path="evals/hostile.json", line=1),
        status="fail",
        score=0.0,
        reason="::error::reason ##[error]x",
        checks=[check],
    )
    return Report(
        run=RunInfo(
            id="run1",
            started_at="2025-01-01T00:00:00Z",
            assay_version="0",
            threshold=0.75,
            notes=["::warning::note"],
            isolation=IsolationInfo(mode="none", warning="\n::error::isolation warning"),
        ),
        summary=summarize([case], threshold=0.75, max_errors=0, duration_s=1.0),
        cases=[case],
    )


def test_the_summary_of_a_hostile_run_starts_no_workflow_command() -> None:
    stream = StringIO()
    print_summary(_hostile_report(), report_dir="out", stream=stream, colour=False)
    out = stream.getvalue()
    assert command_lines(out) == []
    # Still there to read, defused.
    assert "  : :add-mask::FAIL" in out and "  : :stop-commands::pwned" in out
    assert "##\\[error]legacy forged" in out


def test_assay_merge_prints_no_workflow_command_from_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in" / "report.json"
    source.parent.mkdir()
    source.write_text(_hostile_report().model_dump_json(), encoding="utf-8")
    main(["merge", str(source), "-o", str(tmp_path / "merged")])
    out = capsys.readouterr().out
    assert "legacy forged" in out
    assert command_lines(out) == []


@pytest.mark.parametrize(
    "text",
    [
        "::error::x",
        "  ::error::x",
        "\x01::error::x",
        "\u2028::error::x",
        "a ##[error]x",
        "a\n::error::x",
        "a\r::error::x",
    ],
)
def test_printable_and_clean_defuse_behind_any_indent_or_label(text: str) -> None:
    for shown in (printable(text), clean(text), clean(text, limit=8)):
        assert command_lines(shown) == []
        assert command_lines("  " + shown) == [] and command_lines("note: " + shown) == []


def test_printable_keeps_every_line_of_the_text_on_one() -> None:
    assert printable("evil\n::error::forged\x1b]0;t\x07x") == "evil ::error::forged ]0;t x"
    assert printable("::error::x ##[group]") == ": :error::x ##\\[group]"


def test_the_line_printed_as_a_case_finishes_holds_no_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It is printed before the report is redacted; a judge had quoted the key in it."""
    from assay._util import secrets
    from assay.report.terminal import case_line

    secret = "sk-ant-api03-" + "k" * 24
    monkeypatch.setattr(secrets, "_remembered", {secret})
    case = CaseResult(
        id="s/c",
        suite="s",
        kind="review",
        source=Source(path="evals/s.yaml", line=1),
        status="fail",
        score=0.0,
        reason=f"should_find[0]: not met; btw the key is {secret}",
    )
    assert case_line(case).endswith("btw the key is [redacted]")
