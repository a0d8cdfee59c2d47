"""Loaders for Cassandra's formats: the suite manifest and the per-case `metadata.json` dir.

A fixture directory holds `input.diff` and the base state, `base.tar.gz` or `base/`; with
neither, the base is empty and the diff creates every file. Accepted as Cassandra accepts
them: a case without `id` (named after its fixture directory), a `fixture_path` with `..`
that stays inside the repository, `cases: []` (nothing to run: a warning), an empty
`input.diff` (the base alone). Refused as Cassandra refuses it: a base that is neither a
directory nor a `.tar.gz` (`.tgz` included). A diff whose paths leave the base (`..`,
absolute) is refused before anything is applied.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay._util.diff_paths import escaping_diff_paths
from assay._util.paths import resolve_inside
from assay._util.tarsafe import check_tarball, is_tarball
from assay.core.paths import is_inside
from assay.errors import ConfigError, SandboxError, SourcePosition
from assay.suites.case import Case, RubricSpec
from assay.suites.context import LoadContext
from assay.suites.document import Document, read_text
from assay.suites.validation import validate_model, validate_quietly
from assay.suites.wire_rubric import RubricCase, RubricManifest, RubricMetadata

__all__ = ["load_rubric_dir", "load_rubric_manifest"]


def load_rubric_manifest(doc: Document, *, ctx: LoadContext) -> tuple[list[Case], list[Path]]:
    """The manifest's cases, and their fixture directories (never scanned for suites)."""
    manifest = validate_model(RubricManifest, doc, ctx.problems)
    if manifest is not None:
        items = list(enumerate(manifest.cases))
    else:  # still check the fixtures of the cases that are well-formed
        raw = doc.data.get("cases") if isinstance(doc.data, dict) else None
        raw_cases = raw if isinstance(raw, list) else []
        items = [
            (i, c) for i, item in enumerate(raw_cases) if (c := validate_quietly(RubricCase, item))
        ]
    suite = doc.path.stem
    manifest_dir = doc.path.parent
    if manifest is not None and not manifest.cases:
        ctx.problems.warn(
            "the manifest lists no cases (`cases: []`): nothing to run from it", doc.location()
        )
    cases, fixture_dirs = [], []
    for number, item in items:
        key_path: tuple[Any, ...] = ("cases", number)
        where = doc.location(key_path + ("fixture_path",))
        try:
            fixture_dir = _fixture_dir(manifest_dir, item.fixture_path, where, ctx)
        except ConfigError as exc:
            ctx.problems.add(exc)
            continue
        if not fixture_dir.is_dir():
            ctx.problems.error(
                f"fixture_path {item.fixture_path!r} is not a directory under {manifest_dir}", where
            )
            continue
        if is_inside(manifest_dir, fixture_dir):
            # A fixture tree is never scanned for suites: this one would hide every suite
            # beside the manifest, the manifest included.
            ctx.problems.error(
                f"fixture_path {item.fixture_path!r} is the manifest's own directory or holds "
                "it; give each case a directory of its own",
                where,
            )
            continue
        fixture_dirs.append(fixture_dir)
        spec = _spec(
            fixture_dir,
            rubric=item.rubric,
            description=item.description,
            base_source=item.base_source,
            diff_path=item.diff_path,
            doc=doc,
            key_path=key_path,
            ctx=ctx,
        )
        case_id = item.id or fixture_dir.name
        if spec is not None:
            cases.append(
                Case(
                    id=f"{suite}/{case_id}",
                    suite=suite,
                    name=item.name or case_id,
                    kind="rubric",
                    format="rubric-manifest",
                    source_path=doc.path,
                    source_line=doc.location(key_path).line,
                    spec=spec,
                    root=manifest_dir,
                )
            )
    return cases, fixture_dirs


def load_rubric_dir(doc: Document, *, ctx: LoadContext) -> list[Case]:
    """`<suite>/<case>/metadata.json` beside `input.diff`; paths resolve in the case dir."""
    metadata = validate_model(RubricMetadata, doc, ctx.problems)
    if metadata is None:
        return []
    case_dir = doc.path.parent
    spec = _spec(
        case_dir,
        rubric=metadata.rubric,
        description=metadata.description,
        base_source=metadata.base_source,
        diff_path=metadata.diff_path,
        doc=doc,
        key_path=(),
        ctx=ctx,
    )
    if spec is None:
        return []
    suite = case_dir.parent.name
    case_id = metadata.id or case_dir.name
    return [
        Case(
            id=f"{suite}/{case_id}",
            suite=suite,
            name=metadata.name or case_id,
            kind="rubric",
            format="rubric-dir",
            source_path=doc.path,
            source_line=doc.location(()).line,
            spec=spec,
            root=case_dir,
        )
    ]


def _spec(
    fixture_dir: Path,
    *,
    rubric: str,
    description: str,
    base_source: str | None,
    diff_path: str | None,
    doc: Document,
    key_path: tuple[Any, ...],
    ctx: LoadContext,
) -> RubricSpec | None:
    try:
        diff_where = doc.location(key_path + (("diff_path",) if diff_path else ()))
        diff = _diff(fixture_dir, diff_path or "input.diff", diff_where)
    except ConfigError as exc:
        ctx.problems.add(exc)
        diff = None
    try:
        base_where = doc.location(key_path + (("base_source",) if base_source else ()))
        base = _base(fixture_dir, base_source, base_where)
    except ConfigError as exc:
        ctx.problems.add(exc)
        return None
    if diff is None:
        return None
    return RubricSpec(rubric=rubric, diff=diff, base=base, description=description)


def _fixture_dir(manifest_dir: Path, raw: str, where: SourcePosition, ctx: LoadContext) -> Path:
    """`fixture_path` resolved: `..` may leave the manifest's directory, not the repository."""
    if os.path.isabs(raw) or raw.startswith(("/", "\\")):
        raise ConfigError(f"fixture_path {raw!r} is absolute; make it relative", where)
    project = ctx.project_for(manifest_dir)
    joined = os.path.normpath(os.path.join(manifest_dir, raw.replace("\\", "/")))
    relative = os.path.relpath(joined, project)
    if relative == ".." or relative.startswith("../"):
        raise ConfigError(f"fixture_path {raw!r} leads outside the repository {project}", where)
    return resolve_inside(project, relative, location=where)


def _diff(fixture_dir: Path, raw: str, where: SourcePosition) -> Path:
    path = resolve_inside(fixture_dir, raw, location=where)
    if not path.is_file():
        raise ConfigError(f"diff {raw!r} not found in {fixture_dir}", where)
    text = read_text(path, what="diff")
    if not text.strip():
        return path  # Cassandra applies nothing: the sandbox is the base alone
    if not any(line.startswith(("diff --git ", "+++ ")) for line in text.splitlines()):
        raise ConfigError(
            f"diff {raw!r} is not a unified diff (no 'diff --git' or '+++' header)",
            SourcePosition(path, 1, 1),
        )
    escaping = escaping_diff_paths(text)
    if escaping:
        line, why = escaping[0]
        raise ConfigError(
            f"diff {raw!r} names a path outside the base: {why}", SourcePosition(path, line)
        )
    return path


def _base(fixture_dir: Path, raw: str | None, where: SourcePosition) -> Path | None:
    if raw is None:
        for default in ("base.tar.gz", "base"):
            candidate = resolve_inside(fixture_dir, default, location=where)
            if candidate.exists():
                return _checked_base(candidate, default, where)
        return None  # no base: the diff creates every file
    path = resolve_inside(fixture_dir, raw, location=where)
    if not path.exists():
        raise ConfigError(f"base_source {raw!r} not found in {fixture_dir}", where)
    return _checked_base(path, raw, where)


def _checked_base(path: Path, raw: str, where: SourcePosition) -> Path:
    if not path.is_dir() and not path.name.endswith(".tar.gz"):
        # Cassandra's sandbox takes a directory or a name ending in `.tar.gz`, nothing else.
        raise ConfigError(
            f"base {raw!r} must be a directory or a .tar.gz tarball (Cassandra refuses "
            "other names, .tgz included)",
            where,
        )
    if path.is_dir():
        from assay._util.fixture_tree import check_fixture_tree  # what the build would refuse

        try:
            check_fixture_tree(path)
        except SandboxError as exc:
            raise ConfigError(f"base {raw!r}: {exc}", where) from None
        return path
    if not is_tarball(path):
        raise ConfigError(f"base {raw!r} must be a directory or a .tar.gz tarball", where)
    problems = check_tarball(path)
    if problems:
        raise ConfigError("unsafe or unreadable base tarball: " + "; ".join(problems), where)
    return path
