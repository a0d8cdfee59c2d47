"""What the agent under test is asked, per case kind: the words both runtimes share.

The builtin agent and the command runtime ask the same thing of a case in two transports
(typed `submit_*` tools and a PR-context message, versus an argv prompt and an answer
file), so the wording around the transport differs; what each kind asks for does not, and
lives here once: the rubric lead, how a candidate finding is shown, and the answer shapes.
"""

from __future__ import annotations

import json

from assay.suites.case import VerifySpec

__all__ = ["FINDINGS_SHAPE", "RUBRIC_LEAD", "VERDICT_SHAPE", "candidate_json"]

RUBRIC_LEAD = "Review the following git diff for issues."
"""A rubric case asks for a free review of the diff (Cassandra's own words)."""
FINDINGS_SHAPE = '{"findings": [{severity, confidence, title, description, location}]}'
"""A review case's answer."""
VERDICT_SHAPE = '{"verdict": "keep" or "reject", "reason": "..."}'
"""A verify case's answer."""


def candidate_json(spec: VerifySpec) -> str:
    """The candidate finding of a verify case, as the agent sees it."""
    return json.dumps(spec.candidate, indent=2, ensure_ascii=False)
