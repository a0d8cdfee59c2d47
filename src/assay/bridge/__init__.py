"""The model bridge: agent CLIs' model calls through assay's own model layer.

A preset's CLI is pointed at a loopback HTTP server of the attempt's own (`server.py`),
speaking the Anthropic Messages API (`anthropic_api.py`), OpenAI's Chat Completions
(`openai_chat.py`) and Responses (`openai_responses.py`) APIs, and Gemini's
`generateContent` (`gemini_api.py`). Each request is translated
into assay's canonical request and sent through `models.api.generate`, so retries, rate
limits, pricing, the record/replay cache, `--max-cost` and redaction apply as they do to
assay's own calls; the answer goes back in the API's shape, streamed when asked. The
attempt's `BridgeSession` (`session.py`) holds its token (the CLI's API key: the real one
never enters the sandbox), its usage and its transcript (`transcript.py`).
"""
