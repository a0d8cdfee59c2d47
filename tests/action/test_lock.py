"""The Action's lock files are current with pyproject.toml and pin every file by hash.

Checked offline, so the test does not turn red when PyPI publishes a release: the lock's
first line is a digest of the requirements it was resolved from (.ci/lock.py writes it),
and every requirement must be met by the version the lock pins. After changing
pyproject.toml's dependencies, a model provider's extra (`openai`, `bedrock`, `vertex`,
`gemini`), the build backend or the dev extra's uv, run `python .ci/lock.py`.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)==(?P<version>[^\s;\\]+)")


def _lock_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("assay_lock_tool", ROOT / ".ci" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOCK = _lock_tool()


def _requirement_lines(text: str) -> list[str]:
    """Each requirement of a requirements file, its `\\` continuation lines joined."""
    entries: list[str] = []
    current = ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        current += line.rstrip("\\").strip() + " "
        if not line.rstrip().endswith("\\"):
            entries.append(current.strip())
            current = ""
    return entries


def _pins(path: Path) -> dict[str, tuple[Version, str]]:
    pins: dict[str, tuple[Version, str]] = {}
    for entry in _requirement_lines(path.read_text(encoding="utf-8")):
        match = _PIN.match(entry)
        assert match, f"{path.name}: not a pin: {entry[:80]}"
        pins[canonicalize_name(match["name"])] = (Version(match["version"]), entry)
    return pins


CASES = [
    (LOCK.LOCK, LOCK.action_requirements),
    (LOCK.UV_LOCK, LOCK.uv_requirements),
]


@pytest.mark.parametrize(("lock", "requirements"), CASES, ids=["requirements", "uv"])
def test_the_lock_was_made_from_pyprojects_current_requirements(
    lock: Path, requirements: Callable[[], list[str]]
) -> None:
    wanted = requirements()
    first = lock.read_text(encoding="utf-8").splitlines()[0]
    assert first == LOCK.DIGEST_PREFIX + LOCK.digest(wanted), (
        f"{lock.name} is older than pyproject.toml's requirements: run `{LOCK.COMMAND}`"
    )
    pins = _pins(lock)
    for text in wanted:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{lock.name} has no pin for {text}: run `{LOCK.COMMAND}`"
        assert requirement.specifier.contains(pins[name][0], prereleases=True), text


@pytest.mark.parametrize("lock", [LOCK.LOCK, LOCK.UV_LOCK], ids=["requirements", "uv"])
def test_every_pin_is_exact_and_hashed(lock: Path) -> None:
    for _, entry in _pins(lock).values():
        hashes = re.findall(r"--hash=sha256:([0-9a-f]+)", entry)
        assert hashes and all(len(h) == 64 for h in hashes), entry[:80]


def test_the_digest_changes_with_any_requirement(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject.write_text(text, encoding="utf-8")
    before = LOCK.digest(LOCK.action_requirements(pyproject))
    pyproject.write_text(text.replace('"rich>=13.7"', '"rich>=14"'), encoding="utf-8")
    assert LOCK.digest(LOCK.action_requirements(pyproject)) != before


def test_the_lock_holds_what_the_action_needs_to_build_and_call_models() -> None:
    pins = _pins(LOCK.LOCK)
    for name in ("hatchling", "openai", "anthropic", "pygithub", "pydantic"):
        assert name in pins, name
    # The cloud providers' SDKs: Bedrock signs with botocore, Vertex authenticates with
    # google-auth, Gemini is google-genai.
    for name in ("boto3", "botocore", "google-auth", "google-genai"):
        assert name in pins, name
    assert set(_pins(LOCK.UV_LOCK)) == {"uv"}


def test_every_built_in_providers_extra_is_in_the_actions_lock() -> None:
    """A suite naming any built-in provider's model can run in the Action: the extra its
    ProviderSpec names is one the lock is resolved from, with every requirement of it."""
    from assay.models.providers import PROVIDERS

    extras = {
        spec.extra
        for name in PROVIDERS.names()
        if (spec := PROVIDERS.get(name)) is not None and spec.extra is not None
    }
    assert extras == {"openai", "bedrock", "vertex", "gemini"}
    assert extras <= set(LOCK.ACTION_EXTRAS)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = LOCK.action_requirements()
    for extra in extras:
        for requirement in pyproject["project"]["optional-dependencies"][extra]:
            assert requirement in wanted, (extra, requirement)


def test_every_sdk_module_a_provider_names_is_installed_by_a_pinned_distribution() -> None:
    """The modules preload imports for each provider come from distributions the lock pins
    (read from this environment's installed metadata, which the dev extra makes whole)."""
    from importlib.metadata import packages_distributions

    from assay.models.providers import PROVIDERS

    pins = _pins(LOCK.LOCK)
    owners = packages_distributions()
    for name in PROVIDERS.names():
        spec = PROVIDERS.get(name)
        assert spec is not None
        for module in spec.sdk_modules:
            path = module.split(".")
            distributions = owners.get(path[0], [])
            if len(distributions) > 1:  # a namespace package (`google`): the sub-package's
                distributions = [d for d in distributions if _provides(d, path)]
            assert distributions, (name, module)
            assert all(canonicalize_name(d) in pins for d in distributions), (name, module)


def _provides(distribution: str, path: list[str]) -> bool:
    from importlib.metadata import distribution as find

    files = find(distribution).files or []
    prefix = "/".join(path) + "/"
    return any(str(f).startswith(prefix) or str(f) == "/".join(path) + ".py" for f in files)
