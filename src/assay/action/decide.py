"""Run or skip: the decision for this event, as the Action's first step and inside `assay ci`.

action.yml runs this file with the runner's bare Python before it installs anything:

    PYTHONPATH="$GITHUB_ACTION_PATH/src" python -P -s -m assay.action.decide

so a skipped event finishes in seconds. It writes the step outputs `ran` and `reason`;
the later steps (install, sandbox, evals) run only when `ran` is `true`. `assay ci` uses
the same `decide_event` when it runs on its own (outside the Action), so there is one
decision. Everything this imports is standard library (tests/test_action_decide.py keeps it
so): the payload is read as plain JSON, the PR's files through urllib (rest.py).

`-P` matters: the working directory is the checkout of a possibly hostile PR, and `-m`
would otherwise put it first on sys.path (a `json.py` there would run); `-s` leaves out
the runner user's site-packages.

Exit codes as `assay ci`'s: 0 decided (run or skip), 2 configuration error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assay.action import commands
from assay.action.changed_files import foreign_checkout, list_changed_files
from assay.action.environment import RunnerEnvironment
from assay.action.event import Decision, GitHubEvent, decide, load_event
from assay.action.globs import InvalidGlob, check_patterns
from assay.action.input_text import (
    DEFAULT_LABEL,
    DEFAULT_TRIGGER_PATHS,
    input_location,
    raw_input,
    split_list,
)
from assay.action.outputs import RunnerFileError, report_and_continue, write_outputs
from assay.action.problems import report_config_error, report_unexpected_error
from assay.action.rest import RestReader
from assay.core.exit_codes import EXIT_PASS, EXIT_USAGE
from assay.errors import ConfigError

__all__ = ["DecisionInputs", "announce", "decide_event", "main", "read_decision_inputs"]

EXIT_DECIDED = EXIT_PASS
"""Decided (run or skip, said in the step's outputs)."""


@dataclass(frozen=True)
class DecisionInputs:
    label: str
    trigger_paths: tuple[str, ...]
    token: str | None


def read_decision_inputs(
    environ: Mapping[str, str], *, workflow_file: Path | None
) -> DecisionInputs:
    """The three inputs the decision needs, checked as inputs.py checks them."""
    label = (raw_input(environ, "label") or DEFAULT_LABEL).strip()
    raw_paths = raw_input(environ, "trigger-paths")
    trigger_paths = DEFAULT_TRIGGER_PATHS if raw_paths is None else split_list(raw_paths)
    try:
        check_patterns(trigger_paths)
    except InvalidGlob as exc:
        raise ConfigError(
            f"input `trigger-paths`: {exc}", input_location(workflow_file, "trigger-paths")
        ) from None
    token = raw_input(environ, "github-token") or environ.get("GITHUB_TOKEN", "")
    return DecisionInputs(label, trigger_paths, token.strip() or None)


def decide_event(
    env: RunnerEnvironment, *, label: str, trigger_paths: tuple[str, ...], token: str | None
) -> tuple[GitHubEvent, Decision]:
    """The event and whether it runs the evals; the PR's files are listed only if needed."""
    event = load_event(env.event_name, env.event_path)
    api = RestReader(env.api_url, token) if token else None
    decision = decide(
        event,
        label=label,
        trigger_paths=trigger_paths,
        changed_files=lambda pull: list_changed_files(
            pull,
            api=api,
            repository=env.repository,
            workspace=env.workspace,
            not_the_pr=foreign_checkout(
                event.name, pull, workspace=env.workspace, merge_sha=env.sha
            ),
        ),
    )
    return event, decision


def announce(event: GitHubEvent, decision: Decision) -> None:
    pull = event.pull_request
    if pull is not None:
        commands.log(f"assay: {event.name} ({event.action}) on PR #{pull.number}: {pull.title}")
    verdict = "running the evals" if decision.run else "skipping the evals"
    commands.log(f"assay: {verdict}: {decision.reason}")
    for text in decision.warnings:
        commands.warning(text)
    for text in decision.notices:
        commands.notice(text, title="assay: evals skipped")


def main(environ: Mapping[str, str] | None = None) -> int:
    """Decide, print why, and write the `ran` and `reason` outputs."""
    environ = os.environ if environ is None else environ
    with commands.guarded_output():
        try:
            return _decide_and_write(environ)
        except Exception as exc:  # a bug: one annotation, not a raw traceback
            report_unexpected_error(exc)
            return EXIT_USAGE


def _decide_and_write(environ: Mapping[str, str]) -> int:
    workspace = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd())
    try:
        env = RunnerEnvironment.from_environ(environ)
        inputs = read_decision_inputs(environ, workflow_file=env.workflow_file)
        if inputs.token:
            commands.add_mask(inputs.token)
        event, decision = decide_event(
            env, label=inputs.label, trigger_paths=inputs.trigger_paths, token=inputs.token
        )
    except ConfigError as exc:
        report_config_error(exc, workspace)
        return EXIT_USAGE
    announce(event, decision)
    broken: list[RunnerFileError] = []
    with report_and_continue(broken):
        write_outputs(env.output, {"ran": str(decision.run).lower(), "reason": decision.reason})
    return EXIT_USAGE if broken else EXIT_DECIDED


if __name__ == "__main__":
    sys.exit(main())
