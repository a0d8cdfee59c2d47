"""Loopback fake servers used through the real SDKs (anthropic, openai, PyGithub)."""
