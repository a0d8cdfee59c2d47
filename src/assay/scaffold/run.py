"""`scaffold()`: one change in, one case's files out (all of them, or none)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assay.errors import ConfigError
from assay.scaffold.cases import PlannedCase, plan_review_case, plan_rubric_case
from assay.scaffold.change import ChangeSource, Side, SkippedFile
from assay.scaffold.layout import check_name, slugify
from assay.scaffold.writer import write_plan

if TYPE_CHECKING:
    from assay.scaffold.draft import Drafted, DraftOptions

__all__ = [
    "DEFAULT_CATEGORIES",
    "DEFAULT_MAX_FILE_SIZE",
    "ScaffoldOptions",
    "ScaffoldResult",
    "scaffold",
]

CaseFormat = Literal["review", "rubric"]
DEFAULT_CATEGORIES: dict[CaseFormat, str] = {"review": "security-review", "rubric": "rubric"}
DEFAULT_MAX_FILE_SIZE = 256 * 1024


@dataclass(frozen=True, kw_only=True)
class ScaffoldOptions:
    root: Path
    """The eval root the case is written under."""
    format: CaseFormat = "review"
    category: str | None = None
    """The scenario directory; None: DEFAULT_CATEGORIES[format]."""
    name: str | None = None
    """The case name; None: the slugified title."""
    side: Side = "base"
    """Which side's files a review case captures (a rubric base is always the base side)."""
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    force: bool = False
    """Replace existing files instead of refusing."""
    license_waived: str | None = None
    """Why the case needs no license (`--no-license`, or the `[tool.assay]` key); None:
    the repository's license is required and copied (license.py)."""
    draft: DraftOptions | None = None
    """`--draft`: a model drafts what the case asserts (draft.py); None: the TODO stub."""


@dataclass(frozen=True)
class ScaffoldResult:
    written: tuple[Path, ...]
    case_file: Path
    """The file to edit next: the JSON scenario, or the rubric suite manifest."""
    case_id: str
    """What `assay run -t` selects the new case by."""
    category: str
    name: str
    skipped: tuple[SkippedFile, ...]
    """As shown to people: control characters in names replaced (notes keep the names)."""
    warnings: tuple[str, ...]
    drafted: Drafted | None = None
    """Who drafted the case's assertions and what it cost (`--draft`), else None."""


def scaffold(source: ChangeSource, *, options: ScaffoldOptions) -> ScaffoldResult:
    """Capture `source`'s change as a new case under `options.root`.

    Raises ConfigError (nothing written) for a bad name, a change without files or with no
    usable files, no license (unless waived), a source failure, or existing files without `force`.
    """
    category = check_name(
        options.category or DEFAULT_CATEGORIES[options.format], option="--category"
    )
    if options.name is not None:
        check_name(options.name, option="--name")
    change = source.describe()
    if not change.files:
        raise ConfigError(
            f"{change.source}: nothing to capture, no file differs between base "
            f"{change.base_sha[:12]} and head {change.head_sha[:12]}; nothing was written"
        )
    name = options.name or slugify(change.title, fallback=change.fallback_name)
    check_name(name, option="--name")
    planned: PlannedCase
    if options.format == "rubric":
        planned = plan_rubric_case(
            source,
            change,
            root=options.root,
            category=category,
            name=name,
            max_file_size=options.max_file_size,
            force=options.force,
            license_waived=options.license_waived,
        )
    else:
        planned = plan_review_case(
            source,
            change,
            root=options.root,
            category=category,
            name=name,
            side=options.side,
            max_file_size=options.max_file_size,
            license_waived=options.license_waived,
        )
    drafted = None
    if options.draft is not None:
        # lazy: start-up cost (the model layer, jsonschema) paid only when asked for
        from assay.scaffold.draft import draft_case

        planned, drafted = draft_case(
            planned, change, source, format=options.format, case_name=name, options=options.draft
        )
    written = write_plan(planned.plan, force=options.force)
    return ScaffoldResult(
        written=tuple(written),
        case_file=options.root / planned.case_file,
        case_id=planned.case_id,
        category=category,
        name=name,
        skipped=tuple(s.shown() for s in planned.skipped),
        warnings=change.warnings,
        drafted=drafted,
    )
