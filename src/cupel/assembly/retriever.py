"""Where results come from: the retriever protocols (CFS-021 §11, standing in for its graph substrate)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from cupel.assembly.hashing import content_hash
from cupel.assembly.jsonl import result_to_dict
from cupel.assembly.ordering import result_list, sort_results
from cupel.assembly.types import RetrievalResult
from cupel.errors import CupelTypeError

__all__ = [
    "PinnableRetriever",
    "Retriever",
    "StaticRetriever",
    "VersionedRetriever",
    "pin",
    "retrieve",
    "state_root_of",
]


@runtime_checkable
class Retriever(Protocol):
    """Anything that returns retrieval results for a query (e.g. a hybrid vector + full-text search)."""

    def retrieve(self, query: str) -> Iterable[RetrievalResult]:
        """The candidate results for ``query``, in any order."""
        ...


@runtime_checkable
class VersionedRetriever(Retriever, Protocol):
    """A retriever that can name the version of the data it searches (the spec's state root).

    The state root goes into ``ContextMetadata`` and is what makes ``ContextCache`` safe: a new state root
    means new data and therefore a cache miss.
    """

    def state_root(self) -> str:
        """An identifier that changes whenever the searchable data changes."""
        ...


@runtime_checkable
class PinnableRetriever(Protocol):
    """A source whose data changes over time (e.g. a ``SqliteStore``) and that can fix one version of it.

    ``assemble_context`` and ``ContextCache`` call ``pin()`` once per assembly, so that the results and the
    state root recorded with them always come from the same version, even while a writer commits.
    """

    def pin(self) -> VersionedRetriever:
        """A retriever reading one fixed version, and reporting its state root."""
        ...


def pin(retriever: object) -> object:
    """``retriever.pin()`` for a :class:`PinnableRetriever`, otherwise ``retriever`` itself."""
    if isinstance(retriever, PinnableRetriever):
        pinned = retriever.pin()
        if not isinstance(pinned, VersionedRetriever):
            raise CupelTypeError(f"pin() must return a VersionedRetriever, got {type(pinned).__name__}")
        return pinned
    return retriever


class StaticRetriever:
    """A fixed result set, returned for every query (files, tests, precomputed retrieval).

    Its state root defaults to a content hash of the results, independent of their order.
    """

    __slots__ = ("_results", "_state_root")

    def __init__(self, results: Iterable[RetrievalResult], state_root: str | None = None) -> None:
        self._results = tuple(result_list(results))
        if state_root is not None and not isinstance(state_root, str):
            raise CupelTypeError(f"StaticRetriever.state_root must be a str or None, got {state_root!r}")
        self._state_root = state_root

    def retrieve(self, query: str) -> tuple[RetrievalResult, ...]:
        return self._results

    def state_root(self) -> str:
        if self._state_root is None:
            canonical = "\n".join(
                json.dumps(result_to_dict(result), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                for result in sort_results(self._results)
            )
            self._state_root = content_hash(canonical)
        return self._state_root


def retrieve(
    retriever: Retriever | Callable[[str], Iterable[RetrievalResult]], query: str
) -> list[RetrievalResult]:
    """Results from a :class:`Retriever` or a plain function ``query -> results``, type-checked."""
    if isinstance(retriever, Retriever):
        produced = retriever.retrieve(query)
    elif callable(retriever):
        produced = retriever(query)
    else:
        raise CupelTypeError(
            f"retriever must have a retrieve(query) method or be callable, got {type(retriever).__name__}"
        )
    return result_list(produced)


def state_root_of(retriever: object) -> str | None:
    """The retriever's state root, or ``None`` when it does not report one."""
    if isinstance(retriever, VersionedRetriever):
        root = retriever.state_root()
        if not isinstance(root, str):
            raise CupelTypeError(f"state_root() must return a str, got {type(root).__name__}")
        return root
    return None
