"""What a camera frame was taken under (:class:`CameraView`), kept with a table calibration: a
calibration is geometry in the frame's pixels and holds only for frames that show the same part
of the sensor. Filled in by the camera code (``companion.live.camera``, from picamera2's sensor
mode and crop: ``companion.hardware.sensor_modes``); compared here, where the calibration is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Size = tuple[int, int]
Rect = tuple[int, int, int, int]

ASPECT_TOLERANCE = 0.01   # frames whose width/height ratios differ less show the same view
CROP_TOLERANCE = 0.005    # of the pixel array: sizes evened or rounded by the ISP are the same view


@dataclass(frozen=True)
class CameraView:
    """What a camera frame was taken under, as far as the camera code really knows it (None: not
    known): ``frame`` the frame's (width, height); ``model`` the sensor as the camera names it
    (picamera2's ``global_camera_info()`` "Model", e.g. "imx708"); ``sensor`` the sensor mode's
    size, ``crop`` the part of the pixel array it reads, ``array`` the whole pixel array.

    A table calibration is geometry in the frame's pixels: it holds for frames that show the
    same part of the sensor, whatever their size (a larger frame is the same view scaled), and
    for no other (a cropped mode shows the middle of the table magnified, the markers elsewhere)."""

    frame: Size | None = None
    model: str | None = None
    sensor: Size | None = None
    crop: Rect | None = None
    array: Size | None = None

    def seen(self) -> tuple[float, float, float, float] | None:
        """The part of the pixel array the frame shows: the mode's crop, less what the ISP cuts
        to give the frame's aspect ratio (the largest centred part of that shape, picamera2
        issue #450; ``companion.hardware.sensor_modes``)."""
        if self.crop is None or self.frame is None:
            return None
        x, y, w, h = self.crop
        fw, fh = self.frame
        if fw / fh > w / h:   # the frame is wider: rows are cut
            kept = w * fh / fw
            return (float(x), y + (h - kept) / 2, float(w), kept)
        kept = h * fw / fh
        return (x + (w - kept) / 2, float(y), kept, float(h))

    def describe(self) -> str:
        parts = []
        if self.model:
            parts.append(f"camera {self.model}")
        if self.sensor is not None:
            mode = f"sensor mode {self.sensor[0]}x{self.sensor[1]}"
            if self.crop is not None:
                whole = self.array is not None and (self.crop[2], self.crop[3]) == tuple(self.array)
                of = f" of {self.array[0]}x{self.array[1]}" if self.array is not None else ""
                mode += (f" (the whole {self.crop[2]}x{self.crop[3]} sensor)" if whole else
                         f" (reading {self.crop[2]}x{self.crop[3]}{of} at {self.crop[0]},{self.crop[1]})")
            parts.append(mode)
        if self.frame is not None:
            parts.append(f"{self.frame[0]}x{self.frame[1]} frames")
        return ", ".join(parts) or "a camera not known"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("frame", "model", "sensor", "crop", "array"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Any) -> CameraView | None:
        """None for anything that is not such a record (a file written by hand, an older
        version's): what it was made under is then not known, which refuses nothing."""
        if not isinstance(data, Mapping):
            return None

        def ints(key: str, n: int) -> tuple[int, ...] | None:
            value = data.get(key)
            if not isinstance(value, list | tuple) or len(value) != n:
                return None
            if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
                return None
            return tuple(value)

        model = data.get("model")
        view = cls(frame=ints("frame", 2), model=model if isinstance(model, str) and model else None,  # type: ignore[arg-type]
                   sensor=ints("sensor", 2), crop=ints("crop", 4), array=ints("array", 2))  # type: ignore[arg-type]
        if view.frame is not None and 0 in view.frame or view.crop is not None and 0 in view.crop[2:]:
            return None
        return None if view == cls() else view


def view_change(made: CameraView | None, now: CameraView | None) -> str | None:
    """How frames taken under ``now`` show the table otherwise than those a calibration was made
    from under ``made``, in words; None when they show it alike or it cannot be told (what
    either side does not know is never held against it)."""
    if made is None or now is None:
        return None
    if made.model and now.model and made.model.lower() != now.model.lower():
        return f"it was made with camera {made.model} and the camera is now {now.model}"
    if made.frame and now.frame:
        a, b = made.frame[0] / made.frame[1], now.frame[0] / now.frame[1]
        if abs(a - b) > ASPECT_TOLERANCE * a:
            return (f"it was made on {made.frame[0]}x{made.frame[1]} frames and the camera now gives "
                    f"{now.frame[0]}x{now.frame[1]}, a view of another shape")
    before, after = made.seen(), now.seen()
    if before is not None and after is not None:
        span = max(made.crop[2], made.crop[3], now.crop[2], now.crop[3])  # type: ignore[index]
        if max(abs(p - q) for p, q in zip(before, after, strict=True)) > CROP_TOLERANCE * span:
            return (f"it was made under {_mode_words(made)}, and the camera now runs {_mode_words(now)}: "
                    "the table lies elsewhere in the frame")
    return None


def _mode_words(view: CameraView) -> str:
    assert view.sensor is not None or view.crop is not None
    size = f"sensor mode {view.sensor[0]}x{view.sensor[1]}" if view.sensor else "a sensor mode"
    assert view.crop is not None
    x, y, w, h = view.crop
    if view.array is not None and (w, h) == tuple(view.array):
        return f"{size}, which sees the whole {w}x{h} sensor"
    of = f" of the {view.array[0]}x{view.array[1]} sensor" if view.array is not None else " of the sensor"
    return f"{size}, which sees only {w}x{h}{of} (from {x},{y})"
