"""The live loop: camera → frame processors (vision + watch) → proposals on the table.

:class:`Live` owns a :class:`~companion.live.camera.ResilientCamera` and a list of frame processors.
A processor has ``feed(frame, t) -> list[Proposed]`` (``companion/vision/watch*.py``: the cup
watch, the dice proposals) and may have ``draw(frame)`` (draw what it detected onto a copy of the
frame, for the health page) and ``health() -> dict``. Every proposed event goes to
``Table.propose(event, source="camera", evidence=...)``; confirming is the confirm step's job
(:mod:`companion.live.confirm`: button, phone, or the demo's delay).

Nothing the camera or a processor does can stop the loop: the camera never raises (it retries
with back-off), a processor that raises is logged and counted, a proposal the table refuses is
counted and dropped. :meth:`Live.health` reports frames per second, milliseconds per stage
(median and p95 over the last frames), the camera's state and what was proposed;
:meth:`Live.latest_jpeg` the latest frame with the detections drawn on it.

Stages: ``capture`` is the time spent in the camera's ``read`` — on a real camera mostly waiting
for the next frame, so at 30 fps it sits near 33 ms by design; then one stage per processor (by
its ``name``); ``propose`` (only frames that proposed something: the SQLite-backed table);
``total`` (capture to the end of proposing).
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from companion.games.base import EventError, RuleError
from companion.live.camera import ResilientCamera
from companion.live.watch import Proposed
from companion.table import Table
from companion.vision.images import jpeg_with_note

log = logging.getLogger(__name__)

WINDOW = 120  # frames kept for the timing statistics


class Stage:
    """Durations of one stage over the last ``WINDOW`` frames."""

    def __init__(self) -> None:
        self.ms: deque[float] = deque(maxlen=WINDOW)

    def add(self, seconds: float) -> None:
        self.ms.append(seconds * 1000.0)

    def summary(self) -> dict[str, float | int]:
        if not self.ms:
            return {"n": 0}
        ordered = sorted(self.ms)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        return {"n": len(ordered), "median_ms": round(statistics.median(ordered), 2),
                "p95_ms": round(p95, 2), "max_ms": round(ordered[-1], 2)}


class Live:
    """The camera loop in a background thread (:meth:`start`/:meth:`stop`), or one frame at a
    time with :meth:`step` (tests, benchmarks)."""

    def __init__(self, camera: ResilientCamera | None, table: Table, processors: Sequence[Any] = (),
                 confirmer: Any = None, panel: Any = None, clock: Callable[[], float] = time.monotonic,
                 idle_seconds: float = 0.02, max_fps: float | None = None):
        self.camera = camera
        self.table = table
        self.processors = list(processors)
        self.confirmer = confirmer
        self.panel = panel
        self.clock = clock
        self.idle_seconds = idle_seconds
        self.min_interval = 1.0 / max_fps if max_fps else 0.0
        self.stages: dict[str, Stage] = {}
        self.frames = 0
        self.proposed = 0
        self.dropped = 0
        self.errors: dict[str, str] = {}
        self.error_counts: dict[str, int] = {}
        self.recent: deque[dict[str, Any]] = deque(maxlen=10)
        self._frame_times: deque[float] = deque(maxlen=60)
        self._lock = threading.Lock()
        self._latest: np.ndarray | None = None
        self._latest_n = 0
        self._jpeg: tuple[int, bytes] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.started_at: float | None = None

    # -- the loop
    def step(self) -> bool:
        """Read one frame and run it through every processor. False when there was no frame."""
        if self.camera is None:
            return False
        t0 = self.clock()
        frame = self.camera.read()
        t1 = self.clock()
        if frame is None:
            return False
        self._stage("capture", t1 - t0)
        proposals: list[tuple[str, Proposed]] = []
        for proc in self.processors:
            name = _name(proc)
            start = self.clock()
            try:
                out = proc.feed(frame, t0)
            except Exception as err:  # a processor bug or a frame it chokes on: never fatal
                self._error(name, err)
                out = None
            self._stage(name, self.clock() - start)
            proposals.extend((name, p) for p in _as_list(out))
        start = self.clock()
        for name, p in proposals:
            self._propose(name, p, t0)
        t2 = self.clock()
        if proposals:
            self._stage("propose", t2 - start)
        self._stage("total", t2 - t0)
        with self._lock:
            self._latest = frame
            self._latest_n += 1
        self.frames += 1
        self._frame_times.append(t1)
        return True

    def _propose(self, name: str, proposed: Proposed, frame_t: float) -> None:
        evidence = {"by": name, **dict(proposed.evidence)}
        record: dict[str, Any] = {"event": proposed.event, "by": name, "frame_t": frame_t}
        try:
            proposal = self.table.propose(proposed.event, source="camera", evidence=evidence)
        except (RuleError, EventError) as err:
            self.dropped += 1
            record["dropped"] = str(getattr(err, "message", err))
            log.warning("camera proposal dropped (%s): %s", record["dropped"], proposed.event)
        else:
            self.proposed += 1
            record["proposal"] = proposal.id
            log.info("camera proposes %s", proposed.event)
        self.recent.append(record)

    def _stage(self, name: str, seconds: float) -> None:
        stage = self.stages.get(name)
        if stage is None:
            stage = self.stages[name] = Stage()
        stage.add(seconds)

    def _error(self, name: str, err: Exception) -> None:
        count = self.error_counts.get(name, 0) + 1
        self.error_counts[name] = count
        self.errors[name] = f"{type(err).__name__}: {err}"
        if count == 1 or count % 100 == 0:  # the first one with its traceback, then a reminder
            log.error("processor %s failed (%d times so far)", name, count, exc_info=count == 1)

    def run(self) -> None:
        while not self._stop.is_set():
            start = self.clock()
            try:
                got = self.step()
            except Exception as err:  # belt and braces: the loop itself must not die
                self._error("live", err)
                got = False
            if not got:
                wait = self.idle_seconds
                if self.camera is not None and self.camera.retry_in() > 0:
                    wait = min(0.25, max(wait, self.camera.retry_in()))
                self._stop.wait(wait)
            elif self.min_interval:
                spare = self.min_interval - (self.clock() - start)
                if spare > 0:
                    self._stop.wait(spare)

    def start(self) -> None:
        if self.confirmer is not None:
            self.confirmer.start()
        if self._thread is not None or self.camera is None:
            return
        self._stop.clear()
        self.started_at = time.time()
        self._thread = threading.Thread(target=self.run, daemon=True, name="live-camera")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        if self.confirmer is not None:
            self.confirmer.stop()
        if self.camera is not None:
            self.camera.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- the web's LiveLink (companion.web.context) when the loop runs without a service round it
    demo = False

    def refused(self) -> None:
        if self.panel is not None:
            self.panel.sound("refused")

    def new_demo_game(self) -> dict[str, Any]:
        raise RuntimeError("not the demo")

    def remeasure_camera(self) -> bool:
        return self.camera is not None and self.camera.remeasure()

    # -- what the health page shows
    def fps(self) -> float:
        times = self._frame_times
        if len(times) < 2 or times[-1] <= times[0]:
            return 0.0
        if self.camera is not None and self.camera.stall_age() is not None:
            return 0.0  # frames stopped: not the rate of the last ones that came
        return (len(times) - 1) / (times[-1] - times[0])

    def health(self) -> dict[str, Any]:
        """Everything the health page shows; safe to call from any thread while the loop runs."""
        camera = (self.camera.health() if self.camera is not None
                  else {"state": "none", "status": "no camera configured"})
        processors = {}
        for proc in self.processors:
            info = {}
            if hasattr(proc, "health"):
                try:
                    info = dict(proc.health())
                except Exception as err:
                    info = {"error": f"{type(err).__name__}: {err}"}
            processors[_name(proc)] = info
        out: dict[str, Any] = {
            "running": self.running,
            "camera": camera,
            "fps": round(self.fps(), 1),
            "frames": self.frames,
            "stages": {name: stage.summary() for name, stage in list(self.stages.items())},
            "proposed": self.proposed,
            "dropped": self.dropped,
            "recent": [_jsonable(r) for r in list(self.recent)],
            "processors": processors,
            "errors": {name: {"last": msg, "count": self.error_counts.get(name, 0)}
                       for name, msg in list(self.errors.items())},
        }
        if self.panel is not None and hasattr(self.panel, "describe"):
            out["panel"] = self.panel.describe()
        if self.confirmer is not None and hasattr(self.confirmer, "describe"):
            out["confirm"] = _jsonable(self.confirmer.describe())
        return out

    def latest_frame(self) -> np.ndarray | None:
        with self._lock:
            return self._latest

    def latest_jpeg(self, quality: int = 80, raw: bool = False) -> bytes | None:
        """The latest frame with every processor's drawing and a status line, as JPEG (cached
        until the next frame). None before the first frame. ``raw``: the frame as the camera gave
        it, nothing drawn, at quality 95 — what ``companion calibrate`` wants, taken from the
        running service (same camera mode and size, no need to stop it for another program)."""
        with self._lock:
            frame, n = self._latest, self._latest_n
            cached = self._jpeg
        if frame is None:
            return None
        if raw:
            ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 95])
            if not ok:
                return None
            # the camera's model, sensor mode and crop go with the frame: a calibration made from
            # it keeps them, and the service will not use it under another mode
            view = self.camera.view() if hasattr(self.camera, "view") else None   # (a stand-in camera may not say)
            if view is not None and view.frame == (frame.shape[1], frame.shape[0]):
                return jpeg_with_note(buf.tobytes(), view.to_dict())
            return buf.tobytes()
        if cached is not None and cached[0] == n:
            return cached[1]
        img = frame.copy()
        for proc in self.processors:
            draw = getattr(proc, "draw", None)
            if draw is None:
                continue
            try:
                drawn = draw(img)
            except Exception as err:
                self._error(_name(proc) + ".draw", err)
                continue
            if isinstance(drawn, np.ndarray) and drawn.shape == img.shape:
                img = drawn
        status = f"{self.fps():.1f} fps  frame {self.frames}"
        if self.camera is not None:
            status += f"  camera {self.camera.health()['status']}"
        cv2.putText(img, status, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(img, status, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        if not ok:
            return None
        data = buf.tobytes()
        with self._lock:
            self._jpeg = (n, data)
        return data


def _name(proc: Any) -> str:
    return str(getattr(proc, "name", None) or type(proc).__name__)


def _as_list(out: Any) -> list[Proposed]:
    if out is None:
        return []
    if isinstance(out, Proposed):
        return [out]
    return [p for p in out if isinstance(p, Proposed)]


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return round(value, 4)
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)
