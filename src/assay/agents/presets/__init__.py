"""Agent CLI presets: `claude-code`, `codex`, `gemini-cli`, `opencode`, `aider`.

Each module holds one preset (its CLI's headless invocation and stream format); `base.py`
runs any of them as a command agent. They are registered as runtimes in
`assay.registry.runtimes`, which imports a preset's module only when a case runs it.
"""
