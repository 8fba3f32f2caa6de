"""Files a command writes (``-o``, ``--summary``, ``--html``...): every failure is one line naming the path.

The files themselves are written atomically by :mod:`cupel._atomic`, so a failed write leaves the old file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from cupel.cli._common import CliError

__all__ = ["check_output", "writing"]


def check_output(option: str, path: str) -> None:
    """Refuse, before any work is done, an output that cannot be a file: a directory, or under a file."""
    if os.path.isdir(path):
        raise CliError(f"{option} {path}: cannot write (is a directory)")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        cause = "not a directory" if os.path.exists(parent) else "no such directory"
        raise CliError(f"{option} {path}: cannot write ({os.path.dirname(path) or parent}: {cause})")


@contextlib.contextmanager
def writing(option: str, path: str) -> Iterator[None]:
    """Turn a failed write inside the block into one line: ``OPTION PATH: cannot write (cause)``."""
    try:
        yield
    except OSError as error:
        raise CliError(f"{option} {path}: cannot write ({error.strerror or error})") from None
    except UnicodeEncodeError as error:
        raise CliError(f"{option} {path}: not written, not valid Unicode ({error.reason})") from None
