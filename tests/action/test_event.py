"""The run/skip decision for each kind of event, and trigger-path globs."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import pytest

from assay.action.changed_files import ChangedFiles
from assay.action.event import PullRequestRef, decide, load_event
from assay.action.globs import InvalidGlob, check_patterns, compile_glob, first_match
from assay.action.inputs import DEFAULT_TRIGGER_PATHS
from assay.errors import ConfigError

EVENTS = Path(__file__).parents[1] / "data" / "events"


def _decide(name: str, fixture: str, files: tuple[str, ...] = (), *, complete: bool = True):
    asked: list[int] = []

    def changed(pull: PullRequestRef) -> ChangedFiles:
        asked.append(pull.number)
        return ChangedFiles(files, complete, "test")

    event = load_event(name, EVENTS / fixture)
    decision = decide(
        event, label="run-evals", trigger_paths=DEFAULT_TRIGGER_PATHS, changed_files=changed
    )
    return decision, asked


@pytest.mark.parametrize(
    ("name", "fixture"),
    [
        ("push", "push.json"),
        ("workflow_dispatch", "workflow_dispatch.json"),
        # No PR to decide from: a nightly run, and a merge queue's required check.
        ("schedule", "push.json"),
        ("merge_group", "push.json"),
    ],
)
def test_events_without_a_pull_request_always_run(name: str, fixture: str) -> None:
    decision, asked = _decide(name, fixture)
    assert decision.run and decision.reason == f"{name} event"
    assert asked == []


def test_pr_changing_eval_files_runs() -> None:
    decision, asked = _decide(
        "pull_request", "pull_request_opened.json", ("src/a.py", "evals/x.yaml")
    )
    assert decision.run
    assert decision.reason == "PR #7 changes evals/x.yaml (matches evals/**)"
    assert asked == [7]


def test_pr_without_eval_changes_is_skipped() -> None:
    decision, _ = _decide(
        "pull_request", "pull_request_synchronize.json", ("src/a.py", "README.md")
    )
    assert not decision.run
    assert "changes no file matching trigger-paths" in decision.reason
    assert "'run-evals'" in decision.reason


def test_pr_whose_file_list_is_incomplete_runs_to_be_safe() -> None:
    decision, _ = _decide("pull_request", "pull_request_huge.json", ("src/a.py",), complete=False)
    assert decision.run
    assert "could not list every file PR #9 changes" in decision.reason


def test_labeled_with_the_label_runs_without_listing_files() -> None:
    decision, asked = _decide("pull_request", "pull_request_labeled_run_evals.json")
    assert decision.run and decision.reason == "PR #7 carries the 'run-evals' label"
    assert asked == []


def test_labeled_with_another_label_does_nothing() -> None:
    decision, asked = _decide("pull_request", "pull_request_labeled_other.json", ("evals/x.yaml",))
    assert not decision.run
    assert decision.reason == "labeled with 'documentation', not 'run-evals'"
    assert asked == []


def test_closed_pr_is_skipped() -> None:
    decision, _ = _decide("pull_request", "pull_request_closed.json")
    assert not decision.run
    assert decision.reason == "pull_request action `closed` does not run evals"


def test_fork_pr_is_skipped_with_a_notice_even_when_labeled() -> None:
    decision, asked = _decide("pull_request", "pull_request_fork.json", ("evals/x.yaml",))
    assert not decision.run
    assert decision.reason == "fork PR #8 skipped"
    assert len(decision.notices) == 1
    assert "mallory/widgets" in decision.notices[0] and "no secrets" in decision.notices[0]
    assert "docs/github-action.md" in decision.notices[0]
    assert asked == []


def test_fork_pr_under_pull_request_target_runs_only_when_the_label_is_applied() -> None:
    decision, _ = _decide("pull_request_target", "pull_request_target_labeled_fork.json")
    assert decision.run and "maintainer applied" in decision.reason
    # A later push to the same fork PR (still labeled) must not run with secrets.
    decision, _ = _decide("pull_request_target", "pull_request_fork.json", ("evals/x.yaml",))
    assert not decision.run
    assert "re-apply it after new pushes" in decision.notices[0]


def test_other_events_are_skipped(tmp_path: Path) -> None:
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps({"action": "created"}))
    decision = decide(
        load_event("issue_comment", payload),
        label="run-evals",
        trigger_paths=(),
        changed_files=lambda pull: ChangedFiles((), True, "test"),
    )
    assert not decision.run and decision.reason == "the issue_comment event does not run evals"


def test_broken_payloads_are_config_errors(tmp_path: Path) -> None:
    payload = tmp_path / "event.json"
    payload.write_text('{"action": "opened",\n "pull_request": ')
    with pytest.raises(ConfigError) as bad_json:
        load_event("pull_request", payload)
    assert str(bad_json.value).startswith(f"{payload}:2:")
    payload.write_text(json.dumps({"action": "opened"}))
    with pytest.raises(ConfigError, match="has no pull_request"):
        load_event("pull_request", payload)
    with pytest.raises(ConfigError, match="GITHUB_EVENT_PATH is unset"):
        load_event("pull_request", None)
    with pytest.raises(ConfigError, match="missing.json is not a file"):
        load_event("pull_request", payload.parent / "missing.json")
    assert load_event("push", None).name == "push"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("evals/**", "evals/a/b.yaml", True),
        ("evals/**", "evals", False),
        ("evals/", "evals/x.json", True),
        ("*.md", "README.md", True),
        ("*.md", "docs/README.md", False),
        ("**.md", "docs/README.md", True),
        ("**/*.md", "README.md", True),
        ("src/**/test_*.py", "src/a/b/test_x.py", True),
        ("src/**/test_*.py", "src/test_x.py", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file/.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[a-c]x", "bx", True),
        ("[!a]x", "bx", True),
        ("[^a]x", "ax", False),
        ("a[!b]c", "a/c", False),  # a class is one character of a path segment, never `/`
        ("[]a].txt", "].txt", True),  # a `]` first in the class is a member
        ("[a&&b]", "&", True),  # regex set operators mean themselves
        # No POSIX classes: `[[:alpha:]` is a class of `[ : a l p h`, then a literal `]`.
        ("src/[[:alpha:]]*.py", "src/a].py", True),
        ("src/[[:alpha:]]*.py", "src/b.py", False),
        ("file[.txt", "file[.txt", True),  # an unclosed `[` is literal
        ("./assay.toml", "assay.toml", True),
        (".github/workflows/*eval*", ".github/workflows/evals.yml", True),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern).matches(path) is matches


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/**/*.yaml", "a/" * 1500 + "x.yaml", True),
        ("**/**/**/**/*.md", "d/" * 1500 + "e.mdx", False),
        ("a/**/**/b", "a/b", True),
        ("a/**/**/b", "a/x/y/b", True),
        ("**/**", "x/y", True),
    ],
)
def test_wildcards_in_a_row_match_as_one_and_fast(pattern: str, path: str, matches: bool) -> None:
    """The PR author names the files: `**/**/*.yaml` took 40 ms against a 3,000-character
    path (2 minutes over a 3,000-file PR), `**/**/**/**/*.md` seconds."""
    started = time.perf_counter()
    assert compile_glob(pattern).matches(path) is matches
    assert time.perf_counter() - started < 0.05


def test_brackets_inside_a_class_compile_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Python warns "Possible nested set" for a raw `[`
        assert compile_glob("lib/[[:digit:]-]*.c").matches("lib/[-]x.c")


def test_a_reversed_range_is_an_invalid_pattern_named_in_the_error() -> None:
    with pytest.raises(InvalidGlob, match="bad character range z-a"):
        compile_glob("evals/[z-a]*")
    with pytest.raises(InvalidGlob, match=r"^invalid pattern '!evals/\[z-a\]\*': bad char"):
        check_patterns(("evals/**", "!evals/[z-a]*"))
    check_patterns(DEFAULT_TRIGGER_PATHS)


@pytest.mark.parametrize("label", ["Run-Evals", "RUN-EVALS"])
def test_the_label_is_matched_ignoring_case(tmp_path: Path, label: str) -> None:
    def no_files(pull: PullRequestRef) -> ChangedFiles:
        raise AssertionError("the label alone decides")

    labeled = decide(
        load_event("pull_request", EVENTS / "pull_request_labeled_run_evals.json"),
        label=label,
        trigger_paths=DEFAULT_TRIGGER_PATHS,
        changed_files=no_files,
    )
    assert labeled.run and labeled.reason == f"PR #7 carries the {label!r} label"

    payload = json.loads((EVENTS / "pull_request_synchronize.json").read_text())
    payload["pull_request"]["labels"] = [{"name": "run-evals"}]
    (tmp_path / "event.json").write_text(json.dumps(payload))
    carried = decide(
        load_event("pull_request", tmp_path / "event.json"),
        label=label,
        trigger_paths=DEFAULT_TRIGGER_PATHS,
        changed_files=no_files,
    )
    assert carried.run and carried.reason == f"PR #7 carries the {label!r} label"


def test_negated_patterns_exclude_and_later_patterns_win() -> None:
    patterns = ("evals/**", "!evals/**/*.md", "evals/keep.md")
    assert first_match(["evals/notes.md"], patterns) is None
    assert first_match(["evals/keep.md"], patterns) == ("evals/keep.md", "evals/keep.md")
    assert first_match(["docs/a", "evals/a.yaml"], patterns) == ("evals/a.yaml", "evals/**")
