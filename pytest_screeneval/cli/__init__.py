"""The ``screeneval`` command."""
