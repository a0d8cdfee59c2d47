"""`assay run --dry-run`: every sandbox built and described, failures reported per case."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

from assay._cli.dry_run import DiffStat, diff_stat, dry_run
from assay.suites.case import FixtureFile, ReviewSpec, RubricSpec, TaskSpec
from tests.workspace.test_helpers import git, make_case, source_lines, write


def test_dry_run_builds_and_describes_every_kind(tmp_path: Path) -> None:
    src = tmp_path / "src"
    write(src / "a.ts", source_lines(20, tag="a"))
    write(src / "b.ts", source_lines(30, tag="b"))
    write(src / "ws" / "main.py", "print(1)\n")
    write(src / "ws" / "lib" / "util.py", "X = 1\n")
    write(src / "base" / "app.py", "x = 1\n")
    write(src / "ok.diff", "--- a/app.py\n+++ b/app.py\n@@ -1 +1,2 @@\n-x = 1\n+x = 2\n+y = 3\n")
    write(src / "bad.diff", "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-nothing like this\n+x\n")
    review = ReviewSpec(
        given="g", files=(FixtureFile(src / "a.ts", "c/a.ts"), FixtureFile(src / "b.ts", "c/b.ts"))
    )
    cases = [
        make_case("review", review, name="review"),
        make_case(
            "rubric", RubricSpec(rubric="r", diff=src / "ok.diff", base=src / "base"), name="ok"
        ),
        make_case(
            "rubric", RubricSpec(rubric="r", diff=src / "bad.diff", base=src / "base"), name="bad"
        ),
        make_case("task", TaskSpec(prompt="p", workspace=src / "ws", commands=()), name="task"),
    ]
    out = io.StringIO()
    code = dry_run(cases, work_root=tmp_path / "work", keep=False, skill_override=None, out=out)
    text = out.getvalue()

    assert code == 1
    lines = text.splitlines()
    assert re.fullmatch(
        r"review  suite/review: 2 files changed, 50 insertions\(\+\), 0 deletions\(-\); "
        r"base [0-9a-f]{7}, head [0-9a-f]{7}",
        lines[0],
    )
    assert re.fullmatch(
        r"rubric  suite/ok: 1 file changed, 2 insertions\(\+\), 1 deletion\(-\); .*", lines[2]
    )
    assert lines[4].startswith("rubric  suite/bad: FAILED: ")
    assert "bad.diff does not apply to the base" in lines[4]
    assert re.fullmatch(r"task    suite/task: 2 workspace files; baseline [0-9a-f]{7}", lines[5])
    assert "3 sandboxes built, 1 failed; nothing was run" in text
    assert "(a dry run implies --keep-workspaces)" in text

    # The printed paths are real, kept sandboxes.
    review_repo = Path(lines[1].strip())
    assert git(review_repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "eval"
    assert (Path(lines[6].strip()) / "lib" / "util.py").read_text() == "X = 1\n"
    assert review_repo.parent.parent.parent == tmp_path / "work"


def test_dry_run_passes_when_everything_builds(tmp_path: Path) -> None:
    write(tmp_path / "ws" / "f.txt", "x\n")
    case = make_case("task", TaskSpec(prompt="p", workspace=tmp_path / "ws", commands=()))
    out = io.StringIO()
    assert dry_run([case], work_root=None, keep=True, skill_override=None, out=out) == 0
    assert "1 sandbox built, 0 failed" in out.getvalue()
    kept = re.search(r"Workspaces kept under ([^;\s]+)", out.getvalue())
    assert kept is not None
    shutil.rmtree(kept.group(1))  # under the system's temporary directory: not tmp_path


def test_diff_stat_counts_hunk_lines_not_lookalikes() -> None:
    diff = (
        "diff --git a/x.md b/x.md\n"
        "--- a/x.md\n+++ b/x.md\n"
        "@@ -1,3 +1,3 @@\n"
        " keep\n"
        "---- a markdown rule that was removed\n"
        "++++ a line starting with +++ added\n"
        " keep\n"
        "\\ No newline at end of file\n"
        "diff --git a/logo.png b/logo.png\n"
        "new file mode 100644\n"
        "Binary files /dev/null and b/logo.png differ\n"
        "diff --git a/n.txt b/n.txt\n"
        "--- /dev/null\n+++ b/n.txt\n"
        "@@ -0,0 +1 @@\n"
        "+one\n"
    )
    assert diff_stat(diff) == DiffStat(files=3, insertions=2, deletions=1)
    assert str(DiffStat(1, 1, 0)) == "1 file changed, 1 insertion(+), 0 deletions(-)"
    assert diff_stat("") == DiffStat(0, 0, 0)
