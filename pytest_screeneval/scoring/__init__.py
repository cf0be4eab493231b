"""Scoring: the Scorer protocol, the runner, and the built-in scorers."""
