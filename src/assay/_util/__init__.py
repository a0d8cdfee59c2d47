"""Small helpers shared across assay; private."""
