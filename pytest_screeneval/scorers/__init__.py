"""Built-in scorers: ``keyword`` (offline reference) and ``openai`` (any OpenAI-compatible API)."""
