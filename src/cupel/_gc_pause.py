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
  collected at a later collection.

Re-enabling alone would not be enough: the young generation then holds every record the run made,
and the first allocation afterwards walks them all (about a fifth of a 100,000-item dry run). So
when the last paused run ends with the collector to be re-enabled, the surviving young objects are
moved to the oldest generation in constant time -- ``gc.freeze()`` then ``gc.unfreeze()``, which
also resets the young generation's count -- where only a full collection looks at them. That is
where long-lived records end up anyway; what changes is that cyclic garbage which was young at that
moment waits for the next full collection (or ``gc.collect()``) instead of the next young one.
The move is skipped when the permanent generation is in use (an application that called
``gc.freeze()``, say before forking workers, keeps its frozen objects frozen), and the pair runs in
one C-level call, so no other thread can freeze objects between the two.
"""

from __future__ import annotations

import gc
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import call

__all__ = ["collector_paused"]

_lock = allocate_lock()
_depth = 0
_was_enabled = False
_PROMOTE: tuple[Callable[[], None], ...] = (gc.freeze, gc.unfreeze)


def _promote_young() -> None:
    """Move every young tracked object to the oldest generation without walking them."""
    if gc.get_freeze_count() == 0:
        # One C-level pass over both calls: the GIL is not released between them.
        list(map(call, _PROMOTE))


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
                _promote_young()
                gc.enable()
