"""Reports of a run: the terminal summary, the JSON document and the HTML audit page."""
