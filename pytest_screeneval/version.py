"""The package's version, in a module of its own so that inner modules can read it without
importing the package's public face (which imports them)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
