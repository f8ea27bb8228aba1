"""Settle detection on frame sequences: rendered dice that roll, come to rest, get covered by a
hand, stay, and are rolled again (10 frames per second)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.live.watch_dice import DiceWatch
from companion.sim.dice import BODY_BGR, draw_die, pip_colour
from companion.vision.dice.reader import DiceReader

W, H = 640, 360
TABLE = (70, 110, 60)
COLOURS = ["white", "black", "red", "blue", "yellow", "green"]


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    return DiceReader()


def frame(dice: list[tuple[float, float, int, float]], hand: tuple[int, int] | None = None,
          seed: int = 0) -> np.ndarray:
    """dice: (x, y, value, angle); hand: where a hand rests (with its arm from the bottom edge)."""
    img = np.empty((H, W, 3), np.uint8)
    img[:] = TABLE
    for (x, y, value, angle), colour in zip(dice, COLOURS, strict=False):
        draw_die(img, (x, y), 30, value, BODY_BGR[colour], pip_colour(colour), angle)
    if hand is not None:
        hx, hy = hand
        cv2.rectangle(img, (hx - 35, hy), (hx + 35, H), (120, 150, 200), -1)
        cv2.ellipse(img, (hx, hy), (60, 45), 0, 0, 360, (140, 170, 220), -1)
    img = cv2.GaussianBlur(img, (0, 0), 0.7)
    rng = np.random.default_rng(seed)
    return np.clip(img + rng.normal(0, 3, img.shape), 0, 255).astype(np.uint8)


ROLL = [(120, 100, 6, 10), (220, 150, 3, 30), (330, 90, 5, 45), (430, 200, 1, 60), (520, 120, 4, 5), (300, 260, 2, 80)]


def rolling(step: int) -> list[tuple[float, float, int, float]]:
    """Dice tumbling across the table: every frame they move and show another face."""
    return [(x + 9 * step - 40, y + 5 * ((step + k) % 3), (v + step) % 6 + 1, a + 20 * step)
            for k, (x, y, v, a) in enumerate(ROLL)]


def feed(watch: DiceWatch, frames: list[np.ndarray], t0: float) -> list:
    out = []
    for k, f in enumerate(frames):
        r = watch.feed(f, t0 + k * 0.1)
        if r is not None:
            out.append((t0 + k * 0.1, r))
    return out


def test_a_roll_is_reported_once_after_the_dice_have_been_still(reader: DiceReader) -> None:
    watch = DiceWatch(still_seconds=1.0, reader=reader)
    empty = [frame([], seed=k) for k in range(5)]
    moving = [frame(rolling(k), seed=k) for k in range(8)]
    still = [frame(ROLL, seed=100 + k) for k in range(30)]
    assert feed(watch, empty + moving, 0.0) == []
    reports = feed(watch, still, 1.3)
    assert len(reports) == 1, "one report for one roll, however long the dice lie there"
    t, roll = reports[0]
    assert 1.3 + 1.0 <= t <= 1.3 + 1.3, "reported once the dice have been still for still_seconds"
    assert roll.by_colour() == {"white": 6, "black": 3, "red": 5, "blue": 1, "yellow": 4, "green": 2}


def test_still_seconds_is_configurable(reader: DiceReader) -> None:
    watch = DiceWatch(still_seconds=2.0, reader=reader)
    reports = feed(watch, [frame([], seed=1)] + [frame(ROLL, seed=k) for k in range(30)], 0.0)
    assert len(reports) == 1 and reports[0][0] >= 0.1 + 2.0


def test_dice_that_keep_rolling_never_give_a_reading(reader: DiceReader) -> None:
    watch = DiceWatch(still_seconds=0.5, reader=reader)
    assert feed(watch, [frame(rolling(k), seed=k) for k in range(25)], 0.0) == []
    assert watch.status == "moving"


def test_a_hand_resting_over_the_table_blocks_the_reading(reader: DiceReader) -> None:
    watch = DiceWatch(still_seconds=0.5, reader=reader)
    start = [frame([], seed=k) for k in range(3)]
    # the dice lie still, but a hand rests beside them the whole time: no reading
    covered = [frame(ROLL, hand=(560, 280), seed=10 + k) for k in range(20)]
    assert feed(watch, start + covered, 0.0) == []
    assert watch.status == "hand"
    # the hand goes away: now the roll is read, once
    reports = feed(watch, [frame(ROLL, seed=50 + k) for k in range(15)], 2.3)
    assert len(reports) == 1
    assert reports[0][1].values() == [1, 2, 3, 4, 5, 6]


def test_the_same_roll_is_not_reported_again_after_a_hand_passes(reader: DiceReader) -> None:
    watch = DiceWatch(still_seconds=0.5, reader=reader)
    first = feed(watch, [frame([], seed=1)] + [frame(ROLL, seed=k) for k in range(10)], 0.0)
    assert len(first) == 1
    passing = [frame(ROLL, hand=(100 + 60 * k, 300), seed=20 + k) for k in range(6)]
    again = feed(watch, passing + [frame(ROLL, seed=40 + k) for k in range(15)], 1.1)
    assert again == [], "the dice did not move: the same roll must not be reported twice"


def test_a_new_roll_is_reported_after_the_last_one(reader: DiceReader) -> None:
    watch = DiceWatch(still_seconds=0.5, reader=reader)
    assert len(feed(watch, [frame([], seed=1)] + [frame(ROLL, seed=k) for k in range(10)], 0.0)) == 1
    reroll = [(x + 40, y + 30, 7 - v, a + 15) for x, y, v, a in ROLL]
    moving = [frame(rolling(k), seed=60 + k) for k in range(6)]
    reports = feed(watch, moving + [frame(reroll, seed=80 + k) for k in range(10)], 1.1)
    assert len(reports) == 1
    assert reports[0][1].by_colour() == {"white": 1, "black": 4, "red": 2, "blue": 6, "yellow": 3, "green": 5}
