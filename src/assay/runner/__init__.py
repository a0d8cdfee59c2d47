"""The runner: plan (select, shard, model matrix, repeats), execute, stream and report.

```
RunOptions -> resolve_settings (given > ASSAY_* > [tool.assay] > suite > default) -> check_settings
cases -> plan_runs -> Executor (attempts: sandbox -> agent -> grader)
      -> results.jsonl (one line per finished case) -> Report -> report directory
```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.runner.arguments import parse_models, parse_shard
    from assay.runner.events import NullListener, RunListener
    from assay.runner.plan import PlannedRun
    from assay.runner.session import PreparedRun, prepare_run, run, run_async, run_prepared
    from assay.runner.settings import check_settings, resolve_settings

# Each name from its module on first use: `assay validate` plans runs (runner.preflight)
# without paying for the executor and the report writer a run needs.
_HOMES = {
    "parse_models": "arguments",
    "parse_shard": "arguments",
    "NullListener": "events",
    "RunListener": "events",
    "PlannedRun": "plan",
    "PreparedRun": "session",
    "prepare_run": "session",
    "run": "session",
    "run_async": "session",
    "run_prepared": "session",
    "check_settings": "settings",
    "resolve_settings": "settings",
}

__all__ = [
    "NullListener",
    "PlannedRun",
    "PreparedRun",
    "RunListener",
    "check_settings",
    "parse_models",
    "parse_shard",
    "prepare_run",
    "resolve_settings",
    "run",
    "run_async",
    "run_prepared",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(f"assay.runner.{home}"), name)
