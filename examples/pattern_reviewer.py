#!/usr/bin/env python3
"""An EXAMPLE review bot for assay's command runtime: regex heuristics, not an AI.

It shows the answer protocol for review and rubric cases with a few deterministic
rules over the lines a diff adds. It will miss most real bugs; use it to see how an
agent command plugs into assay, or as a floor that any real reviewer should beat.

Protocol, as used here:

* Input: the diff to review, from the `{diff_file}` placeholder (first argument) or
  `$ASSAY_DIFF_FILE`; `$ASSAY_CASE_KIND` says which kind of case is running. The
  working directory is the sandbox repository, so files can be read for context.
* review cases: the answer is `{"findings": [...]}` written to `$ASSAY_FINDINGS_FILE`
  (or printed as the last JSON line on stdout when that variable is unset). Each finding
  has severity, confidence, title, description and location {path, startLine}.
* rubric cases: everything printed on stdout that is not a JSON line is the review the
  judge reads; findings are optional and are written the same way.
* JSON lines with a `type` key are trace events, e.g. `{"type": "tool", "name": "read_diff"}`.
* Exit status 0 means "answered"; anything else is an agent error. verify cases are not
  handled (exit 2): a verifier needs to reason about one candidate, not scan a diff.

Example configuration (pyproject.toml):

    [tool.assay]
    agent_command = ["./examples/pattern_reviewer.py", "{diff_file}"]
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HUNK_HEADER = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    severity: str
    title: str
    description: str


RULES = (
    Rule(
        re.compile(r"shell\s*=\s*True"),
        "high",
        "Command run through a shell",
        "subprocess with shell=True: any interpolated value can inject shell commands; "
        "pass an argv list instead.",
    ),
    Rule(
        re.compile(r"(?i)\b(select|insert|update|delete)\b.*(\$\{|%s'|\"\s*\+|f\"|\{\w+\})"),
        "high",
        "SQL built from interpolated text",
        "The query text contains interpolated values; bind them as parameters.",
    ),
    Rule(
        re.compile(r"\bjwt\.decode\("),
        "critical",
        "JWT claims read without signature verification",
        "jwt.decode does not verify the signature, so tokens can be forged; use jwt.verify.",
    ),
    Rule(
        re.compile(r"innerHTML\s*=|dangerouslySetInnerHTML"),
        "medium",
        "HTML written from a string",
        "Untrusted text written as HTML is an XSS sink; escape it or use textContent.",
    ),
    Rule(
        re.compile(r"\bdatetime\.utcnow\(\)"),
        "medium",
        "Naive UTC datetime",
        "datetime.utcnow() is naive; comparing it with aware datetimes raises TypeError.",
    ),
    Rule(
        re.compile(r"\.forEach\(\s*async\b"),
        "medium",
        "Async callback in forEach",
        "forEach does not await async callbacks; failures and ordering are lost.",
    ),
    Rule(
        re.compile(
            r"(?i)(secret|token|password|api_?key)\w*\s*[:=]\s*[\"'][A-Za-z0-9+/_-]{16,}[\"']"
        ),
        "high",
        "Hard-coded credential",
        "A credential is committed to the repository; load it from the environment.",
    ),
)


def added_lines(diff: str) -> list[tuple[str, int, str]]:
    """(path, new line number, text) for every line the diff adds."""
    result = []
    path, line_no = "", 0
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = line[4:].strip()
            path = target[2:] if target.startswith("b/") else target
            continue
        header = HUNK_HEADER.match(line)
        if header:
            line_no = int(header.group(1))
            continue
        if not path or line.startswith(("---", "\\")):
            continue
        if line.startswith("+"):
            result.append((path, line_no, line[1:]))
            line_no += 1
        elif not line.startswith("-"):
            line_no += 1
    return result


def review(diff: str) -> list[dict[str, Any]]:
    findings = []
    for path, line_no, text in added_lines(diff):
        for rule in RULES:
            if rule.pattern.search(text):
                findings.append(
                    {
                        "severity": rule.severity,
                        "confidence": "low",
                        "title": rule.title,
                        "description": rule.description,
                        "location": {"path": path, "startLine": line_no},
                    }
                )
    return findings


def answer(findings: list[dict[str, Any]]) -> None:
    payload = json.dumps({"findings": findings})
    target = os.environ.get("ASSAY_FINDINGS_FILE")
    if target:
        Path(target).write_text(payload, encoding="utf-8")
    else:
        print(payload, flush=True)


def main(argv: list[str]) -> int:
    kind = os.environ.get("ASSAY_CASE_KIND", "review")
    if kind not in ("review", "rubric"):
        print(f"pattern_reviewer: {kind} cases are not supported", file=sys.stderr)
        return 2
    diff_file = argv[0] if argv else os.environ.get("ASSAY_DIFF_FILE")
    if not diff_file:
        print("usage: pattern_reviewer.py DIFF_FILE (or set ASSAY_DIFF_FILE)", file=sys.stderr)
        return 2

    print(json.dumps({"type": "tool", "name": "read_diff", "path": diff_file}), flush=True)
    findings = review(Path(diff_file).read_text(encoding="utf-8", errors="replace"))
    if kind == "rubric":
        print(f"Pattern review: {len(findings)} potential issue(s).")
        for finding in findings:
            where = f"{finding['location']['path']}:{finding['location']['startLine']}"
            print(f"- {where} [{finding['severity']}] {finding['title']}: {finding['description']}")
    answer(findings)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
