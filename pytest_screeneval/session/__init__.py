"""A run's lifecycle: the golden set, the store, the scorer, the verdicts and the summary."""
