"""What a confined program may still see of the directories its sandbox masks.

A program's argv decides what is shown, and a pull request writes that argv (agent
commands, verification commands), so the rule only ever shows a checkout's own files:

- a file an argument names by absolute path (`python /abs/suite/agent.py`) is shown, alone,
  when it lies in a *source* (a suite's checkout, or the working directory's), outside any
  `.git` directory, is not withheld (a suite file, a case's fixture, the baseline report:
  the answer key) and does not lie in a private root inside that checkout (the report dir,
  the history dir, the work root, HOME, /tmp, /run); when the checkout is a git work tree
  it must also be tracked there: a credentials file another step wrote (actions/checkout's
  token in `.git/config`, google-github-actions/auth's `gha-creds-*.json`) is not, a file
  the pull request checked in is its own. A checkout living inside HOME or /tmp (a
  runner's `/home/runner/work/R/R`) shows its files, never HOME's or /tmp's own.
- the program itself (argv[0]), when it lies in a source, passes the same test, and then
  brings its directory (its helper modules) with whatever git does not track there, and
  every `.git`, hidden again, unless that directory is or holds a masked root or a
  withheld path: then only the program file is shown. A program outside every source (an
  agent CLI installed under HOME) shows its directory, unless that directory is or holds
  a masked root (HOME, /tmp itself).

A directory is bound whole and its untracked entries covered, rather than each tracked file
bound: bwrap's cost grows faster than linearly with its mounts (about 0.2 ms each for 16,
0.6 ms each for 256), and an agent's directory usually holds nothing untracked. A symlink
in it is left alone: it resolves inside the sandbox, where every mask applies.

Decisions are made once per path and run (`Exposure` caches them, and lists a checkout's
tracked files once), so a confinement per attempt costs dictionary look-ups.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.core.paths import names_under

__all__ = ["ALWAYS_MASKED", "Exposure", "ShownProgram", "TrackedFiles"]

TrackedFiles = Callable[[Path], Collection[str] | None]
"""A checkout's tracked files, as `git ls-files` names them (None: git could not say)."""
ALWAYS_MASKED = (Path("/tmp"), Path("/run"), Path("/sys"))
"""Replaced by a tmpfs in every confinement (`Confinement.wrap`), as HOME is, besides the
run's own masked directories."""
_MAX_COVERED = 32
"""A program's directory needing more untracked entries covered shows the program alone:
each is one more mount in every confined start."""
_MAX_WALKED = 10_000
"""Entries looked at to find them; a directory with more shows the program alone."""
_MAX_ARGUMENT_CHARS = 4096
_INTERPRETER = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|tsx|ts-node|bash|sh|dash|zsh|ksh|fish|ruby|perl|php"
    r"|lua|Rscript|java)[0-9.]*"
)
"""Programs whose first argument that is not an option is the file they run."""


@dataclass(frozen=True)
class ShownProgram:
    """What a program (argv[0]) needs in the sandbox to start."""

    exposed: tuple[Path, ...] = ()
    covered: tuple[Path, ...] = ()
    """Entries of an exposed directory hidden again (untracked files, `.git`)."""
    links: tuple[tuple[Path, Path], ...] = ()
    """(link, target): the symlink it was found through (`~/.local/bin/claude`, into
    `~/.local/share/...`), for the sandbox to make again where a mask hides the host's."""


@dataclass(frozen=True)
class _Checked:
    shown: bool
    why_not: str = ""
    untracked_only: bool = False
    """Hidden only because git does not track it (a build's output, a credentials file)."""


@dataclass(frozen=True)
class _Listing:
    names: tuple[str, ...]
    """Sorted, for the names under a directory."""
    members: frozenset[str]


@dataclass(frozen=True)
class Exposure:
    """The run's sources and withheld paths, and the decisions made from them so far."""

    sources: tuple[Path, ...] = ()
    """Checkouts (real paths) whose own files an argv may name."""
    withheld: tuple[Path, ...] = ()
    """Files or directories never shown, nor anything under them (absolute; resolved at
    the first path an argv names in a source: a run naming none pays nothing)."""
    tracked: TrackedFiles | None = None
    """Lists a git checkout's tracked files; None: no file of a git checkout is shown."""
    _files: dict[tuple[Path, tuple[Path, ...]], _Checked] = field(
        default_factory=dict, compare=False, repr=False
    )
    _programs: dict[tuple[str, tuple[Path, ...]], ShownProgram] = field(
        default_factory=dict, compare=False, repr=False
    )
    _listings: dict[Path, _Listing] = field(default_factory=dict, compare=False, repr=False)
    _noted: set[Path] = field(default_factory=set, compare=False, repr=False)

    def program(
        self, program: str, masked: Sequence[Path], *, writable: Sequence[Path] = ()
    ) -> ShownProgram:
        """What stays readable for `program` (argv[0]) to start under `masked` (one in the
        `writable` directories, the case's own, is there anyway)."""
        key = (program, tuple(masked))
        if key not in self._programs:
            self._programs[key] = self._shown_program(program, masked)
        shown = self._programs[key]
        if any(path.is_relative_to(own) for path in shown.exposed for own in writable):
            return ShownProgram()
        return shown

    def named_files(
        self, arguments: Sequence[str], masked: Sequence[Path], *, writable: Sequence[Path] = ()
    ) -> list[Path]:
        """The files arguments name by absolute path that may be shown, alone (those in the
        `writable` directories, the case's own, are there anyway)."""
        found = []
        for argument in arguments:
            if len(argument) > _MAX_ARGUMENT_CHARS or "\n" in argument:
                continue
            if not os.path.isabs(argument) or not os.path.isfile(argument):
                continue
            real = Path(os.path.realpath(argument))
            if any(real.is_relative_to(directory) for directory in writable):
                continue
            if self._checked(real, masked).shown:
                found.append(real)
            else:
                self._note(real, masked)
        return found

    def hidden_start(
        self, argv: Sequence[str], masked: Sequence[Path], *, exposed: Sequence[Path] = ()
    ) -> tuple[Path, str] | None:
        """The file `argv` starts, when the sandbox hides it: (its real path, why, and how to
        show it). That file is the program (argv[0]), or the script an interpreter is given
        (its first argument that is not an option: `python /abs/agent.py`, `node`, `bash`,
        `java -jar`, ... as `_INTERPRETER` names them), so a command
        that could only end in "No such file" is refused before any case runs. Every other
        argument naming a hidden file is noted now, once, as it will be at each start.
        What lies in `exposed` (the interpreter, HOME's toolchains) is there anyway."""

        def there_anyway(real: Path) -> bool:
            return any(real.is_relative_to(path) for path in exposed)

        program = argv[0] if argv else ""
        found = shutil.which(program) if "/" not in program else program
        if found and os.path.isabs(found) and "\0" not in found:
            real = Path(os.path.realpath(found))
            if self._source_of(real) is not None and _is_program_file(real):
                checked = self._checked(real, masked)
                if not checked.shown and not checked.untracked_only and not there_anyway(real):
                    return real, self._why_hidden(real, masked)
        script = None
        if _INTERPRETER.fullmatch(os.path.basename(program)):
            script = next((argument for argument in argv[1:] if not argument.startswith("-")), None)
        for argument in argv[1:]:
            if len(argument) > _MAX_ARGUMENT_CHARS or "\n" in argument or "\0" in argument:
                continue
            if not os.path.isabs(argument) or not os.path.isfile(argument):
                continue
            real = Path(os.path.realpath(argument))
            if self._checked(real, masked).shown or not _masked(real, masked) or there_anyway(real):
                continue
            if argument == script:
                return real, self._why_hidden(real, masked)
            self._note(real, masked)
        return None

    def _why_hidden(self, real: Path, masked: Sequence[Path]) -> str:
        """Which mask hides `real`, why it is not shown again, and what would show it."""
        root = max(
            (root for root in (*masked, *ALWAYS_MASKED) if real.is_relative_to(root)),
            key=lambda root: len(root.parts),
            default=real.parent,
        )
        checked = self._checked(real, masked)
        if self._source_of(real) is None:
            how = (
                "put it in the project (the suite's git checkout) and commit it, "
                "or run with --isolation none"
            )
        elif checked.untracked_only:
            how = "or run with --isolation none"
        else:
            how = "name a tracked file of the project that is no suite file or fixture"
        return (
            f"{root} is hidden from them, and this file not shown again: {checked.why_not}; {how}"
        )

    def _shown_program(self, program: str, masked: Sequence[Path]) -> ShownProgram:
        # A relative name with a `/` (`bin/peek`), or one found through a relative PATH
        # entry, is run from the sandbox's working directory, the case's own, which needs
        # nothing shown: resolving it here, against assay's own, would show a directory
        # the program never runs from (through a link the checkout holds, any at all).
        found = shutil.which(program) if "/" not in program else program
        if found is None or not os.path.isabs(found):
            return ShownProgram()
        link, real = Path(os.path.abspath(found)), Path(os.path.realpath(found))
        if real.is_relative_to("/proc") or not _is_program_file(real):
            return ShownProgram()
        shown = self._program_view(real, masked)
        if shown.exposed and link != real:
            return ShownProgram(shown.exposed, shown.covered, links=((link, real),))
        return shown

    def _program_view(self, real: Path, masked: Sequence[Path]) -> ShownProgram:
        directory = real.parent
        holds_root = any(root.is_relative_to(directory) for root in (*masked, *ALWAYS_MASKED))
        if self._source_of(real) is None:
            return ShownProgram((real,) if holds_root else (directory,))
        checked = self._checked(real, masked)
        if checked.untracked_only:
            # A program the checkout does not track is most often its build's output
            # (`go build -o bin/agent`): executed, not read, and shown alone, without the
            # directory beside it; a credentials file another step wrote is no executable.
            return ShownProgram((real,))
        if not checked.shown:
            self._note(real, masked)
            return ShownProgram()
        if holds_root or self._holds_withheld(directory):
            return ShownProgram((real,))
        covered = self._untracked_in(directory)
        if covered is None:
            return ShownProgram((real,))
        return ShownProgram((directory,), tuple(covered))

    def _checked(self, real: Path, masked: Sequence[Path]) -> _Checked:
        if self._source_of(real) is None:  # decided at once: not worth a cache entry
            return _Checked(False, "not inside a suite's checkout")
        key = (real, tuple(masked))
        if key not in self._files:
            self._files[key] = self._check(real, masked)
        return self._files[key]

    def _check(self, real: Path, masked: Sequence[Path]) -> _Checked:
        source = self._source_of(real)
        assert source is not None  # `_checked` answered for a path outside every source
        if self._is_withheld(real):
            return _Checked(False, "a suite file, a case's fixture or the baseline report")
        inside = real.relative_to(source)
        if ".git" in inside.parts:
            return _Checked(False, "inside a .git directory")
        for root in _private_roots(masked, self.sources):
            if real.is_relative_to(root) and root.is_relative_to(source):
                return _Checked(False, f"inside {root}, which is never shown")
        listing = self._listing(source)
        if listing is not None and inside.as_posix() not in listing.members:
            # Only what the checkout holds is shown: a credentials file a CI step wrote
            # there is untracked. A new agent script is too, until it is added.
            return _Checked(
                False,
                f"not tracked by git in {source} (`git add` it to let the sandbox show it)",
                untracked_only=True,
            )
        return _Checked(True)

    def _source_of(self, real: Path) -> Path | None:
        """The innermost source holding `real`."""
        holding = [source for source in self.sources if real.is_relative_to(source)]
        return max(holding, key=lambda source: len(source.parts)) if holding else None

    def _is_withheld(self, real: Path) -> bool:
        return any(path in self._withheld_set for path in (real, *real.parents))

    def _holds_withheld(self, directory: Path) -> bool:
        return directory in self._withheld_set or directory in self._withheld_ancestors

    @functools.cached_property
    def _withheld_set(self) -> frozenset[Path]:
        return frozenset(Path(os.path.realpath(path)) for path in self.withheld)

    @functools.cached_property
    def _withheld_ancestors(self) -> frozenset[Path]:
        return frozenset(parent for path in self._withheld_set for parent in path.parents)

    def _untracked_in(self, directory: Path) -> list[Path] | None:
        """What to cover in `directory` so that it shows what the file rule would: each
        entry git does not track (a directory none of whose files it tracks, whole) and
        every `.git`; only `.git` in a checkout without git. None: too many to cover."""
        source = self._source_of(directory)
        assert source is not None  # the program in it has one
        listing = self._listing(source)
        covered: list[Path] = []
        pending, walked = [directory], 0
        while pending:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    walked += 1
                    path = Path(entry.path)
                    if entry.name == ".git":
                        covered.append(path)
                    elif entry.is_symlink():
                        continue  # resolved in the sandbox, where the masks apply
                    elif entry.is_dir(follow_symlinks=False):
                        if listing is None or _tracks_below(listing, path.relative_to(source)):
                            pending.append(path)
                        else:
                            covered.append(path)  # untracked, or a submodule's work tree
                    elif listing is not None:
                        if path.relative_to(source).as_posix() not in listing.members:
                            covered.append(path)
            if walked > _MAX_WALKED or len(covered) > _MAX_COVERED:
                return None
        return covered

    def _listing(self, source: Path) -> _Listing | None:
        """What git tracks in `source` (None: not a git checkout); listed once a run."""
        if not (source / ".git").exists():
            return None
        if source not in self._listings:
            listed = self.tracked(source) if self.tracked is not None else None
            if listed is None:
                print(
                    f"assay: cannot list the files git tracks in {source}: confined programs "
                    "see none of its files",
                    file=sys.stderr,
                )
            names = tuple(sorted(listed or ()))
            self._listings[source] = _Listing(names, frozenset(names))
        return self._listings[source]

    def _note(self, real: Path, masked: Sequence[Path]) -> None:
        """Say once why a path an argv names stays hidden, when a mask hides it."""
        if real in self._noted:
            return
        if not _masked(real, masked):
            return  # not masked: the program sees it anyway
        self._noted.add(real)
        why = self._checked(real, masked).why_not
        print(f"assay: {real} stays hidden from confined programs: {why}", file=sys.stderr)


def _masked(real: Path, masked: Sequence[Path]) -> bool:
    """Whether a mask of the sandbox lies over `real` (shown again or not)."""
    return any(real.is_relative_to(root) for root in (*masked, *ALWAYS_MASKED))


def _is_program_file(path: Path) -> bool:
    """An executable regular file, the only thing worth showing a directory for."""
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _private_roots(masked: Sequence[Path], sources: Sequence[Path]) -> list[Path]:
    """The masked directories that are not sources (report dir, history dir, work root,
    HOME), and /tmp, /run and /sys."""
    return [root for root in (*masked, *ALWAYS_MASKED) if root not in sources]


def _tracks_below(listing: _Listing, directory: Path) -> bool:
    """Whether git tracks a file under `directory` (relative to the checkout)."""
    return next(names_under(listing.names, directory.as_posix()), None) is not None
