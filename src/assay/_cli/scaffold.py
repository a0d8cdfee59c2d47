"""`assay scaffold PR_URL | --repo PATH --base REF --head REF [options]`.

Writes the case (all of it or nothing), then says what it wrote, what it skipped, and
the exact commands to run once the TODO placeholder is replaced.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.display import display_path
from assay.core.exit_codes import EXIT_PASS
from assay.core.paths import is_inside
from assay.errors import ConfigError
from assay.models.names import DEFAULT_MODEL
from assay.options import RunOptions
from assay.report.terminal import printable
from assay.scaffold import (
    GitHubPullRequest,
    LocalRefs,
    ScaffoldOptions,
    ScaffoldResult,
    parse_pull_request_url,
    scaffold,
)
from assay.scaffold.license import NO_LICENSE_FLAG, NO_LICENSE_KEY
from assay.suites.config import load_config

if TYPE_CHECKING:
    from assay.scaffold.draft import Drafted, DraftOptions

__all__ = ["command"]

_USAGE = "give a pull request URL, or --repo PATH --base REF --head REF"


def command(args: argparse.Namespace) -> int:
    local = [args.repo, args.base, args.head]
    if args.pr_url and any(local):
        raise ConfigError(f"a PR URL and --repo/--base/--head do not go together: {_USAGE}")
    if not args.pr_url and not all(local):
        missing = [
            flag for flag, v in zip(("--repo", "--base", "--head"), local, strict=True) if not v
        ]
        raise ConfigError(f"{_USAGE} (missing {', '.join(missing)})" if any(local) else _USAGE)
    if args.fmt == "rubric" and args.side == "head":
        raise ConfigError(
            "--side head does not apply to --format rubric: a rubric case's base/ is the base "
            "side, and its input.diff turns it into the head side"
        )
    if args.max_file_size <= 0:
        raise ConfigError(
            f"--max-file-size must be a positive number of bytes, not {args.max_file_size}"
        )
    if not args.draft and (args.model or args.cache or args.offline):
        raise ConfigError("--model, --cache and --offline go with --draft (the model drafts)")
    options = ScaffoldOptions(
        root=_root(args.root),
        license_waived=_license_waived(args.no_license),
        format=args.fmt,
        category=args.category,
        name=args.name,
        side=args.side,
        max_file_size=args.max_file_size,
        force=args.force,
        draft=_draft_options(args) if args.draft else None,
    )
    if args.pr_url:
        url = parse_pull_request_url(args.pr_url)
        with GitHubPullRequest.from_environment(url) as source:
            result = scaffold(source, options=options)
    else:
        result = scaffold(
            LocalRefs(Path(args.repo), base=args.base, head=args.head), options=options
        )
    _print_result(result, options)
    return EXIT_PASS


def _draft_options(args: argparse.Namespace) -> DraftOptions:
    """The drafting model: --model, else the configured judge model, else assay's default."""
    # The drafting module brings the judge's tool machinery (jsonschema, the model layer).
    # lazy: start-up cost a scaffold without --draft never pays
    from assay.scaffold.draft import DraftOptions

    if args.offline and not args.cache:
        raise ConfigError("--offline needs --cache: it replays the recorded draft")
    config = load_config(Path.cwd())
    model = args.model or (config.judge_model if config else None) or DEFAULT_MODEL
    run_options = RunOptions(cache_dir=args.cache, offline=bool(args.offline))
    return DraftOptions(model=model, run_options=run_options)


def _license_waived(flag: bool) -> str | None:
    """Who said this code needs no license: the flag, else the configuration; None: nobody."""
    if flag:
        return NO_LICENSE_FLAG
    config = load_config(Path.cwd())
    if config is not None and config.scaffold_without_license:
        return f"[tool.assay] {NO_LICENSE_KEY} = true in {config.path.name}"
    return None


def _root(raw: str | None) -> Path:
    """--root, else the configured eval root, else the working directory."""
    if raw:
        return Path(raw)
    config = load_config(Path.cwd())
    return config.root if config is not None and config.root is not None else Path(".")


def _print_result(result: ScaffoldResult, options: ScaffoldOptions) -> None:
    # File names, refs and titles come from the change: each goes out as one line that
    # can start no workflow command (this runs in CI logs too).
    for warning in result.warnings:
        print(f"warning: {printable(warning)}", file=sys.stderr)
    print(f"scaffolded {result.case_id}: wrote {_files(len(result.written))}")
    for path in result.written:
        print(f"  {printable(display_path(path))}")
    if result.skipped:
        where = "notes.skipped_files" if options.format == "review" else "source.json"
        print(f"skipped {_files(len(result.skipped))} (recorded in {where}; review them):")
        for skipped in result.skipped:
            print(f"  {printable(f'{skipped.path}: {skipped.reason}')}")
    case_file = display_path(result.case_file)
    what = "should_find" if options.format == "review" else f"the rubric of case {result.name!r}"
    if result.drafted is not None:
        print(printable(_drafted_line(result.drafted, what)))
        print(
            f"next: check the drafted {what} in {case_file} against the fix and edit it "
            "(validate warns until you do), then run:"
        )
    else:
        print(f"next: edit {what} in {case_file} (replace the TODO), then run:")
    print(f"  assay validate {case_file}")
    print(f"  assay check {case_file}")
    print(f"  {_run_command(result, options.root)}")


def _drafted_line(drafted: Drafted, what: str) -> str:
    usage = drafted.usage
    cost = f", ${usage.cost_usd:.4f}" if usage.cost_usd is not None else ""
    tokens = usage.input_tokens + usage.output_tokens + usage.cache_read_tokens
    return f"drafted {what} with {drafted.model} ({tokens} tokens{cost}): a draft until edited"


def _run_command(result: ScaffoldResult, root: Path) -> str:
    """`assay run -t ID` when a plain `assay run` finds the case, else with the file named."""
    config = load_config(Path.cwd())
    default_root = config.root if config is not None and config.root is not None else Path.cwd()
    default_paths = config.paths if config is not None and config.paths else (Path.cwd(),)
    found_by_default = _same(default_root, root) and any(
        is_inside(result.case_file, p) and not is_inside(p, result.case_file) for p in default_paths
    )
    if found_by_default:
        return f"assay run -t {result.case_id}"
    return f"assay run {display_path(result.case_file)} -t {result.case_id}"


def _files(count: int) -> str:
    return f"{count} file{'s' * (count != 1)}"


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)
