"""Evidence: rationale checks, metrics, reliability, rates, verdicts and gates."""
