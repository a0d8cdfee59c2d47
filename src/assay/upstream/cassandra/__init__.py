"""Cassandra's rules that assay follows to stand in for it."""
