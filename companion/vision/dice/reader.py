"""The dice reader: every die lying on the table in a BGR frame, with its face-up value, colour,
centre, box and a confidence (EVENTS.md, "Reading dice from an image").

Small networks run through ``cv2.dnn`` (``models/dice-finder.onnx``, ``models/dice-reader.onnx``
and ``dice-reader-2.onnx``, whose answers are averaged; see ``models/dice-reader.md``):

1. the *finder* looks at the frame at half size and gives a heat map of die centres (one cell per
   4 input pixels), the die size and the centre's sub-cell offset; local maxima above
   ``find_threshold`` are candidates;
2. the *reader* looks at a small square crop around each candidate (its side and how much
   of the die's surroundings it takes are in ``models/dice-reader.json``; the crop comes from the
   full-size frame) and says "not a die" or the value 1–6. Only the top face is in the middle of
   the crop, so side faces seen by a tilted camera do not count. A doubtful crop is looked at
   again turned by 90°, 180° and 270° and the four answers are averaged.

The colour comes from :mod:`companion.vision.colour` (``"unknown"`` unless confidently one of
the profiles).

``scale`` is the factor applied to the frame before the finder, which knows dice of about 12–26
pixels across in its input. 0.5 suits dice of 25–50 pixels (the byler photos at 640×640, the
demo's dice at 1280×720); with ``adapt`` (the default) a frame whose dice come out much larger or
smaller than that is looked at again at the scale that brings them to about 19 pixels, and a
large frame is also looked at coarser, so a photo of any resolution is read alike (the held-out
train photos blown up 3×, read with the fixed 0.5: 127 of 151 dice right and 105 extra;
adapting: 150 and 1; at their own size: 151 and 1). A first look whose dice the reader is
unsure of (mean confidence under ``DOUBTFUL_LOOK``) is also looked at twice as fine: dice of
16 pixels come out of the finder at half size as pips of ordinary sizes (the held-out photos
shrunk to 0.4×: 42 % of dice right without it, 89 % with it; at 0.5×: 92 % and 98 %). A look it
is unsure of also looks much coarser, for close-ups whose dice are far too big and come back as
their pips (``DiceReader._bigger``; close-ups of the held-out photos' dice at 200 pixels: 60 % →
93 %).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.vision.colour import (
    UNKNOWN,
    ColourProfiles,
    default_profiles,
    dice_gains,
    dice_labs,
    dice_polarity,
    face_bgr,
    face_lab,
)
from companion.vision.markers import marker_outlines, marker_white
from companion.vision.nets import read_onnx

MODELS = Path(__file__).resolve().parents[3] / "models"
READERS = ("dice-reader.onnx", "dice-reader-2.onnx")  # the second optional (DiceReader.__init__)
# The second reader is asked only where the first is less sure than this of its answer (a die's
# value or "not a die"): 90 validation renders read alike with every crop asked (F1 0.886 against
# 0.888 here; 0.9 let 4 more specks through), and a byler test photo takes 6.7-6.9 ms median
# against 6.4-6.7 with the first reader alone (two runs each, alternating).
PAIR_GATE = 0.95
MIN_SIDE = 16  # the least the reader takes (DiceReader.read)
STRIDE = 4
SIZE_NORM = 32.0
BATCH = 8
# the finder's sweet spot: die sizes (finder-input pixels) it measures well; outside it, look again
SIZE_LOW, SIZE_HIGH, SIZE_TARGET = 17.0, 25.0, 19.0
MAX_LOOKS = 4
VALUE_FLOOR = 0.4  # the least probability of a die's value for it to be reported (DiceReader.read)
DOUBTFUL_LOOK = 0.8  # a first look whose dice the reader is less sure of than this also looks finer
# Close-ups: the frame's short side in finder pixels of the coarse looks for dice far too big,
# and the mean confidence under which a look gets them, and over which a coarse look is taken
# (see DiceReader._bigger)
BIG_LOOK_SIDES = (160, 80, 40)
BIG_LOOK_SURE = 0.9
# Adapting, a frame larger than this in the finder's input (short side) is also looked at this
# size: the held-out photos blown up 3×, adapting from 0.5 alone: 146 of 151 dice right and 20
# extra; with this look too: 150 and 1 (held-out photos in the middle of a 3× table: 151 and 1).
START_SIDE = 480
# A photo of high resolution (rendered validation scenes enlarged 2x and 3x, like a phone's
# photo) took a cloth's dots and a big die's pips for hundreds of dice: a finer look replaced a
# doubtful one if only a little surer (1,192 dots read at 0.33 beside one die at 0.18), and the
# size looks followed the specks' sizes ever finer. Now a finer look must be FINER_SURE sure, the
# sizes are those of the dice read SIZE_SURE surely, and a size look SIZE_LOOK_MARGIN less sure
# than the first is not taken (90 validation renders at 2x / 3x: F1 0.73 / 0.52 -> 0.87 / 0.85,
# as taken 0.881 -> 0.878; models/dice-reader.md, "Photos of high resolution").
FINER_SURE, SIZE_SURE, SIZE_LOOK_MARGIN = 0.5, 0.8, 0.2
# Side faces: a camera tilted 35° and more from straight down sees the side of a die that faces it
# nearly as large as its top, and the reader reads it as a die of its own (10 renders at 40-55°:
# 13 extra for 44 dice). Where a die was read there, just beyond another toward the camera, it is
# that die's side if it is the same die's colour in shade: darker, the same chromaticity (shade
# scales the three channels alike) and its pips of the same polarity. A die touching in front has
# its own top face, lit as the other's (or of another colour): it is kept. Reach and width in
# the upper die's sizes, along and across the direction toward the camera; chosen on validation
# renders (models/dice-reader.md, "Side faces").
SIDE_REACH, SIDE_ACROSS = (0.4, 1.15), 0.35
# the side face at most this share of the top's brightness (a dark die's: SIDE_SHADE_DARK; dark dice
# touching on the byler photos were 0.60-0.78 as bright as their neighbour), this many grey levels less
SIDE_SHADE, SIDE_SHADE_DARK, SIDE_DARKER = 0.8, 0.55, 15.0
SIDE_CHROMA = 0.09  # the greatest distance of their chromaticities (B, G, R over their sum)


@dataclass(frozen=True)
class Die:
    value: int
    color: str
    center: tuple[float, float]
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 pixels of the input frame
    confidence: float

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "color": self.color,
                "center": [round(self.center[0], 1), round(self.center[1], 1)],
                "box": list(self.box), "confidence": round(self.confidence, 3)}

    def shifted(self, dx: int, dy: int) -> Die:
        x0, y0, x1, y1 = self.box
        return Die(self.value, self.color, (self.center[0] + dx, self.center[1] + dy),
                   (x0 + dx, y0 + dy, x1 + dx, y1 + dy), self.confidence)

    @property
    def size(self) -> float:
        return float(np.sqrt(max(1, self.box[2] - self.box[0]) * max(1, self.box[3] - self.box[1])))


def to_blob(images: np.ndarray) -> np.ndarray:
    """N×H×W×3 BGR uint8 → N×3×H×W float32 / 255: the networks' input. The same numbers as
    ``cv2.dnn.blobFromImage(s)``, which took 2.5 ms for one 320×320 frame here; this 0.1 ms."""
    return images.transpose(0, 3, 1, 2).astype(np.float32) * np.float32(1 / 255.0)


def crop_die(frame: np.ndarray, cx: float, cy: float, size: float, crop: int, crop_scale: float) -> np.ndarray:
    """The reader's view of a candidate: a crop×crop image of a square of side crop_scale × size."""
    k = crop / (size * crop_scale)
    m = np.array([[k, 0, crop / 2 - k * cx], [0, k, crop / 2 - k * cy]], np.float64)
    return cv2.warpAffine(frame, m, (crop, crop), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


class DiceReader:
    """Holds the networks and the colour profiles; :meth:`read` does one frame."""

    def __init__(self, profiles: ColourProfiles | None = None, models_dir: str | Path = MODELS,
                 scale: float = 0.5, find_threshold: float = 0.25, die_threshold: float = 0.5,
                 sure: float = 0.9, adapt: bool = True, value_floor: float = VALUE_FLOOR) -> None:
        models_dir = Path(models_dir)
        self.finder = read_onnx(models_dir / "dice-finder.onnx")
        # Two readers trained apart answer together, their logits averaged where the first is
        # unsure (READERS, PAIR_GATE; the second is left out where a models folder has none):
        # they doubt different specks and small dice (models/dice-reader.md, "A second reader").
        self.readers = [read_onnx(models_dir / name)
                        for k, name in enumerate(READERS) if k == 0 or (models_dir / name).exists()]
        try:  # how the reader was trained to look: written beside it by the training script
            geometry = json.loads((models_dir / "dice-reader.json").read_text())
            self.crop, self.crop_scale = int(geometry["crop"]), float(geometry["crop_scale"])
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{models_dir / 'dice-reader.json'}: the reader's crop size and scale are "
                             f"needed beside dice-reader.onnx ({err})") from None
        self.profiles = default_profiles() if profiles is None else profiles
        self.scale = scale
        self.adapt = adapt  # look again at another scale when the dice are too big or small for the finder
        self.roi: tuple[int, int, int, int] | None = None  # x0, y0, x1, y1: read only there
        self.white: np.ndarray | None = None  # B, G, R of white paper on the table (the markers), when known
        # Where the camera is, for side faces (_not_sides): the image point straight below it
        # (a calibrated camera's nadir); unknown, the camera is taken to stand at the frame's bottom.
        self.nadir: tuple[float, float] | None = None
        self.find_threshold = find_threshold
        self.die_threshold = die_threshold
        self.sure = sure  # below this, the reader looks again at the crop turned three ways
        self.value_floor = value_floor  # a die read less surely than this is not reported
        # OpenCV sets a network up on its first run: do it now, not on the first camera frame
        self.finder.setInput(np.zeros((1, 3, 320, 320), np.float32))
        self.finder.forward()
        for net in self.readers:  # both batch shapes
            _logits(net, [np.zeros((self.crop, self.crop, 3), np.uint8)] * (BATCH + BATCH // 2))
        face_lab(np.zeros((8, 8, 3), np.uint8), (4, 4), 8)  # OpenCV builds its L*a*b* tables (~0.1 s) on first use

    # ------------------------------------------------------------ stage 1
    def candidates(self, frame: np.ndarray, scale: float | None = None) -> list[tuple[float, float, float, float]]:
        """(cx, cy, size, heat) in frame pixels for every local maximum of the finder's heat map."""
        h, w = frame.shape[:2]
        scale = self.scale if scale is None else scale
        sw, sh = max(8, round(w * scale)), max(8, round(h * scale))
        small = cv2.resize(frame, (sw, sh), interpolation=cv2.INTER_AREA)
        pw, ph = -sw % 8, -sh % 8
        if pw or ph:
            small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
        self.finder.setInput(to_blob(small[None]))
        out = self.finder.forward()[0]
        heat = 1 / (1 + np.exp(-out[0]))
        peaks = (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat > self.find_threshold)
        ys, xs = np.nonzero(peaks)
        fx, fy = w / sw, h / sh
        found = []
        for y, x in zip(ys, xs, strict=True):
            cx = (x + float(out[2, y, x])) * STRIDE * fx
            cy = (y + float(out[3, y, x])) * STRIDE * fy
            size = max(4.0, float(out[1, y, x]) * SIZE_NORM * fx)
            if 0 <= cx < w and 0 <= cy < h:
                found.append((cx, cy, size, float(heat[y, x])))
        return found

    # ------------------------------------------------------------ stage 2
    def _classify(self, crops: list[np.ndarray]) -> np.ndarray:
        """Probabilities [not a die, 1, …, 6] per crop: the first reader's, averaged (as logits)
        with the second's where the first is less sure than PAIR_GATE. Each reader takes the
        crops in batches of BATCH and the rest in one of BATCH or BATCH / 2: OpenCV sets a
        network up again for every new input shape, which costs more than the crops, but keeps
        the two it has seen (the three turned views of one doubtful die take 0.6 ms as 4, 1.4 ms
        as 8)."""
        first = _logits(self.readers[0], crops)
        if len(self.readers) > 1:
            doubt = np.flatnonzero(_softmax(first).max(axis=1) < PAIR_GATE)
            if len(doubt):
                first[doubt] = (first[doubt] + _logits(self.readers[1], [crops[i] for i in doubt])) / 2
        return _softmax(first)

    def read(self, frame: np.ndarray) -> list[Die]:
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3 or min(frame.shape[:2]) < 16:
            raise ValueError("expected a BGR image (height × width × 3, at least 16 pixels each way)")
        if frame.dtype != np.uint8:
            frame = np.clip(frame, 0, 255).astype(np.uint8)
        if self.roi is not None:  # only where dice can lie (the table): the finder's time goes with the area
            x0, y0, x1, y1 = self.roi
            h, w = frame.shape[:2]
            x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
            if x1 - x0 >= 16 and y1 - y0 >= 16 and (x1 - x0, y1 - y0) != (w, h):
                nadir = None if self.nadir is None else (self.nadir[0] - x0, self.nadir[1] - y0)
                return [d.shifted(x0, y0) for d in self._read_adapting(frame[y0:y1, x0:x1], nadir)]
        return self._read_adapting(frame, self.nadir)

    def _read_adapting(self, frame: np.ndarray, nadir: tuple[float, float] | None = None) -> list[Die]:
        scale = self.scale
        dice = self._read_at(frame, scale)
        if self.adapt and min(frame.shape[:2]) * scale > START_SIDE:
            # A large frame may hold dice far too big for the finder, which then takes their
            # pips for dice of a size it knows (so no look again), or small dice of a wide view:
            # look coarser as well and keep the look the reader is surer of.
            scale, dice = self._surer(frame, scale, dice, START_SIDE / min(frame.shape[:2]))
        if self.adapt and (not dice or _mean_confidence(dice) < DOUBTFUL_LOOK) and scale < 1.0:
            # Dice so small that the finder sees them as a few pixels (16-pixel dice in a
            # 256-pixel photo) come back as pips and clusters of pips of ordinary sizes, so the
            # size rule below never looks again; the reader is unsure of them, though (mean
            # confidence 0.0-0.85 there, 0.92-0.99 on the held-out photos; 0.8 and 0.9 read
            # the shrunk photos alike, 0.8 looks again less often): look twice as fine too.
            # Or they come back as nothing at all (16-pixel dice in a 640-pixel render): an
            # empty look also looks finer, and takes what it finds if the reader is sure of it
            # (mean 0.8 or more; there 0.89, on empty drawn cloths 0.32-0.38), for a cloth's
            # specks seen finer must not become dice (rendered validation scenes: speckle F1
            # 0.79 -> 0.81; 40 empty drawn cloths: 3 false dice, as before).
            finer = min(1.0, 2 * scale)
            there = self._read_at(frame, finer)
            # (and sure enough, FINER_SURE: a dotted cloth seen finer is a thousand dots)
            if _mean_confidence(there) > (max(_mean_confidence(dice), FINER_SURE) if dice else DOUBTFUL_LOOK):
                scale, dice = finer, there
        anchor = _mean_confidence(dice) if dice else 0.0   # how sure the reader was before looking again
        for _ in range(MAX_LOOKS - 1):
            if not self.adapt or not dice:
                break
            # in finder-input pixels; the smaller third must be too big, or the larger third too
            # small: a photo of the whole table has markers and cup rims the size of big dice
            # beside the real ones, and shrinking for them made the real ones unreadable
            # (measured on the dice the reader is sure of, where there are any: a big die's pips
            # or a cloth's specks, read unsurely, would send it finer still)
            counted = [d for d in dice if d.confidence >= SIZE_SURE] or dice
            small, large = (float(q) * scale for q in np.quantile([d.size for d in counted], [1 / 3, 2 / 3]))
            if small > SIZE_HIGH:
                seen = small
            elif large < SIZE_LOW:
                seen = large
            else:
                break
            # The finder under-measures dice far too big for it (pips look like dice): its
            # sizes top out near 30, so a big die takes two or three looks, each at most 0.55×.
            new = scale * float(np.clip(SIZE_TARGET / seen, 0.55, 1.8))
            if not 8 / min(frame.shape[:2]) <= new <= 1.0:
                break
            there = self._read_at(frame, new)
            if there and _mean_confidence(there) < anchor - SIZE_LOOK_MARGIN:
                break   # the reader much less sure there than at its first look: specks, not dice
            scale, dice = new, there
        if self.adapt:
            dice = self._bigger(frame, scale, dice)
        # A die whose value the reader is unsure of even after the turned looks is more often a
        # side face, a shadow or a speck than a die (rendered validation scenes: F1 +0.01-0.03,
        # byler held-out photos unchanged; 0.5 also lost 5 of 110 real casino dice, 0.4 one):
        # left out, as a die not seen is typed or looked at again, while a wrong one is proposed.
        dice = [d for d in dice if d.confidence >= self.value_floor]
        # whether each face is light or dark: for side faces, and the light's measure and colours
        polarity = dice_polarity(frame, [(d.center, d.size) for d in dice])
        kept = _not_sides(frame, dice, polarity, nadir)
        return self._coloured(frame, [dice[k] for k in kept], polarity[kept])

    def _bigger(self, frame: np.ndarray, scale: float, dice: list[Die]) -> list[Die]:
        """Dice far too big for every look so far: a close-up photo (a die of 200 pixels in a
        340-pixel photo) comes back as its pips, read as dice of ordinary sizes (mostly 1s) or
        as nothing, and the reader is unsure of them. So a look the reader is unsure of (mean
        confidence under BIG_LOOK_SURE), or an empty one, also looks much coarser: the frame's
        short side at 160, 80 and 40 finder pixels (dice of an eighth, a quarter or half of it
        come out near 19). A coarse look the reader is sure of replaces it if it accounts for at
        least half of its dice (each lies on a coarse die as a pip would, or is one) and no
        coarse die holds more of them than its pips and one more (a pip may be found twice),
        unless the reader doubts those are dice at all: a far-off group of four small dice looks
        like a 4 at a coarse look, and is read surely at the fine one. A look the reader is sure
        of is kept as it is: two dice seen coarse look like a 2. Chosen on close-ups made from the
        held-out train photos (``models/dice-reader.md``)."""
        conf = _mean_confidence(dice)
        if dice and conf >= BIG_LOOK_SURE:
            return dice
        side = min(frame.shape[:2])
        best = dice
        for target in BIG_LOOK_SIDES:
            coarse = target / side
            if coarse >= 0.5 * min(scale, self.scale):
                continue  # not much coarser than the looks taken
            there = self._read_at(frame, coarse)
            if _mean_confidence(there) < max(BIG_LOOK_SURE, conf):
                continue
            held = [[d for d in dice if _holds(b, d)] for b in there]
            fits = all(len(h) <= b.value + 1 for b, h in zip(there, held, strict=True))
            doubtful = all(h and _mean_confidence(h) < DOUBTFUL_LOOK for h in held)
            if _accounted(there, held, dice) >= 0.5 and (fits or doubtful):
                best, conf = there, _mean_confidence(there)
        return best

    def _surer(self, frame: np.ndarray, scale: float, dice: list[Die], other: float) -> tuple[float, list[Die]]:
        """(scale, dice) of the look the reader is surer of: the one taken, or one at ``other``."""
        there = self._read_at(frame, other)
        return (other, there) if _mean_confidence(there) > _mean_confidence(dice) else (scale, dice)

    def _read_at(self, frame: np.ndarray, scale: float) -> list[Die]:
        cands = self.candidates(frame, scale)
        if not cands:
            return []
        crops = [crop_die(frame, cx, cy, size, self.crop, self.crop_scale) for cx, cy, size, _ in cands]
        prob = self._classify(crops)
        # A second look at the doubtful ones: the same crop turned by 90°, 180° and 270°.
        doubtful = [i for i, p in enumerate(prob) if p.max() < self.sure]
        if doubtful:
            turned = [np.ascontiguousarray(np.rot90(crops[i], k)) for i in doubtful for k in (1, 2, 3)]
            more = self._classify(turned).reshape(len(doubtful), 3, -1)
            for n, i in enumerate(doubtful):
                prob[i] = (prob[i] + more[n].sum(axis=0)) / 4
        h, w = frame.shape[:2]
        dice: list[Die] = []
        kept: list[tuple[float, float, float]] = []  # (cx, cy, size) of the dice so far
        order = np.argsort([-(1 - p[0]) * c[3] for p, c in zip(prob, cands, strict=True)])
        for i in order:
            cx, cy, size, heat = cands[i]
            p = prob[i]
            if 1 - p[0] < self.die_threshold:
                continue
            if any(math.hypot(cx - x, cy - y) < 0.5 * min(size, s) for x, y, s in kept):
                continue  # the same die found twice
            value = int(np.argmax(p[1:])) + 1
            half = size / 2
            box = (max(0, int(cx - half)), max(0, int(cy - half)), min(w, int(np.ceil(cx + half))),
                   min(h, int(np.ceil(cy + half))))
            dice.append(Die(value, UNKNOWN, (float(cx), float(cy)), box, float(p[value])))
            kept.append((cx, cy, dice[-1].size))
        dice.sort(key=lambda d: (d.center[1], d.center[0]))
        return dice

    def _coloured(self, frame: np.ndarray, dice: list[Die], polarity: np.ndarray) -> list[Die]:
        """Colours for the dice of the last look only (not for looks at a scale that was dropped);
        ``polarity``: their faces' (:func:`dice_polarity`), which the light's measure uses too."""
        if not self.profiles.profiles or not dice:
            return dice
        white = self.white if self.white is not None and float(np.max(self.white)) < 250 else None  # clipped paper: no measure
        faces = [(d.center, d.size) for d in dice]
        gains = dice_gains(frame, faces, white, polarity)
        named = self.profiles.classify_labs(dice_labs(frame, faces, gains=gains), polarity)
        rules = self.profiles.rules   # (calibrated profiles have none: their white stays white)
        return [replace(d, color="blue" if name == "white" and rules is not None
                        and rules.washed_blue(frame, d.center, d.size, gains) else name)
                for d, (name, _) in zip(dice, named, strict=True)]


def _not_sides(frame: np.ndarray, dice: list[Die], polarity: np.ndarray,
               nadir: tuple[float, float] | None) -> list[int]:
    """The indices of the dice that are not another die's side face seen by a tilted camera
    (SIDE_*); ``polarity``: their faces' (:func:`dice_polarity`)."""
    if len(dice) < 2:
        return list(range(len(dice)))
    faces = [face_bgr(frame, d.center, d.size) for d in dice]
    toward = []
    for d in dice:  # the unit direction from each die toward the camera, in the image
        vx, vy = (0.0, 1.0) if nadir is None else (nadir[0] - d.center[0], nadir[1] - d.center[1])
        n = math.hypot(vx, vy)
        toward.append((vx / n, vy / n) if n > 1e-6 else (0.0, 1.0))
    # from the farthest from the camera on: a die already taken for a side face tops no other
    side: set[int] = set()
    for b in sorted(range(len(dice)), key=lambda k: toward[k][0] * dice[k].center[0] + toward[k][1] * dice[k].center[1]):
        if any(a != b and a not in side
               and _is_side(dice[a], dice[b], toward[a], faces[a], faces[b], polarity[a], polarity[b])
               for a in range(len(dice))):
            side.add(b)
    return [k for k in range(len(dice)) if k not in side]


def _is_side(top: Die, die: Die, toward: tuple[float, float], top_bgr: np.ndarray, bgr: np.ndarray,
             top_pol: float, pol: float) -> bool:
    """Is ``die`` the side of ``top`` facing the camera (``toward``: from ``top`` to the camera, in
    the image): where such a side lies, and ``top``'s colour in shade (SIDE_*)?"""
    dx, dy = die.center[0] - top.center[0], die.center[1] - top.center[1]
    along = (dx * toward[0] + dy * toward[1]) / top.size
    across = abs(-dx * toward[1] + dy * toward[0]) / top.size
    if not (SIDE_REACH[0] <= along <= SIDE_REACH[1] and across < SIDE_ACROSS):
        return False
    bright, top_bright = float(bgr.mean()), float(top_bgr.mean())
    shade = SIDE_SHADE_DARK if top_pol > 0 else SIDE_SHADE
    if bright > shade * top_bright or bright > top_bright - SIDE_DARKER:
        return False
    if np.abs(bgr / max(bgr.sum(), 1.0) - top_bgr / max(top_bgr.sum(), 1.0)).max() > SIDE_CHROMA:
        return False
    return (top_pol < 0) == (pol < 0)  # a white die's side has dark pips as its top has


def _logits(net: Any, crops: list[np.ndarray]) -> np.ndarray:
    """One reader's logits for the crops, in batches of BATCH and the rest in one of BATCH or
    BATCH / 2 (see DiceReader._classify)."""
    n = len(crops)
    tail = n % BATCH
    pad = (-tail % (BATCH // 2)) if tail else 0
    blob = to_blob(np.stack(crops + [crops[0]] * pad))
    out = []
    for k in range(0, len(blob), BATCH):
        net.setInput(blob[k:k + BATCH])
        out.append(net.forward())
    return np.concatenate(out)[:n]


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _mean_confidence(dice: list[Die]) -> float:
    return float(np.mean([d.confidence for d in dice])) if dice else 0.0


def _holds(big: Die, small: Die) -> bool:
    """Could ``small`` be a pip of ``big``: its centre on that die's face and its size well
    under the die's?"""
    return (abs(small.center[0] - big.center[0]) <= 0.5 * big.size
            and abs(small.center[1] - big.center[1]) <= 0.5 * big.size and small.size < 0.6 * big.size)


def _same(a: Die, b: Die) -> bool:
    """Two looks' finds of one die: centres close, sizes alike."""
    return (np.hypot(a.center[0] - b.center[0], a.center[1] - b.center[1]) < 0.5 * min(a.size, b.size)
            and 0.6 < a.size / b.size < 1.6)


def _accounted(big: list[Die], held: list[list[Die]], small: list[Die]) -> float:
    """The share of the small dice that lie on a big one as pips (``held``, per big die) or are
    one of them (1 if there are none)."""
    if not small:
        return 1.0
    ids = {id(d) for h in held for d in h} | {id(d) for d in small if any(_same(b, d) for b in big)}
    return sum(id(d) in ids for d in small) / len(small)


def scale_for(die_px: float) -> float:
    """The finder scale for dice known to be about ``die_px`` pixels across (a calibrated camera)."""
    return float(np.clip(SIZE_TARGET / max(die_px, 1.0), 0.1, 1.0))


_default: DiceReader | None = None


def read_dice(frame_bgr: np.ndarray, profiles: ColourProfiles | None = None) -> list[Die]:
    """Read one frame with a shared reader (models loaded once); ``profiles`` default to
    ``models/dice-colours.json``."""
    global _default
    if _default is None:
        _default = DiceReader()
    if profiles is None:
        return _default.read(frame_bgr)
    saved = _default.profiles
    _default.profiles = profiles
    try:
        return _default.read(frame_bgr)
    finally:
        _default.profiles = saved


def off_markers(frame: np.ndarray, dice: list[Die], quads: list[np.ndarray] | None = None) -> list[Die]:
    """The dice that do not lie on one of the table's printed calibration markers: a photo of the
    whole table has four, and their black and white squares look like a die's face to the reader.
    (The live loop reads only where dice can lie, away from them.) ``quads``: the markers'
    outlines when already found."""
    quads = marker_outlines(frame) if quads is None else quads
    return [d for d in dice if all(cv2.pointPolygonTest(q, d.center, False) < 0 for q in quads)]


def read_photo(reader: DiceReader, frame: np.ndarray) -> list[Die]:
    """One photo as ``companion dice`` reads it: the table's printed markers, where in view, give
    white paper to measure the light by (as the calibration gives the live loop), and a die read
    on a marker is none. On rendered validation scenes with markers in view, 26 of 29 dice of the
    six colours named right instead of 22 from the dice's own whites."""
    quads = marker_outlines(frame) if frame.ndim == 3 else []
    saved = reader.white
    reader.white = marker_white(frame, quads) if quads else saved
    try:
        dice = reader.read(frame)
    finally:
        reader.white = saved
    return off_markers(frame, dice, quads)
