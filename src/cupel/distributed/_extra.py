"""Importing Dask and its companions, failing with a message that names the ``dask`` extra."""

from __future__ import annotations

from types import ModuleType

from cupel.tokens._optional import import_optional


def require(module: str) -> ModuleType:
    """Import ``module`` (``dask``, ``dask.bag``, ``dask.dataframe``, ``pandas``, ``pyarrow.parquet`` ...)."""
    package = {"dask": "dask[distributed]"}.get(module.split(".")[0], module.split(".")[0])
    return import_optional(module, package=package, extra="dask", feature="cupel.distributed")
