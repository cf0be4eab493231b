"""One spawned worker process for work beside the items (drawing examples, rationale checks).

Spawned, not forked: the session has threads (the runner's loop), and a forked child would
inherit their locks held. A spawned child normally imports the parent's ``__main__`` again; when
pytest was started from a script that calls ``pytest.main()`` without an ``if __name__ ==
"__main__"`` guard, that would run the whole test session a second time inside the worker. The
worker is therefore started with ``__main__`` hidden: it needs nothing from it.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["spawn_worker"]


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def spawn_worker(
    initializer: Callable[..., object] | None = None, initargs: tuple[Any, ...] = ()
) -> concurrent.futures.ProcessPoolExecutor | None:
    """A pool of one spawned worker process, already started; None where no process can start
    (a sandbox without semaphores): the caller then does the work inline."""
    try:
        context = multiprocessing.get_context("spawn")
        pool = concurrent.futures.ProcessPoolExecutor(
            1, mp_context=context, initializer=initializer, initargs=initargs
        )
    except (OSError, RuntimeError, NotImplementedError):
        return None
    try:
        with _main_module_hidden():
            pool.submit(int)  # starts the process now, while __main__ is hidden
    except (OSError, RuntimeError, NotImplementedError):
        pool.shutdown(wait=False, cancel_futures=True)
        return None
    return pool
