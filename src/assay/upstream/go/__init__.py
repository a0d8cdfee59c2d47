"""Go's standard library as the Go harnesses (PVYai, Cassandra) read and write with it."""
