"""``companion bench live``: end-to-end delay from the camera frame in which a cup left the table
to the scoreboard update, and the memory of the process doing it.

The whole live path runs for real, in real time: timestamped frames played at their own pace
(:class:`~companion.camera.TimedSource` inside a :class:`~companion.camera.ResilientCamera`) →
:class:`~companion.live.Live` and its frame processors → ``Table.propose`` → the confirm step
(auto-confirm, as in the demo) → the SQLite table → its subscribers. The scoreboard's live
stream is one of those subscribers, so the subscriber call is the moment the scoreboard update
leaves the table (the web's fan-out to phones is measured by ``companion bench web``).

Two delays per cup, from the wall time the frame with the cup gone was read:

- ``proposed``: the proposal is on the table (the scoreboard shows it waiting);
- ``scored``: the event is applied (auto-confirm with ``--auto-seconds``; 0 = at once).

Vision: until the cup watch (``companion.vision.watch_cups``) is wired in, the frames are a
synthetic 21 Exact table (coloured discs for cups on a textured cloth, sensor noise) and the
processor is :class:`SlotWatch`, a per-slot colour check that waits ``--settle`` frames before it
believes a cup is gone. :func:`measure_live` takes any frames and processors, so the rendered
game and the real cup watch plug in unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.camera import ResilientCamera, TimedSource
from companion.confirm import Confirmer
from companion.hardware.panel import NullPanel
from companion.live import Live
from companion.table import Table
from companion.vision.watch import Proposed

CUP_BGR = {"blue": (200, 90, 20), "red": (40, 40, 210), "green": (60, 170, 40), "yellow": (30, 210, 230)}
COLOURS = ("blue", "red", "green", "yellow")
Frames = Callable[[], Iterable[tuple[float, np.ndarray]]]


@dataclass(frozen=True)
class Slot:
    side: str
    cup: str
    index: int
    x: int
    y: int
    r: int


@dataclass(frozen=True)
class Left:
    """Truth: the cup of ``slot`` left the table at ``t`` (sequence seconds); ``event`` is what
    the table should end up with."""

    t: float
    slot: Slot
    event: dict[str, Any]


# -- the synthetic table -------------------------------------------------------------------------

@dataclass
class SyntheticGame:
    """A scripted 21 Exact game on a synthetic table: the set-up events (new_game, both sides'
    dice), the cup slots, what happens when (``truth``), and the camera's view at any time."""

    setup: list[dict[str, Any]]
    slots: list[Slot]
    truth: list[Left]
    duration: float
    fps: float
    cloth: np.ndarray
    noise: list[np.ndarray]

    def render(self, t: float, i: int = 0) -> np.ndarray:
        """The camera's view ``t`` seconds into the game (``i`` picks the sensor noise)."""
        img = cv2.add(self.cloth, self.noise[i % len(self.noise)])
        gone = {left.slot for left in self.truth if left.t <= t}
        for slot in self.slots:
            if slot not in gone:
                cv2.circle(img, (slot.x, slot.y), slot.r, CUP_BGR[slot.cup], -1, cv2.LINE_AA)
        return img

    def frames(self) -> Iterable[tuple[float, np.ndarray]]:
        """Every frame of the game with its time, from the start (for :class:`TimedSource`)."""
        for i in range(int(self.duration * self.fps)):
            yield i / self.fps, self.render(i / self.fps, i)


def synthetic_game(width: int = 1280, height: int = 720, fps: float = 30.0, gap: float = 1.5,
                   seed: int = 1) -> SyntheticGame:
    """Side A (dice 1 2 3 4) makes blue, red, green, yellow twice and a blue: exactly 21 after
    nine throws; side B (1 2 3 5) makes cups in between without reaching 21. One cup leaves every
    ``gap`` seconds."""
    setup = [
        {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]},
        {"type": "dice", "side": "A", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 4}},
        {"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 5}},
    ]
    r = max(8, width // 64)
    slots = []
    for s, side in enumerate(("A", "B")):
        for c, cup in enumerate(COLOURS):
            for i in range(4):
                x = int(width * (0.08 + 0.5 * s + 0.09 * i))
                y = int(height * (0.25 + 0.17 * c))
                slots.append(Slot(side, cup, i, x, y, r))
    a_cups = ["blue", "red", "green", "yellow", "blue", "red", "green", "yellow", "blue"]
    b_cups = ["blue", "red", "green", "blue", "red", "green", "blue", "red"]
    used: dict[tuple[str, str], int] = {}
    script: list[tuple[str, str]] = []
    for i, cup in enumerate(a_cups):
        script.append(("A", cup))
        if i < len(b_cups):
            script.append(("B", b_cups[i]))
    truth = []
    for k, (side, cup) in enumerate(script):
        n = used.get((side, cup), 0)
        used[(side, cup)] = n + 1
        slot = next(s for s in slots if (s.side, s.cup, s.index) == (side, cup, n))
        truth.append(Left(round(gap * (k + 1), 6), slot, {"type": "throw", "side": side, "cup": cup}))
    rng = np.random.default_rng(seed)
    cloth = np.empty((height, width, 3), np.uint8)
    cloth[:] = (95, 85, 75)  # grey-brown felt
    cloth = cv2.add(cloth, rng.integers(0, 25, cloth.shape, dtype=np.uint8))
    noise = [rng.integers(0, 8, cloth.shape, dtype=np.uint8) for _ in range(4)]
    return SyntheticGame(setup, slots, truth, gap * (len(truth) + 1), fps, cloth, noise)


class SlotWatch:
    """A stand-in cup watch over known cup slots (what calibration + layout give the real one).

    The table is its memory: a colour of a side counts as made when fewer of its cups are seen,
    for ``settle`` frames in a row, than the table says are left. It proposes one throw at a time,
    for the side on turn, and nothing while a proposal waits. So a restart, or cups taken while
    the service was down, neither lose a cup nor count one twice."""

    name = "slots"

    def __init__(self, slots: Sequence[Slot], state: Callable[[], Mapping[str, Any]], settle: int = 5):
        self.slots = list(slots)
        self.state = state
        self.settle = settle
        self.short: dict[tuple[str, str], int] = {}
        self._present: list[Slot] = []

    def _there(self, frame: np.ndarray, slot: Slot) -> bool:
        h = max(2, slot.r // 2)
        patch = frame[slot.y - h:slot.y + h, slot.x - h:slot.x + h].reshape(-1, 3).mean(axis=0)
        return float(np.abs(patch - np.array(CUP_BGR[slot.cup], float)).max()) < 45

    def feed(self, frame: np.ndarray, t: float) -> list[Proposed]:
        self._present = [slot for slot in self.slots if self._there(frame, slot)]
        state = self.state()
        if state.get("game") != "exact21" or state.get("finished"):
            return []
        sides = state["detail"]["sides"]
        seen: dict[tuple[str, str], int] = {}
        for slot in self._present:
            seen[(slot.side, slot.cup)] = seen.get((slot.side, slot.cup), 0) + 1
        for side, info in sides.items():
            for cup in COLOURS:
                key = (side, cup)
                self.short[key] = self.short.get(key, 0) + 1 if seen.get(key, 0) < info["cups"][cup] else 0
        if state.get("pending"):
            return []
        turn = state["detail"]["turn"]
        for cup in COLOURS:
            if self.short.get((turn, cup), 0) >= self.settle:
                self.short[(turn, cup)] = 0
                return [Proposed({"type": "throw", "side": turn, "cup": cup},
                                 {"cups_seen": seen.get((turn, cup), 0), "cups_left": sides[turn]["cups"][cup],
                                  "frames": self.settle})]
        return []

    def draw(self, frame: np.ndarray) -> np.ndarray:
        for slot in self._present:
            cv2.circle(frame, (slot.x, slot.y), slot.r + 4, (255, 255, 255), 2)
        return frame


# -- the measurement -----------------------------------------------------------------------------

class _ClockedSource(TimedSource):
    """Remembers the wall time at which each frame (by its sequence time) was read."""

    def __init__(self, frames: Frames, speed: float | None, seen: dict[float, float]):
        super().__init__(frames, speed=speed, name="bench frames")
        self.seen = seen

    def read(self) -> np.ndarray | None:
        frame = super().read()
        if self.last_t is not None:
            self.seen[self.last_t] = time.monotonic()
        return frame


def measure_live(setup: Sequence[Mapping[str, Any]], frames: Frames,
                 processors: Callable[[Table], Sequence[Any]], truth: Sequence[Left], speed: float | None = 1.0,
                 auto_seconds: float = 0.0, data_dir: str | Path | None = None,
                 timeout: float = 600.0) -> dict[str, Any]:
    """Run the live path over ``frames`` and time every cup of ``truth`` (see the module doc).
    ``processors(table)`` makes the frame processors for the table under test."""
    with tempfile.TemporaryDirectory() as tmp:
        table = Table(Path(data_dir or tmp) / "bench-live.sqlite")
        for event in setup:
            if event.get("type") == "new_game":
                table.start(event)
            else:
                table.apply(event)
        base_seq = table.state()["seq"]
        seen: dict[float, float] = {}
        proposed_at: dict[int, float] = {}
        applied_at: dict[int, float] = {}
        lock = threading.Lock()

        def on_change(state: dict[str, Any]) -> None:
            now = time.monotonic()
            with lock:
                for p in state.get("pending", []):
                    proposed_at.setdefault(p["id"], now)
                applied_at.setdefault(int(state.get("seq") or 0), now)

        table.subscribe(on_change)
        confirmer = Confirmer(table, NullPanel("benchmark"), auto_seconds=max(auto_seconds, 1e-6))
        camera = ResilientCamera(lambda: _ClockedSource(frames, speed, seen))
        live = Live(camera, table, processors(table), confirmer=confirmer)
        started = time.monotonic()
        live.start()
        try:
            while time.monotonic() - started < timeout:
                if camera.state == "ended" and not table.pending():
                    break
                time.sleep(0.05)
            time.sleep(0.2)
        finally:
            live.stop()
        health = live.health()
        events = table.history()[base_seq:]
        winners = table.state()["winners"]
        table.close()
    proposal_ids = sorted(proposed_at)  # the table numbers proposals in the order they came

    frame_times = sorted(seen)
    proposed_ms, scored_ms, missed = [], [], []
    for k, left in enumerate(truth):
        first = next((t for t in frame_times if t >= left.t - 1e-9), None)
        if first is None or k >= len(events) or _throw(events[k]) != _throw(left.event):
            missed.append(left.event)
            continue
        frame_wall = seen[first]
        seq = base_seq + k + 1
        if seq in applied_at:
            scored_ms.append((applied_at[seq] - frame_wall) * 1000)
        if k < len(proposal_ids) and proposal_ids[k] in proposed_at:
            proposed_ms.append((proposed_at[proposal_ids[k]] - frame_wall) * 1000)
    extra = max(0, len(events) - len(truth))
    return {
        "cups": len(truth), "scored": len(scored_ms), "missed": len(missed), "extra_events": extra,
        "winners": winners,
        "proposed_ms": _stats(proposed_ms), "scored_ms": _stats(scored_ms),
        "auto_seconds": auto_seconds, "fps": health["fps"], "frames": health["frames"],
        "stages": health["stages"], "camera_failures": health["camera"]["failures"],
        "memory_mb": _memory_mb(),
    }


def _throw(event: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return event.get("type"), event.get("side"), event.get("cup")


def _stats(ms: list[float]) -> dict[str, float | int]:
    if not ms:
        return {"n": 0}
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"n": len(ordered), "median": round(statistics.median(ordered), 1), "p95": round(p95, 1),
            "max": round(ordered[-1], 1)}


def _memory_mb() -> dict[str, float]:
    """This process's resident memory now and at its peak (Linux /proc), in MB."""
    out: dict[str, float] = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out["rss" if key == "VmRSS" else "peak_rss"] = round(int(value.split()[0]) / 1024, 1)
    except OSError:
        pass
    return out


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                # x86: "model name"; a Raspberry Pi: "Model : Raspberry Pi 4 Model B Rev 1.4"
                if line.startswith(("model name", "Model")):
                    cpu = line.split(":", 1)[1].strip()
                    if line.startswith("Model"):
                        break
    except OSError:
        pass
    return (f"{platform.machine()} {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"OpenCV {cv2.__version__}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fps", type=float, default=30.0, help="camera frames per second (30)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--gap", type=float, default=1.5, help="seconds between cups leaving (1.5)")
    parser.add_argument("--settle", type=int, default=5, help="frames a cup must stay gone (5)")
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed (1 = real time)")
    parser.add_argument("--auto-seconds", type=float, default=0.0,
                        help="auto-confirm delay (0 = confirm at once; the demo uses its own)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)
    game = synthetic_game(args.width, args.height, args.fps, args.gap)
    result = measure_live(game.setup, game.frames, lambda table: [SlotWatch(game.slots, table.state, args.settle)],
                          game.truth, speed=args.speed, auto_seconds=args.auto_seconds)
    result = {"machine": machine(), "vision": f"synthetic table, per-slot colour watch, settle {args.settle} frames",
              "camera": f"{args.width}x{args.height} @ {args.fps:g} fps, speed {args.speed:g}", **result}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"machine: {result['machine']}")
        print(f"camera:  {result['camera']}; vision: {result['vision']}")
        print(f"cups: {result['cups']}  scored: {result['scored']}  missed: {result['missed']}  "
              f"extra events: {result['extra_events']}  winners: {result['winners']}")
        for key, label in (("proposed_ms", "frame -> proposal on the scoreboard"),
                           ("scored_ms", f"frame -> scored (auto-confirm {args.auto_seconds:g} s)")):
            s = result[key]
            if s.get("n"):
                print(f"{label}: median {s['median']} ms, p95 {s['p95']} ms, max {s['max']} ms (n={s['n']})")
        print(f"loop: {result['fps']} fps over {result['frames']} frames; per stage (median/p95 ms): "
              + ", ".join(f"{k} {v.get('median_ms')}/{v.get('p95_ms')}" for k, v in result["stages"].items()))
        mem = result["memory_mb"]
        print(f"memory: RSS {mem.get('rss')} MB, peak {mem.get('peak_rss')} MB")
    return 0 if result["missed"] == 0 and result["extra_events"] == 0 else 1
