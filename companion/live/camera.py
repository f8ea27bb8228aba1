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
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np

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


class Picamera2Source(Source):
    """The Raspberry Pi camera through picamera2 (Raspberry Pi OS's ``python3-picamera2``; it
    cannot be installed elsewhere, so it is imported only when opened). ``RGB888`` in picamera2
    is stored B, G, R per pixel: exactly OpenCV's BGR, so no conversion is needed."""

    name = "picamera2"

    def __init__(self, width: int = 1280, height: int = 720, fps: int = 30, camera_num: int = 0,
                 frame_timeout: float | None = None):
        self.size = (int(width), int(height))
        self.fps = fps
        self.camera_num = camera_num
        # capture_array waits for the next frame with no limit: a camera whose ribbon cable works
        # loose (libcamera: "Dequeue timer … has expired") never delivers one, and the loop would
        # wait for ever while the health page still said "ok". Ten frame times, at least 2 s.
        self.frame_timeout = frame_timeout if frame_timeout is not None else max(2.0, 10.0 / max(1, fps))
        self._cam: Any = None

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
            seen = len(Picamera2.global_camera_info())
        except Exception:  # an older picamera2: let the constructor tell
            seen = None
        if seen is not None and self.camera_num >= seen:
            raise CameraError(self._not_detected())
        try:
            cam = Picamera2(self.camera_num)
        except IndexError as err:  # no camera detected
            raise CameraError(self._not_detected()) from err
        except RuntimeError as err:  # e.g. "Failed to acquire camera: Device or resource busy"
            raise CameraError(f"Pi camera {self.camera_num} cannot be opened ({err}): is another "
                              "program (rpicam-still, a second companion) using it?") from err
        try:
            config = cam.create_video_configuration(main={"size": self.size, "format": "RGB888"},
                                                    controls={"FrameRate": float(self.fps)})
            cam.configure(config)
            cam.start()
        except Exception as err:
            cam.close()
            raise CameraError(f"Pi camera would not start: {err}") from err
        self._cam = cam

    def _not_detected(self) -> str:
        return (f"no Pi camera {self.camera_num} detected (check the ribbon cable; the Pi looks for "
                "ribbon cameras only when it boots: one plugged in since needs sudo reboot; "
                "rpicam-hello --list-cameras lists what the Pi sees)")

    def read(self) -> Frame | None:
        if self._cam is None:
            raise CameraError("Pi camera not open")
        done = threading.Event()
        try:
            # the documented asynchronous form: a signal_function makes capture_array return its
            # job at once; the frame is collected with wait(job) once the job has signalled
            job = self._cam.capture_array("main", signal_function=lambda _job: done.set())
            if not done.wait(self.frame_timeout):
                raise CameraError(f"Pi camera: no frame for {self.frame_timeout:.1f} s (is the cable seated?)")
            return self._cam.wait(job)
        except CameraError:
            raise
        except Exception as err:
            raise CameraError(f"Pi camera capture failed: {err}") from err

    def close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            try:
                cam.stop()
            finally:
                cam.close()

    def describe(self) -> str:
        return f"picamera2 {self.size[0]}x{self.size[1]}@{self.fps}"


class VideoCaptureSource(Source):
    """``cv2.VideoCapture`` on a USB device index, a stream URL or a video file. A file starts
    again at its end when ``loop`` (the default for files), else it ends (:class:`SourceEnded`)."""

    name = "videocapture"

    def __init__(self, target: int | str, width: int | None = None, height: int | None = None,
                 loop: bool = True):
        self.target = target
        self.width, self.height = width, height
        self.is_file = isinstance(target, str) and "://" not in target
        self.loop = loop
        self._cap: Any = None

    def open(self) -> None:
        if self.is_file and not Path(str(self.target)).is_file():
            raise CameraError(f"no video file at {self.target}")
        cap = cv2.VideoCapture(self.target)
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


class UsbSource(VideoCaptureSource):
    """``usb:N``: the Nth USB camera (not /dev/videoN, which on a Pi 5 is the CSI receiver),
    looked up at each open, so a webcam plugged in later is found."""

    def __init__(self, n: int, width: int | None = None, height: int | None = None,
                 sysfs: Path = Path("/sys/class/video4linux")):
        super().__init__(n, width, height)
        self.n, self.sysfs = n, sysfs

    def open(self) -> None:
        nodes = usb_video_nodes(self.sysfs)
        if nodes is not None:
            if self.n >= len(nodes):
                raise CameraError(f"no USB camera {self.n}: {len(nodes)} found (plugged in? lsusb lists them)")
            self.target = nodes[self.n]
        super().open()

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
               render: SourceFactory | None = None) -> SourceFactory | None:
    """A factory of fresh sources for a ``camera.source`` string (None for ``none``). Raises
    :class:`CameraError` for a string that names nothing (a typo should not become a black feed)."""
    spec = spec.strip()
    if spec in ("", "none"):
        return None
    if spec == "picamera2":
        return lambda: Picamera2Source(width, height, fps)
    if spec.startswith("usb:"):
        index = spec[4:]
        if not index.isdigit():
            raise CameraError(f"camera source '{spec}': usb: takes a device number, e.g. usb:0")
        return lambda: UsbSource(int(index), width, height)
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
                         fps=cam.get("fps", 15), render=render)
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

    def health(self) -> dict[str, Any]:
        state = self.state
        text = state
        if state == "retrying":
            text = f"retrying in {self.retry_in():.1f} s"
        stalled = self.stall_age()
        if stalled is not None:
            state, text = "stalled", f"no frame for {stalled:.0f} s: the camera stopped sending"
        return {"source": self.describe(), "state": state, "status": text,
                "last_error": self.last_error, "frames": self.frames, "bad_frames": self.bad_frames,
                "opens": self.opens, "failures": self.failures, "fps": round(self.fps(), 1)}

    def close(self) -> None:
        self._close()
        if self.state != "ended":
            self.state = "closed"


def _describe(err: BaseException) -> str:
    text = str(err)
    return text if isinstance(err, CameraError) else f"{type(err).__name__}: {text}"
