"""Reading a 21 Exact table's cups from one frame: which cups stand upright (per side and colour),
which are turned over, where a ball rests in a cup. Pixels and the calibration only — nothing
about how the frame was made.

How: every cup's rim lies on one plane, ``cup_h`` above the table, and nothing of the same height
can hide a rim. So the frame is warped once to a small top view of that plane (2 mm per pixel),
where every upright cup is a ring of its colour (the lip) around a pale inside, and a cup turned
over is a smaller solid disc of its colour. Samples on those rings and discs are classified by
colour (hue and saturation for the four colours, low saturation for silver and the inside, the
table's own colour measured in every frame on spots no cup can hide), which keeps the work to a
few thousand pixels a frame.
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from companion.vision.calibrate import Calibration
from companion.vision.layout import COLOURS, CUPS, Layout, Slot
from companion.vision.markers import MARKER_MM

MM_PER_PX = 2.0
UNKNOWN, BLUE, RED, GREEN, YELLOW, GREY, TABLE, ORANGE = range(8)
LABEL = {"blue": BLUE, "red": RED, "green": GREEN, "yellow": YELLOW, "silver": GREY}

RING_SCORE = 0.7       # fraction of the rim's samples in the cup's colour: an upright cup
SILVER_RING = 0.85     # silver's grey is also the pale inside of every cup: stricter
TURNED_CENTRE = 0.8    # fraction of a turned-over cup's top in its colour
TURNED_TOP = 0.85      # a turned cup's wall round its top is darker than this share of the top
STANDING_LIP = 0.6     # a standing cup's disc: this share of the near half of that ring in its colour
CAST = 0.04            # a light's colour this far from white (per channel gain) is undone
PAPER_DIM = 120.0      # the markers' white paper is brought up to at least this grey level
BALL_FRACTION = 0.1    # fraction of a cup's inside showing a ball (seen steeply, most of it hides)
BALL_MM = 40.0         # a ping-pong ball's diameter
SHADED = 0.75          # a cup's inside in its own colour is darker than this share of its lip
WEAK_LIP, WEAK_LIP_OVER = 40, 25
LEARNT_PAD = 108.0     # mm round a learnt table its view takes in (discover.APPARENT_RIMS' largest)   # a pale lip: this saturation at least, and this much over its inside's


def _ring(radii: tuple[float, ...], n: int) -> np.ndarray:
    pts = []
    for r in radii:
        k = 1 if r == 0 else n
        a = np.linspace(0, 2 * np.pi, k, endpoint=False) + (0.13 if r else 0)
        pts.append(np.column_stack([r * np.cos(a), r * np.sin(a)]))
    return np.vstack(pts)


TABLE_BIT = 64   # the bare table's class bit


def _class_lut() -> np.ndarray:
    """Class bits (1 grey, 2 yellow, 4 green, 8 blue, 16 red, 32 orange, 64 table) → label, the
    later in this order winning: grey, yellow, green, blue, red, orange, table."""
    lut = np.zeros(256, np.uint8)
    order = [(1, GREY), (2, YELLOW), (4, GREEN), (8, BLUE), (16, RED), (32, ORANGE), (TABLE_BIT, TABLE)]
    for code in range(256):
        for bit, label in order:
            if code & bit:
                lut[code] = label
    return lut


def side_where_it_stands(layout: Layout, eye: np.ndarray, x: float, height: float, plane: float = 0.0) -> str:
    """The side of a cup whose rim, ``height`` above the table, shows at ``x`` on a view of the
    plane ``plane`` above it: seen from the camera at ``eye``, a rim lies farther from the
    camera's foot than its cup stands."""
    return layout.side_of(eye[0] + (x - eye[0]) * (eye[2] - height) / (eye[2] - plane))


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance from each point p[n] (N, 2) to each segment a[m]–b[m]: (N, M)."""
    ab = (b - a)[None]
    ap = p[:, None, :] - a[None]
    t = np.clip((ap * ab).sum(axis=-1) / np.maximum((ab * ab).sum(axis=-1), 1e-9), 0, 1)
    return np.hypot(*np.moveaxis(ap - ab * t[..., None], -1, 0))


_CLASS_LUT = _class_lut()


def _band_luts() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class bits allowed by each hue, saturation and value (OpenCV's 8-bit HSV, bounds
    inclusive): grey is any hue, saturation 0–54, value ≥ 45; a cup colour is its hue band,
    saturation ≥ 100, value ≥ 40; the orange ball hue 11–19, saturation ≥ 150, value ≥ 60. The
    table's bit is set per frame (its hue and saturation) and per pixel (its value)."""
    h, s, v = (np.zeros(256, np.uint8) for _ in range(3))
    h[:181] |= 1
    s[:55] |= 1
    v[45:] |= 1
    for bit, lo, hi in ((2, 18, 38), (4, 40, 90), (8, 95, 135), (16, 0, 9), (16, 165, 180)):
        h[lo:hi + 1] |= bit
    s[100:] |= 2 | 4 | 8 | 16
    v[40:] |= 2 | 4 | 8 | 16
    h[11:20] |= 32
    s[150:] |= 32
    v[60:] |= 32
    v |= TABLE_BIT
    return h, s, v


_HUE_BITS, _SAT_BITS, _VALUE_BITS = _band_luts()


def _median(a: np.ndarray) -> float:
    """np.median of a short 1-D array, without its general-purpose overhead (seven a frame)."""
    n = len(a)
    k = n // 2
    if n % 2:
        return float(np.partition(a, k)[k])
    p = np.partition(a, (k - 1, k))
    return float((p[k - 1] + p[k]) / 2)


def _bound(x: float) -> int:
    """A bound as cv2.inRange takes a scalar for 8-bit images (rounded half to even, saturated)."""
    return min(255, max(0, round(x)))


def _grid(radius: float, step: float) -> np.ndarray:
    g = np.arange(-radius, radius + 0.1, step)
    gx, gy = np.meshgrid(g, g)
    return np.column_stack([gx.ravel(), gy.ravel()])


def _ring_score(hit: np.ndarray) -> np.ndarray:
    """(N, 3 radii × 24 angles) hits → fraction of angles where any radius hits (a lip a little
    off the expected radius still counts)."""
    return hit.reshape(hit.shape[0], 3, -1).any(axis=1).mean(axis=1)


@dataclass
class CupSeen:
    side: str
    cup: str
    x: float            # table mm of the rim's centre
    y: float
    center: list[float]  # pixels of the rim's centre in the frame
    score: float
    slot: str = ""
    ball: float = 0.0   # fraction of the inside showing a ball


@dataclass
class Reading:
    cups: list[CupSeen] = field(default_factory=list)
    upside_down: list[CupSeen] = field(default_factory=list)
    ms: float = 0.0

    def counts(self) -> dict[str, dict[str, int]]:
        out = {side: {cup: 0 for cup in CUPS} for side in ("A", "B")}
        for c in self.cups:
            out[c.side][c.cup] += 1
        return out

    def turned(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {"A": {}, "B": {}}
        for c in self.upside_down:
            out[c.side][c.cup] = out[c.side].get(c.cup, 0) + 1
        return out

    def balls(self) -> list[CupSeen]:
        return [c for c in self.cups if c.ball >= BALL_FRACTION]



def paper_gains(paper: np.ndarray | None) -> np.ndarray:
    """B, G, R gains that make the markers' white paper (``Calibration.paper_white``) grey and at
    least PAPER_DIM bright (at most 3×); none (ones) where no paper was seen."""
    if paper is None:
        return np.ones(3)
    return np.minimum(max(float(np.mean(paper)), PAPER_DIM) / np.maximum(paper, 1.0), 3.0)


class CupReader:
    """Reads frames of one calibrated camera."""

    sees_turned = False   # cups turned over cost a search of the whole table (read(turned=True))

    def __init__(self, cal: Calibration, area: tuple[float, float, float, float] | None = None,
                 plane: float | None = None) -> None:
        """``area`` (x0, y0, x1, y1 table mm) is what the view spans; by default the slots, the
        tally spots and a margin. ``plane`` is the height of the plane the view shows, by default
        the rims' (``cup_h``); the slots and the layout's rim size are on that plane."""
        self.cal = cal
        L = cal.layout
        self.layout = L
        if plane is None:   # a learnt table's rims are where they show on the table's plane
            plane = L.cup_h if cal.view_plane is None else cal.view_plane
        self.plane = plane
        # Cups of any make (a table nobody described, companion.vision.cups.discover): one colour inside
        # and out (see _search) or white inside (see ball_fractions), and, as the seed turns over
        # only "unused color cups" for the tally, never a silver cup upside down
        self.any_make = cal.any_make
        self.weak_lips = cal.any_make       # lips may be paler than their cup (see _search)
        if area is None and cal.view_plane is not None:   # a learnt table: all of it, and round it
            area = (-LEARNT_PAD, -LEARNT_PAD, L.table_w + LEARNT_PAD, L.table_h + LEARNT_PAD)
        if area is None:
            xs = [s.x for s in cal.slots] + [L.tally_spot(side)[0] for side in ("A", "B")]
            ys = [s.y for s in cal.slots] + [L.tally_spot("A")[1]]
            pad = L.rim_d + 50
            area = (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)
        self.x0, self.y0, x1, y1 = area
        self.vw, self.vh = int((x1 - self.x0) / MM_PER_PX), int((y1 - self.y0) / MM_PER_PX)
        jj, ii = np.meshgrid(np.arange(self.vw, dtype=np.float64), np.arange(self.vh, dtype=np.float64))
        tab = np.column_stack([(self.x0 + jj * MM_PER_PX).ravel(), (self.y0 + ii * MM_PER_PX).ravel(),
                               np.full(jj.size, self.plane)])
        px = cal.project(tab).astype(np.float32)
        self.map1, self.map2 = cv2.convertMaps(px[:, 0].reshape(self.vh, self.vw),
                                               px[:, 1].reshape(self.vh, self.vw), cv2.CV_16SC2)
        self._samples()
        self._table_points()
        self._table_prior: tuple[float, float] | None = None
        self.paper_gains: np.ndarray | None = None   # the paper's gains as last measured (balance())
        self._slot_labels = np.array([LABEL[s.cup] for s in cal.slots], np.uint8)
        self._need = np.array([SILVER_RING if s.cup == "silver" else RING_SCORE for s in cal.slots])
        self._near_grid = _grid(4.0, 4.0)
        self._wide_grid = _grid(40.0, 8.0)
        self._mid_grid = _grid(6.0, 3.0)
        self._silver_grid = _grid(36.0, 4.0)
        self._fine_grid = _grid(2.0, 1.0)

    def _samples(self) -> None:
        """Where a cup of the layout's size is looked at, around a rim's centre (mm, and offsets
        in the flattened, padded view)."""
        L = self.layout
        rr = L.rim_d / 2
        self.ring = _ring((rr - 3.5, rr - 2.0, rr - 0.5), 24)   # 3 radii × 24 angles
        # a turned cup's top; dice are smaller (22 mm: a die turned 45° reaches 16 mm out)
        self.centre = _ring((0.0, 8.0, max(L.base_d / 2 - 6.0, 17.0)), 8)
        k = L.rim_d / 66.0   # the inside's samples in proportion to the rim (66 mm: the default cup)
        self.inside = _ring((0.0, 8.0 * k, 15.0 * k, rr - 9.0 * k), 14)
        self.near = _ring((rr + 12.0,), 24)
        self.outer = _ring((rr + 1.0,), 24)    # just past a lip; well past a turned cup's top
        self.inner = _ring((rr - 8.0,), 24)    # just inside a lip: an upright cup's pale inside
        self.ball = _ring((0.0, 6.0, 12.0), 8)  # the middle of a ball (40 mm) resting in a cup
        self.wall = _ring((0.85 * rr,), 24)     # a turned cup's sloping wall round its top
        self.pad = int(np.ceil((rr + 16.0) / MM_PER_PX)) + 2
        self.stride = self.vw + 2 * self.pad
        (self.ring_off, self.centre_off, self.inside_off, self.near_off, self.outer_off, self.inner_off, self.ball_off,
         self.wall_off) = (self._offsets(o) for o in (self.ring, self.centre, self.inside, self.near, self.outer,
                                                      self.inner, self.ball, self.wall))

    def resized(self, rim_d: float, base_d: float) -> CupReader:
        """This reader (its view, table and light) looking for cups of another size: one photo is
        read for several sizes without building the view again (:mod:`companion.vision.cups.discover`)."""
        other = copy.copy(self)
        other.layout = replace(self.layout, rim_d=rim_d, base_d=base_d)
        other.cal = replace(self.cal, layout=other.layout)
        other._samples()
        return other

    def _offsets(self, pts_mm: np.ndarray) -> np.ndarray:
        """Sample offsets (mm) → offsets in the flattened, padded view."""
        di = np.round(pts_mm[:, 1] / MM_PER_PX).astype(np.int64)
        dj = np.round(pts_mm[:, 0] / MM_PER_PX).astype(np.int64)
        return di * self.stride + dj

    def _flat(self, centres_mm: np.ndarray) -> np.ndarray:
        """Candidate centres (N, 2) mm → their index in the flattened, padded view."""
        # (np.clip's argument checks cost more than the clipping, thirteen calls a frame)
        j = np.minimum(np.maximum(np.round((centres_mm[:, 0] - self.x0) / MM_PER_PX).astype(np.int64), 0), self.vw - 1)
        i = np.minimum(np.maximum(np.round((centres_mm[:, 1] - self.y0) / MM_PER_PX).astype(np.int64), 0), self.vh - 1)
        return (i + self.pad) * self.stride + j + self.pad

    def _gather(self, flat_img: np.ndarray, centres_mm: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        return flat_img[self._flat(centres_mm)[:, None] + offsets[None, :]]

    # --- the table's colour, measured every frame where no cup can stand or hide it ----------
    def _table_points(self) -> None:
        L, cal = self.layout, self.cal
        w, h = cal.image_size
        cand = np.array([[x, y] for x in np.arange(70, L.table_w - 69, 20.0)
                         for y in np.arange(-20, L.table_h + 21, 20.0)])
        eye = -cal.R.T @ cal.tvec.ravel()   # camera centre in table mm
        rim = L.rim_d / 2
        spots = [(s.x, s.y, rim + 20) for s in cal.slots]
        spots += [(*p, 30.0) for side in L.dice_spots().values() for p in side.values()]
        spots += [(*L.tally_spot(side), rim + 35) for side in ("A", "B")]
        sp = np.array(spots)
        # the segment from a table point towards the camera, up to cup height, misses every cup
        along = np.array([0.0, 0.25, 0.5, 0.75, 1.0])[None, :, None] * (L.cup_h / eye[2])
        on = cand[:, None, :] + (eye[None, None, :2] - cand[:, None, :]) * along     # (N, 5, 2)
        hit = np.hypot(on[..., None, 0] - sp[:, 0], on[..., None, 1] - sp[:, 1]) < sp[:, 2]  # (N, 5, spots)
        keep = cand[~hit.any(axis=(1, 2))]
        pts = keep if len(keep) else cand[:1]
        px = cal.project(np.column_stack([pts, np.zeros(len(pts))]))
        inside = (px[:, 0] >= 1) & (px[:, 0] < w - 1) & (px[:, 1] >= 1) & (px[:, 1] < h - 1)
        self.table_mm = pts[inside]
        self.table_px = np.round(px[inside]).astype(np.int32)
        cols = [np.ones(len(self.table_mm))]
        for k in (0, 1):   # a lightness slope only along directions the points spread over
            if len(self.table_mm) and np.ptp(self.table_mm[:, k]) > 150:
                cols.append(self.table_mm[:, k])
            else:
                cols.append(np.zeros(len(self.table_mm)))
        self.table_design = np.column_stack(cols)

    def table_model(self, frame: np.ndarray) -> tuple[np.ndarray, float, float]:
        """The bare table in this frame: (plane of its HSV value over table mm, hue, saturation),
        measured on spots no cup can stand on or hide; hands and shadows there are outliers."""
        bgr = frame[self.table_px[:, 1], self.table_px[:, 0]]
        if self.gains is not None:
            bgr = np.clip(bgr * self.gains, 0, 255).astype(np.uint8)
        hsv = cv2.cvtColor(bgr[None], cv2.COLOR_BGR2HSV)[0].astype(np.float64)
        s0 = _median(hsv[:, 1])
        h0 = _median(hsv[:, 0])
        if self._table_prior is not None:
            # a player leaning over the table covers many of these spots: the table's colour
            # does not change, so it is judged against what it was, and follows it slowly
            ph, ps = self._table_prior
            dh = np.abs(((hsv[:, 0] - ph) + 90) % 180 - 90)
            match = (np.abs(hsv[:, 1] - ps) < 40) & ((dh < 12) | (ps < 40))
            if match.sum() >= 6:
                h0 = ph + 0.1 * _median(((hsv[match, 0] - ph) + 90) % 180 - 90)
                s0 = 0.9 * ps + 0.1 * _median(hsv[match, 1])
            else:
                h0, s0 = ph, ps
        self._table_prior = (h0 % 180, s0)
        dh = np.abs(((hsv[:, 0] - h0) + 90) % 180 - 90)
        hueless = s0 < 40 or _median(hsv[:, 2]) < 50   # grey, or too dark for a hue
        ok = (np.abs(hsv[:, 1] - s0) < (60 if hueless else 40)) & ((dh < 12) | hueless)
        v = hsv[:, 2]
        coef = np.array([_median(v), 0.0, 0.0])
        A = self.table_design
        for _ in range(2):   # a plane through the brightness, outliers dropped
            if ok.sum() < 6:
                break
            Ao = A[ok]
            coef = np.linalg.solve(Ao.T @ Ao + np.diag([1e-9, 1e-3, 1e-3]), Ao.T @ v[ok])
            resid = np.abs(A @ coef - v)
            ok = ok & (resid < max(6.0, 2.5 * _median(resid[ok])))
        return coef, h0, (s0 if not hueless else -s0 - 1.0)   # a negative saturation: ignore the hue

    def balance(self, frame: np.ndarray) -> None:
        """Measure the light's colour on the markers' white paper and undo it from now on. The
        cup colours are hue bands: under a warm lamp yellow cups turn orange and the silver cup
        yellowish, under a cool light blue cups leave their band, and a third of the cups went
        unseen. A dim frame is brightened until the paper is PAPER_DIM (at most 3×): in a quarter
        of the light green cups fell under the colours' least brightness. A change under 4 % is
        left alone (frames read as they are); a frame whose markers are all covered keeps the
        gains it had."""
        paper = self.cal.paper_white(frame)
        if paper is not None:
            self.paper_gains = paper_gains(paper)

    @property
    def gains(self) -> np.ndarray | None:
        """The light's colour undone on the colour search's view: the paper's gains, none where
        they change less than CAST (the cup judge takes them as measured, small casts too)."""
        g = self.paper_gains
        return None if g is None or np.abs(g - 1).max() < CAST else g

    # --- classify the view ----------------------------------------------------------------
    def view(self, frame: np.ndarray) -> np.ndarray:
        return cv2.remap(frame, self.map1, self.map2, cv2.INTER_LINEAR)

    def _px(self, pts_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        j = np.clip(np.round((pts_mm[..., 0] - self.x0) / MM_PER_PX).astype(np.int32), 0, self.vw - 1)
        i = np.clip(np.round((pts_mm[..., 1] - self.y0) / MM_PER_PX).astype(np.int32), 0, self.vh - 1)
        return i, j

    def labels(self, view: np.ndarray, table: tuple[np.ndarray, float, float]) -> tuple[np.ndarray, np.ndarray]:
        """Label image of the view (UNKNOWN, the cup colours, GREY, TABLE, ORANGE) and its HSV value."""
        hue, sat, value = cv2.split(cv2.cvtColor(view, cv2.COLOR_BGR2HSV))
        coef, h0, s0 = table
        if not hasattr(self, "_gx"):
            self._gx = (self.x0 + np.arange(self.vw, dtype=np.float32) * MM_PER_PX)[None, :]
            self._gy = (self.y0 + np.arange(self.vh, dtype=np.float32) * MM_PER_PX)[:, None]
        vexp = (np.float32(coef[0]) + np.float32(coef[1]) * self._gx + np.float32(coef[2]) * self._gy)
        tol = np.maximum(np.float32(10), np.float32(0.22) * vexp)
        lo = np.clip(vexp - tol, 0, 255).astype(np.uint8)
        hi = np.clip(vexp + tol, 0, 255).astype(np.uint8)
        is_table = cv2.inRange(value, lo, hi)
        # one bit per class (a pixel is of a class when its hue, saturation and value each allow
        # it: three lookups), then a lookup table picks the class by priority — all in OpenCV
        h_lut, s_lut = _HUE_BITS.copy(), _SAT_BITS.copy()
        hueless = s0 < 0
        s0 = -s0 - 1.0 if hueless else s0
        s_lo, s_hi = max(0, s0 - (60 if hueless else 40)), min(255, s0 + (60 if hueless else 40))
        s_lut[_bound(s_lo):_bound(s_hi) + 1] |= TABLE_BIT
        if hueless or s0 < 40:     # a grey or a dark table: its hue means nothing
            h_lut |= TABLE_BIT
        else:
            h_lo, h_hi = _bound((h0 - 12) % 180), _bound((h0 + 12) % 180)
            if h_lo < h_hi:
                h_lut[h_lo:h_hi + 1] |= TABLE_BIT
            else:
                h_lut[:h_hi + 1] |= TABLE_BIT
                h_lut[h_lo:181] |= TABLE_BIT
        bits = cv2.bitwise_and(cv2.LUT(hue, h_lut), cv2.LUT(sat, s_lut))
        bits = cv2.bitwise_and(bits, cv2.LUT(value, _VALUE_BITS))
        bits = cv2.bitwise_and(bits, cv2.bitwise_or(is_table, ~TABLE_BIT & 255))
        out = cv2.LUT(bits, _CLASS_LUT)
        self.last_sat = self.padded(sat)
        if self.weak_lips:   # the cup colours from WEAK_LIP saturation on: lips paler than their cup
            s_lut[WEAK_LIP:] |= 2 | 4 | 8 | 16
            weak = cv2.bitwise_and(cv2.LUT(hue, h_lut), cv2.LUT(sat, s_lut))
            weak = cv2.bitwise_and(weak, cv2.LUT(value, _VALUE_BITS))
            self.last_lips = cv2.LUT(cv2.bitwise_and(weak, cv2.bitwise_or(is_table, ~TABLE_BIT & 255)), _CLASS_LUT)
            self.last_sat_img = sat
        return out, value

    def padded(self, img: np.ndarray) -> np.ndarray:
        """The image with an UNKNOWN border, flattened: samples past the edge need no clipping."""
        p = self.pad
        return cv2.copyMakeBorder(img, p, p, p, p, cv2.BORDER_CONSTANT, value=UNKNOWN).ravel()

    def classify(self, view: np.ndarray, pts_mm: np.ndarray, table: tuple[np.ndarray, float, float]
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Labels and HSV value at table-mm points of any shape (..., 2), for one-off questions."""
        lab, v = self.labels(view, table)
        i, j = self._px(pts_mm)
        return lab[i, j], v[i, j]

    # --- find cups -------------------------------------------------------------------------------
    def score(self, labels: np.ndarray, centres: np.ndarray, label: int) -> tuple[np.ndarray, np.ndarray]:
        """Ring score (lip in the colour) and centre score (top in the colour) at candidate rim
        centres (N, 2) in mm."""
        ring_lab = self._gather(labels, centres, self.ring_off)
        cen_lab = self._gather(labels, centres, self.centre_off)
        return _ring_score(ring_lab == label), (cen_lab == label).mean(axis=1)

    def _search(self, labels: np.ndarray, want: np.ndarray, best: np.ndarray, which: np.ndarray,
                grid: np.ndarray) -> None:
        """For the slots ``which``, look at ``grid`` offsets around ``best``'s positions and keep
        the best ring (in place). One batch for all slots: cheap."""
        if not len(which):
            return
        cand = best[which, None, :2] + grid[None]                 # (S, G, 2)
        flat = cand.reshape(-1, 2)
        lab = self._gather(labels, flat, self.ring_off)
        colour = np.repeat(want[which], len(grid))[:, None]
        lip = (lab == colour).reshape(len(flat), 3, -1).any(axis=1)
        if self.weak_lips:
            # a lip paler than its cup (a party cup's rolled rim, mixed with white) still stands
            # out from the white inside just within it: more saturated by WEAK_LIP_OVER at least
            pale = (self._gather(self._lips, flat, self.ring_off) == colour).reshape(len(flat), 3, -1)
            s_lip = self._gather(self.last_sat, flat, self.ring_off).reshape(len(flat), 3, -1).astype(np.int16)
            s_in = self._gather(self.last_sat, flat, self.inner_off).astype(np.int16)
            lip |= (pale & (s_lip >= s_in[:, None, :] + WEAK_LIP_OVER)).any(axis=1) & (colour != GREY)
        # a lip has the pale inside just within it (the wall of a cup seen through a gap has not)
        inside = self._gather(labels, flat, self.inner_off) == colour
        centre_hit = self._gather(labels, flat, self.centre_off) == colour
        if self.any_make:
            # a cup of one colour inside and out: its inside, in its own shade, is much darker
            # than the lit lip round it (a turned cup's top is the brightest of it, its wall
            # round the top as dark as what lies beyond)
            lit = np.median(self._gather(self._value, flat, self.ring_off).reshape(len(flat), 3, -1).max(axis=1),
                            axis=1)[:, None].astype(np.float32)
            inside &= self._gather(self._value, flat, self.inner_off) >= SHADED * lit
            centre_hit &= self._gather(self._value, flat, self.centre_off) >= SHADED * lit
        ring = np.where(colour[:, 0] == GREY, lip.mean(axis=1), (lip & ~inside).mean(axis=1))
        # an upright cup shows its pale inside; all one colour is a turned cup, a sleeve, a die
        centre = centre_hit.mean(axis=1)
        ring = np.where((centre < 0.7) | (colour[:, 0] == GREY), ring, 0.0).reshape(len(which), len(grid))
        # ties (a silver cup is grey all over: lip, wall and inside) go to the nearest candidate
        k = (ring - 1e-4 * np.hypot(grid[:, 0], grid[:, 1])[None, :]).argmax(axis=1)
        pick = ring[np.arange(len(which)), k]
        better = pick >= best[which, 2]
        rows = which[better]
        best[rows, :2] = cand[better, k[better]]
        best[rows, 2] = pick[better]

    def find(self, labels: np.ndarray, slot: Slot, around: tuple[float, float], radius: float,
             step: float) -> tuple[float, float, float, float]:
        """Best upright-cup candidate of the slot's colour within ``radius`` of ``around``:
        (x, y, ring score, centre score)."""
        label = LABEL[slot.cup]
        g = np.arange(-radius, radius + 0.1, step)
        gx, gy = np.meshgrid(g, g)
        cand = np.column_stack([gx.ravel() + around[0], gy.ravel() + around[1]])
        ring, cen = self.score(labels, cand, label)
        k = int(np.argmax(ring))
        return float(cand[k, 0]), float(cand[k, 1]), float(ring[k]), float(cen[k])

    def ball_fractions(self, labels: np.ndarray, value: np.ndarray, view: np.ndarray, centres: np.ndarray,
                       silver: np.ndarray | None = None) -> np.ndarray:
        """How much of each cup's inside shows a ball: white (much brighter than the rest of the
        inside) or orange. ``view`` is the BGR view the labels were made from."""
        lab = self._gather(labels, centres, self.inside_off)
        v = self._gather(value, centres, self.inside_off).astype(np.float32)
        s = self._gather(self.last_sat, centres, self.inside_off)
        ref = np.partition(v, v.shape[1] // 4, axis=1)[:, v.shape[1] // 4: v.shape[1] // 4 + 1]
        # white: no tint at all (the inside and its water carry the cup's tint) and brighter
        white = (s < 30) & (v >= 1.3 * ref + 5)
        if self.any_make:
            # A ball rests on the bottom, or floats on the water (the seed fills cups a third):
            # a white one shows there, on the cup's axis as the camera sees it, not only in the
            # lit band of the wall round the inside (a deep cup's dark bottom made that band a
            # "ball" in every cup of a photo). In a cup its own colour inside, anything untinted
            # and bright is a ball wherever it shows.
            h = self.layout.cup_h
            on_axis = np.zeros((len(centres), 1), bool)
            for depth in (h - BALL_MM / 2, 0.75 * h - BALL_MM / 2, 0.5 * h - BALL_MM / 2):
                spot = self.base_seen(centres, depth)
                sv = self._gather(value, spot, self.ball_off).astype(np.float32)
                ss = self._gather(self.last_sat, spot, self.ball_off)
                on_axis |= ((ss < 30) & (sv >= 1.3 * ref + 5)).mean(axis=1, keepdims=True) >= 0.3
            coloured = ((s >= 60) & (v >= 40)).mean(axis=1, keepdims=True) >= 0.3
            white &= coloured | on_axis
            # a white inside, shaded by its own wall, is lit as brightly as a white ball in it:
            # only an orange ball can be told there (a silver cup has its own test below)
            plain = (np.percentile(s, 75, axis=1) < 25) & ~(silver if silver is not None else np.zeros(len(s), bool))
            white[plain] = False
        if silver is not None and silver.any():
            # a silver cup's inside is as untinted as a white ball, and a shadow across it makes
            # half of it "brighter": a ball is brighter than the silver lip too. Brightness as the
            # mean of B, G and R, not HSV's value (the largest of them): under a coloured light
            # the balanced lip keeps a little tint, and its largest channel made it as bright as
            # a white ball whose channels the light had clipped.
            rows = np.nonzero(silver)[0]
            grey_in = view[self._px(centres[rows, None, :] + self.inside[None])].mean(axis=-1)
            grey_lip = np.median(view[self._px(centres[rows, None, :] + self.ring[None])].mean(axis=-1), axis=1)
            brighter = np.ones_like(white)
            brighter[rows] = grey_in >= 1.1 * grey_lip[:, None]
            white &= brighter
        return ((lab == ORANGE) | white).mean(axis=1)

    def second_look(self, frame: np.ndarray) -> Reading | None:
        """A closer, costlier reading of the whole frame for the watch's rare decisions (a cup
        gone, a tally grown), or None where this reader has none."""
        return None

    def looks(self, frame: np.ndarray, places: list[tuple[float, float]]) -> list[np.ndarray] | None:
        """How each place (table mm) looks, to be compared with how it looked before (the same
        size, grey), or None where this reader cannot say."""
        return None

    def turned_at(self, labels: np.ndarray, cup: str, around: tuple[float, float], radius: float,
                  upright: list[tuple[float, float]] | None = None) -> tuple[float, float, float] | None:
        """A cup of this colour standing upside down within ``radius`` of ``around``, not the wall
        of one of the ``upright`` cups: (x, y, score) or None."""
        seen = [CupSeen("", "", x, y, [], 1.0) for x, y in (upright or [])]
        found = self.find_turned(labels, seen, cups=(cup,), window=(around[0], around[1], radius))
        return (found[0].x, found[0].y, found[0].score) if found else None

    def clean(self, labels: np.ndarray, x: float, y: float) -> float:
        """Fraction of a place's rim samples that are explained (table, a cup colour, a pale
        inside): low when a hand, an arm, a shadow or a ball is over it."""
        c = np.array([[x, y]])
        lab = np.concatenate([self._gather(labels, c, self.ring_off)[0], self._gather(labels, c, self.centre_off)[0]])
        return float((lab != UNKNOWN).mean())

    def labelled(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The frame's view of the plane (the light undone), its label image and its HSV value,
        both padded; a frame of another size than the calibration's is a ValueError."""
        if frame.shape[1] != self.cal.image_size[0] or frame.shape[0] != self.cal.image_size[1]:
            raise ValueError(f"frame is {frame.shape[1]}×{frame.shape[0]}, calibrated for "
                             f"{self.cal.image_size[0]}×{self.cal.image_size[1]}")
        view = self.view(frame)
        if self.gains is not None:
            view = cv2.multiply(view, (*self.gains.tolist(), 0.0))
        lab_img, val_img = self.labels(view, self.table_model(frame))
        return view, self.padded(lab_img), self.padded(val_img)

    def read(self, frame: np.ndarray, hints: dict[str, tuple[float, float]] | None = None,
             turned: bool = True, search_all: bool = True) -> Reading:
        """Every cup in the frame. ``hints`` (slot name → where its cup was last seen) makes the
        common case cheap: a cup found where it was costs nine candidates, not a search; with
        ``search_all`` False, slots without a hint are not searched at all."""
        t0 = time.perf_counter()
        view, labels, value = self.labelled(frame)
        self._value = value
        if self.weak_lips:
            self._lips = self.padded(self.last_lips)
        slots = self.cal.slots
        want = self._slot_labels
        start = np.array([(hints or {}).get(s.name, (s.x, s.y)) for s in slots], np.float64)
        best = np.zeros((len(slots), 3))     # x, y, ring score
        best[:, :2] = start
        todo = np.arange(len(slots))
        if hints is not None:
            hinted = np.array([k for k, s in enumerate(slots) if s.name in hints], np.int64)
            self._search(labels, want, best, hinted, self._near_grid)
            todo = np.nonzero(best[:, 2] < self._need)[0]
            if not search_all:
                todo = np.intersect1d(todo, hinted)
            for k in todo:
                best[k, :2] = (slots[k].x, slots[k].y)
        if len(todo):
            silver = todo[want[todo] == GREY]     # a silver cup stays where it stands
            self._search(labels, want, best, silver, self._silver_grid)
            todo = todo[want[todo] != GREY]
            self._search(labels, want, best, todo, self._wide_grid)
            # the coarse grid may sit a few mm off a rim: refine every fair candidate first
            fine = todo[best[todo, 2] >= 0.6 * self._need[todo]]
            fine = np.concatenate([fine, silver])
            self._search(labels, want, best, fine, self._mid_grid)
            self._search(labels, want, best, fine, self._fine_grid)
        found = [CupSeen(s.side, s.cup, float(best[k, 0]), float(best[k, 1]), [], float(best[k, 2]), s.name)
                 for k, s in enumerate(slots) if best[k, 2] >= self._need[k]]
        # one cup seen from two slots' searches (a knocked cup) counts once
        found.sort(key=lambda c: -c.score)
        kept: list[CupSeen] = []
        by_cup: dict[str, list[CupSeen]] = {}
        for c in found:
            same = by_cup.setdefault(c.cup, [])
            if all(math.hypot(o.x - c.x, o.y - c.y) > 0.8 * self.layout.rim_d for o in same):
                kept.append(c)
                same.append(c)
        upside_down: list[CupSeen] = []
        if turned:
            standing: list[tuple[float, str, float, float]] | None = [] if self.any_make else None
            upside_down = self.find_turned(labels, kept, COLOURS if self.any_make else CUPS, standing=standing)
            if standing:
                kept += self._promoted(kept, upside_down, standing)
        if kept:
            fractions = self.ball_fractions(labels, value, view, np.array([[c.x, c.y] for c in kept]),
                                            np.array([c.cup == "silver" for c in kept]))
            for c, f in zip(kept, fractions, strict=True):
                c.ball = float(f)
        reading = Reading(kept, upside_down)
        self._centres(reading.cups + reading.upside_down)
        reading.ms = (time.perf_counter() - t0) * 1000
        self.last_view, self.last_labels, self.last_values = view, labels, value
        return reading

    def find_turned(self, labels: np.ndarray, upright: list[CupSeen], cups: tuple[str, ...] = CUPS,
                    window: tuple[float, float, float] | None = None,
                    standing: list[tuple[float, str, float, float]] | None = None) -> list[CupSeen]:
        """Cups upside down anywhere in the sides' cup areas (the silver tally), or only within
        ``window`` (x, y, radius). Given a ``standing`` list, discs of a cup's colour that are
        standing cups, their colour inside, are added to it: (score, cup, x, y)."""
        L = self.layout
        if window is None:
            xs = np.arange(self.x0 + L.rim_d / 2, self.x0 + self.vw * MM_PER_PX - L.rim_d / 2, 8.0)
            ys = np.arange(self.y0 + L.rim_d / 2, self.y0 + self.vh * MM_PER_PX - L.rim_d / 2, 8.0)
        else:
            xs = np.arange(-window[2], window[2] + 0.1, 8.0) + window[0]
            ys = np.arange(-window[2], window[2] + 0.1, 8.0) + window[1]
        gx, gy = np.meshgrid(xs, ys)
        cand = np.column_stack([gx.ravel(), gy.ravel()])
        # nothing stands on a marker, whose white margin is a grey disc to this search: where each
        # one shows in the view (on the rims' plane, shifted towards the camera's foot)
        eye = -self.cal.R.T @ self.cal.tvec.ravel()
        clear = MARKER_MM / 2 + L.rim_d / 2
        for mx, my in ((0.0, 0.0), (L.table_w, 0.0), (L.table_w, L.table_h), (0.0, L.table_h)):
            mx, my = mx + (eye[0] - mx) * self.plane / eye[2], my + (eye[1] - my) * self.plane / eye[2]
            cand = cand[(np.abs(cand[:, 0] - mx) > clear) | (np.abs(cand[:, 1] - my) > clear)]
        cen_lab = self._gather(labels, cand, self.centre_off)
        out: list[CupSeen] = []
        for cup in cups:
            label = LABEL[cup]
            hit = cen_lab == label
            cs = hit.mean(axis=1)
            # a turned cup's top is a disc: its outer samples all round (a die, seen with its
            # sides, is a patch longer one way than the other, and shorter than the disc)
            idx = np.nonzero((cs >= TURNED_CENTRE) & (hit[:, -8:].sum(axis=1) >= 7))[0]
            if not len(idx):
                continue
            same = [o for o in upright if o.cup in ("", cup)]
            rims = np.array([[o.x, o.y] for o in same]).reshape(-1, 2)
            bases = self.base_seen(rims) if len(rims) else rims
            # a turned cup has no lip: the half of the ring away from the camera (which its own
            # wall cannot cover) is not its colour, where no upright cup of it stands beside
            far = self._far_half(cand[idx])
            if len(rims):
                spots = (cand[idx][:, None, :] + self.outer[None]).reshape(-1, 2)
                beside = (_segment_distance(spots, rims, bases) < L.rim_d / 2 + 4).any(axis=1)
                far &= ~beside.reshape(len(idx), -1)
            ring_hit = self._gather(labels, cand[idx], self.outer_off) == label
            rs = (ring_hit & far).sum(axis=1) / np.maximum(far.sum(axis=1), 1)
            if label == GREY:   # a pale inside is grey too: a turned silver cup has no lip around it
                near = self._gather(labels, cand[idx], self.near_off)
                rs = np.maximum(rs, ((near == GREY) & far).sum(axis=1) / np.maximum(far.sum(axis=1), 1))
                # and grey is also a pale table in uneven light: the top must stand out from
                # the bare table around it
                table_round = ((near == TABLE) & far).sum(axis=1) / np.maximum(far.sum(axis=1), 1)
                v_top = self._gather(self._value, cand[idx], self.centre_off).mean(axis=1)
                v_round = self._gather(self._value, cand[idx], self.near_off).astype(np.float64)
                v_round = np.where(near == TABLE, v_round, np.nan)
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    contrast = np.abs(v_top - np.nanmean(v_round, axis=1)) / np.maximum(v_top, 1)
                rs = np.where((table_round >= 0.5) & (np.nan_to_num(contrast) > 0.2), rs, 1.0)
            ok = idx[rs < 0.3]
            if standing is not None and len(ok):
                # a cup its own colour inside, standing, is a disc of its colour too: but a turned
                # cup's top is the brightest of it, its sloping wall round the top darker, while
                # a standing cup's shaded bottom is no brighter than its lip and wall round it
                # (seen on the half towards the camera, which a standing cup's lip shows)
                wall = self._gather(self._value, cand[ok], self.wall_off).astype(np.float32)
                top = self._gather(self._value, cand[ok], self.centre_off).mean(axis=1)
                near = ~self._far_half(cand[ok])
                seen = (wall * near).sum(axis=1) / np.maximum(near.sum(axis=1), 1)
                turned_top = seen < TURNED_TOP * np.maximum(top, 1)
                # and the standing one shows its colour all round the near half of that ring
                # (its lip and wall; on the bare table round a die or a cloth's spot, it does not)
                lip = ((self._gather(labels, cand[ok], self.wall_off) == label) & near).sum(axis=1)
                disc = ok[~turned_top & (lip >= STANDING_LIP * np.maximum(near.sum(axis=1), 1))]
                if len(rims):   # not the wall of a cup found standing (a tall one, seen steeply)
                    disc = disc[(_segment_distance(cand[disc], rims, bases) >= 0.35 * L.rim_d).all(axis=1)]
                standing += [(float(cs[k]), cup, float(cand[k, 0]), float(cand[k, 1])) for k in disc]
                ok = ok[turned_top]
            order = ok[np.argsort(-cs[ok], kind="stable")]
            # not the wall of an upright cup of that colour: seen on the rims' plane, it runs
            # from the rim towards where the cup's base appears
            if len(rims):   # (before taking the surest: a view of the whole table has many walls)
                order = order[(_segment_distance(cand[order], rims, bases) >= 0.35 * L.rim_d).all(axis=1)]
            taken = np.array([[o.x, o.y] for o in upright + out]).reshape(-1, 2)
            for k in order[:400]:
                x, y = cand[k]
                if len(taken) and (np.hypot(taken[:, 0] - x, taken[:, 1] - y) < 0.9 * L.rim_d).any():
                    continue
                out.append(CupSeen(L.side_of(x), cup, float(x), float(y), [], float(cs[k])))
                taken = np.vstack([taken, [[x, y]]])
        return out

    def _promoted(self, upright: list[CupSeen], turned: list[CupSeen],
                  standing: list[tuple[float, str, float, float]]) -> list[CupSeen]:
        """The discs :meth:`find_turned` found ``standing`` (a cup its own colour inside, whose lip
        the ring search did not take for one), surest first, where no cup was seen, at most
        ``cups_per_row`` of a colour a side (RULES.md), each on the side where it stands."""
        L = self.layout
        eye = -self.cal.R.T @ self.cal.tvec.ravel()
        count = Counter((c.side, c.cup) for c in upright)
        taken = [(c.x, c.y) for c in upright + turned]
        out: list[CupSeen] = []
        for score, cup, x, y in sorted(standing, reverse=True):
            side = side_where_it_stands(L, eye, x, L.cup_h, self.plane)
            if count[(side, cup)] >= L.cups_per_row or any(
                    math.hypot(x - tx, y - ty) < 0.9 * L.rim_d for tx, ty in taken):
                continue
            out.append(CupSeen(side, cup, x, y, [], score))
            taken.append((x, y))
            count[(side, cup)] += 1
        return out

    def _far_half(self, centres: np.ndarray) -> np.ndarray:
        """(N, 24) mask of the ring's angles facing away from the camera's foot."""
        eye = -self.cal.R.T @ self.cal.tvec.ravel()
        d = centres - eye[:2]
        d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-6)
        a = np.linspace(0, 2 * np.pi, 24, endpoint=False) + 0.13
        return (d[:, :1] * np.cos(a)[None] + d[:, 1:] * np.sin(a)[None]) > 0.25

    def base_seen(self, rims: np.ndarray, depth: float | None = None) -> np.ndarray:
        """Where the bases of cups with rims at ``rims`` (N, 2) appear in the view (on the rims'
        plane, or on the table's for a view of it: the same shift towards the camera's foot);
        with ``depth``, a point that far below the rim on the cup's axis."""
        eye = -self.cal.R.T @ self.cal.tvec.ravel()
        k = (self.layout.cup_h if depth is None else max(depth, 0.0)) / eye[2]
        return rims + (eye[:2] - rims) * k

    def _centres(self, cups: list[CupSeen]) -> None:
        if not cups:
            return
        px = np.round(self.cal.project(np.array([[c.x, c.y, self.plane] for c in cups])), 1)
        for c, p in zip(cups, px.tolist(), strict=True):
            c.center = p
