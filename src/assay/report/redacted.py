"""A report without any secret value assay knows, before anything renders it.

Renderings escape text (Markdown writes `_` as `\\_`, HTML `&` as `&amp;`), after which a
secret is no longer itself and masking the rendered text would miss it; so the report is
masked first, as the values its strings decode to (`_util.secrets.redact_json`), and each
destination masks what it writes again.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from assay._util.secrets import redact_json
from assay.report.model import Report

__all__ = ["redacted_report"]

ModelT = TypeVar("ModelT", bound=BaseModel)


def redacted_report(report: Report) -> Report:
    """`report` with every secret masked; the same objects where there is none."""

    def clean(model: ModelT) -> ModelT:
        text = model.model_dump_json()
        masked = redact_json(text)
        return model if masked is text else type(model).model_validate_json(masked)

    # A case at a time: a large run's report as one JSON string was its peak memory. A
    # secret sits inside one string value, so it is in the text of one case or the rest.
    cases = [clean(case) for case in report.cases]
    rest = clean(report.model_copy(update={"cases": []}))
    return rest.model_copy(update={"cases": cases})
