"""Every `ASSAY_*` environment variable assay reads or sets, and a warning for any other.

Otherwise a mistyped variable is ignored without a word: a run with the threshold's name
misspelt gates at the default threshold. So every command warns once for each `ASSAY_*`
variable in its environment that is none of assay's (an empty one is unset, as
everywhere), with a did-you-mean. A warning, not an error: exit codes are a contract, and
a variable a user's own script reads is no mistake of theirs.

The names are taken from where each is defined, cheapest first, and a source is asked
only while some variable is still unexplained, so a run without strays imports nothing
for this:

- each command's options (`--max-errors` reads ASSAY_MAX_ERRORS: `cli.option_variable`)
  and the run options `assay.run()` reads (`options.run_option_variables`);
- what a command agent is given (each `{placeholder}`, and `AGENT_FILE_VARIABLES`:
  core/placeholders.py) and the history's size (`options.HISTORY_KEEP_VARIABLE`);
- the OS sandbox's limits (`isolation/limits.py: LIMIT_VARIABLES`);
- the providers' key variables (ASSAY_ANTHROPIC_API_KEY, bridged: `models/providers.py`);
- the Action: every input, which `assay ci` also reads as `ASSAY_<INPUT>`
  (action/input_text.py), and the decision step's ASSAY_RUN_REASON (`_cli/ci.py`);
- assay's own test suite and CI (the browser test's switches, the live tests' model).

tests/test_cli_environment.py checks that every `ASSAY_` name in src/, action.yml, the
workflows and the tests' reads is known here.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping

from assay.options import HISTORY_KEEP_VARIABLE, env_name, run_option_variables

__all__ = ["known_variables", "unknown_variable_warnings", "unknown_variables"]

PREFIX = "ASSAY_"

_TEST_SUITE = ("ASSAY_REQUIRE_BROWSER", "ASSAY_UPDATE_SCREENSHOT", "ASSAY_LIVE_MODEL")
"""Read by tests/test_report_html_browser.py (CI sets the first) and tests/test_live.py,
whose runs of assay must not warn about them."""


def unknown_variable_warnings(
    environ: Mapping[str, str], parser: argparse.ArgumentParser
) -> list[str]:
    """One warning per set `ASSAY_*` variable assay neither reads nor sets."""
    unknown = unknown_variables(environ, parser)
    if not unknown:
        return []
    known = sorted(known_variables(parser))
    return [_warning(name, known) for name in unknown]


def unknown_variables(environ: Mapping[str, str], parser: argparse.ArgumentParser) -> list[str]:
    """The set `ASSAY_*` variables (any case: `assay_threshold` is a typo too) that are none
    of assay's, sorted."""
    left = {name for name, value in environ.items() if name.upper().startswith(PREFIX) and value}
    for source in _sources(parser):
        if not left:
            break
        left.difference_update(source())
    return sorted(left)


def known_variables(parser: argparse.ArgumentParser) -> frozenset[str]:
    """Every `ASSAY_*` variable assay reads or sets."""
    names = (name for source in _sources(parser) for name in source())
    return frozenset(name for name in names if name.startswith(PREFIX))


def _warning(name: str, known: list[str]) -> str:
    # lazy: start-up (a command loads only what it runs)
    from assay.report.terminal import printable

    # Compared without the prefix, which every name shares and would make any two alike.
    close = difflib.get_close_matches(
        name.upper().removeprefix(PREFIX),
        [k.removeprefix(PREFIX) for k in known],
        n=1,
        cutoff=0.8,
    )
    hint = f" (did you mean {PREFIX}{close[0]}?)" if close else ""
    return f"{printable(name)} is set, but assay reads no such variable: it is ignored{hint}"


def _sources(parser: argparse.ArgumentParser) -> Iterator[Callable[[], Iterable[str]]]:
    yield lambda: _options(parser)
    yield _agent_and_history
    yield _sandbox_limits
    yield _provider_variables
    yield _action_variables
    yield lambda: _TEST_SUITE


def _options(parser: argparse.ArgumentParser) -> Iterator[str]:
    # lazy: start-up (a command loads only what it runs)
    from assay._cli.parser import commands, option_variable

    for command in commands(parser).values():
        for action in command._actions:
            name = option_variable(action)
            if name is not None:
                yield name
    yield from run_option_variables()


def _agent_and_history() -> Iterator[str]:
    # lazy: start-up (a command loads only what it runs)
    from assay.core.placeholders import AGENT_FILE_VARIABLES, PLACEHOLDERS

    yield from (env_name(name) for name in PLACEHOLDERS)
    yield from AGENT_FILE_VARIABLES
    yield HISTORY_KEEP_VARIABLE


def _sandbox_limits() -> Iterable[str]:
    # lazy: start-up (a command loads only what it runs)
    from assay.isolation.limits import LIMIT_VARIABLES

    return LIMIT_VARIABLES.values()


def _provider_variables() -> Iterator[str]:
    # lazy: start-up (a command loads only what it runs)
    from assay.errors import ConfigError
    from assay.models.providers import PROVIDERS

    for provider in PROVIDERS.names():
        try:
            spec = PROVIDERS.get(provider)
        except ConfigError:  # a broken plugin: the command that uses it says so
            continue
        if spec is not None:
            yield from (*spec.credential_variables(), *spec.companions, *spec.keyless_when)


def _action_variables() -> Iterator[str]:
    # lazy: start-up (a command loads only what it runs)
    from assay._cli.ci import RUN_REASON_VARIABLE
    from assay.action.inputs import ACTION_ONLY_INPUTS, ActionInputs

    yield RUN_REASON_VARIABLE
    for name in (*ActionInputs.model_fields, *ACTION_ONLY_INPUTS):
        yield env_name(name)  # input_text.raw_input's ASSAY_<INPUT>
