"""report.json, report.html and a history's copy are written a case at a time: the same
text as built whole, redacted the same, and a renderer that fails half-way is reported
like one that fails at once."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay._util import secrets
from assay._util.secrets import MASK, redact_chunks
from assay.report.html import embed_json, html_chunks
from assay.report.html_data import viewer_data
from assay.report.json_stream import report_json_chunks
from assay.report.model import Report
from assay.report.renderers import RENDERERS, Renderer
from assay.runner.writer import write_report_dir
from tests.viewer_reports import viewer_report


@pytest.mark.parametrize("indent", [2, None])
@pytest.mark.parametrize("count", [0, 1, 7])
def test_report_json_in_pieces_is_model_dump_json(count: int, indent: int | None) -> None:
    report = viewer_report(count)
    pieces = list(report_json_chunks(report, indent=indent))
    assert "".join(pieces) == report.model_dump_json(indent=indent)
    assert len(pieces) == (count + 2 if count else 1)


def test_the_page_carries_the_same_data_as_the_document_built_whole(tmp_path: Path) -> None:
    report = viewer_report(12, tmp_path)
    history = [{"run_id": "a", "score": 0.2}, {"run_id": "b", "score": 0.9}]
    page = "".join(html_chunks(report, report_dir=tmp_path, history=history))
    match = re.search(r'<script type="application/json" id="assay-data">(.*?)</script>', page, re.S)
    assert match is not None
    whole = viewer_data(report, tmp_path, history=history)
    assert match.group(1) == str(embed_json(whole))
    assert json.loads(match.group(1))["cases"][3]["id"] == report.cases[3].id


@pytest.mark.slow
def test_redacting_in_pieces_is_redacting_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets that straddle pieces, overlap each other or contain one another."""
    rng = random.Random(20261201)
    groups = [["abcd"], ["sk-ant-XYZXYZ", "XYZ12"], ["aaaaaa", "aaaa"], ["ab", "ba"]]
    for _ in range(2000):
        values = rng.choice(groups)
        monkeypatch.setattr(secrets, "_known_secrets", lambda environ, v=values: v)
        monkeypatch.setattr(secrets, "_REDACT_BATCH", rng.choice([1, 3, 16]))
        text = "".join(rng.choice("abXYZ12sk-ant") for _ in range(rng.randint(0, 120)))
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(values) + text[at:]
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 20))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        expected = text
        for value in values:
            expected = expected.replace(value, MASK)
        assert "".join(redact_chunks(pieces)) == expected, (values, text, pieces)


def test_a_renderer_that_fails_half_way_leaves_no_file_and_the_rest_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def half_way(ctx: object) -> Iterator[str]:
        yield "the first half\n"
        raise RuntimeError("the plugin broke")

    RENDERERS.register("half", Renderer("half", "half.txt", half_way))  # type: ignore[arg-type]
    try:
        write_report_dir(viewer_report(3), tmp_path, cases=[])
    finally:
        RENDERERS.unregister("half")
    assert "renderer 'half' (half.txt) failed: RuntimeError: the plugin broke" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "half.txt").exists()
    assert not list(tmp_path.glob(".half.txt.*"))
    written = Report.model_validate_json((tmp_path / "report.json").read_text())
    assert len(written.cases) == 3
    assert (tmp_path / "report.html").is_file()


def test_the_run_redacts_its_report_a_case_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret in one case's text is masked there; the cases without one are kept as
    they are, not rebuilt."""
    from assay.runner.reporting import _redacted

    secret = "sk-test-" + "q" * 24
    monkeypatch.setattr(secrets, "_remembered", {secret})
    report = viewer_report(4)
    leaky = report.cases[2].model_copy(update={"reason": f"the agent printed {secret}"})
    report = report.model_copy(update={"cases": [*report.cases[:2], leaky, report.cases[3]]})
    masked = _redacted(report)
    assert masked.cases[2].reason == f"the agent printed {MASK}"
    assert masked.cases[0] is report.cases[0] and masked.cases[3] is report.cases[3]
    assert secret not in masked.model_dump_json()
    assert masked.run == report.run and masked.summary == report.summary


@pytest.mark.parametrize("secret", ['Tr0ub"4d\\or&_x<y>', "Pass\tword99", "pässwörd-ümlaut"])
def test_a_secret_that_json_escapes_is_masked_everywhere_the_run_writes(
    secret: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looked for as written, `"`, `\\`, a tab or non-ASCII made a password invisible in
    report.json's text, so it reached every report, the job summary and the PR comment."""
    from assay.runner.reporting import _redacted

    monkeypatch.setattr(secrets, "_remembered", {secret})
    report = viewer_report(3)
    finding = {**report.cases[1].findings[0], "title": f"found {secret} here"}
    leaky = report.cases[1].model_copy(update={"findings": [finding], "reason": secret})
    report = report.model_copy(update={"cases": [report.cases[0], leaky, report.cases[2]]})

    masked = _redacted(report)
    assert masked.cases[1].findings[0]["title"] == f"found {MASK} here"
    assert masked.cases[1].reason == MASK
    write_report_dir(masked, tmp_path, cases=())
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    for path in tmp_path.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not [form for form in forms if form in text], path


def test_masking_json_never_cuts_an_escape_in_two(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tab before `ok_...` is `\\tok_...` in JSON: masking the text for the secret
    `tok_...` gave `\\[redacted]`, which is not JSON, and the report was lost."""
    from assay._util.secrets import redact_json

    secret = "tok_" + "z" * 20
    monkeypatch.setattr(secrets, "_remembered", {secret})
    text = json.dumps({"title": "\t" + secret[1:], "body": f"key {secret}"})
    assert json.loads(redact_json(text)) == {"title": "\t" + secret[1:], "body": f"key {MASK}"}
    clean = json.dumps({"title": "nothing to hide"})
    assert redact_json(clean) is clean
