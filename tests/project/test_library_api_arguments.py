"""The library API's arguments: a path where a path is natural may be a str or a PathLike,
one string where several are taken is one item, and anything else is a TypeError naming
the parameter and what it takes, raised at the call (`_util/arguments.py`).

(`RunOptions(quarantine="bugs/case-00")` used to quarantine the letters b, u, g, ...;
`load_suites("evals")` looked for files named e, v, a, l, s; `read_report("dir")` and
`run(None)` were AttributeErrors from deep inside.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.options import RunOptions
from tests.models.test_cache_untrusted import write_review_suite
from tests.report.test_merge import make_case, make_report


def decided(**given: Any) -> assay.RunSettings:
    return assay.resolve_settings(RunOptions(**given), config=None, environ={})


@pytest.mark.parametrize("name", ["quarantine", "affects_all", "pass_env"])
def test_one_string_is_one_entry(name: str) -> None:
    value = "bugs/case-00" if name != "pass_env" else "DEPLOY_TOKEN"
    assert getattr(decided(**{name: value}), name) == (value,)
    assert getattr(decided(**{name: (value,)}), name) == (value,)
    assert getattr(decided(**{name: f"{value},other"}), name) == (value, "other")  # as the CLI


def test_suites_load_and_select_from_one_string(tmp_path: Path) -> None:
    evals = write_review_suite(tmp_path)
    loaded = assay.load_suites(str(evals))
    assert [c.id for c in loaded.cases] == [c.id for c in assay.load_suites([evals]).cases]
    assert len(loaded.cases) == 2
    assert [c.id for c in assay.select_cases(loaded.cases, "case-1")] == ["bugs/case-1"]
    with pytest.raises(TypeError, match=r"cases must be an iterable of Case \(a LoadedSuites'"):
        assay.select_cases(loaded, ["case-1"])  # type: ignore[arg-type]


REPORT = make_report([make_case("s/a")])
REFUSED: list[tuple[str, Callable[[], object], str]] = [
    ("run(None)", lambda: assay.run(None), "options must be a RunOptions, e.g. assay.RunOptions("),
    ("run(str)", lambda: assay.run("evals"), "options must be a RunOptions, e.g."),
    (
        "threshold",
        lambda: assay.run(RunOptions(threshold="0.8")),  # type: ignore[arg-type]
        "RunOptions.threshold must be a number (int or float), got str '0.8'",
    ),
    (
        "concurrency",
        lambda: assay.run(RunOptions(concurrency="4")),  # type: ignore[arg-type]
        "RunOptions.concurrency must be an int, got str '4'",
    ),
    (
        "repeat",
        lambda: assay.run(RunOptions(repeat=True)),
        'RunOptions.repeat must be an int or "auto", got bool True',
    ),
    (
        "report_dir",
        lambda: assay.run(RunOptions(report_dir=123)),  # type: ignore[arg-type]
        "RunOptions.report_dir must be a path (str or os.PathLike), got int 123",
    ),
    (
        "offline",
        lambda: assay.run(RunOptions(offline="false")),  # type: ignore[arg-type]
        "RunOptions.offline must be True or False, got str 'false'",
    ),
    (
        "patterns",
        lambda: assay.run(RunOptions(patterns=("a", 3))),  # type: ignore[arg-type]
        "RunOptions.patterns[1] must be a str, got int 3",
    ),
    (
        "load_suites",
        lambda: assay.load_suites(42),  # type: ignore[arg-type]
        "paths must be a path or a list of paths (str or os.PathLike), got int 42",
    ),
    (
        "read_report",
        lambda: assay.read_report(42),  # type: ignore[arg-type]
        "path must be a path (str or os.PathLike), got int 42",
    ),
    (
        "compare_reports",
        lambda: assay.compare_reports(REPORT, "lr0"),  # type: ignore[arg-type]
        "head must be a Report (read one with assay.read_report(path)), got str 'lr0'",
    ),
    (
        "merge_reports",
        lambda: assay.merge_reports(["lr0"]),  # type: ignore[list-item]
        "reports[0] must be a Report (read one with assay.read_report), got str 'lr0'",
    ),
    (
        "merge_reports(str)",
        lambda: assay.merge_reports("lr0"),  # type: ignore[arg-type]
        "reports must be a list of Report, got str 'lr0'",
    ),
    (
        "merge threshold",
        lambda: assay.merge_reports([REPORT], threshold="0.8"),  # type: ignore[arg-type]
        "threshold must be a number (int or float), got str '0.8'",
    ),
]


@pytest.mark.parametrize(("call", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_wrong_type_is_a_type_error_naming_the_parameter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: Callable[[], object], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError) as caught:
        call()
    assert message in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


def test_a_choice_outside_its_values_is_a_config_error_as_its_variable_is() -> None:
    with pytest.raises(assay.ConfigError, match="RunOptions.gate must be one of threshold, regr"):
        decided(gate="nope")
    with pytest.raises(assay.ConfigError, match="ASSAY_GATE='nope': expected one of threshold"):
        assay.resolve_settings(RunOptions(), config=None, environ={"ASSAY_GATE": "nope"})
