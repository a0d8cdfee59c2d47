"""Loaders for Cassandra's formats: the suite manifest and the per-case `metadata.json` dir.

A fixture directory holds `input.diff` and the base state, `base.tar.gz` or `base/`; with
neither, the base is empty and the diff creates every file. Accepted as Cassandra accepts
them: a case without `id` (named after its fixture directory), relative `fixture_path`,
`base_source` and `diff_path` with `..` or `.` (fixture_path against the manifest's
directory, the other two against the fixture directory), `cases: []` (nothing to run: a
warning), an empty or missing `rubric` (a warning), an empty `input.diff` (the base alone).
Every such path must stay inside the project (`_inside_project`): an absolute path, or one
that leads out of the git work tree, is refused, where Cassandra would read it. Refused as
Cassandra refuses it: a base that is neither a directory nor a `.tar.gz` (`.tgz` included).
Refused when the suite is loaded where Cassandra fails only the case as it runs it: a
missing or unsafe base, a diff whose paths leave the base (`..`, absolute), a diff that is
only whitespace (git finds no patch in it). Not refused: a base directory holding a
symlink, which Cassandra (Go 1.24's os.CopyFS) cannot copy: that case fails as it runs,
with Cassandra's message, and the others run. The diff is read as bytes: one that is not
UTF-8 is applied as it is, and read as Go reads such text where text is needed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay._util.diff_paths import escaping_diff_paths
from assay._util.display import human_size
from assay._util.fixture_tree import check_fixture_tree, copyfs_refusal
from assay._util.paths import resolve_inside
from assay._util.tarsafe import check_tarball, is_tarball
from assay.core.paths import is_inside, real_path
from assay.errors import ConfigError, SandboxError, SourcePosition
from assay.suites.case import Case, RubricSpec
from assay.suites.context import LoadContext
from assay.suites.document import MAX_TEXT_BYTES, Document
from assay.suites.validation import validate_model, validate_quietly
from assay.suites.wire_rubric import RubricCase, RubricManifest, RubricMetadata
from assay.upstream.go.json import go_struct, go_text

__all__ = ["load_rubric_dir", "load_rubric_manifest"]


def load_rubric_manifest(doc: Document, *, ctx: LoadContext) -> tuple[list[Case], list[Path]]:
    """The manifest's cases, and their fixture directories (never scanned for suites)."""
    manifest = validate_model(RubricManifest, doc, ctx.problems)
    if manifest is not None:
        items = list(enumerate(manifest.cases))
    else:  # still check the fixtures of the cases that are well-formed
        raw = go_struct(doc.data, ("cases",))
        raw_cases = raw.get("cases") if isinstance(raw, dict) else None
        items = [
            (i, c)
            for i, item in enumerate(raw_cases if isinstance(raw_cases, list) else [])
            if (c := validate_quietly(RubricCase, item))
        ]
    suite = doc.path.stem
    manifest_dir = doc.path.parent
    project = ctx.project_for(manifest_dir)
    if manifest is not None and not manifest.cases:
        ctx.problems.warn(
            "the manifest lists no cases (`cases: []`): nothing to run from it", doc.location()
        )
    cases, fixture_trees = [], []
    for number, item in items:
        key_path: tuple[Any, ...] = ("cases", number)
        where = doc.location(key_path + ("fixture_path",))
        try:
            fixture_dir = _inside_project(
                manifest_dir, item.fixture_path, project=project, what="fixture_path", where=where
            )
        except ConfigError as exc:
            ctx.problems.add(exc)
            continue
        if not fixture_dir.is_dir():
            ctx.problems.error(
                f"fixture_path {item.fixture_path!r} is not a directory under {manifest_dir}", where
            )
            continue
        _warn_if_no_rubric(item.rubric, doc, key_path, ctx)
        spec = _spec(
            fixture_dir,
            rubric=item.rubric,
            description=item.description,
            base_source=item.base_source,
            diff_path=item.diff_path,
            doc=doc,
            key_path=key_path,
            ctx=ctx,
            cassandra_id=item.id or "",  # Cassandra's LoadSuite keeps a missing id empty
            cassandra_name=item.name,
        )
        # A fixture tree is never scanned for suites; one that holds the manifest (`.`)
        # would hide the manifest itself and its neighbours, so only its base is kept out.
        trees = [fixture_dir, *([spec.base] if spec and spec.base and spec.base.is_dir() else [])]
        fixture_trees += [tree for tree in trees if not is_inside(manifest_dir, tree)]
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
    return cases, fixture_trees


def load_rubric_dir(doc: Document, *, ctx: LoadContext) -> list[Case]:
    """`<suite>/<case>/metadata.json` beside `input.diff`; paths resolve in the case dir."""
    metadata = validate_model(RubricMetadata, doc, ctx.problems)
    if metadata is None:
        return []
    case_dir = doc.path.parent
    case_id = metadata.id or case_dir.name
    _warn_if_no_rubric(metadata.rubric, doc, (), ctx)
    spec = _spec(
        case_dir,
        rubric=metadata.rubric,
        description=metadata.description,
        base_source=metadata.base_source,
        diff_path=metadata.diff_path,
        doc=doc,
        key_path=(),
        ctx=ctx,
        cassandra_id=case_id,  # Cassandra's LoadCases names a case without id after its dir
        cassandra_name=metadata.name,
    )
    if spec is None:
        return []
    suite = case_dir.parent.name
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


def _warn_if_no_rubric(
    rubric: str, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext
) -> None:
    if not rubric.strip():
        ctx.problems.warn(
            "the rubric is empty or missing: the judge scores the review against an empty "
            "rubric (Cassandra accepts this too)",
            doc.location(key_path + ("rubric",)),
        )


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
    cassandra_id: str,
    cassandra_name: str,
) -> RubricSpec | None:
    project = ctx.project_for(doc.path.parent)
    try:
        diff_where = doc.location(key_path + (("diff_path",) if diff_path else ()))
        diff = _diff(fixture_dir, diff_path, diff_where, project=project)
    except ConfigError as exc:
        ctx.problems.add(exc)
        diff = None
    try:
        base_where = doc.location(key_path + (("base_source",) if base_source else ()))
        base = _base(fixture_dir, base_source, base_where, project=project)
    except ConfigError as exc:
        ctx.problems.add(exc)
        return None
    if diff is None:
        return None
    return RubricSpec(
        rubric=rubric,
        diff=diff,
        base=base,
        description=description,
        cassandra_id=cassandra_id,
        cassandra_name=cassandra_name,
    )


def _inside_project(
    start: Path, raw: str, *, project: Path, what: str, where: SourcePosition
) -> Path:
    """`raw` joined onto `start` as Cassandra joins it (`..` and `.` allowed), resolved; it
    must stay inside `project`, the git work tree holding the suite (else its directory).

    Cassandra takes an absolute path as it is and never checks where a path leads; assay
    refuses both, as it refuses them in every suite format.
    """
    text = raw.replace("\\", "/")
    if os.path.isabs(text) or (len(text) > 1 and text[1] == ":"):
        raise ConfigError(f"{what} {raw!r} is absolute; make it relative to {start}", where)
    joined = os.path.normpath(os.path.join(start, text))
    relative = os.path.relpath(joined, project)
    if relative == ".." or relative.startswith("../"):
        raise ConfigError(
            f"{what} {raw!r} leads outside the repository {project} (the git work tree "
            "holding the suite, else its directory): suite paths stay inside it",
            where,
        )
    if relative == ".":
        return real_path(project)
    return resolve_inside(project, relative, location=where)


def _diff(fixture_dir: Path, raw: str | None, where: SourcePosition, *, project: Path) -> Path:
    what = "diff_path" if raw is not None else "diff"
    raw = raw or "input.diff"
    path = _inside_project(fixture_dir, raw, project=project, what=what, where=where)
    if not path.is_file():
        raise ConfigError(f"diff {raw!r} not found in {fixture_dir}", where)
    data = _diff_bytes(path)
    if not data:
        return path  # Cassandra applies nothing: the sandbox is the base alone
    # Checked as text; git applies the bytes, whatever their encoding, as in Cassandra.
    text = go_text(data).removeprefix("\ufeff")
    if not text.strip():
        raise ConfigError(
            f"diff {raw!r} holds only whitespace, no patch: Cassandra runs `git apply` on "
            'it, which fails ("No valid patches in input"); empty the file to review the '
            "base alone",
            SourcePosition(path, 1, 1),
        )
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


def _diff_bytes(path: Path) -> bytes:
    """The diff file's bytes (UTF-8 or not: Cassandra reads it as bytes too)."""
    where = SourcePosition(path)
    try:
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            raise ConfigError(
                f"diff is {human_size(size)}, over the {human_size(MAX_TEXT_BYTES)} limit "
                "for the text assay reads (suites, skills, diffs)",
                where,
            )
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read diff: {exc.strerror or exc}", where) from None


def _base(
    fixture_dir: Path, raw: str | None, where: SourcePosition, *, project: Path
) -> Path | None:
    if raw is None:
        for default in ("base.tar.gz", "base"):
            candidate = _inside_project(
                fixture_dir, default, project=project, what="base", where=where
            )
            if default == "base" and candidate.exists() and not candidate.is_dir():
                # Cassandra looks for a `base` directory only and would run on an empty base.
                raise ConfigError(
                    f"'base' in {fixture_dir} is not a directory: Cassandra ignores it and "
                    "runs the case on an empty base; make it a directory, name a tarball "
                    "base.tar.gz, or remove it",
                    where,
                )
            if candidate.exists():
                return _checked_base(candidate, default, where)
        return None  # no base: the diff creates every file
    path = _inside_project(fixture_dir, raw, project=project, what="base_source", where=where)
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
        # what the build would refuse
        try:
            if copyfs_refusal(path) is None:
                check_fixture_tree(path)
            # else: a symlink (or a FIFO) fails the case as it runs, as in Cassandra, whose
            # Go 1.24 os.CopyFS copies files and directories only; nothing is copied then.
        except SandboxError as exc:
            raise ConfigError(f"base {raw!r}: {exc}", where) from None
        except OSError as exc:
            reason = exc.strerror or exc
            raise ConfigError(f"base {raw!r} cannot be read: {reason}", where) from None
        return path
    if not is_tarball(path):
        raise ConfigError(f"base {raw!r} must be a directory or a .tar.gz tarball", where)
    problems = check_tarball(path)
    if problems:
        raise ConfigError("unsafe or unreadable base tarball: " + "; ".join(problems), where)
    return path
