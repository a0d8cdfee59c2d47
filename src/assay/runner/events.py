"""What the runner tells its audience (the terminal, the Action) while it works."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from assay.report.model import CaseResult

__all__ = ["NullListener", "RunListener"]


class RunListener(Protocol):
    def run_started(self, total: int) -> None:
        """`total` (case, model) runs are planned, including any taken over by --resume."""

    def case_started(self, case_id: str, model: str | None) -> None:
        """The first attempt of a run is starting."""

    def case_finished(self, result: CaseResult) -> None:
        """A run has its final result (also called for results taken over by --resume)."""

    def run_finished(self) -> None:
        """No more events follow; a live display should stop here."""


class NullListener:
    """Listens to nothing: the library API's default."""

    def run_started(self, total: int) -> None:
        pass

    def case_started(self, case_id: str, model: str | None) -> None:
        pass

    def case_finished(self, result: CaseResult) -> None:
        pass

    def run_finished(self) -> None:
        pass
