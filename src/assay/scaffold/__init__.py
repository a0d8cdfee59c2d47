"""`assay scaffold`: turn a pull request (or two local refs) into fixtures and a stub case.

A change source (GitHub through PyGithub, or a local clone through git) describes the
change; one side of it is captured with the same skip rules either way; the files are
laid out as Warden (review JSON scenario) or Cassandra (rubric case) expect, and written
all-or-nothing. The stub's `TODO:` placeholder is a warning until a person says what the
case must find (`--strict` refuses it; run as it is, the case fails).
"""

from assay.scaffold.change import Change, ChangedFile, ChangeSource, SkippedFile
from assay.scaffold.github_access import ApiAccess, api_access, github_token
from assay.scaffold.github_source import GitHubPullRequest
from assay.scaffold.local_source import LocalRefs
from assay.scaffold.run import ScaffoldOptions, ScaffoldResult, scaffold
from assay.scaffold.url import PullRequestUrl, parse_pull_request_url

__all__ = [
    "ApiAccess",
    "Change",
    "ChangeSource",
    "ChangedFile",
    "GitHubPullRequest",
    "LocalRefs",
    "PullRequestUrl",
    "ScaffoldOptions",
    "ScaffoldResult",
    "SkippedFile",
    "api_access",
    "github_token",
    "parse_pull_request_url",
    "scaffold",
]
