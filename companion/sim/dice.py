"""Draw dice seen from above: a rounded square of the body colour with the standard pip layout.

Used by the tests (to check the reader on rendered dice like the demo's), by the training script
(extra, perfectly labelled dice); the table renderer (``render.py``) paints its dice in the same
colours and pip layout. Pips are white on dark bodies and black on white or yellow ones."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# Body colours (BGR) of the games' dice, as a renderer would paint them.
BODY_BGR: dict[str, tuple[int, int, int]] = {
    "red": (40, 40, 200),
    "blue": (190, 90, 30),
    "green": (60, 160, 40),
    "yellow": (40, 210, 235),
    "white": (235, 235, 235),
    "black": (35, 35, 35),
}
DARK_PIPS = {"white", "yellow"}

# The standard pip layout on a grid of -1, 0, 1 (each painter spaces it for its face).
PIP_GRID: dict[int, list[tuple[int, int]]] = {
    1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)], 5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}
_P = 0.27  # pip offset / face side
PIPS: dict[int, list[tuple[float, float]]] = {v: [(_P * x, _P * y) for x, y in grid] for v, grid in PIP_GRID.items()}


@dataclass
class DrawnDie:
    value: int
    color: str
    center: tuple[float, float]
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 (axis-aligned bounds)


def pip_colour(color: str) -> tuple[int, int, int]:
    return (20, 20, 20) if color in DARK_PIPS else (245, 245, 245)


def draw_die(img: np.ndarray, center: tuple[float, float], size: float, value: int,
             body: tuple[int, int, int], pips: tuple[int, int, int], angle: float = 0.0) -> tuple[int, int, int, int]:
    """Draw one die face-up; returns its axis-aligned box (x0, y0, x1, y1)."""
    cx, cy = center
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    half, r = size / 2, size * 0.18
    # rounded square outline: corner arcs of radius r
    pts = []
    for qx, qy, a0 in ((1, 1, 0), (-1, 1, 90), (-1, -1, 180), (1, -1, 270)):
        ox, oy = qx * (half - r), qy * (half - r)
        for k in range(7):
            a = math.radians(a0 + k * 15)
            pts.append((ox + r * math.cos(a), oy + r * math.sin(a)))
    poly = np.array([(cx + x * c - y * s, cy + x * s + y * c) for x, y in pts])
    shift = 4
    cv2.fillPoly(img, [np.round(poly * (1 << shift)).astype(np.int32)], body, cv2.LINE_AA, shift)
    pr = size * 0.085
    for px, py in PIPS[value]:
        x, y = px * size, py * size
        centre = (round((cx + x * c - y * s) * (1 << shift)), round((cy + x * s + y * c) * (1 << shift)))
        cv2.circle(img, centre, round(pr * (1 << shift)), pips, -1, cv2.LINE_AA, shift)
    x0, y0 = poly.min(axis=0)
    x1, y1 = poly.max(axis=0)
    return int(x0), int(y0), int(math.ceil(x1)), int(math.ceil(y1))


def render_dice(rng: np.random.Generator, width: int = 1280, height: int = 720, count: int = 6,
                size: tuple[float, float] = (24, 40), colours: list[str] | None = None,
                background: tuple[int, int, int] = (95, 120, 80), noise: float = 6.0,
                blur: float = 0.8) -> tuple[np.ndarray, list[DrawnDie]]:
    """A table top with ``count`` dice scattered on it, not overlapping; noise and blur added."""
    img = np.empty((height, width, 3), np.uint8)
    img[:] = background
    names = colours or list(BODY_BGR)
    dice: list[DrawnDie] = []
    placed: list[tuple[float, float, float]] = []
    tries = 0
    while len(dice) < count and tries < 2000:
        tries += 1
        d = float(rng.uniform(*size))
        cx, cy = float(rng.uniform(d, width - d)), float(rng.uniform(d, height - d))
        if any(math.hypot(cx - x, cy - y) < (d + e) * 0.78 for x, y, e in placed):
            continue
        color = names[len(dice) % len(names)]
        value = int(rng.integers(1, 7))
        box = draw_die(img, (cx, cy), d, value, BODY_BGR[color], pip_colour(color), float(rng.uniform(0, 90)))
        placed.append((cx, cy, d))
        dice.append(DrawnDie(value, color, (cx, cy), box))
    if blur > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    if noise > 0:
        img = np.clip(img + rng.normal(0, noise, img.shape), 0, 255).astype(np.uint8)
    return img, dice
