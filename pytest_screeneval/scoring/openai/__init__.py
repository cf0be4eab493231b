"""The ``openai`` scorer: any OpenAI-compatible Chat Completions endpoint."""
