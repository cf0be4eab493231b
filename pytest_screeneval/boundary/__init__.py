"""What crosses the program's edges, made safe in one place each.

Text that comes in (a scorer's answer, a server's body, a case file) passes :mod:`.text`; every
text that goes out to a person or a file passes :mod:`.secrets` (no secret the run knows, of any
length, and no URL password); every line printed passes :mod:`.terminal`; every number read
passes :mod:`.numbers`. Pure modules: they import nothing of the package, so every layer, from
``errors`` to the plugin, can use them.
"""

from __future__ import annotations

__all__: list[str] = []
