"""Image files for the readers: open one, or say in words why it cannot be read (an
:class:`ImageError` with a code), so that one bad image in a batch of ``companion dice`` or
``companion cups`` gets its own error line and the command goes on.

Codes: ``NOT_FOUND`` (no such file), ``NOT_A_FILE`` (a directory, say), ``NOT_READABLE``
(permissions), ``NOT_AN_IMAGE`` (empty, nothing OpenCV can decode, or a JPEG cut short), ``TOO_SMALL``
(fewer pixels on a side than the reader needs).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import cv2
import numpy as np


class ImageError(Exception):
    """An image that cannot be read: ``code`` and a sentence naming the file."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def load_image(path: str, min_side: int) -> np.ndarray:
    """The image at ``path`` as a BGR uint8 frame of at least ``min_side`` pixels each way."""
    p = Path(path)
    if not p.exists():
        raise ImageError("NOT_FOUND", f"no such file: {path}")
    if p.is_dir():
        raise ImageError("NOT_A_FILE", f"{path} is a directory, not an image")
    if not p.is_file():
        raise ImageError("NOT_A_FILE", f"{path} is not a regular file")
    if not os.access(p, os.R_OK):
        raise ImageError("NOT_READABLE", f"{path} cannot be read (permission denied)")
    if p.stat().st_size == 0:
        raise ImageError("NOT_AN_IMAGE", f"{path} is empty")
    try:
        data = p.read_bytes()
    except OSError as err:
        raise ImageError("NOT_READABLE", f"{path} cannot be read ({err.strerror})") from None
    if jpeg_cut_short(data):  # OpenCV would read it, the missing part grey: dice there unseen
        raise ImageError("NOT_AN_IMAGE", f"{path} is a JPEG cut short (its end is missing: "
                                         "copied before it was fully written?)")
    frame = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)  # as imread: EXIF turn applied
    if frame is None:
        raise ImageError("NOT_AN_IMAGE", f"{path} is not an image OpenCV can read")
    h, w = frame.shape[:2]
    if min(h, w) < min_side:
        raise ImageError("TOO_SMALL", f"{path} is {w}×{h} pixels, too small to read "
                                      f"(at least {min_side} on each side)")
    return frame


def jpeg_cut_short(data: bytes) -> bool:
    """True for a JPEG whose end-of-image marker never comes after its image data starts (a
    truncated file: OpenCV decodes it all the same, the missing rows grey, and only warns on
    stderr). The headers are walked segment by segment to the first scan, so a thumbnail in the
    EXIF header (with an end marker of its own) does not count; data after the end marker (a
    phone's motion-photo video) is fine. Not a JPEG, or headers it cannot walk: False (the
    decoder judges)."""
    if not data.startswith(b"\xff\xd8"):
        return False
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return False
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
        elif marker == 0xDA:  # start of scan: the image data
            return data.find(b"\xff\xd9", i) < 0
        elif 0xD0 <= marker <= 0xD7 or marker == 0x01:  # markers without a length
            i += 2
        else:
            i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    return True


def has_colour(frame: np.ndarray) -> bool:
    """False for a frame that holds no colour information: a greyscale photo (loaded as BGR its
    three channels are equal), or one whose colours are too faint to tell apart. Looks at about
    40,000 pixels spread over the frame (about 2 ms, whatever its size). A frame has colour when
    more than 1 % of them have channels 4 or more apart: in each of the 250 byler dice photos
    (white and black dice on a pale table among them) 42 % or more do; in a greyscale photo,
    also one saved as a colour JPEG, none."""
    h, w = frame.shape[:2]
    step = max(1, math.ceil(math.sqrt(h * w / 40_000)))
    sample = frame[::step, ::step]
    chroma = sample.max(axis=2) - sample.min(axis=2)  # uint8, max >= min: no wrap-around
    return np.count_nonzero(chroma >= 4) > 0.01 * chroma.size


def red_blue_swapped(seen: str, or_else: str = "") -> str:
    """The sentence that refuses a frame whose red and blue look swapped, after ``seen`` (what in
    the frame says so); ``or_else``: another cause the caller cannot rule out. One wording for
    ``calibrate colours`` (the dice), ``calibrate table`` and the service (the cups)."""
    return (f"{seen}: the camera's red and blue are swapped (some Pi 5 kernels send the picture in the wrong "
            f"colour order){', or ' + or_else if or_else else ''}. Look at the picture on /health (a red cup or "
            "die must look red there), update the system or fix the camera, and calibrate again")


NOTE = b"companion-camera "   # a JPEG comment (COM segment) that begins so holds a JSON object


def jpeg_with_note(jpeg: bytes, note: dict) -> bytes:
    """The JPEG with ``note`` in a comment segment after its start: what the camera was running
    under when the frame was taken, carried by the frame itself (the running service's
    ``/api/frame.jpg?raw=1``), so a calibration made from the file knows it. Decoders skip it."""
    payload = NOTE + json.dumps(note, separators=(",", ":")).encode()
    if not jpeg.startswith(b"\xff\xd8") or len(payload) + 2 > 0xFFFF:
        return jpeg
    return jpeg[:2] + b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload + jpeg[2:]


def jpeg_note(data: bytes) -> dict | None:
    """The note :func:`jpeg_with_note` put in a JPEG, or None (another file, a JPEG without one,
    one rewritten by a program that drops comments)."""
    if not data.startswith(b"\xff\xd8"):
        return None
    at = 2
    while at + 4 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if marker in (0xD9, 0xDA):   # the picture itself begins: no more segments
            return None
        length = int.from_bytes(data[at + 2:at + 4], "big")
        body = data[at + 4:at + 2 + length]
        if marker == 0xFE and body.startswith(NOTE):
            try:
                note = json.loads(body[len(NOTE):])
            except (ValueError, UnicodeDecodeError):
                return None
            return note if isinstance(note, dict) else None
        at += 2 + length
    return None
