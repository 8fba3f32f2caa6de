"""The error for an invalid policy document, naming the place in it (``scorers[1].weight``)."""

from __future__ import annotations

from typing import Any

from cupel.errors import InvalidConfigurationError

__all__ = ["PolicyFileError"]

_ROOT = "<policy>"


class PolicyFileError(InvalidConfigurationError):
    """A policy document is invalid. ``path`` locates the problem (``scorers[1].weight``).

    ``str(error)`` is ``"{source}: {path}: {problem}"`` (``source``, the file, when known).
    """

    def __init__(self, path: str, problem: str, *, source: str | None = None) -> None:
        self.path = path
        self.problem = problem
        self.source = source
        if source:  # a whole-file problem reads "p.toml: invalid TOML ...", not "p.toml: <policy>: ..."
            super().__init__(f"{source}: {path + ': ' if path else ''}{problem}")
        else:
            super().__init__(f"{path or _ROOT}: {problem}")

    def with_source(self, source: str) -> PolicyFileError:
        """The same error, naming the file it came from."""
        return PolicyFileError(self.path, self.problem, source=source)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (self.path, self.problem, self.source))


def _rebuild_error(path: str, problem: str, source: str | None) -> PolicyFileError:
    return PolicyFileError(path, problem, source=source)
