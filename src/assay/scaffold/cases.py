"""From a captured change to the files of one case: a review scenario or a rubric case."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import get_args

from assay.errors import ConfigError
from assay.scaffold.capture import CapturedFile, SideCapture, capture_side
from assay.scaffold.change import (
    Change,
    ChangeSource,
    License,
    Side,
    SkippedFile,
)
from assay.scaffold.diff import diff_entries, render_diff
from assay.scaffold.layout import PathAllocator, fixture_repo_dir
from assay.scaffold.license import find_license
from assay.scaffold.manifest import merge_manifest
from assay.scaffold.stub import (
    dump_json,
    provenance,
    review_scenario,
    rubric_entry,
)
from assay.scaffold.writer import WritePlan

__all__ = ["PlannedCase", "manifest_name", "plan_review_case", "plan_rubric_case"]

PROVENANCE_NAME = "source.json"


def manifest_name(category: str) -> str:
    """The manifest is named after its category, so case ids read `<category>/<name>`
    (the rubric loader names a manifest's cases after its file stem)."""
    return f"{category}.json"


_REASONS_SHOWN = 3


@dataclass(frozen=True)
class PlannedCase:
    plan: WritePlan
    case_file: str
    """Root-relative path of the file the user edits next (scenario or manifest)."""
    case_id: str
    """The id `assay run -t` selects the case by."""
    skipped: tuple[SkippedFile, ...]
    captured: tuple[CapturedFile, ...] = ()
    """The files read for the fixtures, which `--draft` shows the model (draft.py)."""


def plan_review_case(
    source: ChangeSource,
    change: Change,
    *,
    root: Path,
    category: str,
    name: str,
    side: Side,
    max_file_size: int,
    license_waived: str | None = None,
) -> PlannedCase:
    """Fixtures under `fixtures/<name>/github/<owner>/<repo>/` and `<category>/<name>.json`.

    `license_waived` (why no license is needed) skips the license; see license.py."""
    capture = capture_side(source, change, side=side, max_file_size=max_file_size)
    if not capture.files:
        raise _nothing_usable(change, capture, hint=" (try --side head)" * (side == "base"))
    license = _license(source, change, capture, license_waived)
    fixture_dir = fixture_repo_dir(name, change.repository)
    places = PathAllocator(warden_fixture_dir=fixture_dir)
    files: dict[str, bytes] = {}
    mapping: list[tuple[str, str]] = []
    for captured in capture.files:
        rel = (fixture_dir / places.place(captured.source_path)).as_posix()
        files[rel] = captured.content
        mapping.append((rel, captured.source_path))
    fixture_files = [rel for rel, _ in mapping]
    supporting: list[str] = []
    if license is not None and license.path not in {f.source_path for f in capture.files}:
        rel = (fixture_dir / places.place(license.path)).as_posix()
        files[rel] = license.content
        mapping.append((rel, license.path))
        supporting.append(rel)
    notes = provenance(
        change,
        side=side,
        ref=capture.ref,
        source_files=mapping,
        skipped=capture.skipped,
        license_waived=license_waived,
    )
    scenario = review_scenario(
        change, files=fixture_files, supporting_files=supporting, notes=notes
    )
    case_file = f"{category}/{name}.json"
    files[case_file] = dump_json(scenario)
    return PlannedCase(
        plan=WritePlan(root=root, files=files, owned_dirs=(fixture_dir.as_posix(),)),
        case_file=case_file,
        case_id=f"{category}/{name}",
        skipped=capture.skipped,
        captured=capture.files,
    )


def plan_rubric_case(
    source: ChangeSource,
    change: Change,
    *,
    root: Path,
    category: str,
    name: str,
    max_file_size: int,
    force: bool,
    license_waived: str | None = None,
) -> PlannedCase:
    """`<category>/cases/<name>/{base/, input.diff, source.json}` plus an entry in
    `<category>/<category>.json`. The base is always the base side: the diff applies to it."""
    capture = capture_side(source, change, side="base", max_file_size=max_file_size)
    # Files the change adds are not lost here: the diff creates them. A skipped base file
    # takes its change out of the diff too (the hunks would not apply without it).
    skipped = [
        SkippedFile(s.path, f"{s.reason}; left out of base/ and input.diff")
        for s in capture.skipped
        if s.path not in capture.absent
    ]
    places = PathAllocator(trees=_sides_of(change))
    base = {places.place(f.source_path): f.content for f in capture.files}
    entries, diff_skipped = diff_entries(
        source, change, capture, places, max_file_size=max_file_size
    )
    if not entries:
        raise _nothing_usable(change, capture, extra=diff_skipped)
    license = _license(source, change, capture, license_waived)
    if license is not None:
        base.setdefault(places.place(license.path), license.content)

    case_dir = PurePosixPath(category, "cases", name)
    files = {(case_dir / "base" / rel).as_posix(): content for rel, content in base.items()}
    files[(case_dir / "input.diff").as_posix()] = render_diff(entries).encode("utf-8")
    all_skipped = tuple(skipped + diff_skipped)
    mapping = [
        ((case_dir / "base" / places.place(f.source_path)).as_posix(), f.source_path)
        for f in (*capture.files, *([_as_captured(license)] if license else []))
    ]
    notes = provenance(
        change,
        side="base",
        ref=capture.ref,
        source_files=_unique(mapping),
        skipped=all_skipped,
        license_waived=license_waived,
    )
    files[(case_dir / PROVENANCE_NAME).as_posix()] = dump_json(notes)

    manifest_rel = f"{category}/{manifest_name(category)}"
    entry = rubric_entry(change, case_id=name, ref=capture.ref, fixture_path=f"cases/{name}")
    manifest, conflict = merge_manifest(
        root / manifest_rel, entry, suite_name=category, force=force
    )
    files[manifest_rel] = dump_json(manifest)
    plan = WritePlan(
        root=root,
        files=files,
        owned_dirs=(case_dir.as_posix(),),
        updated_files=frozenset({manifest_rel}),
        conflicts=(conflict,) if conflict else (),
    )
    return PlannedCase(plan, manifest_rel, f"{category}/{name}", all_skipped, capture.files)


def _sides_of(change: Change) -> dict[str, set[str]]:
    """The sides each path of the change is on: only paths on one side together must not
    collide (a file the change deletes and the directory it adds in its place do not)."""
    sides: dict[str, set[str]] = {}
    for changed in change.files:
        for side in get_args(Side):
            path = changed.path_on(side)
            if path is not None:
                sides.setdefault(path, set()).add(side)
    return sides


def _nothing_usable(
    change: Change, capture: SideCapture, *, hint: str = "", extra: list[SkippedFile] | None = None
) -> ConfigError:
    reasons = [*capture.skipped, *(extra or [])]
    first = [s.shown() for s in reasons[:_REASONS_SHOWN]]
    shown = "; ".join(f"{s.path}: {s.reason}" for s in first)
    more = f"; and {len(reasons) - _REASONS_SHOWN} more" if len(reasons) > _REASONS_SHOWN else ""
    return ConfigError(
        f"{change.source}: no usable files on the {capture.side} side{hint}, nothing was "
        f"written; every file was skipped ({shown or 'the change lists no files'}{more})"
    )


def _license(
    source: ChangeSource, change: Change, capture: SideCapture, waived: str | None
) -> License | None:
    """The license to carry, or None when the user waived it (not even looked up then)."""
    if waived is not None:
        return None
    return find_license(source, change, ref=capture.ref, captured=capture.files)


def _as_captured(license: License) -> CapturedFile:
    return CapturedFile(license.path, license.content)


def _unique(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys(pairs))
