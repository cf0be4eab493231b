"""The pytest glue: hooks, hookspecs and pytest-xdist support."""
