"""When Python's garbage collector runs during a screeneval session, and over what.

A session builds tens of thousands of objects that live to its end: items and cases while
pytest collects, then results, rows and reports while items run. With the default thresholds
the collector walks them again and again and finds almost nothing: collecting 2,000 cases left
27 objects of cyclic garbage, running their 12,000 items 150. On the overhead benchmark those
walks took about a tenth of the process. So:

- while pytest collects, the collector waits, and what collection built is then frozen
  (``gc.freeze``: out of every later pass, and out of the interpreter's last one at exit);
- from the first item on, the youngest generation is collected every 10,000 new objects
  instead of every 700: cyclic garbage is still collected, in fewer passes; what the run kept
  is frozen when it ends;
- the collector's state and thresholds come back when the session ends, and a run nested in
  another pytest (pytester, in process) gives its frozen objects back, as that process lives on.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = [
    "collector_paused",
    "freeze_survivors",
    "nested_in_a_test",
    "thaw",
    "widen_young_passes",
]

YOUNG_THRESHOLD_DURING_ITEMS = 10_000


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside; the collector's state is restored after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def freeze_survivors() -> None:
    """Move every object alive now out of the collector's passes (the run's long-lived ones)."""
    gc.freeze()


def widen_young_passes() -> Callable[[], None]:
    """Collect the youngest generation less often from now on; returns what restores the
    thresholds (the session calls it at its very end, after the run's objects are frozen: a
    restore as soon as the items end started a pass over all of them first)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD_DURING_ITEMS), *thresholds[1:])

    def restore() -> None:
        gc.set_threshold(*thresholds)

    return restore


def nested_in_a_test() -> bool:
    """Whether this pytest runs inside a test of another (pytester, in process), whose process
    lives on. Asked when the session is configured: the inner run's items unset the variable
    that tells it, so by the end it is gone."""
    return "PYTEST_CURRENT_TEST" in os.environ


def thaw() -> None:
    """Give every frozen object back to the collector: for a nested run, whose process would
    otherwise keep them. A top-level run leaves them frozen: the interpreter's final collection
    then skips them and exit takes milliseconds instead of a walk over every item, case and
    result."""
    gc.unfreeze()
