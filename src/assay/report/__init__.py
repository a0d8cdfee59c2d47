"""Reports: the assay.report.v1 model and its renderings (markdown, junit, pvyai)."""

from assay.report.model import REPORT_CONTRACT, CaseResult, Check, Report, Summary

__all__ = ["REPORT_CONTRACT", "CaseResult", "Check", "Report", "Summary"]
