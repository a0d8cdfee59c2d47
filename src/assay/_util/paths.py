"""A user-supplied path resolved inside its root, or the user's error naming where it was written.

The containment rule itself is `assay.core.paths`; this adds the `ConfigError`.
"""

from __future__ import annotations

from pathlib import Path

from assay.core.paths import PathEscape, is_inside, real_path, safe_relative
from assay.errors import ConfigError, SourcePosition

__all__ = ["resolve_inside"]


def resolve_inside(
    root: Path, raw: str, *, location: SourcePosition | None = None, root_is_real: bool = False
) -> Path:
    """Join `raw` onto `root` and resolve symlinks; the result must stay inside `root`.

    Raises ConfigError (naming `location`) when the path is absolute, uses `..`, or a
    symlink on the way leads outside. The target need not exist. `root_is_real` says
    `root` came from `real_path` already (an agent's tools check every call against it).
    """
    try:
        relative = safe_relative(raw)
    except PathEscape as exc:
        raise ConfigError(str(exc), location) from None
    real_root = root if root_is_real else real_path(root)
    candidate = real_path(real_root / relative)
    if not is_inside(candidate, real_root, resolved=True):
        raise ConfigError(
            f"{raw!r} resolves to {candidate}, outside {real_root} (a symlink escapes the root)",
            location,
        )
    return candidate
