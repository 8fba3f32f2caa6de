"""Lazy imports of optional third-party packages, failing with a message that names the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from cupel.errors import CupelError

__all__ = ["OptionalDependencyError", "import_optional"]


class OptionalDependencyError(CupelError, ImportError):
    """A feature needs an optional package that is not installed; the message says what to install."""


def import_optional(module: str, *, package: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` or raise :class:`OptionalDependencyError` naming ``pycupel[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise OptionalDependencyError(
            f"{feature} needs the optional package {package!r}, which is not installed "
            f"({exc}). Install it with: pip install 'pycupel[{extra}]'"
        ) from exc
