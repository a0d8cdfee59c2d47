"""The suite format registry: how a file is recognised as a suite and loaded into cases.

assay's own formats (Warden's YAML suites, JSON scenarios and verification scenarios,
Cassandra's rubric case directories) are recognised by `discover.classify`, whose order
matters and which plugins cannot override; a file none of them claims is offered to the
formats plugins register through the `assay.formats` entry point group, in name order.
Task suites and rubric manifests, which own fixture trees, are loaded before everything
else by `load.py` itself. Each loader is imported only when a file of its format turns up.

A plugin's format names a `SuiteFormat`: `recognises(doc)` over the parsed document
(`.json`, `.yaml` or `.yml`, with positions) and `load(doc, root=..., ctx=...)` giving
`Case`s, reporting problems through `ctx.problems` with the document's locations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.entrypoints import Registry

if TYPE_CHECKING:
    from assay.suites.case import Case
    from assay.suites.context import LoadContext
    from assay.suites.document import Document

__all__ = ["FORMATS", "SuiteFormat", "plugin_format_of"]

Loader = Callable[..., "Sequence[Case]"]
"""`load(doc, *, root, ctx) -> cases`."""


@dataclass(frozen=True)
class SuiteFormat:
    name: str
    load: Loader
    recognises: Callable[[Document], bool] | None = None
    """For a plugin's format: whether `doc` is written in it (assay's own use classify)."""


def _adapt(name: str, obj: object) -> SuiteFormat:
    if not isinstance(obj, SuiteFormat):
        raise TypeError(f"expected an assay.suites.formats.SuiteFormat, got {type(obj).__name__}")
    if obj.recognises is None:
        raise TypeError(f"format {name!r} needs `recognises(doc)`")
    return obj


FORMATS: Registry[SuiteFormat] = Registry("assay.formats", what="suite format", adapt=_adapt)


def _review_yaml(doc: Document, *, root: Path, ctx: LoadContext) -> Sequence[Case]:
    from assay.suites.review import load_review_yaml

    return load_review_yaml(doc, root=root, ctx=ctx)


def _review_json(doc: Document, *, root: Path, ctx: LoadContext) -> Sequence[Case]:
    from assay.suites.review import load_review_scenario

    return load_review_scenario(doc, root=root, ctx=ctx)


def _verification(doc: Document, *, root: Path, ctx: LoadContext) -> Sequence[Case]:
    from assay.suites.review import load_verification

    return load_verification(doc, root=root, ctx=ctx)


def _rubric_dir(doc: Document, *, root: Path, ctx: LoadContext) -> Sequence[Case]:
    from assay.suites.rubric import load_rubric_dir

    return load_rubric_dir(doc, ctx=ctx)


FORMATS.register("review-yaml", SuiteFormat("review-yaml", _review_yaml))
FORMATS.register("review-json", SuiteFormat("review-json", _review_json))
FORMATS.register("verification", SuiteFormat("verification", _verification))
FORMATS.register("rubric-dir", SuiteFormat("rubric-dir", _rubric_dir))
_BUILT_IN = frozenset(
    {"review-yaml", "review-json", "verification", "rubric-dir", "rubric-manifest", "task-suite"}
)


def plugin_format_of(doc: Document) -> str | None:
    """The name of the plugin format that claims `doc`, if any (asked only of files that
    none of assay's own formats claims)."""
    for name in FORMATS.names():
        if name in _BUILT_IN:
            continue
        spec = FORMATS.get(name)
        if spec is not None and spec.recognises is not None and spec.recognises(doc):
            return name
    return None
