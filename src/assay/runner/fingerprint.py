"""A fingerprint of a case and of the settings that shape its result, for `--resume`.

A result may be reused only for the same question asked the same way: the case as it is
now (its spec: prompt, assertions, rubric, commands, fixture paths), its model, judge,
runtime and agent command, and the run settings that change what an attempt does
(repeats, timeout, skill, network inside the sandbox). Its line number is left out:
moving a case in its file changes nothing. What the files it names hold counts too: the
contents of its skill, fixtures, supporting files, diff, base tree or tarball and
workspace (`runner/input_digest.py`, each path read once per run), and the judge's and
agent's prompts that ship with assay, so an edit between a run and its `--resume` runs
the case again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from assay.runner.input_digest import ContentDigests, packaged_prompts_digest
from assay.runner.kinds import kind_of

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.runner.plan import PlannedRun

__all__ = ["fingerprint"]


def fingerprint(
    run: PlannedRun, options: RunSettings, contents: ContentDigests | None = None
) -> str:
    """Hex digest that changes whenever what `run` would do changes.

    `contents` keeps the digests of the files already read (share one over a run's cases).
    """

    case = run.case
    contents = contents or ContentDigests()
    inputs = [(what, str(path)) for what, path in kind_of(case).inputs(case.spec)]
    if options.skill is not None:
        inputs.append(("skill override", str(options.skill)))
    shape = {
        "case": [case.id, case.suite, case.kind, case.format, repr(case.spec)],
        "case_defaults": [case.model, case.runtime, case.agent_command],
        "run": [run.model, run.runtime, run.agent_command, run.judge_model],
        "settings": [
            options.repeat,
            run.timeout_s,
            str(options.skill) if options.skill else None,
            options.agent_network,
            options.command_network,
            sorted(options.pass_env),
        ],
    }
    shape["contents"] = [[what, path, contents.of(Path(path))] for what, path in inputs]
    shape["prompts"] = [options.judge_prompt, packaged_prompts_digest()]
    if case.graders:  # only when named, so a run without user graders keeps its digests
        shape["graders"] = list(case.graders)
    text = json.dumps(shape, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
