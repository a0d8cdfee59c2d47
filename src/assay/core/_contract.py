"""The pydantic base of every type that is part of the `assay.report.v1` contract."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Amount", "ContractModel", "Count", "UnitScore"]


class ContractModel(BaseModel):
    # Built on first use: a run never validates some of them (Finding, Location), and
    # building the rest as they are needed spares start-up about 8 ms.
    model_config = ConfigDict(extra="forbid", defer_build=True)


# The numbers a report holds. The gate compares them, so a NaN (which every comparison
# calls False) or a score of 7.5 in a report.json or results.jsonl line written by hand
# or by an agent must be refused when it is read, not averaged into a passing gate.
UnitScore = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
"""A score: a finite number in [0, 1]."""
Amount = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
"""Seconds or dollars: finite and never negative."""
Count = Annotated[int, Field(ge=0)]
