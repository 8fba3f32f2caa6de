"""Run a command with its standard error on a pseudo-terminal, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path


def run_with_terminal_stderr(
    command: Sequence[str], cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], bytes]:
    """``(completed process with captured stdout, bytes drawn on the terminal)``; POSIX only."""
    import pty

    controller, terminal = pty.openpty()
    try:
        result = subprocess.run(
            list(command),
            stdout=subprocess.PIPE,
            stderr=terminal,
            text=True,
            cwd=cwd,
            check=False,
            timeout=120,
        )
        os.close(terminal)
        drawn = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(controller)
    return result, drawn
