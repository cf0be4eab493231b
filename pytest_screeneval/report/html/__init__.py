"""The self-contained HTML audit page."""
