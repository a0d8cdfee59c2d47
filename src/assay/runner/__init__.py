"""The runner: plan (select, shard, model matrix, repeats), execute, stream and report.

```
cases -> plan_runs -> Executor (attempts: sandbox -> agent -> grader)
      -> results.jsonl (one line per finished case) -> Report -> report directory
```
"""

from assay.runner.events import NullListener, RunListener
from assay.runner.plan import PlannedRun, parse_shard
from assay.runner.resolve import parse_models
from assay.runner.session import run, run_async

__all__ = [
    "NullListener",
    "PlannedRun",
    "RunListener",
    "parse_models",
    "parse_shard",
    "run",
    "run_async",
]
