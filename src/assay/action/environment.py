"""What the Actions runner tells a step about itself through `GITHUB_*` / `RUNNER_*` variables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from assay.errors import ConfigError

__all__ = ["RunnerEnvironment"]

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_SERVER_URL = "https://github.com"


def _path(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").strip()
    return Path(value) if value else None


@dataclass(frozen=True)
class RunnerEnvironment:
    event_name: str
    event_path: Path | None
    repository: str
    """`owner/repo` the workflow runs in (the base repository for pull requests)."""
    api_url: str
    sha: str
    workspace: Path
    step_summary: Path | None
    output: Path | None
    runner_temp: Path | None
    workflow: str
    job: str
    workflow_ref: str
    """`owner/repo/.github/workflows/file.yml@ref`: which workflow file holds the inputs."""
    server_url: str
    run_id: str

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> RunnerEnvironment:
        event_name = env.get("GITHUB_EVENT_NAME", "").strip()
        if not event_name:
            raise ConfigError(
                "`assay ci` is the GitHub Action's entry point and needs the Actions "
                "environment (GITHUB_EVENT_NAME is not set); run `assay run` locally"
            )
        return cls(
            event_name=event_name,
            event_path=_path(env, "GITHUB_EVENT_PATH"),
            repository=env.get("GITHUB_REPOSITORY", "").strip(),
            api_url=(env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL).rstrip("/"),
            sha=env.get("GITHUB_SHA", "").strip(),
            workspace=_path(env, "GITHUB_WORKSPACE") or Path.cwd(),
            step_summary=_path(env, "GITHUB_STEP_SUMMARY"),
            output=_path(env, "GITHUB_OUTPUT"),
            runner_temp=_path(env, "RUNNER_TEMP"),
            workflow=env.get("GITHUB_WORKFLOW", "").strip(),
            job=env.get("GITHUB_JOB", "").strip(),
            workflow_ref=env.get("GITHUB_WORKFLOW_REF", "").strip(),
            server_url=(env.get("GITHUB_SERVER_URL", "").strip() or DEFAULT_SERVER_URL).rstrip("/"),
            run_id=env.get("GITHUB_RUN_ID", "").strip(),
        )

    @property
    def workflow_file(self) -> Path | None:
        """The workflow file inside the workspace, when GITHUB_WORKFLOW_REF names this repo's."""
        ref = self.workflow_ref.split("@", 1)[0]
        prefix = f"{self.repository}/"
        if not self.repository or not ref.startswith(prefix):
            return None
        relative = PurePosixPath(ref[len(prefix) :])
        if relative.is_absolute() or ".." in relative.parts:
            return None
        return self.workspace / relative

    @property
    def run_url(self) -> str | None:
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
