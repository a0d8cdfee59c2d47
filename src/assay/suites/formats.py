"""The suite format registry: how a file is recognised as a suite and loaded into cases.

assay's own formats (Warden's YAML suites, JSON scenarios and verification scenarios,
Cassandra's rubric case directories) are recognised by `discover.classify`, whose order
matters and which plugins cannot override; a file none of them claims is offered to the
formats plugins register through the `assay.formats` entry point group, in name order.
Task suites and rubric manifests, which own fixture trees, are loaded before everything
else by `load.py` itself. Each loader is imported only when a file of its format turns up.

A plugin's format names a `SuiteFormat`: `recognises(doc)` over the parsed document
(`.json`, `.yaml` or `.yml`, with positions) and `load(doc, root=..., ctx=...)` giving
`Case`s, reporting problems through `ctx.problems` with the document's locations. Either
raising, or `load` giving anything but Cases, is an error at the file that names the
plugin (`load_cases`), as `assay validate` reports any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.entrypoints import Registry
from assay.errors import ConfigError, SourcePosition
from assay.registry.plugin_calls import plugin_origin, what_it_raised
from assay.suites.case import Case

if TYPE_CHECKING:
    from assay.suites.context import LoadContext
    from assay.suites.document import Document

__all__ = ["FORMATS", "SuiteFormat", "load_cases", "plugin_format_of"]

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
    from assay.suites.review import load_review_yaml  # lazy: start-up (not loaded with this module)

    return load_review_yaml(doc, root=root, ctx=ctx)


def _review_json(doc: Document, *, root: Path, ctx: LoadContext) -> Sequence[Case]:
    # lazy: start-up (not loaded with this module)
    from assay.suites.review import load_review_scenario

    return load_review_scenario(doc, root=root, ctx=ctx)


def _verification(doc: Document, *, root: Path, ctx: LoadContext) -> Sequence[Case]:
    # lazy: start-up (not loaded with this module)
    from assay.suites.review import load_verification

    return load_verification(doc, root=root, ctx=ctx)


def _rubric_dir(doc: Document, *, root: Path, ctx: LoadContext) -> Sequence[Case]:
    from assay.suites.rubric import load_rubric_dir  # lazy: start-up (not loaded with this module)

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
    none of assay's own formats claims). ConfigError at the file when one's `recognises`
    raises."""
    for name in FORMATS.names():
        if name in _BUILT_IN:
            continue
        spec = FORMATS.get(name)
        if spec is None or spec.recognises is None:
            continue
        try:
            claimed = spec.recognises(doc)
        except Exception as exc:  # the plugin's bug, at the file that set it off
            raise ConfigError(
                _failed(name, f"recognises(doc) raised {what_it_raised(exc)}"),
                SourcePosition(doc.path),
            ) from None
        if claimed:
            return name
    return None


def load_cases(name: str, doc: Document, *, root: Path, ctx: LoadContext) -> tuple[Case, ...]:
    """The cases format `name` reads from `doc`. A plugin's format that raises, or gives
    anything but Cases, is an error at the file naming the plugin (assay's own formats
    report through `ctx.problems`, and one that raises is assay's bug)."""
    spec = FORMATS.get(name)
    if spec is None:
        return ()
    if name in _BUILT_IN:
        return tuple(spec.load(doc, root=root, ctx=ctx))
    where = SourcePosition(doc.path)
    try:
        loaded = spec.load(doc, root=root, ctx=ctx)
        items = tuple(loaded) if _is_collection(loaded) else None
    except ConfigError as exc:  # said on purpose: reported with the file's other problems
        ctx.problems.add(exc)
        return ()
    except Exception as exc:
        ctx.problems.error(_failed(name, f"load(doc) raised {what_it_raised(exc)}"), where)
        return ()
    if items is None:
        ctx.problems.error(
            _failed(name, f"load(doc) returned {type(loaded).__name__}: {_CASES}"), where
        )
        return ()
    odd = next((item for item in items if not isinstance(item, Case)), None)
    if odd is not None:
        ctx.problems.error(
            _failed(name, f"load(doc) gave a {type(odd).__name__} among its cases: {_CASES}"),
            where,
        )
        return ()
    return items


_CASES = "expected a list of assay.suites.case.Case"


def _is_collection(value: object) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)


def _failed(name: str, what: str) -> str:
    """`<the plugin's entry point and distribution>: <what it did>`."""
    return f"{plugin_origin(FORMATS, name)}: {what}"
