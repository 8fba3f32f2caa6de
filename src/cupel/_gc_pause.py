"""The cyclic garbage collector paused while a run builds its explanation records.

A report-building run allocates a few small objects per candidate (reasons, events, report entries)
that live until the report is dropped. Each batch of allocations would trigger a collection that
walks every tracked object, candidates included: at 100,000 items that is hundreds of collections
and about as much time as the run itself.

Pausing is safe because:

- the records form no reference cycles (a test checks that a report-building run leaves nothing for
  the collector), so reference counting frees them exactly as it would with the collector on;
- the previous state is restored on every exit path (``finally``), exceptions included;
- concurrent and nested runs share one depth count under a lock: the collector is off while any
  paused run is active and is restored, once, to the state before the first of them began;
- cycles created meanwhile by other code (a custom scorer, another thread) are not lost, only
  collected at the first collection after the run.

When the last pause ends after a large batch (``PROMOTE_AT`` tracked objects or more allocated and
still alive), the young objects are moved to the oldest generation with ``gc.freeze()`` then
``gc.unfreeze()`` (both documented: freeze moves every tracked object to the permanent generation,
unfreeze puts them back into the oldest one), in constant time. Otherwise the first young collection
after the run would walk the whole batch, and the next middle one again, for as long as the run
itself took. Nothing is lost: the objects are still freed by reference counting, and a cycle among
them by the next full collection. It is skipped when anything is frozen already (the program uses
freezing itself, for example before forking workers, and ``gc.unfreeze()`` would undo that).
"""

from __future__ import annotations

import gc
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PROMOTE_AT", "collector_paused"]

PROMOTE_AT = 10_000

_lock = allocate_lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector for the block; restore its state afterwards."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                if gc.get_count()[0] >= PROMOTE_AT and gc.get_freeze_count() == 0:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
