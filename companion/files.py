"""Small files written so that a power cut never leaves half of one (the table calibration, the
colour profiles, the settings): used by vision, the table and the commands alike."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_atomic(path: str | Path, text: str) -> None:
    """Write a small file so that a power cut leaves the old file or the new one, never an empty
    or half-written one (a Pi is switched off at the plug): a temporary file beside it, flushed
    to disk, then renamed over it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
