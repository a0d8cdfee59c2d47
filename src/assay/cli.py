"""The `assay` command line: a thin parser over the library, one module per command.

Every option can also come from an `ASSAY_<OPTION>` environment variable (`--max-errors`
-> `ASSAY_MAX_ERRORS`); the command line wins, and any other `ASSAY_*` variable set is
warned about (_cli/environment.py). Command modules are imported only when their command
runs, so `assay --version` and `assay validate` stay fast.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from assay._util.heap import exit_without_teardown, settle_after_startup
from assay._util.textout import DefusedStream
from assay._version import __version__
from assay.errors import ConfigError, OutputError, RunError
from assay.options import env_choice, env_flag, env_name, env_number, read_number

EXIT_PASS, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_OUTPUT_FAILED = 4
"""assay could not write its own files (full disk, read-only report dir). Not 3: PVYai's
own CLI uses 3, and a wrapper may pass either code through."""


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


def _select(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t",
        "--test",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only cases whose id contains PATTERN or matches it as a glob (repeatable)",
    )


def _json(p: argparse.ArgumentParser, what: str) -> None:
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
    unset instead (docs: README, "The commands")."""
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="assay",
        description="Behavioural evals for AI code-review and coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("validate", help="check suites without running anything")
    _paths(p)
    _root(p)
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _json(p, "the result")

    p = sub.add_parser("list", help="print the ids of the selected cases")
    _paths(p)
    _root(p)
    _select(p)
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _json(p, "the cases")

    p = sub.add_parser("run", help="run the selected cases and gate on the score")
    _paths(p)
    _root(p)
    _select(p)
    _run_options(p)

    p = sub.add_parser(
        "score", help="score an already-changed workspace for one task (PVYai run mode)"
    )
    p.add_argument("--suite", required=True, type=_path, help="the task suite JSON file")
    p.add_argument("--task", required=True, help="the task id")
    p.add_argument(
        "--workspace", required=True, type=_path, help="the git workspace the agent changed"
    )
    p.add_argument(
        "--trace", type=_path, help="a file of JSON-line trace events (the agent's stdout)"
    )
    p.add_argument(
        "--baseline",
        help="the commit the agent started from (default: the repository's root commit)",
    )
    p.add_argument(
        "--hidden-changes",
        choices=("warn", "fail"),
        default="warn",
        help="changes git status does not show (ignore rules the agent wrote, "
        ".git/info/exclude, skip-worktree or assume-unchanged entries): warn (default; "
        "PVYai's verdict) or fail the task",
    )
    _isolation_options(p, agents=False)
    _json(p, "PVYai's task report")

    p = sub.add_parser(
        "scaffold", help="turn a PR (URL or two local refs) into fixtures and a stub case"
    )
    p.add_argument(
        "pr_url", nargs="?", metavar="PR_URL", help="https://github.com/OWNER/REPO/pull/N"
    )
    p.add_argument(
        "--repo", type=_path, help="a local clone (use with --base and --head instead of a URL)"
    )
    p.add_argument("--base", help="base ref in --repo")
    p.add_argument("--head", help="head ref in --repo")
    p.add_argument("--category", default=None, help="scenario directory (default: security-review)")
    p.add_argument(
        "--side", choices=["base", "head"], default="base", help="which side's files to capture"
    )
    p.add_argument("--name", help="case name (default: the slugified PR title)")
    p.add_argument(
        "--root",
        default=None,
        type=_path,
        help="eval root to write into (default: configured root or .)",
    )
    p.add_argument(
        "--format",
        choices=["review", "rubric"],
        default="review",
        dest="fmt",
        help="write a review JSON scenario (default) or a rubric manifest entry",
    )
    p.add_argument(
        "--max-file-size",
        type=_whole_number,
        default=256 * 1024,
        help="skip files larger than this (bytes)",
    )
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.add_argument(
        "--no-license",
        action="store_true",
        help="copy no license: the code is your own and under none (a private repository);"
        " recorded in the case's notes ([tool.assay] scaffold_without_license = true)",
    )

    p = sub.add_parser(
        "ci",
        help="the GitHub Action's entry point; reads the GitHub environment",
        description="Decide from the event whether to run, run, publish and gate, as the "
        "Action does. Everything comes from the environment; there are no options.",
    )
    p.epilog_factory = _ci_epilog  # type: ignore[attr-defined]

    p = sub.add_parser("merge", help="combine shard reports and re-apply the gate")
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

    p = sub.add_parser("compare", help="per-case deltas between two reports")
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

    p = sub.add_parser("view", help="open report.html in a browser")
    p.add_argument(
        "report_dir",
        nargs="?",
        default=None,
        type=_path,
        metavar="REPORT_DIR",
        help="default assay-report",
    )

    p = sub.add_parser("history", help="list the runs kept in the run history")
    p.add_argument(
        "--flaky", action="store_true", help="list the cases whose pass/fail flipped across runs"
    )
    _json(p, "the history index")
    _history(p)

    p = sub.add_parser("schema", help="print the JSON Schema of a suite format or the report")
    p.add_argument("format", nargs="?", metavar="FORMAT", help="omit to list the formats")

    p = sub.add_parser("cache", help="inspect or prune a record/replay cache")
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


def _runtime_name(value: str) -> str:
    """`--runtime`: a name from the runtime registry (read only when the option is given,
    so building the parser imports no agent code and reads no plugin metadata)."""
    from assay.registry.runtimes import unknown_runtime

    problem = unknown_runtime(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        dest="models",
        action="append",
        default=[],
        metavar="M",
        help="model(s) for the agent; repeat or comma-separate for a matrix",
    )
    p.add_argument(
        "--judge-model", metavar="M", help="model for the judge (default: the subject's model)"
    )
    p.add_argument(
        "--runtime",
        type=_runtime_name,
        metavar="RUNTIME",
        help="agent runtime: builtin, command, claude, pi, an agent CLI preset (claude-code, "
        "codex, gemini-cli, opencode, aider) or a plugin's "
        "(default: command with --agent-command, else builtin)",
    )
    p.add_argument(
        "--agent-command",
        metavar="CMD",
        help="argv template of the agent under test, e.g. 'my-agent --cwd {workspace} {prompt}'",
    )
    p.add_argument(
        "--skill", type=_path, metavar="PATH", help="skill file overriding the suites' skill"
    )
    # None = not given: the runner decides (ASSAY_*, [tool.assay], the suite, the default).
    p.add_argument(
        "--concurrency",
        type=_whole_number,
        default=None,
        metavar="N",
        help="attempts in flight (default 8, with task cases one at a time beside the "
        "others, as PVYai runs them; given, it applies to tasks too)",
    )
    p.add_argument(
        "--repeat",
        type=_repeat,
        default=None,
        metavar="K|auto",
        help="attempts per case; the case score is their mean, disagreement marks it flaky; "
        "auto: once each, then more only where they can change the gate (up to --max-repeat)",
    )
    p.add_argument(
        "--max-repeat",
        type=_whole_number,
        default=None,
        metavar="K",
        help="the most attempts --repeat auto gives a case (default 5)",
    )
    p.add_argument(
        "--timeout",
        type=_number,
        default=None,
        metavar="SECONDS",
        help="per-attempt limit for the agent and the judge together; a task's agent alone, "
        "its verification commands keeping their own limits (default: [tool.assay] timeout, "
        "else the suite's harness timeoutMs, else 600)",
    )
    p.add_argument(
        "--threshold", type=_number, default=None, metavar="X", help="gate score (default 0.75)"
    )
    p.add_argument(
        "--max-errors",
        type=_whole_number,
        default=None,
        metavar="N",
        help="errors the gate tolerates (default 0)",
    )
    p.add_argument(
        "--require-all",
        action="store_true",
        help="fail the gate when any case is skipped (no model key, an --offline cache miss)",
    )
    p.add_argument(
        "--gate",
        choices=("threshold", "regression"),
        default=None,
        help="threshold: the score against --threshold (default); regression: fail when "
        "significantly worse than --baseline on the paired cases, or below --floor",
    )
    p.add_argument(
        "--baseline", default=None, type=_path, metavar="REPORT", help="report.json to gate against"
    )
    p.add_argument(
        "--floor", type=_number, default=None, metavar="X", help="regression gate's lowest score"
    )
    p.add_argument(
        "--inconclusive",
        choices=("score", "fail", "pass", "neutral"),
        default=None,
        help="the gate when the 95%% interval straddles the threshold: score (the point "
        "score decides, default), fail, pass, or neutral (exit 0; the Action posts a notice)",
    )
    p.add_argument(
        "--affected-by",
        default=None,
        metavar="REF",
        help="run only the cases whose suite file, fixtures, skill or base changed since REF "
        "(git diff REF...HEAD), or every case when a path matching --affects-all changed",
    )
    p.add_argument(
        "--affects-all",
        action="append",
        default=None,
        metavar="GLOB",
        help="with --affected-by: a changed path matching GLOB runs every case (repeatable; "
        "joined with [tool.assay] affects_all)",
    )
    p.add_argument(
        "--quarantine",
        action="append",
        default=None,
        metavar="CASE_ID",
        help="keep CASE_ID out of the gate; it still runs and is reported (repeatable, or "
        "comma-separated; joined with ASSAY_QUARANTINE and [tool.assay] quarantine)",
    )
    p.add_argument(
        "--errors-count-as",
        choices=("skip", "fail"),
        default=None,
        help="skip: errors leave the score (default, bounded by --max-errors); fail: the "
        "gate's score counts them as misses",
    )
    p.add_argument(
        "--hidden-changes",
        choices=("warn", "fail"),
        default=None,
        help="a task whose agent hid changes from git status (its own ignore rules): warn "
        "(default; PVYai's verdict, with a warning in every output) or fail the task",
    )
    p.add_argument(
        "--max-cost",
        type=_number,
        default=None,
        metavar="USD",
        help="stop starting cases once the estimated spend reaches USD",
    )
    p.add_argument(
        "--report-dir",
        default=None,
        type=_path,
        metavar="DIR",
        help="where reports go (default assay-report)",
    )
    _history(p)
    p.add_argument(
        "--work-root",
        default=None,
        type=_path,
        metavar="DIR",
        help="where sandboxes are made (default: a temp dir)",
    )
    p.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="keep each attempt's sandbox (its path is in report.json) instead of removing it",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="build every sandbox and print it; run nothing"
    )
    _json(p, "report.json")
    p.add_argument("--shard", metavar="I/N", help="run only shard I of N (1-based)")
    p.add_argument("--cache", type=_path, metavar="DIR", help="record/replay model calls under DIR")
    p.add_argument(
        "--offline", action="store_true", help="replay from --cache only; misses are skipped"
    )
    p.add_argument(
        "--bridge",
        choices=["on", "off"],
        default=None,
        help="agent CLI presets' model calls through assay's model layer (default on)",
    )
    p.add_argument(
        "--resume", type=_path, metavar="DIR", help="continue the run whose report dir is DIR"
    )
    p.add_argument(
        "--pvyai-report",
        action="store_true",
        help="also write task results as PVYai's benchmark report (agent-eval-report.json)",
    )
    p.add_argument(
        "--judge-prompt",
        choices=("assay", "cassandra"),
        default=None,
        help="the rubric judge's prompt (default per format: cassandra for Cassandra suites)",
    )
    p.add_argument(
        "--cassandra-report",
        action="store_true",
        help="also write rubric results as Cassandra's results JSON (cassandra-results.json)",
    )
    p.add_argument("--strict", action="store_true", help="unknown keys are errors, not warnings")
    _isolation_options(p)


def _isolation_options(p: argparse.ArgumentParser, *, agents: bool = True) -> None:
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
    from assay.options import options_from_environ
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


def _history(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--history",
        default=None,
        type=_path,
        metavar="DIR",
        help="the run history (default .assay-history beside the report directory)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except ConfigError as exc:  # a bad ASSAY_* value
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from assay._cli.environment import unknown_variable_warnings

    for warning in unknown_variable_warnings(os.environ, parser):  # a mistyped ASSAY_* name
        print(f"warning: {warning}", file=sys.stderr)
    # What the user typed, for messages that print a command to continue (`--resume`).
    args.argv = list(sys.argv[1:] if argv is None else argv)
    module = importlib.import_module(f"assay._cli.{args.command}")
    if argv is None:  # assay is the program: what exists now lives until it exits
        settle_after_startup()
    stderr = sys.stderr
    if args.command != "ci":  # which guards both streams itself
        sys.stderr = DefusedStream(stderr)  # type: ignore[assignment]
    try:
        return _dispatch(module, args)
    finally:
        sys.stderr = stderr


def _dispatch(module: Any, args: argparse.Namespace) -> int:
    """Run the command; a user's mistake is one line and its exit code, not a traceback."""
    try:
        return int(module.command(args))
    except ConfigError as exc:
        print(f"assay: error: {exc}" if "\n" not in str(exc) else f"{exc}", file=sys.stderr)
        return EXIT_USAGE
    except OutputError as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_OUTPUT_FAILED
    except RunError as exc:  # outside a run, where attempts keep their own (`assay score`)
        print(f"assay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("assay: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader left early (`assay list | head -1`): nothing is wrong and nothing more
        # can be said. Point stdout at /dev/null so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_GATE_FAILED


def run_program() -> NoReturn:
    """The `assay` console script: `main()` as the process, which ends with its exit code."""
    exit_without_teardown(main())


if __name__ == "__main__":  # pragma: no cover
    run_program()
