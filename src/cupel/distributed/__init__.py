"""Replaying policies over logged sessions on Dask (the ``dask`` extra; see docs/replay.md).

:func:`replay` runs every session under every policy × budget and returns a :class:`ReplayResult`:
per-session rows as a Dask dataframe and an aggregate summary. Sessions are ``cupel select --batch``
JSON lines (:mod:`cupel.distributed.sessions`); each partition is one task
(:mod:`cupel.distributed.partition`); the summary is merged from per-partition counts
(:mod:`cupel.distributed.summary`); :func:`write_results` writes the rows in session order.
Dask is imported only when a replay runs.
"""

from cupel.distributed.output import write_results
from cupel.distributed.partition import COLUMNS
from cupel.distributed.replay import ReplayResult, policy_documents, replay
from cupel.distributed.scheduler import Runner, connect
from cupel.distributed.sessions import MalformedSession, Session, parse_session
from cupel.distributed.summary import render_summary

__all__ = [
    "COLUMNS",
    "MalformedSession",
    "ReplayResult",
    "Runner",
    "Session",
    "connect",
    "parse_session",
    "policy_documents",
    "render_summary",
    "replay",
    "write_results",
]
