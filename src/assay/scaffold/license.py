"""The source repository's license, which every scaffolded fixture carries with it.

Fixtures are copies of someone else's code; checking them in without their license is
not an option, so a scaffold with no license found is refused - unless the code is the
user's own and published under no license (a private repository): then `--no-license`
(or `[tool.assay] scaffold_without_license = true`) skips the license, and the case's
notes say so.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.errors import ConfigError
from assay.scaffold.capture import CapturedFile
from assay.scaffold.change import Change, ChangeSource, License, Unavailable
from assay.scaffold.layout import sanitise_path, without_controls

__all__ = ["LICENSE_NAMES", "NO_LICENSE_FLAG", "NO_LICENSE_KEY", "find_license"]

NO_LICENSE_FLAG = "--no-license"
NO_LICENSE_KEY = "scaffold_without_license"
"""The `[tool.assay]` key that makes --no-license the default for a repository."""

LICENSE_NAMES = (
    "LICENSE",
    "LICENSE.md",
    "LICENSE.txt",
    "LICENCE",
    "LICENCE.md",
    "COPYING",
    "COPYING.md",
)
"""Root files tried in this order (Warden's scaffolder looks for the same names)."""


def find_license(
    source: ChangeSource, change: Change, *, ref: str, captured: Sequence[CapturedFile]
) -> License:
    """The repository's root license at `ref`: the first of LICENSE_NAMES that exists, else
    what the source detects (GitHub's license API). A file already captured is reused.

    Raises ConfigError when there is none.
    """
    already = {f.source_path: f.content for f in captured}
    for name in LICENSE_NAMES:
        if name in already:
            return License(name, already[name])
        content = source.read(name, ref=ref, max_bytes=None)
        if not isinstance(content, Unavailable):
            return License(name, content)
    detected = source.detected_license(ref)
    note = ""
    if detected is not None:
        try:
            sanitise_path(detected.path)
        except ValueError:  # `""`, `..`: nowhere to put it among the fixtures
            named = without_controls(detected.path)
            note = f"; it named {named!r}, not a file path, so that was skipped"
        else:
            return detected
    raise ConfigError(
        f"no license file found in {change.repository} at {ref[:12]} (looked for "
        f"{', '.join(LICENSE_NAMES)} and asked the source to detect one{note}); fixtures copied "
        "from a repository must carry its license, so nothing was written (for your own "
        f"unlicensed code, e.g. a private repository, pass {NO_LICENSE_FLAG} or set "
        f"[tool.assay] {NO_LICENSE_KEY} = true)"
    )
