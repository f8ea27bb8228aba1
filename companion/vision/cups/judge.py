"""A second, closer look at each place the cup finder proposes (``models/cup-judge.onnx`` and
``models/cup-judge-2.onnx``, their answers averaged).

The finder (:mod:`companion.vision.cups.net`) reads the whole table at 4 mm a pixel and is best at
*where*; at that scale a ball in a cup is a few pixels and a cup turned over is told from a
standing one by little more. The judge takes the frame's own pixels round each proposed place, as
a patch turned so that "up" in the world is up in the patch (every cup then stands upright in it,
whatever the lens and tilt), scaled by the table's plane there (``SIDE_MM`` across) and balanced by
the markers' white paper (the light's colour and level undone), and says what stands there:
nothing, a standing cup of each colour, a cup turned over of each colour, and whether a ball rests
in it. Trained by ``tools/train/train_judge.py`` on rendered tables; runtime is ``cv2.dnn``.

Two judges answer together, their logits averaged (the second asked only where the first
doubts, SOLO_SURE): the second, trained on from the first with games
rich in cups turned over and balls, finds more of them but also took a silver cup's dim shine for
a ball; the two together kept most of its finds and no false ball on the validation tables
(``models/cup-judge.md``, "A fourth round"). A place they doubt is judged on its mirror image
too, and a standing cup's ball is asked again of a third, smaller network on the rim's circle cut
finer (``models/cup-ball.onnx``, trained by ``tools/train/train_ball.py``; "The ball look").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from companion.vision.cups.reader import paper_gains
from companion.vision.nets import read_onnx

MODELS = Path(__file__).resolve().parents[3] / "models"
MODEL = "cup-judge.onnx"
MODEL_2 = "cup-judge-2.onnx"
JUDGES = (MODELS / MODEL, MODELS / MODEL_2)   # every judge's logits, averaged
SIDE_MM = 280.0    # the patch takes in this much of the table's plane (a 115 mm rim seen from 0.7 m: ~145)
SIZE = 80          # patch pixels a side (3.5 mm a pixel)
# the judge's classes; a ball is a separate yes/no for a standing cup
CLASSES = ["none"] + [f"standing.{c}" for c in ("blue", "red", "green", "yellow", "silver")] \
    + [f"turned.{c}" for c in ("blue", "red", "green", "yellow")]
# A place the first judge is SOLO_SURE of, its ball logit SOLO_BALL or more from even, is not
# asked of the second: ~70 % of a photo's places (hidden-like validation renders: where the first
# was so sure, the two together named the same class at every one of 1,014 places, "none" within
# 0.012, and no ball's side of even changed). A photo ~25 % quicker, every reading the same on the
# 24 hidden-like validation tables, 105 turned-rich ones and the 40 drawn ones (models/cup-judge.md,
# "One cup a place, and a photo's speed")
SOLO_SURE, SOLO_BALL = 0.999, 5.0
UP_MM = 100.0      # "up" at a place: where a point this far above it shows
STANDING = [k for k, c in enumerate(CLASSES) if c.startswith("standing.")]
# The ball look (models/cup-judge.md, "The ball look"): a standing cup's rim circle cut finer
# than the judge's patch (a ball on a cup's shadowed bottom is a dim blot of ten of its pixels)
# and asked by its own small network whether a ball rests there; its logit and the judges' are
# averaged (both must lean to a ball: alone it found a few more and took a spot lamp's glint on a
# glossy cup, and silver cups' metal nearer its threshold, for balls; validation renders)
BALL_MODEL = "cup-ball.onnx"
BALL_SIDE_MM = 170.0   # a 115 mm rim seen from 0.7 m shows 135 mm across on the table's plane
BALL_SIZE = 64         # 2.7 mm a pixel
# A ball is judged on the patch and its mirror image: a metal cup's highlight or a rim's glint
# says "ball" in one of them far more often than a ball fails to in both (validation renders)
BALL_MIRROR = True
# What stands at a place is judged on its mirror image too, the logits averaged, where the first
# look is less than MIRROR_BELOW sure (asking every place gave the same answers on validation at
# twice the cost): the judges learnt both alike and their mistakes differ
# (validation renders: 30 tables 12 -> 15 entirely right, 30 turned-rich ones turned cups missed
# 36 -> 33; models/cup-judge.md, "The mirror look"). ~3 ms more a photo here. The live watch's
# look at a few cups for a ball leaves it out (mirror=False): +1 ms a frame, no throw more.
MIRROR_BELOW = 0.99  # (0: never)
MIRROR_FROM = -2.0   # ball logit (p 0.12) below which a place is not looked at mirrored: the mean
                     # of the two could reach a photo's BALL_SURE (0.5) only if the mirror were 0.88 sure


# JudgeMemo: a place looks as it did (its answer kept) within these
MEMO_MM, MEMO_GAIN, MEMO_GREY, MEMO_PIXELS, MEMO_MAX = 1.5, 0.02, 6, 4, 200


def patch_matrix(homography: np.ndarray, x: float, y: float, up: tuple[float, float],
                 side_mm: float = SIDE_MM, turn_deg: float = 0.0, size: int = SIZE) -> np.ndarray:
    """The 2 × 3 matrix taking patch pixels to frame pixels for the place that shows at (x, y) on
    the table's plane (mm): centred there, ``side_mm`` of the plane's local scale across, its
    top towards ``up`` (a unit direction in the frame), turned a further ``turn_deg``."""
    H = homography
    p = H @ np.array([x, y, 1.0])
    cx, cy = p[0] / p[2], p[1] / p[2]
    # the plane's scale there (pixels a millimetre): the homography's local Jacobian
    J = (H[:2, :2] * p[2] - np.outer(p[:2], H[2, :2])) / p[2] ** 2
    s = float(np.sqrt(abs(np.linalg.det(J))))
    k = side_mm * s / size
    a = np.arctan2(-up[0], -up[1]) + np.radians(turn_deg)   # the angle that turns patch-up (0, -1) to up
    ca, sa = np.cos(a), np.sin(a)
    R = np.array([[ca, sa], [-sa, ca]]) * k
    c = np.array([size / 2 - 0.5, size / 2 - 0.5])
    return np.hstack([R, (np.array([cx, cy]) - R @ c)[:, None]])


def patch(frame: np.ndarray, matrix: np.ndarray, gains: np.ndarray, size: int = SIZE) -> np.ndarray:
    out = cv2.warpAffine(frame, matrix, (size, size), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_CONSTANT)
    return np.clip(out.astype(np.float32) * gains.astype(np.float32), 0, 255).astype(np.uint8)


def up_direction(cal, x: float, y: float) -> tuple[float, float]:
    """The frame's direction of "up" at the place that shows at (x, y): from where the camera is
    (the calibration's pose), the line from the place's foot to a point UP_MM above it."""
    from companion.vision.cups.net import stands_at  # (net imports this module)

    R, t = cal.R, cal.tvec.reshape(3)
    fx, fy = stands_at(-R.T @ t, x, y)   # a rim shows at (x, y); the cup stands nearer the camera's foot
    pts = np.array([[fx, fy, 0.0], [fx, fy, UP_MM]]) @ R.T + t
    uv = pts[:, :2] / pts[:, 2:3]
    d = (uv[1] - uv[0]) * [cal.K[0, 0], cal.K[1, 1]]
    n = float(np.hypot(*d))
    return (0.0, -1.0) if n < 1e-6 else (float(d[0] / n), float(d[1] / n))


def _paths(models: Path | Sequence[Path]) -> list[Path]:
    return [Path(models)] if isinstance(models, str | Path) else [Path(m) for m in models]


class CupJudge:
    def __init__(self, models: Path | Sequence[Path] = JUDGES, ball: Path | None = MODELS / BALL_MODEL) -> None:
        self.nets = [read_onnx(m) for m in _paths(models)]
        # the ball look, where its model is here (a models folder without it: the judges alone)
        self.ball = read_onnx(ball) \
            if ball is not None and Path(ball).exists() else None

    @staticmethod
    def available(models: Path | Sequence[Path] = JUDGES) -> bool:
        return all(m.exists() for m in _paths(models))

    def _forward(self, blob: np.ndarray) -> np.ndarray:
        """The judges' mean logits, (N, len(CLASSES) + 1)."""
        first, *others = self.nets
        first.setInput(np.ascontiguousarray(blob))
        out = first.forward().reshape(len(blob), -1).astype(np.float64)
        if not others:
            return out
        n = len(CLASSES)
        # the others are asked only where the first doubts (SOLO_SURE, SOLO_BALL)
        ask = np.flatnonzero((_softmax(out[:, :n]).max(axis=1) < SOLO_SURE) | (np.abs(out[:, n]) < SOLO_BALL))
        if len(ask):
            more = [out[ask]]
            for net in others:
                net.setInput(np.ascontiguousarray(blob[ask]))
                more.append(net.forward().reshape(len(ask), -1).astype(np.float64))
            out[ask] = np.mean(more, axis=0)
        return out

    def patches(self, frame: np.ndarray, cal, places: list[tuple[float, float]],
                gains: np.ndarray | None = None, side_mm: float = SIDE_MM, size: int = SIZE) -> np.ndarray:
        """Each place's patch, ``side_mm`` of the table's plane across in ``size`` pixels, up being up."""
        gains = paper_gains(cal.paper_white(frame)) if gains is None else gains
        return np.stack([patch(frame, patch_matrix(cal.homography, x, y, up_direction(cal, x, y), side_mm=side_mm,
                                                   size=size), gains, size)
                         for x, y in places]) if places else np.zeros((0, size, size, 3), np.uint8)

    def judge(self, frame: np.ndarray, cal, places: list[tuple[float, float]],
              gains: np.ndarray | None = None, mirror: bool = True, ball_look: bool = True,
              memo: JudgeMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(class probabilities (N, len(CLASSES)), ball probability (N,)) for each place;
        ``gains``: the paper's (:func:`paper_gains`) when already measured, else measured on
        this frame; ``mirror``: a doubtful place's class judged on its mirror image too
        (MIRROR_BELOW); ``ball_look``: a standing cup's ball by the ball look as well (BALL_MODEL);
        ``memo``: a live watch's earlier answers, kept for the places that look as they did."""
        if not places:
            return np.zeros((0, len(CLASSES))), np.zeros(0)
        gains = paper_gains(cal.paper_white(frame)) if gains is None else gains
        patches = self.patches(frame, cal, places, gains)
        if memo is None:
            return self._judge(frame, cal, places, gains, patches, mirror, ball_look)
        how = (mirror, ball_look)
        known = [memo.recall(x, y, p, gains, how) for (x, y), p in zip(places, patches, strict=True)]
        ask = [i for i, k in enumerate(known) if k is None]
        probs = np.zeros((len(places), len(CLASSES)))
        ball = np.zeros(len(places))
        if ask:
            p, b = self._judge(frame, cal, [places[i] for i in ask], gains, patches[ask], mirror, ball_look)
            probs[ask], ball[ask] = p, b
        for i, k in enumerate(known):
            if k is not None:
                probs[i], ball[i] = k.probs, k.ball
        memo.keep(places, patches, gains, how, probs, ball, known)
        return probs, ball

    def _judge(self, frame: np.ndarray, cal, places: list[tuple[float, float]], gains: np.ndarray,
               patches: np.ndarray, mirror: bool, ball_look: bool) -> tuple[np.ndarray, np.ndarray]:
        blob = _blob(patches)
        out = self._forward(blob)
        n = len(CLASSES)
        no = np.zeros(len(out), bool)
        ball_again = out[:, n] > MIRROR_FROM if BALL_MIRROR else no
        class_again = _softmax(out[:, :n]).max(axis=1) < MIRROR_BELOW if mirror else no
        again = np.flatnonzero(ball_again | class_again)
        if len(again):   # the mirror images (up stays up) of the places asked again
            m = self._forward(blob[again][..., ::-1])
            b, c = again[ball_again[again]], again[class_again[again]]
            out[b, n] = 0.5 * (out[b, n] + m[ball_again[again], n])
            out[c, :n] = 0.5 * (out[c, :n] + m[class_again[again], :n])
        probs = _softmax(out[:, :n])
        ball = out[:, n]
        if ball_look and self.ball is not None:
            ball = self._ball_look(frame, cal, places, gains, probs, ball)
        return probs, 1.0 / (1.0 + np.exp(-ball))

    def _ball_look(self, frame: np.ndarray, cal, places: list[tuple[float, float]], gains: np.ndarray,
                   probs: np.ndarray, ball: np.ndarray) -> np.ndarray:
        """The ball logits with the ball look's averaged in, at the places the judges see a
        standing cup at (only there is a ball asked about)."""
        standing = np.flatnonzero(probs[:, STANDING].sum(axis=1) >= 0.5)
        if not len(standing):
            return ball
        blob = _blob(self.patches(frame, cal, [places[i] for i in standing], gains, BALL_SIDE_MM, BALL_SIZE))
        k = len(standing)
        # in a batch of a multiple of 16: OpenCV sets a network up again for every new input shape,
        # which costs more than a few patches more (its mirror image too: validation the same, 2x the time)
        blob = np.concatenate([blob, np.zeros((-k % 16, *blob.shape[1:]), np.float32)])
        self.ball.setInput(np.ascontiguousarray(blob))
        look = self.ball.forward()[:k, 0].astype(np.float64)
        ball = ball.copy()
        ball[standing] = 0.5 * (ball[standing] + look)
        return ball


class JudgeMemo:
    """A live watch's last answers of the judges, place by place. The watch asks them about the
    same few places (the silver cups at each look, every place before a cup is called gone), and
    most of those look just as they did: such a place's answer is kept (the judges cost ~1.5 ms a
    place here). A place looks as it did when it is where it was (within MEMO_MM), under the same
    light (the paper's gains within MEMO_GAIN), and its patch, smoothed, differs from the one
    judged by more than MEMO_GREY grey levels at no more than MEMO_PIXELS pixels (a ball is a
    blot of ~100). Compared with the patch judged, not the last frame's, so that a slow change
    still adds up to a new look. Chosen on 4 short rendered games (hidden-like validation): an
    answer kept differs from a fresh one by at most 0.003 in a ball's probability (at 12 grey
    levels and 8 pixels, by 0.2 at 0.66 against 0.86: a ball's faint first frames), 0.14 with a
    camera's noise (σ 3, at 0.12 against 0.26); no class changed."""

    def __init__(self) -> None:
        self._kept: list[Judged] = []

    @staticmethod
    def _grey(patch: np.ndarray) -> np.ndarray:
        return cv2.GaussianBlur(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), (5, 5), 0)

    @staticmethod
    def _near(k: Judged, x: float, y: float, how: tuple) -> bool:
        return k.how == how and abs(k.x - x) <= MEMO_MM and abs(k.y - y) <= MEMO_MM

    def recall(self, x: float, y: float, patch: np.ndarray, gains: np.ndarray, how: tuple) -> Judged | None:
        """The kept answer of a place that looks as it did, else None."""
        grey = None
        g = np.asarray(gains, np.float64)
        for k in self._kept:
            if not self._near(k, x, y, how) or np.max(np.abs(g / k.gains - 1.0)) > MEMO_GAIN:
                continue
            grey = self._grey(patch) if grey is None else grey
            if np.count_nonzero(cv2.absdiff(grey, k.grey) > MEMO_GREY) <= MEMO_PIXELS:
                return k
        return None

    def keep(self, places: list[tuple[float, float]], patches: np.ndarray, gains: np.ndarray, how: tuple,
             probs: np.ndarray, ball: np.ndarray, known: list[Judged | None]) -> None:
        """This call's answers in place of those kept at the same places, each with the patch it
        was judged on (an answer recalled keeps its own)."""
        g = np.asarray(gains, np.float64).copy()
        new = [k if k is not None else Judged(x, y, self._grey(patch), g, how, p.copy(), float(b))
               for (x, y), patch, p, b, k in zip(places, patches, probs, ball, known, strict=True)]
        # the places not asked this time stay known (a cup hidden by a hand, asked again once it is back)
        rest = [k for k in self._kept if not any(self._near(k, x, y, how) for x, y in places)]
        self._kept = (new + rest)[:MEMO_MAX]


class Judged(NamedTuple):
    """One answer a JudgeMemo keeps: the place, its smoothed grey patch and the paper's gains it
    was judged under, how it was asked (mirror, ball look), and the answer."""
    x: float
    y: float
    grey: np.ndarray
    gains: np.ndarray
    how: tuple
    probs: np.ndarray
    ball: float


def _blob(patches: np.ndarray) -> np.ndarray:
    """Patches (N, size, size, 3) as the networks take them: N × 3 × size × size, 0-1."""
    return patches.astype(np.float32).transpose(0, 3, 1, 2) / 255.0


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
