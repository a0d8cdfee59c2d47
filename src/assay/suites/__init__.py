"""Suite files: one loader per format, discovery, and the `Case` they all produce."""

from assay.suites.case import (
    Case,
    CaseKind,
    ContextChecks,
    Expectation,
    FixtureFile,
    ReviewSpec,
    RubricSpec,
    TaskSpec,
    VerificationCommand,
    VerifySpec,
)

__all__ = [
    "Case",
    "CaseKind",
    "ContextChecks",
    "Expectation",
    "FixtureFile",
    "ReviewSpec",
    "RubricSpec",
    "TaskSpec",
    "VerificationCommand",
    "VerifySpec",
]
