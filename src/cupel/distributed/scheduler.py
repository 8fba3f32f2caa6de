"""Choosing where a replay runs: local processes, a local Dask cluster, or a remote scheduler.

``None`` runs on Dask's multiprocessing scheduler (no cluster needed); ``local`` or ``local:N`` starts a
``LocalCluster`` of N single-threaded worker processes for the run; anything else is the address of a
running ``dask.distributed`` scheduler (``tcp://host:8786``), which must answer within the connect
timeout (:data:`DEFAULT_CONNECT_TIMEOUT` seconds unless told otherwise) or :class:`SchedulerUnreachable`
is raised.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cupel.distributed._extra import require

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "Runner", "SchedulerUnreachable", "connect", "parse_scheduler"]

#: Seconds to wait for a scheduler at an address to answer.
DEFAULT_CONNECT_TIMEOUT = 5.0


class SchedulerUnreachable(ConnectionError):
    """No scheduler answered at the address within the connect timeout; the message names the address."""


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
def connect(
    spec: str | None, jobs: int = 1, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
) -> Iterator[Runner]:
    """A :class:`Runner` for ``spec`` (see the module docstring); a local cluster is closed afterwards.

    ``connect_timeout``: seconds a scheduler at an address has to answer.
    """
    if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, int | float):
        raise TypeError(f"connect_timeout: expected a number of seconds, got {connect_timeout!r}")
    if not 0 < connect_timeout < float("inf"):
        raise ValueError(f"connect_timeout: expected a number of seconds > 0, got {connect_timeout!r}")
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
    try:
        client = distributed.Client(value, timeout=connect_timeout)
    except (OSError, ValueError, TypeError) as error:  # nothing listens, or not an address
        cause = str(error).splitlines()[0] if str(error) else type(error).__name__
        detail = "" if cause.startswith("Timed out") else f" ({cause})"
        raise SchedulerUnreachable(
            f"no scheduler answered at {value} within {connect_timeout:g} s{detail}"
        ) from None
    with client:
        yield Runner(client=client, workers=len(client.scheduler_info().get("workers", {})))
