"""One module per CLI command, each exposing `command(args) -> exit code`."""
