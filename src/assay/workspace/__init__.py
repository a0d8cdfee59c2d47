"""Reproducible, isolated git sandboxes for every case kind, and workspace change detection.

```
<parent>/assay-<case>-XXXX/      0700, owned by one sandbox (Sandbox.root)
    repo/                        the git work tree the agent works in (Sandbox.path)
    scratch/                     the runner's per-attempt files (HOME, TMPDIR, findings)
```

Objects, refs and the index are written directly (see `objects`, `index`); git runs
only for `git apply` (rubric) and `git diff main...eval`, always through `isolation.git`.
The same case gives the same commit ids and diff on every machine.

What an agent changed in a task workspace is judged against the `Baseline` the build
kept in memory (`baseline`), never against the workspace's `.git`, which is the agent's.
"""

from __future__ import annotations

from assay.workspace.baseline import Baseline
from assay.workspace.build import build_sandbox, private_work_root, remove_sandbox
from assay.workspace.built_sandbox import Sandbox
from assay.workspace.git_changes import WorkspaceChanges, workspace_changes
from assay.workspace.review import SKILL_DIR

__all__ = [
    "SKILL_DIR",
    "Baseline",
    "Sandbox",
    "WorkspaceChanges",
    "build_sandbox",
    "private_work_root",
    "remove_sandbox",
    "workspace_changes",
]
