"""The `assay` command line's parser: every command and option, one module per command.

Every option can also come from an `ASSAY_<OPTION>` environment variable (`--max-errors`
-> `ASSAY_MAX_ERRORS`); the command line wins, and any other `ASSAY_*` variable set is
warned about (_cli/environment.py). Command modules are imported only when their command
runs, so `assay --version` and `assay validate` stay fast.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
from collections.abc import Callable
from typing import Any, NoReturn

from assay._version import __version__
from assay.errors import ConfigError
from assay.options import (
    env_choice,
    env_flag,
    env_name,
    env_number,
    options_from_environ,
    read_number,
)


class _Parser(argparse.ArgumentParser):
    """argparse with a did-you-mean for mistyped options and commands.

    `epilog_factory` builds the epilog only when help is shown (the `ci` help lists the
    Action's inputs, which would otherwise cost every command an import of them).
    """

    epilog_factory: Callable[[], str] | None = None

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self._subcommand(getattr(parsed, "command", None))
            known = [o for a in command._actions for o in a.option_strings] if command else []
            hints = [_option_hint(word, known) for word in extras if word.startswith("-")]
            suffix = "".join(f" ({hint})" for hint in hints if hint)
            (command or self).error(f"unrecognized arguments: {' '.join(extras)}{suffix}")
        return parsed

    def error(self, message: str) -> NoReturn:
        match = _INVALID_CHOICE.search(message)
        if match:
            close = difflib.get_close_matches(match[1], re.findall(r"'([^']*)'", match[2]), n=1)
            if close:
                message += f"; did you mean {close[0]!r}?"
        super().error(message)

    def format_help(self) -> str:
        if self.epilog_factory is not None:
            self.epilog = self.epilog_factory()
        return super().format_help()

    def _subcommand(self, name: str | None) -> argparse.ArgumentParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and name in action.choices:
                return action.choices[name]  # type: ignore[no-any-return]
        return None


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


def _option_hint(word: str, known: list[str]) -> str | None:
    given = word.split("=", 1)[0]
    close = difflib.get_close_matches(given, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]}?" if close else None


def _ci_epilog() -> str:
    # lazy: start-up (a command loads only what it runs)
    from assay.action.inputs import ACTION_ONLY_INPUTS, MODEL_KEY_VARIABLES, ActionInputs

    inputs = ", ".join(name.replace("_", "-") for name in ActionInputs.model_fields)
    keys = ", ".join(
        f"{variable} (the {field.replace('_', '-')} input)"
        for field, variable in MODEL_KEY_VARIABLES.items()
    )
    return (
        f"Inputs (INPUT_<NAME>, as action.yml passes them, e.g. INPUT_MAX_ERRORS; also read "
        f"as ASSAY_<NAME>): {inputs}; action.yml's own: {', '.join(ACTION_ONLY_INPUTS)}. "
        "Every `assay run` option also reads ASSAY_<OPTION> (e.g. ASSAY_AGENT_COMMAND, "
        "ASSAY_REQUIRE_ALL). From the runner: GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, "
        "GITHUB_REPOSITORY, GITHUB_WORKSPACE, GITHUB_SHA, GITHUB_API_URL, GITHUB_SERVER_URL, "
        "GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_WORKFLOW, GITHUB_WORKFLOW_REF, GITHUB_JOB, "
        f"GITHUB_RUN_ID, RUNNER_TEMP. Model keys: {keys}."
    )


def _paths(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        type=_path,
        metavar="PATH",
        help="suite files or directories (default: configured paths or .)",
    )


def _root(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--root",
        default=None,
        type=_path,
        metavar="DIR",
        help="the eval root Warden paths resolve against (default: [tool.assay] root, else "
        "each PATH's own directory)",
    )


def _select(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The selection options `run` and `list` share: which cases, of which shard, against
    which models. One definition, so `assay list` shows what the same `assay run` runs."""
    g = p.add_argument_group("selection")
    g.add_argument(
        "-t",
        "--test",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only cases whose id contains PATTERN or matches it as a glob (repeatable)",
    )
    g.add_argument(
        "--affected-by",
        default=None,
        metavar="REF",
        help="only the cases whose suite file, fixtures, skill or base changed since REF "
        "(git diff REF...HEAD), or every case when a path matching --affects-all changed",
    )
    g.add_argument(
        "--affects-all",
        action="append",
        default=None,
        metavar="GLOB",
        help="with --affected-by: a changed path matching GLOB selects every case (repeatable; "
        "joined with [tool.assay] affects_all)",
    )
    g.add_argument("--shard", metavar="I/N", help="only shard I of N (1-based)")
    return g


def _models(g: argparse._ActionsContainer) -> None:
    g.add_argument(
        "--model",
        dest="models",
        action="append",
        default=[],
        metavar="M",
        help="model(s) for the agent; repeat or comma-separate for a matrix",
    )


def _json(p: argparse._ActionsContainer, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON on stdout")


def _number(text: str) -> float:
    """A number option (`--threshold 0.8`), by `read_number`'s rules: `1_0` is refused."""
    try:
        return float(read_number(text, float))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is {exc}") from None


def _whole_number(text: str) -> int:
    """A whole-number option (`--concurrency 4`), by `read_number`'s rules."""
    try:
        return int(read_number(text, int))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is {exc}") from None


_NUMBER_KINDS: dict[object, type[int] | type[float]] = {_number: float, _whole_number: int}
"""Each number option's type and the kind an `ASSAY_*` value of it is read as."""


def _path(text: str) -> str:
    """A path option or argument. Given empty (`--report-dir ""`, an unset shell variable
    in quotes), it would be read as the current directory or dropped for the default:
    either way not what was typed, so it is a usage error. An empty `ASSAY_*` variable is
    unset instead (docs/reference.md, "Configuration and its precedence")."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    return text


def _repeat(text: str) -> int | str:
    """`--repeat K` or `--repeat auto`."""
    if text == "auto":
        return text
    try:
        return int(read_number(text, int))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not auto and {exc}") from None


_RUN_EXAMPLES = """\
examples:
  assay run evals                                  every suite under evals/
  assay run evals -t null-access --repeat 3        one case, three attempts
  assay run evals --model anthropic/claude-sonnet-4-6,openai/gpt-5
  assay run evals --agent-command 'my-agent --cwd {workspace} {prompt}'
  assay run evals --runtime claude-code --affected-by origin/main
  assay run evals --keep-workspaces --report-dir /tmp/r   keep every sandbox to look at
  assay doctor evals                               what a run here would do, and why

Every option also reads ASSAY_<OPTION> (--max-errors: ASSAY_MAX_ERRORS); the command line
wins.
"""


def _examples(*commands: str) -> str:
    return "examples:\n" + "".join(f"  {command}\n" for command in commands)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="assay",
        description="Behavioural evals for AI code-review and coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "validate",
        help="check suites without running anything",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples("assay validate evals", "assay validate --strict --json evals"),
    )
    _paths(p)
    _root(p)
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _json(p, "the result")

    p = sub.add_parser(
        "doctor",
        help="say what a run here would do and why: sandbox, keys, git, skipped cases",
        description="Check this machine for `assay run PATH...` without running anything:\n"
        "the OS sandbox (bwrap, user namespaces, what --isolation auto picks), each\n"
        "provider's credentials (variable names only), git, which cases would be skipped\n"
        "and why, and the GitHub Actions environment when inside one.\n"
        "Exit 0 when a run would score something, 1 when something blocks it.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  assay doctor evals\n  assay doctor --json evals | jq .blockers",
    )
    _paths(p)
    _root(p)
    _json(p, "the findings")

    p = sub.add_parser(
        "list",
        help="print the ids of the selected cases",
        description="Print the ids of the cases `assay run` would run with the same\n"
        "selection options (with --model, one line per case and model).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        "  assay list evals -t security\n"
        "  assay list evals --affected-by origin/main\n"
        "  assay list evals --shard 1/4 --model anthropic/claude-sonnet-4-6",
    )
    _paths(p)
    _root(p)
    _models(_select(p))
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _json(p, "the cases")

    p = sub.add_parser(
        "run",
        help="run the selected cases and gate on the score",
        description="Run the selected cases, write the report directory (report.json,\n"
        "summary.md, junit.xml, report.html) and gate on the score.\n"
        "Exit 0: the gate passed; 1: it failed; 2: a usage or configuration error (nothing\n"
        "ran); 130: interrupted.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_RUN_EXAMPLES,
    )
    _paths(p)
    _root(p)
    _select(p)
    _run_options(p)

    p = sub.add_parser(
        "check",
        help="prove every selected case can pass and can fail",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "assay check evals", "assay check evals -t billing --cache .assay-cache --offline"
        ),
    )
    _check_options(p)

    p = sub.add_parser(
        "score",
        help="score an already-changed workspace for one task (PVYai run mode)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "assay score --suite tasks.json --task fix-nil --workspace ./ws --trace trace.jsonl"
        ),
    )
    task = p.add_argument_group("the task and what the agent did")
    task.add_argument("--suite", required=True, type=_path, help="the task suite JSON file")
    task.add_argument("--task", required=True, help="the task id")
    task.add_argument(
        "--workspace", required=True, type=_path, help="the git workspace the agent changed"
    )
    task.add_argument(
        "--trace", type=_path, help="a file of JSON-line trace events (the agent's stdout)"
    )
    task.add_argument(
        "--baseline",
        help="the commit the agent started from (default: the repository's root commit)",
    )
    task.add_argument(
        "--hidden-changes",
        choices=("warn", "fail"),
        default="warn",
        help="changes git status does not show (ignore rules the agent wrote, "
        ".git/info/exclude, skip-worktree or assume-unchanged entries): warn (default; "
        "PVYai's verdict) or fail the task",
    )
    _isolation_options(p.add_argument_group("isolation of the verification commands"), agents=False)
    _json(p, "PVYai's task report")

    p = sub.add_parser(
        "scaffold",
        help="turn a PR (URL or two local refs) into fixtures and a stub case",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "assay scaffold https://github.com/acme/app/pull/42 --root evals",
            "assay scaffold --repo ../app --base main --head fix-auth --name missing-auth",
            "assay scaffold https://github.com/acme/app/pull/42 --format rubric",
            "assay scaffold https://github.com/acme/app/pull/42 --draft --cache .assay-cache",
        ),
    )
    p.add_argument(
        "pr_url", nargs="?", metavar="PR_URL", help="https://github.com/OWNER/REPO/pull/N"
    )
    source = p.add_argument_group("a local pull request (instead of PR_URL)")
    source.add_argument(
        "--repo", type=_path, help="a local clone (use with --base and --head instead of a URL)"
    )
    source.add_argument("--base", help="base ref in --repo")
    source.add_argument("--head", help="head ref in --repo")
    written = p.add_argument_group("what is written")
    written.add_argument(
        "--category", default=None, help="scenario directory (default: security-review)"
    )
    written.add_argument(
        "--side", choices=["base", "head"], default="base", help="which side's files to capture"
    )
    written.add_argument("--name", help="case name (default: the slugified PR title)")
    written.add_argument(
        "--root",
        default=None,
        type=_path,
        help="eval root to write into (default: configured root or .)",
    )
    written.add_argument(
        "--format",
        choices=["review", "rubric"],
        default="review",
        dest="fmt",
        help="write a review JSON scenario (default) or a rubric manifest entry",
    )
    written.add_argument(
        "--max-file-size",
        type=_whole_number,
        default=256 * 1024,
        help="skip files larger than this (bytes)",
    )
    written.add_argument("--force", action="store_true", help="overwrite existing files")
    written.add_argument(
        "--no-license",
        action="store_true",
        help="copy no license: the code is your own and under none (a private repository);"
        " recorded in the case's notes ([tool.assay] scaffold_without_license = true)",
    )
    drafting = p.add_argument_group("a drafted case (instead of the TODO placeholder)")
    drafting.add_argument(
        "--draft",
        action="store_true",
        help="have a model draft should_find/should_not_find (or the rubric) from the fix,"
        " marked as a draft until you edit it",
    )
    drafting.add_argument(
        "--model",
        metavar="M",
        help="the model that drafts (default: the configured judge model, else assay's default)",
    )
    drafting.add_argument(
        "--cache", type=_path, metavar="DIR", help="record/replay the drafting call under DIR"
    )
    drafting.add_argument(
        "--offline", action="store_true", help="replay the draft from --cache only"
    )

    p = sub.add_parser(
        "ci",
        help="the GitHub Action's entry point; reads the GitHub environment",
        description="Decide from the event whether to run, run, publish and gate, as the "
        "Action does. Everything comes from the environment; there are no options.",
    )
    p.epilog_factory = _ci_epilog  # type: ignore[attr-defined]

    p = sub.add_parser(
        "merge",
        help="combine shard reports and re-apply the gate",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples("assay merge shard-*/report.json -o assay-report/report.json"),
    )
    p.add_argument(
        "reports",
        nargs="+",
        type=_path,
        metavar="REPORT",
        help="shard report.json files, or report directories holding one",
    )
    p.add_argument(
        "-o", "--output", required=True, type=_path, help="where to write the merged report.json"
    )
    p.add_argument(
        "--threshold",
        type=_number,
        default=None,
        metavar="X",
        help="gate score (default: the highest of the reports' thresholds)",
    )
    p.add_argument(
        "--max-errors",
        type=_whole_number,
        default=None,
        metavar="N",
        help="errors the gate tolerates (default: the lowest of the reports' values)",
    )
    _history(p)

    p = sub.add_parser(
        "compare",
        help="per-case deltas between two reports",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "assay compare @main assay-report", "assay compare base/ head/ --fail-on-regression"
        ),
    )
    p.add_argument(
        "base",
        type=_path,
        metavar="BASE",
        help="the earlier report.json (or its directory), or from the history: "
        "@last, @BRANCH (its newest run, e.g. @main) or a run id",
    )
    p.add_argument(
        "head", type=_path, metavar="HEAD", help="the later report (the same forms as BASE)"
    )
    _json(p, "the comparison")
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any case newly fails, or when no case can be compared",
    )
    _history(p)

    p = sub.add_parser(
        "export",
        help="write a finished run in another tool's format",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "assay export --inspect assay-report", "assay export --inspect assay-report -o logs/"
        ),
    )
    formats = p.add_mutually_exclusive_group(required=True)
    formats.add_argument(
        "--inspect",
        action="store_true",
        help="as an inspect eval log, which `inspect view` opens (docs/inspect.md)",
    )
    p.add_argument(
        "report_dir", type=_path, metavar="REPORT_DIR", help="the run's report directory"
    )
    p.add_argument(
        "-o",
        "--output",
        type=_path,
        default=None,
        metavar="FILE",
        help="where to write it (default REPORT_DIR/inspect-log.json; a directory: under "
        "the name `inspect view` lists; -: stdout)",
    )

    p = sub.add_parser(
        "regrade",
        help="grade a run's saved answers again (judge, prompt, expectations), no agent run",
        description="Grade the answers a run saved (cases/.../answer.json) again, with today's\n"
        "judge prompt, the judge model asked for and the suites as they are now, without\n"
        "running any agent; write a new report linked to the original (run.regraded_from).\n"
        "Exit 0: the gate passed; 1: it failed; 2: a usage or configuration error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "assay regrade assay-report",
            "assay regrade assay-report evals --judge-model openai/gpt-5 -t code-review",
            "assay compare assay-report assay-report-regraded",
        ),
    )
    _regrade_options(p)

    p = sub.add_parser("view", help="open report.html in a browser")
    p.add_argument(
        "report_dir",
        nargs="?",
        default=None,
        type=_path,
        metavar="REPORT_DIR",
        help="default assay-report",
    )

    p = sub.add_parser(
        "history",
        help="list the runs kept in the run history",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples("assay history", "assay history --flaky --json"),
    )
    p.add_argument(
        "--flaky", action="store_true", help="list the cases whose pass/fail flipped across runs"
    )
    _json(p, "the history index")
    _history(p)

    p = sub.add_parser("schema", help="print the JSON Schema of a suite format or the report")
    p.add_argument("format", nargs="?", metavar="FORMAT", help="omit to list the formats")

    p = sub.add_parser(
        "cache",
        help="inspect or prune a record/replay cache",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "assay cache stats --cache .assay-cache",
            "assay cache prune --cache .assay-cache --older-than 30",
        ),
    )
    p.add_argument(
        "action", choices=["stats", "prune"], help="stats: count and size; prune: remove entries"
    )
    p.add_argument("--cache", required=True, type=_path, metavar="DIR", help="the cache directory")
    p.add_argument(
        "--older-than",
        type=_number,
        default=None,
        metavar="DAYS",
        help="prune: remove entries not used for this many days (default: all)",
    )

    _apply_env_defaults(parser)
    return parser


def _regrade_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source",
        type=_path,
        metavar="REPORT_DIR",
        help="the report directory of the run whose answers are graded again",
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=_path,
        metavar="PATH",
        help="suite files or directories (default: the suite files the report names)",
    )
    _root(p)
    p.add_argument(
        "-t",
        "--test",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only the report's cases whose id contains PATTERN or matches it as a glob "
        "(repeatable)",
    )
    judge = p.add_argument_group("the judge")
    judge.add_argument(
        "--judge-model",
        metavar="M",
        help="model for the judge (default: the model that judged each case)",
    )
    judge.add_argument(
        "--judge-prompt",
        choices=("assay", "cassandra"),
        default=None,
        help="the rubric judge's prompt (default per format: cassandra for Cassandra suites)",
    )
    _record_replay(judge)
    out = p.add_argument_group("the new report")
    out.add_argument(
        "--report-dir",
        default=None,
        type=_path,
        metavar="DIR",
        help="where the new report goes (default: REPORT_DIR-regraded; never REPORT_DIR)",
    )
    out.add_argument(
        "--threshold",
        type=_number,
        default=None,
        metavar="X",
        help="gate score (default: the original run's)",
    )
    _json(out, "report.json")


def _runtime_name(value: str) -> str:
    """`--runtime`: a name from the runtime registry (read only when the option is given,
    so building the parser imports no agent code and reads no plugin metadata)."""
    # lazy: start-up (a command loads only what it runs)
    from assay.registry.runtimes import unknown_runtime

    problem = unknown_runtime(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def _run_options(p: argparse.ArgumentParser) -> None:
    agent = p.add_argument_group("agent and models")
    _models(agent)
    agent.add_argument(
        "--judge-model", metavar="M", help="model for the judge (default: the subject's model)"
    )
    agent.add_argument(
        "--runtime",
        type=_runtime_name,
        metavar="RUNTIME",
        help="agent runtime: builtin, command, claude, pi, an agent CLI preset (claude-code, "
        "codex, gemini-cli, opencode, aider) or a plugin's "
        "(default: command with --agent-command, else builtin)",
    )
    agent.add_argument(
        "--agent-command",
        metavar="CMD",
        help="argv template of the agent under test, e.g. 'my-agent --cwd {workspace} {prompt}'",
    )
    agent.add_argument(
        "--skill", type=_path, metavar="PATH", help="skill file overriding the suites' skill"
    )
    # None = not given: the runner decides (ASSAY_*, [tool.assay], the suite, the default).
    agent.add_argument(
        "--concurrency",
        type=_whole_number,
        default=None,
        metavar="N",
        help="attempts in flight (default 8, with task cases one at a time beside the "
        "others, as PVYai runs them; given, it applies to tasks too)",
    )
    agent.add_argument(
        "--timeout",
        type=_number,
        default=None,
        metavar="SECONDS",
        help="per-attempt limit for the agent and the judge together; a task's agent alone, "
        "its verification commands keeping their own limits (default: [tool.assay] timeout, "
        "else the suite's harness timeoutMs, else 600)",
    )
    agent.add_argument(
        "--judge-prompt",
        choices=("assay", "cassandra"),
        default=None,
        help="the rubric judge's prompt (default per format: cassandra for Cassandra suites)",
    )
    agent.add_argument(
        "--bridge",
        choices=["on", "off"],
        default=None,
        help="agent CLI presets' model calls through assay's model layer (default on)",
    )
    gate = p.add_argument_group("repeats and gate")
    gate.add_argument(
        "--repeat",
        type=_repeat,
        default=None,
        metavar="K|auto",
        help="attempts per case; the case score is their mean, disagreement marks it flaky; "
        "auto: once each, then more only where they can change the gate (up to --max-repeat)",
    )
    gate.add_argument(
        "--max-repeat",
        type=_whole_number,
        default=None,
        metavar="K",
        help="the most attempts --repeat auto gives a case (default 5)",
    )
    gate.add_argument(
        "--min-pass",
        type=_whole_number,
        default=None,
        metavar="N",
        help="with --repeat K: a case passes only when at least N of its K attempts pass "
        "(default: all must; the score is then the fraction of cases that pass)",
    )
    gate.add_argument(
        "--threshold", type=_number, default=None, metavar="X", help="gate score (default 0.75)"
    )
    gate.add_argument(
        "--max-errors",
        type=_whole_number,
        default=None,
        metavar="N",
        help="errors the gate tolerates (default 0)",
    )
    gate.add_argument(
        "--require-all",
        action="store_true",
        help="fail the gate when any case is skipped (no model key, an --offline cache miss)",
    )
    gate.add_argument(
        "--gate",
        choices=("threshold", "regression"),
        default=None,
        help="threshold: the score against --threshold (default); regression: fail when "
        "significantly worse than --baseline on the paired cases, or below --floor",
    )
    gate.add_argument(
        "--baseline", default=None, type=_path, metavar="REPORT", help="report.json to gate against"
    )
    gate.add_argument(
        "--floor", type=_number, default=None, metavar="X", help="regression gate's lowest score"
    )
    gate.add_argument(
        "--inconclusive",
        choices=("score", "fail", "pass", "neutral"),
        default=None,
        help="the gate when the 95%% interval straddles the threshold: score (the point "
        "score decides, default), fail, pass, or neutral (exit 0; the Action posts a notice)",
    )
    gate.add_argument(
        "--quarantine",
        action="append",
        default=None,
        metavar="CASE_ID",
        help="keep CASE_ID out of the gate; it still runs and is reported (repeatable, or "
        "comma-separated; joined with ASSAY_QUARANTINE and [tool.assay] quarantine)",
    )
    gate.add_argument(
        "--errors-count-as",
        choices=("skip", "fail"),
        default=None,
        help="skip: errors leave the score (default, bounded by --max-errors); fail: the "
        "gate's score counts them as misses",
    )
    gate.add_argument(
        "--hidden-changes",
        choices=("warn", "fail"),
        default=None,
        help="a task whose agent hid changes from git status (its own ignore rules): warn "
        "(default; PVYai's verdict, with a warning in every output) or fail the task",
    )
    gate.add_argument(
        "--max-cost",
        type=_number,
        default=None,
        metavar="USD",
        help="stop starting cases once the estimated spend reaches USD",
    )
    iso = p.add_argument_group("isolation and workspaces")
    iso.add_argument(
        "--work-root",
        default=None,
        type=_path,
        metavar="DIR",
        help="where sandboxes are made (default: a temp dir)",
    )
    iso.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="keep each attempt's sandbox (its path is in report.json) instead of removing it",
    )
    iso.add_argument(
        "--dry-run", action="store_true", help="build every sandbox and print it; run nothing"
    )
    _isolation_options(iso)

    out = p.add_argument_group("output")
    out.add_argument(
        "--report-dir",
        default=None,
        type=_path,
        metavar="DIR",
        help="where reports go (default assay-report)",
    )
    _json(out, "report.json")
    out.add_argument(
        "--pvyai-report",
        action="store_true",
        help="also write task results as PVYai's benchmark report (agent-eval-report.json)",
    )
    out.add_argument(
        "--cassandra-report",
        action="store_true",
        help="also write rubric results as Cassandra's results JSON (cassandra-results.json)",
    )
    out.add_argument(
        "--inspect-log",
        action="store_true",
        help="also write the run as an inspect eval log (inspect-log.json; docs/inspect.md)",
    )
    out.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    ci = p.add_argument_group(
        "Action / CI",
        "In GitHub Actions the Action runs `assay ci`, which reads its inputs from the\n"
        "environment. Every option also reads ASSAY_<OPTION> (--max-errors: ASSAY_MAX_ERRORS).",
    )
    _history(ci)
    _record_replay(ci)
    ci.add_argument(
        "--resume", type=_path, metavar="DIR", help="continue the run whose report dir is DIR"
    )


def _check_options(p: argparse.ArgumentParser) -> None:
    """`assay check`'s options: a run's selection, judge, cache, concurrency and timeout."""
    _paths(p)
    _root(p)
    _select(p)
    grading = p.add_argument_group("grading")
    grading.add_argument(
        "--judge-model", metavar="M", help="model for the judge (default: as `assay run` picks)"
    )
    _record_replay(grading)
    grading.add_argument(
        "--concurrency",
        type=_whole_number,
        default=None,
        metavar="N",
        help="answers graded at once (default 8, task cases one at a time)",
    )
    grading.add_argument(
        "--timeout",
        type=_number,
        default=None,
        metavar="SECONDS",
        help="per-answer limit, as `assay run`'s --timeout",
    )
    _json(p, "the result (assay.check.v1)")


def _record_replay(group: argparse._ActionsContainer) -> None:
    """`--cache DIR` and `--offline`, as every command that calls a model takes them."""
    group.add_argument(
        "--cache", type=_path, metavar="DIR", help="record/replay model calls under DIR"
    )
    group.add_argument(
        "--offline", action="store_true", help="replay from --cache only; misses are skipped"
    )


def _isolation_options(p: argparse._ActionsContainer, *, agents: bool = True) -> None:
    """The sandbox's options; `assay score` runs no agent (`agents=False`)."""
    p.add_argument(
        "--isolation",
        choices=["auto", "bwrap", "none"],
        default=None,
        help="OS sandbox for agents and verification commands (default auto: bwrap if it works)",
    )
    for who in ("agent", "command") if agents else ("command",):
        p.add_argument(
            f"--{who}-network",
            choices=["on", "off"],
            default=None,
            help=f"network for {who}s inside the sandbox (default on)",
        )
    p.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="let verification commands see this credential-shaped variable (repeatable)",
    )


def _apply_env_defaults(parser: argparse.ArgumentParser) -> None:
    """Let `ASSAY_<OPTION>` set any option's default (the command line still wins).

    A value the option would refuse on the command line is refused here too, naming the
    variable: ConfigError, before any command runs.
    """
    for command_name, sub in commands(parser).items():
        if command_name == "run":
            _check_run_environment(sub)
            continue
        for action in sub._actions:
            name = option_variable(action)
            if name is None:
                continue
            value = os.environ.get(name)
            if value is None or value == "":
                continue
            action.default = _env_value(action, name, value)
            if action.required:
                action.required = False


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def option_variable(action: argparse.Action) -> str | None:
    """The `ASSAY_*` variable an option also reads (`--max-errors` -> ASSAY_MAX_ERRORS);
    None for an argument (PATH) and for --help."""
    if not action.option_strings or action.dest == "help":
        return None
    return env_name(max(action.option_strings, key=len))


def _check_run_environment(run: argparse.ArgumentParser) -> None:
    """`assay run` passes the runner only what was typed: the runner reads ASSAY_* itself
    (`assay.options.options_from_environ`), as it does for `assay.run()`. A bad value is
    still refused before any command runs, by that same reader."""
    # lazy: start-up (a command loads only what it runs)
    from assay.registry.runtimes import unknown_runtime

    options_from_environ(os.environ, runtime_problem=unknown_runtime)


def _env_value(action: argparse.Action, name: str, value: str) -> object:
    """`value` as the option reads it, by the rules `assay run`'s runner reads them with."""
    if isinstance(action, argparse._StoreTrueAction):
        return env_flag(name, value)
    if isinstance(action, argparse._AppendAction):
        return [value]
    kind = _NUMBER_KINDS.get(action.type)
    if kind is not None:
        converted: object = env_number(name, value, kind)
    else:
        try:
            converted = action.type(value) if callable(action.type) else value
        except argparse.ArgumentTypeError as exc:  # e.g. a runtime no registry knows
            raise ConfigError(f"{name}={value!r}: {exc}") from None
    if action.choices is not None:
        return env_choice(name, str(converted), tuple(map(str, action.choices)))
    return converted


def _history(p: argparse._ActionsContainer) -> None:
    p.add_argument(
        "--history",
        default=None,
        type=_path,
        metavar="DIR",
        help="the run history (default .assay-history beside the report directory)",
    )
