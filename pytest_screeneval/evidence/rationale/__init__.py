"""Rationale checks: length, relevance, protected terms and grounding."""
