"""A one-line progress bar on standard error, drawn only on a terminal."""

from __future__ import annotations

import sys

__all__ = ["Progress"]


class Progress:
    """A one-line progress bar on stderr, drawn only on a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self._draw()

    def advance(self) -> None:
        self.done += 1
        if self.done == self.total or self.done % max(1, self.total // 100) == 0:
            self._draw()

    def _draw(self) -> None:
        width = 30
        filled = width * self.done // max(1, self.total)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")
