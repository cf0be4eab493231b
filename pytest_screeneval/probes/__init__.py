"""Probes: counterfactual variants and perturbations of a case's text."""
