"""One sticky results comment per eval job on a pull request, edited in place on every run.

The comment is recognised by a hidden first line naming the workflow and job, so two
different eval jobs keep two comments and re-runs never add a third. A name is written as
it is when every character of it is harmless in an HTML comment; otherwise the others
become `_` and a short hash of the exact name follows, so `Evals: fast` and `Evals; fast`
(`Evals_ fast` both, once cleaned) keep a comment each. The existing
comments are read page by page; the first one that starts with the marker *and* was
written by the identity the token acts as is updated, otherwise a new comment is created.

The author check is the security boundary, not a courtesy: GitHub lets a token with
`pull-requests: write` edit anyone's comment, so without it a drive-by user could post a
comment starting with the marker, have assay write its results into it, and later edit
them into a fake pass.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from assay.action.github_api import acting_login
from assay.report.model import Report

if TYPE_CHECKING:
    from github import Github
    from github.Issue import Issue
    from github.IssueComment import IssueComment

    from assay.report.compare import Comparison

__all__ = ["COMMENT_LIMIT", "CommentOutcome", "comment_body", "comment_marker", "upsert_comment"]

COMMENT_LIMIT = 65_000
"""Characters; GitHub refuses comment bodies over 65,536."""
_BODY_BUDGET_BYTES = 64_000
"""What the rendered comment may use; bytes >= characters, so the body stays under the limit."""
_UNSAFE_IDENTITY = re.compile(r"[^A-Za-z0-9 ._/()-]")
_NAME_LIMIT = 100
"""Characters of a name the marker keeps readable."""
_HASH_SEPARATOR = "~"
"""Not a harmless name character, so a hashed name never equals one written as it is."""


def comment_marker(*, workflow: str, job: str) -> str:
    """`<!-- assay:evals workflow=Evals job=evals -->` (names reduced to harmless characters)."""
    return f"<!-- assay:evals workflow={_marker_name(workflow)} job={_marker_name(job)} -->"


def _marker_name(name: str) -> str:
    """`name` itself when cleaning leaves it as it is (so the markers earlier versions
    wrote still find their comments); else the cleaned name, `~` and a hash of `name`."""
    exact = name.strip()
    readable = _UNSAFE_IDENTITY.sub("_", exact)[:_NAME_LIMIT] or "-"
    if readable == exact or not exact:
        return readable
    digest = hashlib.sha256(exact.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable}{_HASH_SEPARATOR}{digest}"


def comment_body(
    report: Report,
    *,
    marker: str,
    run_url: str | None,
    comparison: Comparison | None = None,
    comparison_title: str = "Compared with the base branch",
) -> str:
    """The marker, then what this PR changed and why cases failed (report/comment_markdown.py),
    and a link to the run's full report; under COMMENT_LIMIT."""
    # lazy: start-up (not loaded with this module)
    from assay.report.comment_markdown import render_comment

    body = render_comment(
        report,
        max_bytes=_BODY_BUDGET_BYTES,
        comparison=comparison,
        comparison_title=comparison_title,
        full_report_url=run_url,
    )
    body = f"{marker}\n{body.rstrip()}\n"
    if len(body) > COMMENT_LIMIT:  # render_comment keeps to its budget; this is a backstop
        body = body[: COMMENT_LIMIT - 40].rstrip() + "\n\n_(truncated)_\n"
    return body


@dataclass(frozen=True)
class CommentOutcome:
    action: Literal["created", "updated"]
    url: str
    unchecked: BaseException | None = None
    """Why the check for a second copy after creating the comment failed (the comment was
    created: a permission hint about writing it would be wrong); None when it ran."""


def upsert_comment(
    client: Github, *, repository: str, number: int, marker: str, body: str
) -> CommentOutcome:
    """Edit this job's comment on PR `number`, or create it. GitHub errors propagate."""
    issue = client.get_repo(repository).get_issue(number)
    own = _own_comments(client, issue, marker)
    if own:
        own[0].edit(body)
        return CommentOutcome("updated", own[0].html_url)
    created = issue.create_comment(body)
    # Two runs of this job at once (a label and a push) both found none and both created
    # one. The oldest stays the sticky one: a run whose comment is not it moves its body
    # there and deletes its own, so the PR keeps one and no stale copy.
    try:
        oldest = _own_comments(client, issue, marker)[:1]
    except Exception as exc:  # the comment exists: say this, not that writing it failed
        return CommentOutcome("created", created.html_url, unchecked=exc)
    if oldest and oldest[0].id != created.id:
        oldest[0].edit(body)
        created.delete()
        return CommentOutcome("updated", oldest[0].html_url)
    return CommentOutcome("created", created.html_url)


def _own_comments(client: Github, issue: Issue, marker: str) -> list[IssueComment]:
    """The comments starting with `marker` that the token's own identity wrote, oldest first."""
    me: str | None = None  # asked only once a comment carries the marker
    own = []
    for existing in issue.get_comments():
        if not (existing.body or "").startswith(marker):
            continue
        me = me or acting_login(client).casefold()
        author = existing.user  # None when GitHub no longer knows the author
        if author is not None and (author.login or "").casefold() == me:
            own.append(existing)
    return own
