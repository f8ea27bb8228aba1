"""A synthetic 21 Exact table and a stand-in cup watch for the restart test: coloured discs for
cups on a textured cloth, taken away one by one, and a per-slot colour check that proposes the
throws the table has not scored yet (so a restarted service catches up with cups taken while it
was down). Test scaffolding only: the real pipeline is covered by tests/live/test_end_to_end.py."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from companion.live.watch import Proposed

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

