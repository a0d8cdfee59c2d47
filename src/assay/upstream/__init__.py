"""Compatibility with the upstream harnesses assay stands in for, one boundary per upstream.

`go/` Go's encodings the Go harnesses share (JSON decoding, fmt texts, bytes as text),
`warden/` Warden's YAML 1.2 and static `.eval.ts` reader, `pvyai/` PVYai's path rules,
`cassandra/` Cassandra's reading of a verdict. Ordinary modules call these by name and
never re-implement an upstream quirk themselves.
"""
