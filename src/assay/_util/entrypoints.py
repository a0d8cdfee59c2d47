"""Named registries fed by built-ins and by `importlib.metadata` entry points.

One `Registry` per kind of thing assay can be extended with (providers, runtimes,
graders, formats, renderers), each the only list of its names. Built-ins register at
import; plugins declare an entry point in their distribution's group
(`[project.entry-points."assay.providers"]`) and are found without being imported:
the entry points' names are read from the installed metadata the first time a name is
asked for that no built-in has, and a plugin's module is imported only when its own name
is used. So `assay --version`, `validate` and `list` import no plugin (and no SDK) unless
a suite names one.

A plugin whose entry point cannot be imported, or names the wrong kind of object, is the
user's mistake (their environment): a `ConfigError` naming the distribution, the group and
the entry point, never a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from assay.errors import ConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["Registry", "entry_point_origin", "forget_installed_plugins", "spec_or_factory"]

T = TypeVar("T")


def entry_point_origin(entry_point: EntryPoint) -> str:
    """`entry point 'x' (= pkg.mod:obj) of distribution 'dist' in group 'assay.kind'`."""
    dist = entry_point.dist.name if entry_point.dist is not None else "an unknown distribution"
    return (
        f"entry point {entry_point.name!r} (= {entry_point.value}) of distribution "
        f"{dist!r} in group {entry_point.group!r}"
    )


_PREFIX = "assay."
_scanned_groups: dict[str, list[EntryPoint]] | None = None


def _group(group: str) -> list[EntryPoint]:
    """Every distribution's entry points in `group`.

    One pass over the installed distributions serves every group (about 30 ms in a large
    environment, so it is done once, and only when a name is missing). Read per
    distribution, not through `entry_points()`, which keeps one entry point per name and so
    would hide a clash between two plugins.
    """
    global _scanned_groups
    if _scanned_groups is None:
        # lazy: start-up (importlib.metadata only on this path)
        from importlib.metadata import distributions  # ~20 ms: only when a name is missing

        found: dict[str, list[EntryPoint]] = {}
        seen: set[str] = set()
        for dist in distributions():
            name = (dist.metadata["Name"] or "").lower().replace("_", "-")
            if name in seen:  # the same distribution further down sys.path: shadowed
                continue
            seen.add(name)
            for entry_point in dist.entry_points:
                if entry_point.group.startswith(_PREFIX):
                    found.setdefault(entry_point.group, []).append(entry_point)
        _scanned_groups = found
    return _scanned_groups.get(group, [])


def forget_installed_plugins() -> None:
    """Read the installed distributions again on the next scan (tests that add some)."""
    global _scanned_groups
    _scanned_groups = None


@dataclass
class _Pending:
    entry_point: EntryPoint


class Registry(Generic[T]):
    """Names -> values of one kind; built-ins first, then entry points, loaded lazily.

    `adapt(name, obj)` turns what an entry point names into a value (or raises TypeError
    saying what it should have been); a registered value goes in as is.
    """

    def __init__(self, group: str, *, what: str, adapt: Callable[[str, object], T]) -> None:
        self.group = group
        self.what = what
        """What one value is, for messages: `model provider`, `runtime`."""
        self._adapt = adapt
        self._values: dict[str, T | _Pending] = {}
        self._scanned = False

    def register(self, name: str, value: T, *, replace: bool = False) -> None:
        """Add `value` as `name`. A name already taken is an error unless `replace`."""
        if not name:
            raise ValueError(f"a {self.what} needs a name")
        if not replace and name in self._values:
            raise ValueError(f"{self.what} {name!r} is registered already")
        self._values[name] = value

    def unregister(self, name: str) -> None:
        self._values.pop(name, None)

    def get(self, name: str) -> T | None:
        """The value named `name`, importing its plugin now if it has one; else None."""
        if name not in self._values:
            self._scan()
        value = self._values.get(name)
        if isinstance(value, _Pending):
            value = self._load(name, value.entry_point)
        return value

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name not in self._values:
            self._scan()
        return name in self._values

    def names(self) -> list[str]:
        """Every name, built-in or declared by a plugin, without importing any plugin."""
        self._scan()
        return sorted(self._values)

    def loaded(self) -> dict[str, T]:
        """Every value, importing every plugin of this group (listing, docs)."""
        return {name: value for name in self.names() if (value := self.get(name)) is not None}

    def did_you_mean(self, name: str) -> str:
        """` (did you mean x?)`, or nothing when no name is close."""
        close = difflib.get_close_matches(name, self.names(), n=1, cutoff=0.6)
        return f" (did you mean {close[0]}?)" if close else ""

    def _scan(self) -> None:
        if self._scanned:
            return
        self._scanned = True
        seen: dict[str, EntryPoint] = {}
        for entry_point in _group(self.group):
            earlier = seen.get(entry_point.name)
            if earlier is not None and earlier.value != entry_point.value:
                raise ConfigError(
                    f"two plugins register {self.what} {entry_point.name!r}: "
                    f"{entry_point_origin(earlier)} and {entry_point_origin(entry_point)}; "
                    "uninstall one of them"
                )
            seen[entry_point.name] = entry_point
            if entry_point.name in self._values:
                if isinstance(self._values[entry_point.name], _Pending):
                    continue
                raise ConfigError(
                    f"{entry_point_origin(entry_point)} registers {self.what} "
                    f"{entry_point.name!r}, which assay has already; rename it"
                )
            self._values[entry_point.name] = _Pending(entry_point)

    def _load(self, name: str, entry_point: EntryPoint) -> T:
        origin = entry_point_origin(entry_point)
        try:
            obj = entry_point.load()
        except Exception as exc:  # a plugin's import error is the plugin's, said as such
            raise ConfigError(
                f"{origin} could not be loaded: {type(exc).__name__}: {exc}"
            ) from None
        try:
            value = self._adapt(name, obj)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{origin} is not a {self.what}: {exc}") from None
        self._values[name] = value
        return value


def spec_or_factory(spec_type: Callable[..., T], *, factory_is: str) -> Callable[[str, object], T]:
    """The `adapt` of a registry whose entry points name a spec (a dataclass with `name`
    and `factory`) or just its factory: a spec must carry the entry point's name; a bare
    callable becomes `spec_type(name=name, factory=obj)`. `factory_is` says what such a
    callable is, for the error ("an agent factory")."""
    kind = getattr(spec_type, "__name__", "spec")

    def adapt(name: str, obj: object) -> T:
        if isinstance(obj, spec_type):  # type: ignore[arg-type]
            spec: Any = obj
            if spec.name != name:
                raise ValueError(f"its {kind} is named {spec.name!r}, not {name!r}")
            return spec  # type: ignore[no-any-return]
        if callable(obj):
            return spec_type(name=name, factory=obj)
        raise TypeError(f"expected a {kind} or {factory_is}, got {type(obj).__name__}")

    return adapt
