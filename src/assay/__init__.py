"""assay: behavioural evals for AI code-review and coding agents.

The library API: load suites, select cases, run them, read the report.

```python
import assay

report = assay.run(assay.RunOptions(paths=("evals",), threshold=0.8))
print(report.summary.score, report.summary.gate)
```

Names are resolved on first use, so `import assay` stays cheap (no pydantic models,
no model SDKs) until something is actually needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay._version import __version__

if TYPE_CHECKING:
    from assay.errors import AssayError, ConfigError
    from assay.options import RunOptions
    from assay.report.model import CaseResult, Report
    from assay.runner import run, run_async
    from assay.suites import load_suites, select_cases
    from assay.suites.case import Case

__all__ = [
    "AssayError",
    "Case",
    "CaseResult",
    "ConfigError",
    "Report",
    "RunOptions",
    "__version__",
    "load_suites",
    "run",
    "run_async",
    "select_cases",
]

_LAZY = {
    "AssayError": "assay.errors",
    "ConfigError": "assay.errors",
    "RunOptions": "assay.options",
    "Case": "assay.suites.case",
    "CaseResult": "assay.report.model",
    "Report": "assay.report.model",
    "load_suites": "assay.suites",
    "select_cases": "assay.suites",
    "run": "assay.runner",
    "run_async": "assay.runner",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
