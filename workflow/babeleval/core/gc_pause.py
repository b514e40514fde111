"""Loading a model with Python's cyclic garbage collector paused.

Importing torch and transformers and loading a model makes about 600,000 Python objects that live as long as
the process, and little garbage (about 12,000 small objects, no tensors, for the benchmark's model). With the
collector on, every full collection while they arrive walks all of those made so far once more. Paused, the
collection is made once at the end, and what survives it is frozen (``gc.freeze``), so later full
collections, and the last one at the interpreter's exit (about 1 s with torch loaded), pass those objects by.
On the 2-core benchmark machine a text-choice run took 13.0 s instead of 15.2 s (bench/RESULTS.md, section 1).

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
