"""The Action's `check: true`: a pull request whose evals run also gets `assay check`.

The run is tests/action/test_ci.py's (a fake GitHub, a task suite, real verification
commands); its two tasks get reference patches beside the suite file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.test_ci import TOKEN, Ci, ci_environment, source_line

REPO = "acme/widgets"
FIX = """\
diff --git a/greet.py b/greet.py
--- a/greet.py
+++ b/greet.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hi ' + name
+    return 'hello ' + name
"""


@pytest.fixture
def pr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ci]:
    """A PR changing the suite; the gate passes (one task of two, threshold 0.4)."""
    inputs = {"INPUT_THRESHOLD": "0.4", "INPUT_CHECK": "true"}
    with ci_environment(tmp_path, monkeypatch, token=TOKEN, inputs=inputs) as env:
        (env.workspace / "evals" / "reference").mkdir()
        (env.workspace / "evals" / "reference" / "fix-greeting.patch").write_text(FIX)
        env.fake.add_pull(REPO, 7, files=[{"filename": "evals/tasks.json"}])
        env.use_event("pull_request", "pull_request_opened.json")
        yield env


def test_a_pr_whose_cases_are_sound_passes_with_the_check_in_the_summary(
    pr: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = pr.run(monkeypatch, capsys)
    assert code == 0, out
    assert "### assay check: every case can pass and can fail" in pr.summary
    assert "ok            demo/fix-greeting" in pr.summary
    # `broken` has no reference: reported, not failing (its no-op answer fails as it must).
    assert "no reference  demo/broken" in pr.summary
    assert "::error title=assay check" not in out


def test_a_broken_case_fails_the_job_and_is_annotated_on_its_suite_file(
    pr: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its check never passes: no reference solution can pass it.
    (pr.workspace / "evals" / "reference" / "broken.patch").write_text(FIX)
    code, out, _ = pr.run(monkeypatch, capsys)
    assert code == 1, out
    assert pr.outputs["passed"] == "1"  # the run itself passed its gate
    assert "### assay check: a case is broken" in pr.summary
    assert "cannot pass  demo/broken  (the reference answer fails: never:" in pr.summary
    annotations = [line for line in out.splitlines() if "title=assay check" in line]
    assert len(annotations) == 1
    line = source_line(pr.root / "runner-temp" / "assay-report", "demo/broken")
    assert annotations[0].startswith(
        f"::error file=evals/tasks.json,line={line},title=assay check%3A cannot pass::demo/broken"
    )


def test_without_the_input_or_on_a_push_no_check_runs(
    pr: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (pr.workspace / "evals" / "reference" / "broken.patch").write_text(FIX)
    pr.environ["INPUT_CHECK"] = "false"
    code, out, _ = pr.run(monkeypatch, capsys)
    assert code == 0, out
    assert "assay check" not in pr.summary

    pr.environ["INPUT_CHECK"] = "true"
    pr.use_event("push", "push.json")
    code, out, _ = pr.run(monkeypatch, capsys)
    assert code == 0, out
    assert "assay check" not in pr.summary
