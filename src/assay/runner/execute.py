"""Scheduling attempts on one event loop: bounded concurrency, budget, interruption.

Units of work are (run, attempt) pairs, taken in plan order by `concurrency` workers,
so the repeats of one case run side by side and its result line is written early. Task
cases have a lane of their own with one worker, beside the others, unless the user chose
a concurrency (`settings.tasks_one_at_a_time`): PVYai runs its tasks one after another. A
run's result is combined and appended to results.jsonl the moment its last attempt
ends; after that only the small CaseResult is kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.bridge.budget import RUN_BUDGET
from assay.core.files import RESULTS_FILE
from assay.errors import output_error
from assay.report.gate.stats import INTERRUPTED, budget_reason
from assay.runner.attempt import run_attempt
from assay.runner.combine import case_result
from assay.runner.kinds import kind_of
from assay.runner.outcome import AttemptOutcome, skipped_outcome
from assay.runner.settings import tasks_one_at_a_time

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.report.model import CaseResult, Report
    from assay.runner.events import RunListener
    from assay.runner.plan import PlannedRun
    from assay.runner.results import ResultsStream

__all__ = ["Budget", "Executor"]


class Budget:
    """The --max-cost spend limit over finished attempts (unknown costs count as 0)."""

    def __init__(self, limit_usd: float | None, *, spent_usd: float = 0.0) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd

    def add(self, cost_usd: float | None) -> None:
        self.spent_usd += cost_usd or 0.0

    @property
    def reached(self) -> bool:
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd

    @property
    def reason(self) -> str:
        assert self.limit_usd is not None
        return budget_reason(self.limit_usd)


@dataclass
class _Progress:
    """The mutable state of one planned run while its attempts are in flight."""

    run: PlannedRun
    outcomes: list[AttemptOutcome | None]
    """By attempt index; emptied once the result is written."""
    attempts: int
    started: bool = False
    finished: int = 0
    result: CaseResult | None = None


class Executor:
    """Runs planned runs; `stop()` (from a signal handler) cancels what is in flight."""

    def __init__(
        self,
        runs: Sequence[PlannedRun],
        *,
        options: RunSettings,
        work_root: Path,
        report_dir: Path,
        stream: ResultsStream,
        listener: RunListener,
        budget: Budget,
        baseline: Report | None = None,
    ) -> None:
        self._progress = [_Progress(run, [None] * options.repeat, options.repeat) for run in runs]
        self._options = options
        self._baseline = baseline
        self._work_root = work_root
        self._report_dir = report_dir
        self._stream = stream
        self._listener = listener
        self.budget = budget
        self.interrupted = False
        self._workers: list[asyncio.Task[None]] = []
        self._failure: BaseException | None = None

    def stop(self) -> None:
        """Start nothing new and cancel running attempts (their agents are killed)."""
        self.interrupted = True
        for worker in self._workers:
            worker.cancel()

    async def execute(self) -> list[CaseResult]:
        """Every run's result in plan order; unfinished runs come back `skipped`."""
        RUN_BUDGET.set(self.budget)  # seen by the model bridges of its workers' attempts
        for progress in self._progress:
            # Decided at planning time (no credentials): recorded first, no slot needed.
            if progress.run.skip_reason is not None:
                outcomes = [skipped_outcome(progress.run.skip_reason)] * progress.attempts
                self._finish(progress, case_result(progress.run, outcomes))
        if self._options.adaptive:
            await self._execute_adaptive()
        else:
            await self._run_units(list(self._units()))
        return [
            p.result or case_result(p.run, _done(p), forced_reason=INTERRUPTED)
            for p in self._progress
        ]

    async def _run_units(self, units: list[tuple[_Progress, int]]) -> None:
        self._workers = []
        for lane, width in self._lanes(units):
            shared = iter(lane)
            count = min(width, len(lane))
            self._workers += [asyncio.create_task(self._work(shared)) for _ in range(count)]
        if self.interrupted:  # a signal arrived before the workers existed
            self.stop()
        await asyncio.gather(*self._workers, return_exceptions=True)
        if self._failure is not None:
            raise self._failure

    def _lanes(
        self, units: list[tuple[_Progress, int]]
    ) -> list[tuple[list[tuple[_Progress, int]], int]]:
        """The units split into lanes, each with how many of its units run at once."""
        if not tasks_one_at_a_time(self._options):
            return [(units, self._options.concurrency)]
        alone = [unit for unit in units if kind_of(unit[0].run.case).one_at_a_time]
        others = [unit for unit in units if not kind_of(unit[0].run.case).one_at_a_time]
        return [(alone, 1), (others, self._options.concurrency)]

    async def _execute_adaptive(self) -> None:
        """`--repeat auto`: rounds of attempts, each chosen by runner/adaptive.py."""
        # lazy: start-up (not loaded with this module)
        from assay.runner.adaptive import next_round
        from assay.runner.adaptive_inputs import gate_limit, knowledge_of

        runs = [(p.run.case.id, p.run.model) for p in self._progress]
        knowledge = knowledge_of(self._options, runs, baseline=self._baseline)
        live = [p for p in self._progress if p.result is None]
        for progress in live:
            progress.attempts = self._options.repeat + 1  # the policy finishes them, not a count
        units = [(progress, 0) for progress in live]
        while units and not self.interrupted:
            await self._run_units(units)
            live = [p for p in live if p.result is None]
            chosen: set[str] = set()
            if not self.interrupted and not self.budget.reached:
                # Every case at every look, those not chosen last round and those a resumed
                # run brought too: the rule decides on the whole score, and a case left
                # out now may be chosen again.
                scores = {_key(p): _scores(p) for p in self._progress}
                chosen = set(
                    next_round(
                        scores,
                        threshold=gate_limit(self._options, baseline=self._baseline),
                        max_repeat=self._options.repeat,
                        knowledge=knowledge,
                    )
                )
            if self.interrupted:
                return
            units = [(p, p.finished) for p in live if _key(p) in chosen]
        for progress in live:  # the rule has enough (or the budget is spent): close them all
            if progress.result is None:
                self._finish(progress, case_result(progress.run, _done(progress)))

    def _units(self) -> Iterator[tuple[_Progress, int]]:
        for progress in self._progress:
            for index in range(self._options.repeat):
                yield progress, index

    async def _work(self, units: Iterator[tuple[_Progress, int]]) -> None:
        try:
            # One iterator shared by every worker: the loop is single-threaded, so each
            # unit is handed out exactly once.
            for progress, index in units:
                if self.interrupted:
                    return
                if progress.result is not None:
                    continue
                if not progress.started and not self._begin(progress):
                    continue
                outcome = await run_attempt(
                    progress.run,
                    index,
                    options=self._options,
                    work_root=self._work_root,
                    report_dir=self._report_dir,
                )
                progress.outcomes[index] = outcome
                self.budget.add(outcome.attempt.usage.cost_usd)
                progress.finished += 1
                if progress.finished == progress.attempts:
                    self._finish(progress, case_result(progress.run, _done(progress)))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the results file cannot be written, a listener broke
            self._failure = self._failure or exc
            self.stop()

    def _begin(self, progress: _Progress) -> bool:
        """Decide whether the run starts; False when it ended before its first attempt."""
        progress.started = True
        run = progress.run
        if self.budget.reached:
            # Not streamed: a resumed run with a larger budget should still run it.
            progress.result = case_result(run, [], forced_reason=self.budget.reason)
            self._listener.case_finished(progress.result)
            return False
        self._listener.case_started(run.case.id, run.model)
        return True

    def _finish(self, progress: _Progress, result: CaseResult) -> None:
        progress.result = result
        # Only the result is kept: outcomes hold findings and transcripts' metadata.
        progress.outcomes = []
        try:
            self._stream.write(result)
        except OSError as exc:  # a full disk: the run stops, what was written stays resumable
            where = self._report_dir / RESULTS_FILE
            raise output_error(exc, what=str(where), report_dir=self._report_dir) from None
        self._listener.case_finished(result)


def _key(progress: _Progress) -> str:
    # lazy: start-up (not loaded with this module)
    from assay.runner.adaptive_inputs import case_key

    return case_key(progress.run.case.id, progress.run.model)


def _scores(progress: _Progress) -> list[float]:
    """The scores of a case's scored attempts so far (a finished case keeps only its
    result, whose attempts are the same)."""
    attempts = (
        progress.result.attempts
        if progress.result is not None
        else [outcome.attempt for outcome in _done(progress)]
    )
    return [
        a.score if a.score is not None else float(a.status == "pass")
        for a in attempts
        if a.status in ("pass", "fail")
    ]


def _done(progress: _Progress) -> list[AttemptOutcome]:
    return [outcome for outcome in progress.outcomes if outcome is not None]
