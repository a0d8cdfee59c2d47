"""Property: however a valid suite is mangled, loading it raises nothing but ConfigError."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import ConfigError
from assay.suites import load_suites

DATA = Path(__file__).parent / "data" / "suites"

# (seed directory, file inside it that gets mutated)
TARGETS = [
    ("warden", "eval-bug-detection.yaml"),
    ("warden", "security-review/sentry-replay-delete-read-scope.json"),
    ("warden", "verification/workflow-open-periods-project-access-keep.json"),
    ("cassandra", "suite.json"),
    ("cassandra", "cases/hardcoded-api-key/metadata.json"),
    ("pvyai", "regression.json"),
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
# Values that are plausible inside suites: paths that escape, TODOs, severities in odd case.
suite_values = st.sampled_from(
    ["../x", "/etc/passwd", "TODO", "HIGH", "", " ", "fixtures", "a/b", "keep", [], {}, 0]
)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fuzz")
    for name in ("warden", "cassandra", "pvyai"):
        shutil.copytree(DATA / name, base / name)
    return base


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            found += _paths(item, prefix + (number,))
    return found


def _mutate_tree(data: Any, draw: Any) -> Any:
    path = draw(st.sampled_from(_paths(data)))
    operation = draw(st.sampled_from(["drop", "replace", "retype"]))
    if not path:
        return draw(json_values)
    parent = data
    for element in path[:-1]:
        parent = parent[element]
    key = path[-1]
    if operation == "drop":
        del parent[key]
    elif operation == "replace":
        parent[key] = draw(json_values | suite_values)
    else:
        current = parent[key]
        parent[key] = [current] if not isinstance(current, list) else {"wrapped": current}
    return data


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
@pytest.mark.slow
def test_mutated_suites_raise_only_config_errors(trees: Path, data: st.DataObject) -> None:
    seed, relative = data.draw(st.sampled_from(TARGETS))
    path = trees / seed / relative
    original = (DATA / seed / relative).read_bytes()
    kind = data.draw(st.sampled_from(["tree", "tree", "insert", "truncate"]))
    if kind == "tree":
        parsed = yaml.safe_load(original) if path.suffix == ".yaml" else json.loads(original)
        mutated = _mutate_tree(parsed, data.draw)
        text = yaml.safe_dump(mutated) if path.suffix == ".yaml" else json.dumps(mutated)
        content = text.encode("utf-8", "surrogatepass")
    elif kind == "insert":
        at = data.draw(st.integers(0, len(original)))
        content = original[:at] + data.draw(st.binary(min_size=1, max_size=8)) + original[at:]
    else:
        content = original[: data.draw(st.integers(0, len(original) - 1))]
    path.write_bytes(content)
    try:
        loaded = load_suites([trees / seed])
        assert loaded.cases  # a mutation that keeps the suite valid still yields cases
    except ConfigError as exc:
        assert str(exc)
    finally:
        path.write_bytes(original)
