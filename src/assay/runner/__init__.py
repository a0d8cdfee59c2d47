"""The runner: plan (select, shard, model matrix, repeats), execute, stream and report.

```
RunOptions -> resolve_settings (given > ASSAY_* > [tool.assay] > suite > default) -> check_settings
cases -> plan_runs -> Executor (attempts: sandbox -> agent -> grader)
      -> results.jsonl (one line per finished case) -> Report -> report directory
```
"""

from assay.runner.arguments import parse_models, parse_shard
from assay.runner.events import NullListener, RunListener
from assay.runner.plan import PlannedRun
from assay.runner.session import PreparedRun, prepare_run, run, run_async, run_prepared
from assay.runner.settings import check_settings, resolve_settings

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
