"""Workflow-command escaping, log neutralisation and the output guard."""

from __future__ import annotations

import io
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.action import commands

HOSTILE = [
    "\n::error::pwned",
    "::set-output name=x::y",
    "::add-mask::",
    "::stop-commands::token",
    "##[error]boom",
    "%0A::warning::sneaky",
    "line\r::error::cr",
    "line\r\n::error::crlf",
    "   ::warning::indented",
]


def _command_lines(text: str) -> list[str]:
    """Lines the Actions runner would treat as commands (it splits on CR, LF and CRLF)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [line for line in lines if line.lstrip().startswith("::") or "##[" in line]


def test_escape_data_encodes_percent_cr_lf() -> None:
    assert commands.escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert commands.escape_data("%0A") == "%250A"


def test_escape_property_also_encodes_colon_and_comma() -> None:
    assert commands.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


@pytest.mark.parametrize("text", HOSTILE)
def test_neutralise_leaves_no_command_line(text: str) -> None:
    assert _command_lines(commands.neutralise(text)) == []


def test_neutralise_changes_only_what_it_must() -> None:
    assert commands.neutralise("PASS  demo/case  1.00\n") == "PASS  demo/case  1.00\n"
    assert commands.neutralise("a::b") == "a::b"
    assert commands.neutralise("::error::x") == ": :error::x"
    assert commands.neutralise("x ##[group]") == "x ##\\[group]"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(":#[]%\r\n aZ")), max_size=60))
@pytest.mark.slow
def test_neutralise_never_leaves_a_command_and_is_idempotent(text: str) -> None:
    once = commands.neutralise(text)
    assert _command_lines(once) == []
    assert commands.neutralise(once) == once


def test_annotation_escapes_message_and_properties(capsys: pytest.CaptureFixture[str]) -> None:
    commands.error("bad\n::error::pwned 100%", file="evals/a,b:c.yaml", line=3, title="s/c\n::x")
    out = capsys.readouterr().out
    assert out == (
        "::error file=evals/a%2Cb%3Ac.yaml,line=3,title=s/c%0A%3A%3Ax"
        "::bad%0A::error::pwned 100%25\n"
    )


def test_annotation_drops_escape_sequences_and_bidirectional_overrides(
    capsys: pytest.CaptureFixture[str],
) -> None:
    commands.warning("judge: \x1b[8mhidden\x1b[0m fine\u202e.yp", title="s/c\u2066")
    assert capsys.readouterr().out == "::warning title=s/c::judge: [8mhidden[0m fine.yp\n"


def test_add_mask_skips_blank_values(capsys: pytest.CaptureFixture[str]) -> None:
    commands.add_mask("   ")
    commands.add_mask("s3cr%t")
    assert capsys.readouterr().out == "::add-mask::s3cr%25t\n"


def test_guard_neutralises_prints_and_keeps_own_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with commands.guarded_output():
        print("FAIL  demo/x  ::error::pwned")
        print("::set-output name=x::y")
        sys.stdout.write("::err")  # a partial line must not combine into a command
        commands.notice("ours")
        sys.stdout.write("or::later\n")
        print("##[warning]from stderr", file=sys.stderr)
        sys.stdout.write("no newline at the end")
    lines = out.getvalue().splitlines()
    assert [line for line in lines if line.startswith("::")] == ["::notice::ours"]
    assert ": :set-output name=x::y" in lines
    assert lines[-1] == "no newline at the end"
    assert _command_lines(err.getvalue()) == []
    assert sys.stdout is out and sys.stderr is err


def test_an_error_said_once_is_said_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    for _run in range(2):  # each guarded block is one `assay ci` run
        with commands.guarded_output():
            for _write in range(3):
                commands.error("cannot write GITHUB_OUTPUT (/x)", title="env", once=True)
            commands.error("cannot write GITHUB_OUTPUT (/y)", title="env", once=True)
            commands.error("a case failed", title="demo/x")
            commands.error("a case failed", title="demo/x")
    run = [
        "::error title=env::cannot write GITHUB_OUTPUT (/x)",
        "::error title=env::cannot write GITHUB_OUTPUT (/y)",
        "::error title=demo/x::a case failed",
        "::error title=demo/x::a case failed",
    ]
    assert out.getvalue().splitlines() == run * 2
    commands.error("outside a run", once=True)
    commands.error("outside a run", once=True)  # no run to remember it in
    assert out.getvalue().splitlines()[-2:] == ["::error::outside a run"] * 2
