"""Example scorers for the bundled golden set (see the README)."""
