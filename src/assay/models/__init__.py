"""Model providers behind one registry; SDKs are imported only when a call is made."""

from assay.models.names import DEFAULT_MODEL, ModelName, missing_credentials, parse_model

__all__ = ["DEFAULT_MODEL", "ModelName", "missing_credentials", "parse_model"]
