"""What the image commands (``companion dice``, ``companion cups``, ``calibrate colours``) print:
one JSON line per image, an image's error line (docs/spec/EVENTS.md), a run that cannot start."""

from __future__ import annotations

import json
import sys


def error_line(image: str, code: str, message: str) -> dict:
    """The output line of an image that could not be read (EVENTS.md)."""
    return {"image": image, "error": {"code": code, "message": message}}


def printable(text: str) -> str:
    """A text line as a terminal can take it: a file name that is not UTF-8 (``caf\\xe9.jpg`` from
    an old card) reaches Python as lone surrogates, which a UTF-8 locale's stdout refuses with a
    UnicodeEncodeError that ended the batch; they show as U+FFFD, as ``ls`` shows them. (The
    JSON lines escape them and name the file exactly.)"""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def run_error(as_json: bool, code: str, message: str) -> int:
    """A file the whole run needs (``--colours``, ``--calibration``) that cannot be used: no image
    is read. With ``--json`` one ``{"error": {"code", "message"}}`` line on stdout (no ``image``:
    it is about none), else ``error: message`` on stderr; exit status 2, as for a usage error."""
    if as_json:
        print(json.dumps({"error": {"code": code, "message": message}}), flush=True)
    else:
        print(f"error: {message}", file=sys.stderr)
    return 2
