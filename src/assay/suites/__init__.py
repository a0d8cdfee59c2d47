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
from assay.suites.config import AssayConfig, load_config
from assay.suites.load import LoadedSuites, SuiteFile, SuiteLoadErrors, load_suites
from assay.suites.select import select_cases

__all__ = [
    "AssayConfig",
    "Case",
    "CaseKind",
    "ContextChecks",
    "Expectation",
    "FixtureFile",
    "LoadedSuites",
    "ReviewSpec",
    "RubricSpec",
    "SuiteFile",
    "SuiteLoadErrors",
    "TaskSpec",
    "VerificationCommand",
    "VerifySpec",
    "load_config",
    "load_suites",
    "select_cases",
]
