"""Choosing where a replay runs: local processes, a local Dask cluster, or a remote scheduler.

``None`` runs on Dask's multiprocessing scheduler (no cluster needed); ``local`` or ``local:N`` starts a
``LocalCluster`` of N single-threaded worker processes for the run; anything else is the address of a
running ``dask.distributed`` scheduler (``tcp://host:8786``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cupel.distributed._extra import require

__all__ = ["Runner", "connect", "parse_scheduler"]


@dataclass(frozen=True, slots=True)
class Runner:
    """Where to run: a distributed ``client``, or a local ``scheduler`` name with ``workers`` processes."""

    client: Any = None
    scheduler: Any = None
    workers: int = 1


def parse_scheduler(spec: str | None) -> tuple[str, int | str | None]:
    """``("processes", None)``, ``("local", N or None)`` or ``("address", ADDRESS)``; ValueError if bad."""
    if spec is None:
        return ("processes", None)
    if spec == "local" or spec.startswith("local:"):
        count = spec.partition(":")[2]
        if count == "":
            return ("local", None)
        if not count.isdigit() or int(count) < 1:
            raise ValueError(
                f"--scheduler: expected local:N with N a whole number of at least 1, got {spec!r}"
            )
        return ("local", int(count))
    if not spec.strip():
        raise ValueError("--scheduler: expected ADDRESS or local[:N], got an empty string")
    return ("address", spec)


@contextlib.contextmanager
def connect(spec: str | None, jobs: int = 1) -> Iterator[Runner]:
    """A :class:`Runner` for ``spec`` (see the module docstring); a local cluster is closed afterwards."""
    kind, value = parse_scheduler(spec)
    if kind == "processes":
        dask = require("dask")
        scheduler = "processes" if jobs > 1 else "synchronous"
        with dask.config.set(num_workers=jobs):
            yield Runner(scheduler=scheduler, workers=jobs)
        return
    distributed = require("distributed")
    if kind == "local":
        import os

        workers = value if isinstance(value, int) else (os.cpu_count() or 1)
        with (
            distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield Runner(client=client, workers=workers)
        return
    with distributed.Client(value) as client:
        yield Runner(client=client, workers=len(client.scheduler_info().get("workers", {})))
