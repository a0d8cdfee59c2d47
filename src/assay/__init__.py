"""assay: behavioural evals for AI code-review and coding agents.

The library API: load suites, select cases, run them, read, merge and compare reports.
`assay.run()` is the run `assay run` does: the same options decided the same way
(given > `ASSAY_*` > `[tool.assay]` > the suite > the default), the same checks, the same
report.

```python
import assay

report = assay.run(assay.RunOptions(paths=("evals",), threshold=0.8))
print(report.summary.score, report.summary.gate)

settings = assay.resolve_settings(assay.RunOptions(), config=None)
print(settings.threshold, settings.sources["threshold"])  # 0.75 default
```

Names are resolved on first use, so `import assay` stays cheap (no pydantic models,
no model SDKs) until something is actually needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay._version import __version__

if TYPE_CHECKING:
    from assay.errors import AssayError, ConfigError, OutputError, RunError
    from assay.options import RunOptions, RunSettings
    from assay.report.compare import compare_reports
    from assay.report.merge import merge_reports
    from assay.report.model import CaseResult, Report
    from assay.report.read import read_report
    from assay.runner import RunListener, run, run_async
    from assay.runner.settings import resolve_settings
    from assay.suites import AssayConfig, LoadedSuites, load_config, load_suites, select_cases
    from assay.suites.case import Case

__all__ = [
    "AssayConfig",
    "AssayError",
    "Case",
    "CaseResult",
    "ConfigError",
    "LoadedSuites",
    "OutputError",
    "Report",
    "RunError",
    "RunListener",
    "RunOptions",
    "RunSettings",
    "__version__",
    "compare_reports",
    "load_config",
    "load_suites",
    "merge_reports",
    "read_report",
    "resolve_settings",
    "run",
    "run_async",
    "select_cases",
]

_LAZY = {
    "AssayError": "assay.errors",
    "ConfigError": "assay.errors",
    "OutputError": "assay.errors",
    "RunError": "assay.errors",
    "RunOptions": "assay.options",
    "RunSettings": "assay.options",
    "Case": "assay.suites.case",
    "CaseResult": "assay.report.model",
    "Report": "assay.report.model",
    "read_report": "assay.report.read",
    "merge_reports": "assay.report.merge",
    "compare_reports": "assay.report.compare",
    "AssayConfig": "assay.suites",
    "LoadedSuites": "assay.suites",
    "load_config": "assay.suites",
    "load_suites": "assay.suites",
    "select_cases": "assay.suites",
    "RunListener": "assay.runner",
    "resolve_settings": "assay.runner.settings",
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
