"""A large paused run's young objects are moved to the oldest generation, safely."""

from __future__ import annotations

import gc
import weakref

from cupel import _gc_pause
from cupel._gc_pause import collector_paused


class _Node:
    def __init__(self) -> None:
        self.other: object = self


def test_a_large_batch_is_promoted_and_still_collected() -> None:
    assert gc.isenabled()
    with collector_paused():
        batch = [[index] for index in range(2 * _gc_pause.PROMOTE_AT)]
        cycle = _Node()  # a cycle made meanwhile
        alive = weakref.ref(cycle)
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # nothing left frozen
    assert gc.get_count()[0] < _gc_pause.PROMOTE_AT  # the batch left the young generation
    del cycle, batch
    assert alive() is not None  # a cycle waits for a full collection, as promised
    gc.collect()
    assert alive() is None


def test_objects_the_program_froze_stay_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            batch = [[index] for index in range(2 * _gc_pause.PROMOTE_AT)]
        assert gc.get_freeze_count() == frozen
        assert gc.isenabled()
        del batch
    finally:
        gc.unfreeze()


def test_a_disabled_collector_is_left_disabled_and_nothing_promoted() -> None:
    gc.disable()
    try:
        with collector_paused():
            batch = [[index] for index in range(2 * _gc_pause.PROMOTE_AT)]
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
        del batch
    finally:
        gc.enable()
