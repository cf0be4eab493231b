"""Probes: counterfactual variants and perturbations of a case's text (DESIGN §4, §7)."""
