"""Young objects of a paused run are moved to the oldest generation, and a cycle among them is not lost."""

from __future__ import annotations

import gc
import weakref

from cupel._gc_pause import collector_paused


class _Node:
    def __init__(self) -> None:
        self.other: object = self


def test_a_cycle_made_while_paused_is_freed_by_the_next_full_collection() -> None:
    assert gc.isenabled()
    with collector_paused():
        batch = [[index] for index in range(20_000)]
        cycle = _Node()
        alive = weakref.ref(cycle)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.get_count()[0] < 1_000  # the batch left the young generation
    del cycle, batch
    assert alive() is not None  # promoted: a young collection no longer looks at it
    gc.collect()
    assert alive() is None
