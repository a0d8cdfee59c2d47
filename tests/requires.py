"""Why a test that needs a Debian tool skips, in one place: the exact command that enables it.

The README's test command passes on a machine without bubblewrap, chromium or shellcheck;
each test that drives one of them skips naming the `apt-get install` that makes it run
(`.ci/run` installs all three, so CI runs them).
"""

from __future__ import annotations

from assay.isolation.bwrap import probe_bwrap

INSTALL_BUBBLEWRAP = "sudo apt-get install bubblewrap"
INSTALL_CHROMIUM = "sudo apt-get install chromium"
INSTALL_SHELLCHECK = "sudo apt-get install shellcheck"


def no_bwrap_reason(why_not: str) -> str:
    """The skip reason for a test that needs a working bwrap: why not, and what to do."""
    if "not installed" in why_not:
        return f"no working bwrap: {why_not} ({INSTALL_BUBBLEWRAP})"
    # Installed but refused (user namespaces off, a container): installing it again is no help.
    return f"no working bwrap: {why_not} (see scripts/prepare-bwrap.sh)"


def bwrap_missing_reason() -> str | None:
    """None when bwrap builds a sandbox here, else the skip reason."""
    found, why_not = probe_bwrap()
    return None if found is not None else no_bwrap_reason(why_not)
