"""Camera sources behind one interface, and a wrapper that survives any of them failing.

Like gpiozero's pin factories, the rest of the companion never knows where frames come from: a
:class:`Source` opens, reads BGR ``uint8`` frames (H×W×3, OpenCV's order) and closes.

============================  ======================================================
``camera.source`` string      source
============================  ======================================================
``none``                      no camera (``open_source`` returns None)
``picamera2``                 :class:`Picamera2Source` (the Pi's camera module)
``usb:N``                     :class:`UsbSource`: the Nth USB camera (``/dev/video…``)
``rtsp://…``, ``http://…``    :class:`VideoCaptureSource` on the stream URL
a video file                  :class:`VideoCaptureSource` on the file (looped)
a folder of images            :class:`ImageFolderSource` (sorted, looped, paced)
``render``                    :class:`TimedSource` over the rendered table
============================  ======================================================

:class:`ResilientCamera` wraps a source *factory*: a source that fails to open, raises, returns
``None``, empty or corrupt frames (wrong shape or dtype), or vanishes is closed and opened again
with exponential back-off. Its :meth:`~ResilientCamera.read` never raises; its
:meth:`~ResilientCamera.health` says what is going on, for the health page.

:class:`CameraSettings` (``[camera]`` exposure, gain, white balance, focus, flips) is what the
Pi camera and USB cameras are told at each open. What is left automatic is measured for
``lock_after_s`` and then held (:class:`AutoLock`), so the picture stops drifting while players
lean in; :meth:`ResilientCamera.remeasure` lets it measure again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.hardware.sensor_modes import DEFAULT, SensorChoice, SensorModeError
from companion.hardware.sensor_modes import choose as choose_sensor_mode
from companion.hardware.sensor_modes import parse as parse_sensor_mode
from companion.vision.view import CameraView

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"})
VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mkv", ".mov", ".m4v", ".webm", ".mjpeg", ".mjpg", ".h264"})

Frame = np.ndarray


class CameraError(RuntimeError):
    """A source that cannot open or cannot go on; the message is for the health page."""


class SourceEnded(CameraError):
    """A finite source (a video file or folder not looped, an iterator) has no more frames."""


class Source:
    """One camera. ``read()`` returns a frame, or None when no frame is ready (a glitch); it
    raises :class:`CameraError` when the camera is gone and :class:`SourceEnded` at the end."""

    name = "source"

    def open(self) -> None:
        pass

    def read(self) -> Frame | None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return self.name


@dataclass(frozen=True)
class CameraSettings:
    """``[camera]`` exposure_us, gain, white_balance, focus, hflip, vflip and lock_after_s, checked
    by :mod:`companion.config`; None is "auto". ``white_balance`` is (red, blue) gains (the Pi
    camera) or kelvin (a USB camera); ``focus`` dioptres on the Pi camera, the camera's own
    units on a USB one. ``lock_after_s`` 0 never holds the automatic values."""

    exposure_us: int | None = None
    gain: float | None = None
    white_balance: tuple[float, float] | int | None = None
    focus: float | None = None
    hflip: bool = False
    vflip: bool = False
    lock_after_s: float = 5.0
    sensor_mode: str = "auto"  # the Pi camera's: auto | default | "WIDTHxHEIGHT" (companion.hardware.sensor_modes)

    @classmethod
    def from_config(cls, cam: Mapping[str, Any]) -> CameraSettings:
        def value(key: str) -> Any:
            got = cam.get(key, "auto")
            return None if got == "auto" else got

        wb = value("white_balance")
        return cls(exposure_us=value("exposure_us"), gain=value("gain"),
                   white_balance=tuple(wb) if isinstance(wb, list | tuple) else wb,
                   focus=value("focus"), hflip=bool(cam.get("hflip", False)), vflip=bool(cam.get("vflip", False)),
                   lock_after_s=float(cam.get("lock_after_s", 5.0)),
                   sensor_mode=str(cam.get("sensor_mode", "auto")))

    @property
    def all_fixed(self) -> bool:
        return None not in (self.exposure_us, self.gain, self.white_balance, self.focus)


class AutoLock:
    """When the automatic values are to be held: ``after_s`` after :meth:`start` (the camera
    opened, or a re-measure began), once. :meth:`remeasure` may be called from any thread (the
    service's signal handler); the camera acts on it in its own next :meth:`due`."""

    def __init__(self, after_s: float, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time):
        self.after_s = after_s
        self.clock, self.wall = clock, wall
        self.state = "auto"  # measuring | locked | auto (never locks) | failed
        self.since = 0.0
        self.held_at: float | None = None  # wall time the values were last held (the health shows it)
        self.measures = 0  # measurings begun: at each open and each re-measure
        self._again = threading.Event()

    def start(self) -> None:
        self.since = self.clock()
        self.state = "measuring" if self.after_s > 0 else "auto"
        self.measures += 1

    def held(self) -> None:
        """The camera now holds the values it measured."""
        self.state = "locked"
        self.held_at = self.wall()

    def health(self) -> dict[str, Any]:
        return {"controls_state": self.state, "controls_measures": self.measures,
                "controls_held_at": None if self.held_at is None else round(self.held_at, 3)}

    def remeasure(self) -> None:
        self._again.set()

    def due(self) -> str | None:
        """"remeasure" (go back to automatic and start again), "lock" (hold the values now), or None."""
        if self._again.is_set():
            self._again.clear()
            return "remeasure"
        if self.state == "measuring" and self.clock() - self.since >= self.after_s:
            return "lock"
        return None

    def describe(self, held: str) -> str:
        if self.state == "measuring":
            return f"measuring (held in {max(0.0, self.after_s - (self.clock() - self.since)):.0f} s)"
        if self.state == "locked":
            return f"held: {held}"
        if self.state == "failed":
            return f"automatic: {held}"
        return "automatic (lock_after_s = 0)"


class Picamera2Source(Source):
    """The Raspberry Pi camera through picamera2 (Raspberry Pi OS's ``python3-picamera2``; it
    cannot be installed elsewhere, so it is imported only when opened). ``RGB888`` in picamera2
    is stored B, G, R per pixel: exactly OpenCV's BGR, so no conversion is needed."""

    name = "picamera2"

    def __init__(self, width: int = 1280, height: int = 720, fps: int = 30, camera_num: int = 0,
                 frame_timeout: float | None = None, settings: CameraSettings | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.size = (int(width), int(height))
        self.fps = fps
        self.camera_num = camera_num
        # capture_array waits for the next frame with no limit: a camera whose ribbon cable works
        # loose (libcamera: "Dequeue timer … has expired") never delivers one, and the loop would
        # wait for ever while the health page still said "ok". Ten frame times, at least 2 s.
        self.frame_timeout = frame_timeout if frame_timeout is not None else max(2.0, 10.0 / max(1, fps))
        self.settings = settings  # None: the camera's own defaults, nothing sent
        self.lock = AutoLock(settings.lock_after_s if settings and not settings.all_fixed else 0.0, clock)
        self.held: dict[str, Any] = {}
        self._enums: Any = None  # libcamera.controls, for AfModeEnum
        self._refused: set[str] = set()
        self._cam: Any = None
        self.sensor: SensorChoice | None = None  # the sensor mode asked for at the last open
        self.model: str | None = None  # the sensor's name as picamera2 lists it ("imx708"), if it says
        self._resized = False  # frames of another size than asked were seen (and resized)

    def open(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError as err:
            raise CameraError("picamera2 is not installed (on Raspberry Pi OS: sudo apt install "
                              "python3-picamera2, and a venv made with --system-site-packages)") from err
        # Ask the list of cameras first: a Picamera2() that finds no camera leaks a pipe's file
        # descriptor each try (~120 an hour at the longest pause: the 1,024 limit in about 8 h,
        # after which the web server and SQLite cannot open files). The firmware looks for ribbon
        # cameras only at boot, so one plugged in since needs a reboot.
        try:
            info = list(Picamera2.global_camera_info())
            seen = len(info)
        except Exception:  # an older picamera2: let the constructor tell
            info, seen = [], None
        if seen is not None and self.camera_num >= seen:
            raise CameraError(self._not_detected())
        model = info[self.camera_num].get("Model") if self.camera_num < len(info) else None
        self.model = str(model) if isinstance(model, str) and model else None
        try:
            cam = Picamera2(self.camera_num)
        except IndexError as err:  # no camera detected
            raise CameraError(self._not_detected()) from err
        except RuntimeError as err:  # e.g. "Failed to acquire camera: Device or resource busy"
            raise CameraError(f"Pi camera {self.camera_num} cannot be opened ({err}): is another "
                              "program (rpicam-still, a second companion) using it?") from err
        try:
            extra: dict[str, Any] = {}
            if self.settings is not None and (self.settings.hflip or self.settings.vflip):
                from libcamera import Transform  # beside picamera2 on Raspberry Pi OS

                extra["transform"] = Transform(hflip=int(self.settings.hflip), vflip=int(self.settings.vflip))
            self.sensor = self._choose_sensor_mode(cam)
            cam.configure(self._configuration(cam, extra))
            cam.start()
        except SensorModeError as err:
            cam.close()
            raise CameraError(str(err)) from err
        except Exception as err:
            cam.close()
            raise CameraError(f"Pi camera would not start: {err}") from err
        if self.sensor is not None:
            log.info("camera: %s for %dx%d frames (%s)", self.sensor.describe(), *self.size, self.sensor.why)
        self._cam = cam
        if self.settings is not None:
            self._set(self._start_controls())
            self.lock.start()

    @property
    def view(self) -> CameraView:
        """What the frames are taken under, as far as this code knows it (a table calibration
        keeps it, and is not used under another: :func:`companion.vision.view.view_change`).
        With ``sensor_mode = "default"`` picamera2 chooses the mode and its crop is not known."""
        sensor = self.sensor
        return CameraView(frame=self.size, model=self.model,
                          sensor=sensor.size if sensor is not None else None,
                          crop=sensor.crop if sensor is not None and sensor.size is not None else None,
                          array=sensor.array if sensor is not None and sensor.size is not None else None)

    def _choose_sensor_mode(self, cam: Any) -> SensorChoice | None:
        """``[camera] sensor_mode`` made a mode of this camera's (None: picamera2 chooses). Reading
        ``cam.sensor_modes`` configures the camera once per mode, so it is skipped for "default"."""
        wanted = parse_sensor_mode(self.settings.sensor_mode if self.settings is not None else DEFAULT)
        if wanted == DEFAULT:
            return None
        try:
            modes = list(getattr(cam, "sensor_modes", None) or [])
        except Exception as err:  # noqa: BLE001 - picamera2 configures the camera to list them
            log.warning("camera: cannot list the sensor modes (%s); picamera2 chooses", err)
            return None
        return choose_sensor_mode(modes, wanted, self.size, float(self.fps))

    def _configuration(self, cam: Any, extra: dict[str, Any]) -> Any:
        """The video configuration: main stream of the asked size in RGB888, the frame rate, and
        the sensor mode. Current picamera2 takes ``sensor={"output_size": …, "bit_depth": …}`` in
        ``create_video_configuration`` (the picamera2 manual's way to choose a mode, with the sizes
        and depths of ``picam2.sensor_modes``; ``_make_libcamera_config`` in picamera2/picamera2.py
        turns it into libcamera's SensorConfiguration, which libcamera keeps to: rpicam-apps PR
        #560). An older picamera2 has no ``sensor`` argument and chooses the mode by the raw
        stream's size, as its maintainers advised then (picamera2 issues #167, #558): used when
        ``sensor`` is refused with a TypeError."""
        main = {"size": self.size, "format": "RGB888"}
        controls = {"FrameRate": float(self.fps)}
        if self.sensor is None or self.sensor.size is None:
            return cam.create_video_configuration(main=main, controls=controls, **extra)
        sensor = {"output_size": self.sensor.size, "bit_depth": self.sensor.bit_depth}
        try:
            return cam.create_video_configuration(main=main, controls=controls, sensor=sensor, **extra)
        except TypeError:  # "unexpected keyword argument 'sensor'": an older picamera2
            return cam.create_video_configuration(main=main, controls=controls, raw={"size": self.sensor.size},
                                                  **extra)

    def _not_detected(self) -> str:
        return (f"no Pi camera {self.camera_num} detected (check the ribbon cable; the Pi looks for "
                "ribbon cameras only when it boots: one plugged in since needs sudo reboot; "
                "rpicam-hello --list-cameras lists what the Pi sees)")

    def read(self) -> Frame | None:
        if self._cam is None:
            raise CameraError("Pi camera not open")
        frame = self._capture(lambda signal: self._cam.capture_array("main", signal_function=signal))
        if self.settings is not None:
            self._controls_due()
        return self._sized(frame)

    def _sized(self, frame: Any) -> Any:
        """The frame at the size asked for: libcamera may adjust a stream's size to what the ISP
        can give (picamera2 evens an odd width), and the calibration and readers expect
        ``width`` x ``height``."""
        shape = getattr(frame, "shape", None)
        if shape is None or len(shape) < 2 or (shape[1], shape[0]) == self.size:
            return frame
        if not self._resized:
            self._resized = True
            log.warning("camera: the Pi camera gives %dx%d frames, not the %dx%d asked for: resized",
                        shape[1], shape[0], *self.size)
        return cv2.resize(frame, self.size, interpolation=cv2.INTER_AREA)

    def _capture(self, start: Callable[[Callable[[Any], None]], Any]) -> Any:
        """One asynchronous capture (frame or metadata), waited for at most ``frame_timeout``."""
        done = threading.Event()
        try:
            # the documented asynchronous form: a signal_function makes capture_* return its job
            # at once; the result is collected with wait(job) once the job has signalled
            job = start(lambda _job: done.set())
            if not done.wait(self.frame_timeout):
                raise CameraError(f"Pi camera: no frame for {self.frame_timeout:.1f} s (is the cable seated?)")
            return self._cam.wait(job)
        except CameraError:
            raise
        except Exception as err:
            raise CameraError(f"Pi camera capture failed: {err}") from err

    # -- exposure, white balance and focus (picamera2's documented controls)
    def remeasure(self) -> None:
        """Measure exposure, white balance and focus again, then hold them (from any thread)."""
        self.lock.remeasure()

    def _enum(self, enum: str, name: str) -> Any:
        if self._enums is None:
            from libcamera import controls

            self._enums = controls
        return getattr(getattr(self._enums, enum), name)

    def _af_mode(self, name: str) -> Any:
        return self._enum("AfModeEnum", name)

    def _exposure_modes(self, c: dict[str, Any], exposure_auto: bool, gain_auto: bool) -> None:
        """libcamera 0.5 and later switch exposure and gain each with its own mode control
        (AeEnable may be gone): sent where the camera offers them."""
        for control, auto in (("ExposureTimeMode", exposure_auto), ("AnalogueGainMode", gain_auto)):
            if self._has(control):
                c[control] = self._enum(control + "Enum", "Auto" if auto else "Manual")

    def _start_controls(self) -> dict[str, Any]:
        """Fixed values as configured; the rest left to the camera's algorithms (also what a
        re-measure sends)."""
        s = self.settings
        assert s is not None
        c: dict[str, Any] = {}
        # AeEnable stays on while either is automatic: libcamera then holds the one that is set
        c["AeEnable"] = s.exposure_us is None or s.gain is None
        if s.exposure_us is not None:
            c["ExposureTime"] = int(s.exposure_us)
        if s.gain is not None:
            c["AnalogueGain"] = float(s.gain)
        self._exposure_modes(c, s.exposure_us is None, s.gain is None)
        c["AwbEnable"] = s.white_balance is None
        if isinstance(s.white_balance, tuple):
            c["ColourGains"] = (float(s.white_balance[0]), float(s.white_balance[1]))
        if self._has("AfMode"):  # a Camera Module 3; other modules have a fixed-focus lens
            if s.focus is None:
                c["AfMode"] = self._af_mode("Continuous")
            else:
                c["AfMode"] = self._af_mode("Manual")
                c["LensPosition"] = float(s.focus)
        elif s.focus is not None:
            log.warning("camera: focus = %s ignored: this Pi camera has a fixed-focus lens", s.focus)
        self.held = {}
        return c

    def _controls_due(self) -> None:
        due = self.lock.due()
        if due == "remeasure":
            log.info("camera: measuring exposure, white balance and focus again for %.0f s", self.lock.after_s)
            self._set(self._start_controls())
            self.lock.start()
        elif due == "lock":
            self._hold()

    def _hold(self) -> None:
        """The values the camera's algorithms reached, from the next frame's metadata, set as
        fixed controls."""
        s = self.settings
        assert s is not None
        try:
            md = self._capture(lambda signal: self._cam.capture_metadata(signal_function=signal))
        except CameraError as err:
            self.lock.state = "failed"
            self.held = {"why": f"no metadata to hold ({err})"}
            log.warning("camera: exposure and white balance stay automatic: %s", err)
            return
        c: dict[str, Any] = {}
        if s.exposure_us is None or s.gain is None:
            exposure = s.exposure_us if s.exposure_us is not None else md.get("ExposureTime")
            gain = s.gain if s.gain is not None else md.get("AnalogueGain")
            if exposure is not None and gain is not None:
                c.update(AeEnable=False, ExposureTime=int(exposure), AnalogueGain=float(gain))
                self._exposure_modes(c, False, False)
        if s.white_balance is None and md.get("ColourGains") is not None:
            red, blue = md["ColourGains"]
            c.update(AwbEnable=False, ColourGains=(float(red), float(blue)))
        if s.focus is None and self._has("AfMode") and md.get("LensPosition") is not None:
            c.update(AfMode=self._af_mode("Manual"), LensPosition=float(md["LensPosition"]))
        self._set(c)
        self.lock.held()
        self.held = {k: v for k, v in c.items() if k in ("ExposureTime", "AnalogueGain", "ColourGains", "LensPosition")}
        log.info("camera: held after %.0f s: %s", self.lock.after_s, _held_text(self.held))

    def _has(self, control: str) -> bool:
        return control in (getattr(self._cam, "camera_controls", None) or {})

    def _set(self, controls: dict[str, Any]) -> None:
        """set_controls with the controls this camera offers (picamera2 raises for the others)."""
        offered = getattr(self._cam, "camera_controls", None)
        if offered is not None:
            refused = sorted(k for k in controls if k not in offered and k not in self._refused)
            if refused:  # once each: a re-measure sends the same again
                self._refused.update(refused)
                log.warning("camera: this Pi camera does not offer %s; left as it is", ", ".join(refused))
            controls = {k: v for k, v in controls.items() if k in offered}
        if controls:
            self._cam.set_controls(controls)

    def controls(self) -> str:
        """What the health page says about exposure, white balance and focus."""
        if self.settings is None:
            return "the camera's defaults"
        if self.settings.all_fixed:
            return "fixed in companion.toml"
        return self.lock.describe(self.held.get("why") or _held_text(self.held))

    def close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            try:
                cam.stop()
            finally:
                cam.close()

    def describe(self) -> str:
        text = f"picamera2 {self.size[0]}x{self.size[1]}@{self.fps}"
        return text if self.sensor is None else f"{text}, {self.sensor.describe()}"


def _held_text(held: Mapping[str, Any]) -> str:
    parts = []
    for key, value in held.items():
        if key == "ExposureTime":
            parts.append(f"exposure {value} µs")
        elif key == "AnalogueGain":
            parts.append(f"gain {value:.2f}")
        elif key == "ColourGains":
            parts.append(f"white balance {value[0]:.2f}/{value[1]:.2f}")
        elif key == "LensPosition":
            parts.append(f"focus {value:.2f} dioptres")
        elif key == "why":
            parts.append(str(value))
        else:
            parts.append(f"{key} {value:g}")
    return ", ".join(parts) or "nothing to hold"


class VideoCaptureSource(Source):
    """``cv2.VideoCapture`` on a USB device index, a stream URL or a video file. A file starts
    again at its end when ``loop`` (the default for files), else it ends (:class:`SourceEnded`)."""

    name = "videocapture"

    def __init__(self, target: int | str, width: int | None = None, height: int | None = None,
                 loop: bool = True, opener: Callable[[Any], Any] | None = None):
        self.target = target
        self.width, self.height = width, height
        self.is_file = isinstance(target, str) and "://" not in target
        self.loop = loop
        self.opener = opener or cv2.VideoCapture
        self._cap: Any = None

    def open(self) -> None:
        if self.is_file and not Path(str(self.target)).is_file():
            raise CameraError(f"no video file at {self.target}")
        cap = self.opener(self.target)
        if not cap.isOpened():
            cap.release()
            raise CameraError(f"cannot open {self.describe()}")
        if isinstance(self.target, int) and self.width and self.height:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        self._cap = cap

    def read(self) -> Frame | None:
        if self._cap is None:
            raise CameraError(f"{self.describe()} not open")
        ok, frame = self._cap.read()
        if ok:
            return frame
        if not self.is_file:
            return None  # a dropped frame; ResilientCamera reopens after several in a row
        if not self.loop:
            raise SourceEnded(f"end of {self.target}")
        self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
        ok, frame = self._cap.read()
        if not ok:
            raise CameraError(f"cannot read {self.target} again from its start")
        return frame

    def close(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()

    def describe(self) -> str:
        if isinstance(self.target, int):
            return f"USB camera {self.target} (/dev/video{self.target})"
        return str(self.target)


def usb_video_nodes(sysfs: Path = Path("/sys/class/video4linux")) -> list[int] | None:
    """The /dev/videoX numbers of USB cameras' capture nodes, in order; None where the system has
    no video4linux in sysfs (not Linux). A Pi 5 with a ribbon camera has /dev/video0… for its
    CSI receiver, so /dev/video0 is not the webcam there; and a UVC webcam adds a metadata node
    beside its capture node (``index`` 1), which gives no frames."""
    if not sysfs.is_dir():
        return None
    found = []
    for node in sysfs.glob("video*"):
        number = node.name[5:]
        if not number.isdigit():
            continue
        try:
            on_usb = "/usb" in str((node / "device").resolve())
            first = (node / "index").read_text().strip() in ("", "0")
        except OSError:
            continue
        if on_usb and first:
            found.append(int(number))
    return sorted(found)


# A USB camera's automatic exposure, white balance and focus through OpenCV's V4L2 backend:
# (what, the switch, its automatic and manual values, the value). V4L2's exposure switch is a
# menu, 3 "aperture priority" (automatic) or 1 "manual"; the others are on/off.
USB_CONTROLS = (
    ("exposure", cv2.CAP_PROP_AUTO_EXPOSURE, 3, 1, cv2.CAP_PROP_EXPOSURE),
    ("white balance", cv2.CAP_PROP_AUTO_WB, 1, 0, cv2.CAP_PROP_WB_TEMPERATURE),
    ("focus", cv2.CAP_PROP_AUTOFOCUS, 1, 0, cv2.CAP_PROP_FOCUS),
)
PROP_NAMES = {getattr(cv2, n): n for n in ("CAP_PROP_AUTO_EXPOSURE", "CAP_PROP_EXPOSURE", "CAP_PROP_GAIN",
                                           "CAP_PROP_AUTO_WB", "CAP_PROP_WB_TEMPERATURE", "CAP_PROP_AUTOFOCUS",
                                           "CAP_PROP_FOCUS")}


class UsbSource(VideoCaptureSource):
    """``usb:N``: the Nth USB camera (not /dev/videoN, which on a Pi 5 is the CSI receiver),
    looked up at each open, so a webcam plugged in later is found. With ``settings`` it is
    told its exposure, gain, white balance and focus at each open, and what is automatic is held
    after ``lock_after_s`` as for the Pi camera: each property the camera or backend refuses
    is said once in the log, and left as the camera has it."""

    def __init__(self, n: int, width: int | None = None, height: int | None = None,
                 sysfs: Path = Path("/sys/class/video4linux"), settings: CameraSettings | None = None,
                 clock: Callable[[], float] = time.monotonic, opener: Callable[[Any], Any] | None = None):
        super().__init__(n, width, height, opener=opener)
        self.n, self.sysfs = n, sysfs
        self.settings = settings
        self.lock = AutoLock(settings.lock_after_s if settings and not settings.all_fixed else 0.0, clock)
        self.held: dict[str, Any] = {}
        self.refused: set[str] = set()
        flips = (settings.hflip, settings.vflip) if settings else (False, False)
        self.flip = {(True, False): 1, (False, True): 0, (True, True): -1}.get(flips)

    def open(self) -> None:
        nodes = usb_video_nodes(self.sysfs)
        if nodes is not None:
            if self.n >= len(nodes):
                raise CameraError(f"no USB camera {self.n}: {len(nodes)} found (plugged in? lsusb lists them)")
            self.target = nodes[self.n]
        super().open()
        if self.settings is not None:
            self._start_controls()
            self.lock.start()

    def read(self) -> Frame | None:
        frame = super().read()
        if frame is not None and self.flip is not None:
            frame = cv2.flip(frame, self.flip)
        if self.settings is not None and self._cap is not None:
            due = self.lock.due()
            if due == "remeasure":
                log.info("camera: measuring exposure, white balance and focus again for %.0f s", self.lock.after_s)
                self._start_controls()
                self.lock.start()
            elif due == "lock":
                self._hold()
        return frame

    def remeasure(self) -> None:
        """Measure exposure, white balance and focus again, then hold them (from any thread)."""
        self.lock.remeasure()

    def _configured(self) -> dict[str, float | None]:
        s = self.settings
        assert s is not None
        wb = s.white_balance
        if isinstance(wb, tuple):
            log.warning("camera: a USB camera's white balance is a colour temperature in kelvin, not "
                        "[red, blue] gains: left automatic")
            wb = None
        # V4L2's exposure_time_absolute counts 100 µs
        return {"exposure": None if s.exposure_us is None else s.exposure_us / 100.0,
                "white balance": wb, "focus": s.focus}

    def _start_controls(self) -> None:
        s = self.settings
        assert s is not None
        fixed = self._configured()
        for what, switch, automatic, manual, prop in USB_CONTROLS:
            if fixed[what] is None:
                self._prop(switch, automatic, what)
            elif self._prop(switch, manual, what):
                self._prop(prop, fixed[what], what)
        if s.gain is not None:
            self._prop(cv2.CAP_PROP_GAIN, s.gain, "gain")
        self.held = {}

    def _hold(self) -> None:
        fixed = self._configured()
        held: dict[str, Any] = {}
        for what, switch, _automatic, manual, prop in USB_CONTROLS:
            if fixed[what] is not None:
                continue
            value = float(self._cap.get(prop))
            gain = float(self._cap.get(cv2.CAP_PROP_GAIN)) if what == "exposure" else None
            if value < 0 or (value == 0 and what != "focus"):  # what OpenCV reads for a property it lacks
                self._refuse(f"{PROP_NAMES[prop]} (read {value:g})", what)
                continue
            if self._prop(switch, manual, what) and self._prop(prop, value, what):
                held[what] = value
                if gain is not None and gain >= 0 and self.settings and self.settings.gain is None:
                    self._prop(cv2.CAP_PROP_GAIN, gain, "gain")
                    held["gain"] = gain
        self.held = held
        self.lock.held()
        log.info("camera: %s held after %.0f s: %s", self.describe(), self.lock.after_s,
                 ", ".join(f"{k} {v:g}" for k, v in held.items()) or "nothing (every property refused)")

    def _prop(self, prop: int, value: float, what: str) -> bool:
        ok = bool(self._cap.set(prop, value))
        if not ok:
            self._refuse(f"{PROP_NAMES.get(prop, prop)} = {value:g}", what)
        return ok

    def _refuse(self, detail: str, what: str) -> None:
        if detail not in self.refused:  # once per property, not at every re-measure
            self.refused.add(detail)
            log.warning("camera: %s refused %s: its %s stays as the camera has it", self.describe(), detail, what)

    def controls(self) -> str:
        if self.settings is None:
            return "the camera's defaults"
        if self.settings.all_fixed:
            return "fixed in companion.toml"
        held = ", ".join(f"{k} {v:g}" for k, v in self.held.items()) or "nothing (refused)"
        return self.lock.describe(held)

    def describe(self) -> str:
        return f"USB camera {self.n} (/dev/video{self.target})"


class ImageFolderSource(Source):
    """Every image of a folder in name order; looped if asked; paced to ``fps`` if given. An
    image that cannot be decoded reads as None (a glitch), and the next one follows."""

    name = "folder"

    def __init__(self, folder: str | Path, loop: bool = False, fps: float | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        self.folder = Path(folder)
        self.loop = loop
        self.fps = fps
        self.clock, self.sleep = clock, sleep
        self._files: list[Path] = []
        self._index = 0
        self._next_at: float | None = None

    def open(self) -> None:
        if not self.folder.is_dir():
            raise CameraError(f"no image folder at {self.folder}")
        self._files = sorted(p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self._files:
            raise CameraError(f"no images in {self.folder}")
        self._index = 0
        self._next_at = None

    def read(self) -> Frame | None:
        if self._index >= len(self._files):
            if not self.loop or not self._files:
                raise SourceEnded(f"end of {self.folder}")
            self._index = 0
        if self.fps:
            now = self.clock()
            if self._next_at is not None and now < self._next_at:
                self.sleep(self._next_at - now)
            self._next_at = max(now, self._next_at or now) + 1.0 / self.fps
        path = self._files[self._index]
        self._index += 1
        if not path.exists():
            raise CameraError(f"{path} vanished")
        return cv2.imread(str(path), cv2.IMREAD_COLOR)

    def describe(self) -> str:
        return f"image folder {self.folder} ({len(self._files)} images)"


class CallableSource(Source):
    """Frames from Python: a callable returning a frame, or an iterable of frames. The rendered
    table (the demo, the tests) plugs in here. StopIteration from either ends the source."""

    name = "callable"

    def __init__(self, frames: Callable[[], Frame | None] | Iterable[Frame | None], name: str = "callable"):
        self.frames = frames
        self.name = name
        self._it: Iterator[Frame | None] | None = None

    def open(self) -> None:
        if not callable(self.frames):
            self._it = iter(self.frames)

    def read(self) -> Frame | None:
        try:
            if self._it is not None:
                return next(self._it)
            assert callable(self.frames)
            return self.frames()
        except StopIteration:
            raise SourceEnded(f"{self.name} has no more frames") from None


class TimedSource(Source):
    """Frames that carry their own time, ``(seconds from the start, frame)`` — a recorded or
    rendered game (``Sequence.frames()`` of the table renderer). Played at their own pace times
    ``speed`` (None: as fast as they are read). ``frames`` is called at every open, so a reopened
    source starts again from the beginning. ``last_t`` is the time of the frame read last."""

    name = "timed"

    def __init__(self, frames: Callable[[], Iterable[tuple[float, Frame]]], speed: float | None = 1.0,
                 name: str = "timed", clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.frames = frames
        self.speed = speed
        self.name = name
        self.clock, self.sleep = clock, sleep
        self._it: Iterator[tuple[float, Frame]] | None = None
        self._start: float | None = None
        self.last_t: float | None = None

    def open(self) -> None:
        self._it = iter(self.frames())
        self._start = None
        self.last_t = None

    def read(self) -> Frame | None:
        if self._it is None:
            raise CameraError(f"{self.name} not open")
        try:
            t, frame = next(self._it)
        except StopIteration:
            raise SourceEnded(f"{self.name} has no more frames") from None
        if self.speed:
            now = self.clock()
            if self._start is None:
                self._start = now - t / self.speed
            due = self._start + t / self.speed
            if due > now:
                self.sleep(due - now)
        self.last_t = t
        return frame


SourceFactory = Callable[[], Source]


def parse_spec(spec: str, width: int = 1280, height: int = 720, fps: int = 30,
               render: SourceFactory | None = None, settings: CameraSettings | None = None) -> SourceFactory | None:
    """A factory of fresh sources for a ``camera.source`` string (None for ``none``). Raises
    :class:`CameraError` for a string that names nothing (a typo should not become a black feed).
    ``settings`` go to the cameras that take them (the Pi camera, USB cameras)."""
    spec = spec.strip()
    if spec in ("", "none"):
        return None
    if spec == "picamera2":
        return lambda: Picamera2Source(width, height, fps, settings=settings)
    if spec.startswith("usb:"):
        index = spec[4:]
        if not index.isdigit():
            raise CameraError(f"camera source '{spec}': usb: takes a device number, e.g. usb:0")
        return lambda: UsbSource(int(index), width, height, settings=settings)
    if "://" in spec:
        return lambda: VideoCaptureSource(spec, width, height)
    if spec == "render":
        if render is None:
            raise CameraError("camera source 'render' needs the table renderer (companion demo)")
        return render
    path = Path(os.path.expanduser(spec))
    if path.is_dir():
        return lambda: ImageFolderSource(path, loop=True, fps=fps)
    if path.suffix.lower() in VIDEO_SUFFIXES:
        return lambda: VideoCaptureSource(str(path), width, height, loop=True)
    raise CameraError(f"camera source '{spec}': not none, picamera2, usb:N, a stream URL, "
                      "a video file or an image folder")


def open_source(spec: str, config: Mapping[str, Any] | None = None,
                render: SourceFactory | None = None, **options: Any) -> ResilientCamera | None:
    """The configured camera, wrapped to survive failures; None when ``source = "none"``."""
    cam = dict((config or {}).get("camera", {}))
    factory = parse_spec(spec, width=cam.get("width", 1280), height=cam.get("height", 720),
                         fps=cam.get("fps", 15), render=render, settings=CameraSettings.from_config(cam))
    if factory is None:
        return None
    return ResilientCamera(factory, label=spec, **options)


def check_frame(frame: Any) -> tuple[Frame | None, str | None]:
    """(a BGR uint8 H×W×3 frame, None) or (None, what is wrong with it). Grey and BGRA frames
    are converted; anything else is refused."""
    if frame is None:
        return None, "no frame"
    if not isinstance(frame, np.ndarray):
        return None, f"not an image but {type(frame).__name__}"
    if frame.size == 0:
        return None, "empty frame"
    if frame.dtype != np.uint8:
        return None, f"pixels of type {frame.dtype}, not uint8"
    if frame.ndim == 2:
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR), None
    if frame.ndim != 3 or frame.shape[2] not in (3, 4):
        return None, f"frame of shape {frame.shape}, not height x width x 3"
    if frame.shape[0] < 8 or frame.shape[1] < 8:
        return None, f"frame of {frame.shape[1]}x{frame.shape[0]} pixels is too small"
    if frame.shape[2] == 4:
        return cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR), None
    return frame, None


class ResilientCamera:
    """A camera that never raises into the service loop.

    ``read()`` returns a good frame or None. Behind it: the source is opened on first use; a
    failure to open, an exception while reading, or ``max_bad`` bad frames in a row (None, empty,
    wrong shape or dtype) close it, and it is opened again after ``backoff`` seconds, doubling up
    to ``backoff_max``; a good frame resets the back-off. A finite source that ends is "ended".
    """

    def __init__(self, factory: SourceFactory, label: str = "", backoff: float = 0.5,
                 backoff_max: float = 30.0, max_bad: int = 10,
                 clock: Callable[[], float] = time.monotonic, stall_seconds: float = 5.0):
        self.factory = factory
        self.label = label
        self.backoff_start = backoff
        self.backoff_max = backoff_max
        self.max_bad = max_bad
        self.clock = clock
        self.stall_seconds = stall_seconds
        self._last_good: float | None = None  # the last good frame (or the open), for stall_age
        self.source: Source | None = None
        self.state = "closed"   # closed | ok | retrying | ended
        self.last_error: str | None = None
        self.frames = 0
        self.bad_frames = 0
        self.opens = 0
        self.failures = 0
        self._bad_run = 0
        self._backoff = backoff
        self._retry_at = 0.0
        self._times: deque[float] = deque(maxlen=60)

    def read(self) -> Frame | None:
        if self.state == "ended":
            return None
        if self.source is None:
            if self.clock() < self._retry_at:
                return None
            if not self._open():
                return None
        assert self.source is not None
        try:
            raw = self.source.read()
        except SourceEnded as err:
            self._close()
            self.state = "ended"
            self.last_error = str(err)
            log.info("camera: %s", err)
            return None
        except Exception as err:  # anything a driver may throw
            self._fail(f"read failed: {_describe(err)}")
            return None
        frame, problem = check_frame(raw)
        if frame is None:
            self.bad_frames += 1
            self._bad_run += 1
            if self._bad_run >= self.max_bad:
                self._fail(f"{self._bad_run} bad frames in a row (last: {problem})")
            return None
        self._bad_run = 0
        self._backoff = self.backoff_start
        self.frames += 1
        self._last_good = self.clock()
        self._times.append(self._last_good)
        return frame

    def _open(self) -> bool:
        try:
            source = self.factory()
            source.open()
        except Exception as err:
            self._fail(f"cannot open: {_describe(err)}")
            return False
        self.source = source
        self.opens += 1
        self.state = "ok"
        self._last_good = self.clock()
        self._bad_run = 0
        if self.opens > 1:
            log.warning("camera %s is back", self.describe())
        return True

    def _fail(self, why: str) -> None:
        self._close()
        self.failures += 1
        self.last_error = why
        self.state = "retrying"
        self._retry_at = self.clock() + self._backoff
        log.warning("camera %s: %s; trying again in %.1f s", self.describe(), why, self._backoff)
        self._backoff = min(self._backoff * 2, self.backoff_max)

    def _close(self) -> None:
        source, self.source = self.source, None
        if source is not None:
            try:
                source.close()
            except Exception as err:
                log.debug("closing the camera failed: %s", err)

    def retry_in(self) -> float:
        """Seconds until the next attempt to open (0 when open or due)."""
        if self.source is not None or self.state == "ended":
            return 0.0
        return max(0.0, self._retry_at - self.clock())

    def stall_age(self) -> float | None:
        """Seconds since the open camera last gave a good frame, when that is longer than
        ``stall_seconds`` (a read that hangs in the driver, frames that stopped); else None."""
        if self.source is None or self.state != "ok" or self._last_good is None:
            return None
        age = self.clock() - self._last_good
        return age if age > self.stall_seconds else None

    def fps(self) -> float:
        times = self._times
        if len(times) < 2 or times[-1] <= times[0] or self.stall_age() is not None:
            return 0.0
        return (len(times) - 1) / (times[-1] - times[0])

    def describe(self) -> str:
        if self.source is not None:
            return self.source.describe()
        return self.label or "camera"

    def view(self) -> CameraView | None:
        """What the open camera's frames are taken under (the Pi camera's model, sensor mode and
        crop); None while none is open or for a source that does not say."""
        view = getattr(self.source, "view", None) if self.state == "ok" else None
        return view if isinstance(view, CameraView) else None

    def remeasure(self) -> bool:
        """Ask the open camera to measure its exposure, white balance and focus again and then
        hold them (from any thread). False when there is nothing to ask: no camera open (the
        next open measures anyway), a source without such controls, or one that measures nothing
        (every value fixed in companion.toml, or ``lock_after_s`` 0: automatic all the time)."""
        source = self.source
        if source is None or not hasattr(source, "remeasure"):
            return False
        settings, lock = getattr(source, "settings", None), getattr(source, "lock", None)
        if settings is None or settings.all_fixed or (isinstance(lock, AutoLock) and lock.after_s <= 0):
            return False  # nothing measured to measure again: all fixed, or automatic all the time
        source.remeasure()
        return True

    def health(self) -> dict[str, Any]:
        state = self.state
        text = state
        if state == "retrying":
            text = f"retrying in {self.retry_in():.1f} s"
        stalled = self.stall_age()
        if stalled is not None:
            state, text = "stalled", f"no frame for {stalled:.0f} s: the camera stopped sending"
        out = {"source": self.describe(), "state": state, "status": text,
               "last_error": self.last_error, "frames": self.frames, "bad_frames": self.bad_frames,
               "opens": self.opens, "failures": self.failures, "fps": round(self.fps(), 1)}
        controls = getattr(self.source, "controls", None)
        if callable(controls):
            out["controls"] = controls()
        lock = getattr(self.source, "lock", None)
        if isinstance(lock, AutoLock) and getattr(self.source, "settings", None) is not None:
            out.update(lock.health())
        return out

    def close(self) -> None:
        self._close()
        if self.state != "ended":
            self.state = "closed"


def _describe(err: BaseException) -> str:
    text = str(err)
    return text if isinstance(err, CameraError) else f"{type(err).__name__}: {text}"
