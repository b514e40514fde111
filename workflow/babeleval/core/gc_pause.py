"""Loading a model with Python's cyclic garbage collector paused.

Importing torch and transformers and loading a model makes about 620,000 Python objects that live as long as
the process. With the collector on, every full collection while they arrive walks all of those made so far
once more. Paused, nothing is walked until the load is done; then what survives is frozen (``gc.freeze``), so
later full collections, and the last one at the interpreter's exit (about 1 s with torch loaded), pass those
objects by. On the 2-core benchmark machine a text-choice run took 13.0 s instead of 15.2 s (bench/RESULTS.md,
section 1).

A loader may mark the end of its imports (``imports_done``; the hf backend's does): what exists then is frozen
as it is, the imports' garbage with it (9,647 small objects for the hf backend's torch and transformers, no
tensors: no model is loaded yet), so that the one collection at the pause's end walks only what the load made
(20,000 objects, not 620,000: 0.3 s less). The load's own garbage is collected, never frozen: it can hold a
model's data (a frame of a caught exception keeps its locals).

Frozen objects stay out of cyclic collections: a model dropped before its process ends must be freed by
reference counting, as the hf backend's is (tests/test_gc_pause.py); one held in a reference cycle would
stay until the process ends. Generation jobs and ``babeleval search`` load one model for the process's life.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; then collect once and freeze the survivors.

    Inside a block already paused (the collector off on entry), it does nothing: the outer block collects.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()


def imports_done() -> None:
    """Within a pause, once a loader's libraries are imported: freeze everything so far, garbage included,
    so the collection at the pause's end leaves it alone. Outside a pause, nothing."""
    if not gc.isenabled():
        gc.freeze()
