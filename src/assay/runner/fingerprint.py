"""A fingerprint of a case and of the settings that shape its result, for `--resume`.

A result may be reused only for the same question asked the same way: the case as it is
now (its spec: prompt, assertions, rubric, commands, fixture paths), its model, judge,
runtime and agent command, and the run settings that change what an attempt does
(repeats, `--min-pass`, timeout, skill, network inside the sandbox). Its line number is left out:
moving a case in its file changes nothing. Fixture file contents are not read (that
would cost a walk per case); a changed fixture path does change the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.runner.plan import PlannedRun

__all__ = ["fingerprint"]


def fingerprint(run: PlannedRun, options: RunSettings) -> str:
    """Hex digest that changes whenever what `run` would do changes."""
    case = run.case
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
    if case.graders:  # only when named, so a run without user graders keeps its digests
        shape["graders"] = list(case.graders)
    if options.min_pass is not None:  # the case's outcome is folded by it; only when set, as above
        shape["min_pass"] = options.min_pass
    text = json.dumps(shape, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
