"""assay: behavioural evals for AI code-review and coding agents."""

from assay._version import __version__

__all__ = ["__version__"]
