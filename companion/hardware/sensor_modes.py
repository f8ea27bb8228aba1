"""Which sensor mode the Pi camera runs in (``[camera] sensor_mode``), chosen from the list
picamera2 gives: a pure function, so it is tested on the mode tables of real sensors off the Pi.

Why it matters: a Pi camera module reads its picture in one of a few *sensor modes*, some of which
read only the middle of the sensor (a crop). Asked only for a 1280x720 frame, picamera2 scores the
modes like libcamera does (closeness in size and aspect ratio: ``score_mode`` in
``Picamera2._make_libcamera_config``) and takes, on a Camera Module 3 (IMX708), the 1536x864
mode, which reads the middle 3072x1728 of the 4608x2592 pixels, and on a Camera Module 2
(IMX219) the 1920x1080 mode, the middle 1920x1080 of 3280x2464: the table seen through a window
of two thirds, or 59 %, of the width, with the markers at its corners near the edge of the view.

``picam2.sensor_modes`` (picamera2 manual, "Sensor modes"; ``Picamera2.sensor_modes`` in
picamera2/picamera2.py) lists each mode as a dict: ``format`` (a ``SensorFormat``, printed e.g.
``SRGGB10_CSI2P``), ``unpacked``, ``bit_depth``, ``size`` (the sensor's output, width x height),
``fps`` (its highest frame rate), ``crop_limits`` ((x, y, width, height) of the pixel array it
reads) and ``exposure_limits``. A camera that is not a Raw sensor lists only ``{"format": name}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

AUTO = "auto"
DEFAULT = "default"
SIZE = re.compile(r"^\s*(\d{2,5})\s*[xX]\s*(\d{2,5})\s*$")

Size = tuple[int, int]
Rect = tuple[int, int, int, int]


class SensorModeError(ValueError):
    """``camera.sensor_mode`` names a size this camera has no mode of."""


@dataclass(frozen=True)
class SensorChoice:
    """What to ask picamera2 for: ``size`` and ``bit_depth`` of the sensor mode (None: leave the
    choice to picamera2), whether it reads the whole pixel array, and why, for the log."""

    size: Size | None
    bit_depth: int | None
    full_view: bool
    why: str
    crop: Rect | None = None    # the part of the pixel array the mode reads (None: not known)
    array: Size | None = None   # the whole pixel array (the widest crop of all modes)

    def describe(self) -> str:
        if self.size is None:
            return "sensor mode chosen by picamera2"
        view = "full view" if self.full_view else "cropped view"
        return f"sensor {self.size[0]}x{self.size[1]} {self.bit_depth}-bit, {view}"


def parse(text: str) -> str | Size:
    """``"auto"``, ``"default"`` or (width, height) of a ``camera.sensor_mode`` value that
    :mod:`companion.config` has accepted."""
    text = str(text).strip().lower()
    if text in (AUTO, DEFAULT):
        return text
    match = SIZE.match(text)
    if match is None:
        raise SensorModeError(f'camera.sensor_mode must be "auto", "default" or WIDTHxHEIGHT, not {text!r}')
    return int(match[1]), int(match[2])


Mode = tuple[Size, Rect | None, int, float]


def _modes(modes: Iterable[Mapping[str, Any]]) -> list[Mode]:
    """(size, crop or None where unknown, bit depth, fps) of each Raw mode; modes without a
    size or crop_limits are skipped."""
    out = []
    for mode in modes:
        try:
            w, h = (int(v) for v in mode["size"])
            x, y, cw, ch = (int(v) for v in mode["crop_limits"])
            depth = int(mode.get("bit_depth") or 0)
            fps = float(mode.get("fps") or 0.0)
        except (KeyError, TypeError, ValueError):
            continue
        known = 0 < cw < 65535 and 0 < ch < 65535  # libcamera's "unknown": (65535, 65535)/65535x65535
        out.append(((w, h), (x, y, cw, ch) if known else None, depth, fps))
    return out


def full_view(modes: Iterable[Mapping[str, Any]]) -> Rect | None:
    """The widest crop any mode reads: the whole pixel array. Each Pi sensor has a mode of its
    full resolution, which reads all of it (IMX708: (0, 0, 4608, 2592), its PixelArraySize)."""
    crops = [crop for _, crop, _, _ in _modes(modes) if crop is not None]
    return _widest(crops) if crops else None


def _widest(crops: list[Rect]) -> Rect:
    return max(crops, key=lambda c: (c[2] * c[3], c[2]))


def choose(modes: Iterable[Mapping[str, Any]], wanted: str | Size, frame: Size, fps: float) -> SensorChoice:
    """The sensor mode for frames of ``frame`` (width, height) at ``fps``.

    ``"auto"``: the smallest mode that reads the whole pixel array (crop_limits equal to the
    widest crop of all modes) and is at least ``frame`` in both directions. Smallest, because a
    larger mode reads more pixels per frame for nothing (the ISP scales it down to ``frame``
    anyway): it is slower (IMX219 full resolution tops out at 21 fps), takes more memory and
    bandwidth; at least ``frame``, because a smaller one would be scaled *up* and lose detail the
    dice reader needs. Among equal sizes (IMX219 on a Pi 4 lists each size at 10 and 8 bits), the
    one that reaches ``fps``, then the deeper one (more levels for the dice colours). When no
    full-view mode is as large as ``frame``, the largest full-view mode.

    (width, height): the mode of that size (the deepest, then the fastest); :class:`SensorModeError`
    naming the sizes there are when this camera has none.

    ``"default"``, or a camera that lists no Raw modes: ``size`` None, picamera2 chooses.
    """
    listed = _modes(modes)
    if wanted == DEFAULT:
        return SensorChoice(None, None, False, 'camera.sensor_mode = "default": picamera2 chooses')
    if not listed:
        return SensorChoice(None, None, False, "this camera lists no sensor modes: picamera2 chooses")
    crops = [crop for _, crop, _, _ in listed if crop is not None]
    full = _widest(crops) if crops else None
    sizes = ", ".join(dict.fromkeys(f"{s[0]}x{s[1]}" for s, _, _, _ in sorted(listed, key=lambda m: m[0])))

    def fast_then_deep(m: Mode) -> tuple[bool, int, int]:
        (w, h), _, depth, mode_fps = m
        return (mode_fps + 0.01 < fps, w * h, -depth)

    if isinstance(wanted, tuple):
        same = [m for m in listed if m[0] == wanted]
        if not same:
            raise SensorModeError(f"camera.sensor_mode {wanted[0]}x{wanted[1]} is not a mode of this camera "
                                  f'(its modes: {sizes}; or "auto")')
        chosen = min(same, key=lambda m: (-m[2], -m[3]))
        why = "as set in camera.sensor_mode"
    elif full is None:
        return SensorChoice(None, None, False, "this camera does not say what part of the sensor each mode "
                                               "reads: picamera2 chooses")
    else:
        whole = [m for m in listed if m[1] == full]
        large = [m for m in whole if m[0][0] >= frame[0] and m[0][1] >= frame[1]]
        if large:
            chosen = min(large, key=fast_then_deep)
            why = (f"the smallest mode that reads the whole {full[2]}x{full[3]} sensor and is at least "
                   f"the {frame[0]}x{frame[1]} frame")
        else:
            chosen = max(whole, key=lambda m: (m[0][0] * m[0][1], m[2]))
            why = (f"no mode that reads the whole sensor is as large as the {frame[0]}x{frame[1]} frame: "
                   "the largest such, scaled up")
    (w, h), crop, depth, mode_fps = chosen
    notes = [why]
    if crop is not None and full is not None and crop != full:
        notes.append(f"it reads only {crop[2]}x{crop[3]} of the {full[2]}x{full[3]} sensor")
    if mode_fps and mode_fps + 0.01 < fps:
        notes.append(f"it reaches {mode_fps:g} fps, below camera.fps = {fps:g}")
    cut = _aspect_cut(frame, (crop[2], crop[3])) if crop is not None else None
    if cut:
        notes.append(cut)
    return SensorChoice((w, h), depth or None, crop is not None and crop == full, "; ".join(notes), crop,
                        None if full is None else (full[2], full[3]))


def _aspect_cut(frame: Size, seen: Size) -> str | None:
    """What the ISP cuts off when the frame's shape is not the sensor's: it crops the largest
    part of the sensor's picture of the frame's aspect ratio (picamera2 issue #450: "it will
    actually crop out the largest portion from the sensor raw image that it can so as to give you
    the aspect ratio you asked for"), so a 16:9 frame from a 4:3 sensor loses a band at the top
    and the bottom."""
    fw, fh = frame
    sw, sh = seen
    if abs(fw / fh - sw / sh) <= 0.01 * sw / sh:
        return None
    if fw / fh > sw / sh:  # the frame is wider: rows are cut
        kept = sw * fh / fw
        same_shape = (fw, _even(fw * sh / sw))
        where = f"{(sh - kept) / sh / 2:.0%} at the top and at the bottom"
    else:
        kept = sh * fw / fh
        same_shape = (_even(fh * sw / sh), fh)
        where = f"{(sw - kept) / sw / 2:.0%} at the left and at the right"
    return (f"the {fw}x{fh} frame is not the sensor's shape ({sw}x{sh}): {where} of the view are cut "
            f"(a frame of the sensor's shape, about {same_shape[0]}x{same_shape[1]}, keeps them)")


def _even(value: float) -> int:
    return int(round(value / 2)) * 2
