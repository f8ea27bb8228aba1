"""Settled rolls from a stream of frames: a roll is reported once the dice have lain still for
``still_seconds``, never while anything moves or a hand is over the table, and never twice.

Method, frame by frame (``feed(frame, t)``):

1. **Motion.** The frame is shrunk to 1/4, greyed and blurred; the share of pixels that changed
   by more than ``motion_level`` grey levels since the previous frame is the motion. Above
   ``motion_share`` the table is moving (dice rolling, a hand coming or going): the still clock
   restarts and the dice are not even read.
2. **Dice.** A still frame is read with :class:`~companion.vision.dice.reader.DiceReader`. The roll's
   *signature* is its dice (value, colour, centre); it must stay the same (each die within half a
   die of where it was, same value and colour) for the whole still time.
3. **Hand.** The frame is compared with the *table reference* — the last frame the watch accepted
   as calm (at start: the first frame). Changed regions away from the dice (now or in the
   reference) that are bigger than ``hand_dice`` dice are a hand, an arm or a cup over the table:
   no reading while one is there. A change that stays put for ``absorb_seconds`` (something left
   on the table) becomes part of the reference.
4. **Report.** Still for ``still_seconds``, no hand, at least one die, and a signature different
   from the last reported roll → one :class:`SettledRoll`. The same dice lying there (even after
   a hand passed over them) are not reported again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.vision.colour import UNKNOWN
from companion.vision.dice.reader import DiceReader, Die


@dataclass
class SettledRoll:
    dice: list[Die]
    at: float              # time of the frame that completed the still period
    still_since: float     # when the dice stopped moving
    frames: int            # still frames seen

    def by_colour(self) -> dict[str, int] | None:
        """{colour: value} when every die has a known, distinct colour (EVENTS.md dice/roll events)."""
        colours = [d.color for d in self.dice]
        if UNKNOWN in colours or len(set(colours)) != len(colours):
            return None
        return {d.color: d.value for d in self.dice}

    def values(self) -> list[int]:
        return sorted(d.value for d in self.dice)

    def evidence(self) -> dict:
        return {"dice": [d.to_json() for d in self.dice], "still_seconds": round(self.at - self.still_since, 2),
                "frames": self.frames}


def same_roll(a: list[Die], b: list[Die]) -> bool:
    if len(a) != len(b):
        return False
    left = list(b)
    for d in a:
        for k, e in enumerate(left):
            if (d.value, d.color) == (e.value, e.color) and \
                    math.hypot(d.center[0] - e.center[0], d.center[1] - e.center[1]) < 0.5 * max(d.size, e.size):
                del left[k]
                break
        else:
            return False
    return True


@dataclass
class DiceWatch:
    still_seconds: float = 1.0
    reader: DiceReader | None = None
    motion_level: int = 18
    motion_share: float = 0.002
    hand_dice: float = 3.0
    absorb_seconds: float = 10.0
    # state
    _prev: np.ndarray | None = field(default=None, repr=False)
    _reference: np.ndarray | None = field(default=None, repr=False)
    _reference_dice: list[Die] = field(default_factory=list, repr=False)
    _since: float | None = None
    _frames: int = 0
    _dice: list[Die] | None = None
    _reported: list[Die] | None = None
    _hand_since: float | None = None
    status: str = "starting"  # moving | hand | settling | settled | empty — for a health page

    def __post_init__(self) -> None:
        if self.reader is None:
            self.reader = DiceReader()

    @staticmethod
    def _small(frame: np.ndarray) -> np.ndarray:
        g = cv2.cvtColor(cv2.resize(frame, (frame.shape[1] // 4, frame.shape[0] // 4), interpolation=cv2.INTER_AREA),
                         cv2.COLOR_BGR2GRAY)
        return cv2.GaussianBlur(g, (5, 5), 0)

    def _restart(self) -> None:
        self._since, self._frames, self._dice = None, 0, None

    def _hand(self, small: np.ndarray, dice: list[Die], t: float) -> bool:
        """A big change against the table reference that is not explained by dice."""
        assert self._reference is not None
        diff = cv2.absdiff(small, self._reference) > self.motion_level * 1.5
        mask = diff.astype(np.uint8)
        for d in list(dice) + self._reference_dice:  # dice that came, went or stayed
            x0, y0, x1, y1 = d.box
            g = 0.3 * (x1 - x0)
            cv2.rectangle(mask, (int((x0 - g) / 4), int((y0 - g) / 4)), (int((x1 + g) / 4), int((y1 + g) / 4)), 0, -1)
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        die_area = np.median([d.size for d in dice + self._reference_dice]) ** 2 / 16 if (dice or self._reference_dice) else 64
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
        big = n > 1 and stats[1:, cv2.CC_STAT_AREA].max() > self.hand_dice * die_area
        if not big:
            self._hand_since = None
            return False
        if self._hand_since is None:
            self._hand_since = t
        if t - self._hand_since >= self.absorb_seconds:  # it stays: part of the table now
            self._reference, self._reference_dice, self._hand_since = small, dice, None
            return False
        return True

    def feed(self, frame: np.ndarray, t: float) -> SettledRoll | None:
        """One camera frame taken at ``t`` seconds; a :class:`SettledRoll` when a new roll has settled."""
        small = self._small(frame)
        prev, self._prev = self._prev, small
        if self._reference is None:
            self._reference = small
        if prev is None or prev.shape != small.shape:
            self._reference = small
            self._restart()
            self.status = "starting"
            return None
        moving = np.count_nonzero(cv2.absdiff(small, prev) > self.motion_level) / small.size > self.motion_share
        if moving:
            self._restart()
            self.status = "moving"
            return None
        assert self.reader is not None
        dice = self.reader.read(frame)
        if self._hand(small, dice, t):
            self._restart()
            self.status = "hand"
            return None
        if self._dice is None or not same_roll(dice, self._dice):
            self._since, self._frames, self._dice = t, 1, dice
            self.status = "settling"
            return None
        self._frames += 1
        if t - self._since < self.still_seconds:
            self.status = "settling"
            return None
        # calm long enough: this is how the table looks now
        self._reference, self._reference_dice = small, dice
        if not dice:
            self.status = "empty"
            return None
        if self._reported is not None and same_roll(dice, self._reported):
            self.status = "settled"
            return None
        self._reported = dice
        self.status = "settled"
        return SettledRoll(dice, t, self._since, self._frames)
