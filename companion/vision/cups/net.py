"""Cups found by a small network (``models/cup-finder.onnx``, see ``models/cup-finder.md``).

The frame is warped by the markers' homography to a top view of the table's own plane (4 mm a
pixel, the table and 150 mm round it): whatever camera, lens and tilt, a cup's rim shows there as
a circle of its size (a little larger: it stands higher), the markers fix that view exactly (no
focal length needed), and one network serves every table. The network gives, at stride 4 (16 mm
a cell), a heat map per kind of thing: a standing cup of each colour (its rim's centre), a cup
turned over of each colour (its top's centre), and a ball resting in a cup (at that cup's rim's
centre). Peaks of those maps are the cups. It was trained on photo-realistic rendered tables
(``tools/render/cup_scenes.py``) of every cup make, camera, light and cloth
(``tools/train/train_cups.py``); runtime is ``cv2.dnn`` alone. Given the calibration, each place
it proposes is looked at again, closer, by the cup judge (:mod:`companion.vision.cups.judge`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from companion.vision.cups.judge import CLASSES as JUDGE_CLASSES
from companion.vision.cups.judge import JUDGES, CupJudge, JudgeMemo
from companion.vision.cups.reader import CupReader, CupSeen, Reading
from companion.vision.nets import read_onnx

MODELS = Path(__file__).resolve().parents[3] / "models"
MODEL = "cup-finder.onnx"
MM_PX = 4.0        # the top view's scale
PAD_MM = 150.0     # the view takes in this much round the markers' rectangle
STRIDE = 4         # the network's output cell: 16 mm
COLOURS = ("blue", "red", "green", "yellow")
# output channels: standing cups of each colour and the silver cup, turned cups of each colour, a ball
KINDS = [("standing", c) for c in (*COLOURS, "silver")] + [("turned", c) for c in COLOURS] + [("ball", "")]
STANDING_KINDS = [i for i, (what, _) in enumerate(KINDS) if what == "standing"]
TURNED_KINDS = [i for i, (what, _) in enumerate(KINDS) if what == "turned"]
SURE = 0.4         # a peak this high is a thing (the held-out renders' best F1, models/cup-finder.md)
BALL_IN_MM = 45.0  # a ball this near a standing cup's centre (where its rim shows) rests in it
APART_MM = 55.0    # two cups' centres are never closer (the smallest rim, 80 mm, seen as it stands)
MARKER_CLEAR_MM = 55.0   # a find this near a marker's centre (either way) is the marker
# a cup standing this far outside the markers' rectangle is not on the table (60 at first; 30 left
# out blobs of a print and a stray just past the near markers, none of the game's cups: 129
# rendered tables 70 -> 71 right, cups extra 39 -> 37, turned extra 7 -> 6; models/cup-judge.md)
OFF_TABLE_MM = 30.0
TALLY_STEP_MM = 150.0    # off the table, a turned cup this near one of the tally's is the tally grown
BARE_EXPLAINED = 0.5     # a place with no cup found and this share of its colours explained is bare
JUDGE_FLOOR = 0.1        # with the judge (judge.py), the finder's peaks this high are looked at again
JUDGE_SURE = 0.95        # and a place the judge is this sure holds a cup is one,
# and so is a place the finder is HEAT_ALSO sure of (it sees the table round the place: the rows)
# that the judge does not rule out (JUDGE_ALSO): translucent cups in a dim room, small drawn cups
# turned over. Chosen together on validation renders (60 tables: 17 -> 19 entirely right, cups
# missed / extra 65 / 40 -> 67 / 36, from the judge alone at 0.9: 73 / 39; drawn tables 36 -> 38
# of 40; the live and set-up benches the same; models/cup-judge.md, "The finder's word")
JUDGE_ALSO, HEAT_ALSO = 0.2, 0.6
# a place judged a turned cup is one at a lower bar: the judges' "none" takes a share of a turned
# cup's flat top in odd light (rendered tables 120,000 and 121,000: 50 -> 55 of 105 right,
# turned missed 40 -> 32, extra 5 -> 6; at 0.6: 55, 30 / 8; validation alike, drawn 38 of 40)
TURNED_SURE = 0.8
TURNED_BESIDE_MM = 8.0   # a turned peak this near a judged place is that place (judged already)
TURNED_PLACES = True     # a photo: judge the turned maps' own peaks beside a standing cup (CupFinder._turned_places)
# The judges' and the ball look's ball probability (averaged logits) that is a ball in a colour
# cup in a photo. Chosen again after the ball look was trained again: 0.85 left out balls it was
# 0.5-0.85 sure of (48 validation renders, half drawn to the hidden tables' description: 21 -> 25
# entirely right, balls missed 21 -> 15, extra 1 -> 1; models/cup-judge.md, "The ball bar chosen
# again"). A silver cup's metal shines like a ball now and then: its bar stays (at 0.5 two false
# balls more, one found more).
BALL_SURE = 0.5
SILVER_BALL_SURE = 0.85
# The live watch asks the judges alone (no ball look, no mirror) a few times a second and wants a
# ball in three looks: its bar stays where its sequences chose it (a false throw costs more than a
# ball seen a look later)
WATCH_BALL_SURE = 0.85
LOOK_MIDDLE = 24   # a place's look (NetCupReader.looks): the judge's patch less this much a side (112 of 280 mm)
KIND_EPS, KIND_WEIGHT = 0.05, 2   # how the finder's heat of each kind weighs in the judge's choice (validation)


# the finder's kinds in the judge's order of classes (after its "none")
JUDGE_ORDER = [KINDS.index(tuple(c.split("."))) for c in JUDGE_CLASSES[1:]]
TURNED_CLASSES = np.array([i for i, c in enumerate(JUDGE_CLASSES[1:]) if c.startswith("turned.")])
STANDING_CLASSES = np.array([i for i, c in enumerate(JUDGE_CLASSES[1:]) if c.startswith("standing.")])
# whether a place is a cup standing or one turned over, the finder's heat weighs in less than for
# which colour: where the judge says "turned" plainly, the finder's standing peak beside a
# turned cup's top (CupFinder._turned_places) out-voted it squared (rendered tables 120,000 and
# 121,000, never trained on: 48 -> 50 of 105 right, turned missed 42 -> 40, extra 7 -> 5; 0,
# the judge alone: 52, but validation s091101 and s098002 lost a turned cup more)
GROUP_WEIGHT = 1


def view_matrix(homography: np.ndarray) -> np.ndarray:
    """Top-view pixels → frame pixels, for ``cv2.warpPerspective(..., WARP_INVERSE_MAP)``;
    ``homography`` maps table mm (the table's plane) to frame pixels."""
    T = np.array([[MM_PX, 0, -PAD_MM], [0, MM_PX, -PAD_MM], [0, 0, 1]], np.float64)
    return homography @ T


def view_size(table_w: float, table_h: float) -> tuple[int, int]:
    """(width, height) of the top view, rounded up to the network's 32-pixel step."""
    w = int(np.ceil((table_w + 2 * PAD_MM) / MM_PX / 32) * 32)
    h = int(np.ceil((table_h + 2 * PAD_MM) / MM_PX / 32) * 32)
    return w, h


def top_view(frame: np.ndarray, homography: np.ndarray, table_w: float, table_h: float) -> np.ndarray:
    return cv2.warpPerspective(frame, view_matrix(homography), view_size(table_w, table_h),
                               flags=cv2.INTER_AREA | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT)


def view_to_mm(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return u * MM_PX - PAD_MM, v * MM_PX - PAD_MM


@dataclass
class Found:
    kind: str      # standing | turned | ball
    cup: str       # its colour (silver for the silver cup); "" for a ball
    x: float       # table mm on the table's plane (where the rim or the top shows)
    y: float
    score: float
    kinds: np.ndarray | None = None   # the finder's heat of each cup kind there (KINDS[:-1])
    choice: np.ndarray | None = None  # judged: how much each of JUDGE_CLASSES[1:] is what stands there (sums to 1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class CupFinder:
    """The network, loaded once (``available()`` says whether the model file is there)."""

    def __init__(self, model: Path = MODELS / MODEL, judge: Path | Sequence[Path] | None = JUDGES) -> None:
        self.net = read_onnx(model)
        self.judge = CupJudge(judge) if judge is not None and CupJudge.available(judge) else None
        self.last_view: np.ndarray | None = None
        self.last_heat: np.ndarray | None = None
        self.last_judged: list[Found] | None = None

    @staticmethod
    def available(model: Path = MODELS / MODEL) -> bool:
        return model.exists()

    def heat(self, view: np.ndarray) -> np.ndarray:
        """(kinds, h/4, w/4) probabilities for a top view."""
        blob = cv2.dnn.blobFromImage(view, 1 / 255.0, swapRB=False)
        self.net.setInput(blob)
        return _sigmoid(self.net.forward()[0])

    def find(self, frame: np.ndarray, homography: np.ndarray, table_w: float, table_h: float,
             sure: float | None = None, cal=None, ball_look: bool = True, memo=None,
             turned_places: bool = False) -> list[Found]:
        """Every cup and ball in the frame, surest first: peaks of the heat maps, a cup's
        peaks of several kinds at one place taken as its surest kind. Given the calibration (the
        camera's pose: which way is up) and the judge's model, every place the finder is even a
        little sure of (JUDGE_FLOOR) is judged again on the frame's own pixels, and the judge
        says what stands there, how surely, and whether a ball rests in it (``memo``: a live
        watch's :class:`JudgeMemo`; ``turned_places``: see :meth:`_turned_places`)."""
        view = top_view(frame, homography, table_w, table_h)
        self.last_view, self.last_heat = view, self.heat(view)
        self.last_judged = None
        if self.judge is not None and cal is not None:
            self.last_judged = self._judged(frame, cal, self._clear(peaks(self.last_heat, JUDGE_FLOOR, balls=False),
                                                                    table_w, table_h), ball_look, memo)
            if turned_places:
                self.last_judged = self._turned_places(frame, cal, self.last_judged, table_w, table_h)
        return self.refind(table_w, table_h, sure)

    def _turned_places(self, frame: np.ndarray, cal, judged: list[Found], table_w: float, table_h: float) -> list[Found]:
        """A cup turned over shows its top farther from the camera's foot than the middle of what
        shows of it (its wall widens down to the table, towards the camera), and the finder's
        surest peak there is often a standing cup's, 12-56 mm nearer the foot, where the judge too
        sees a standing cup; its turned maps still peak at the top (rendered tables 120,000 and
        121,000 and the hidden-like validation: 31 of the 73 turned cups lost were lost so). So
        the turned maps' own peaks beside a place judged standing, beyond it from the camera's
        foot, are judged too, and one judged a turned cup (JUDGE_SURE) is the cup there. For
        photos (a set-up has no cup turned; the live watch judges where it decides)."""
        turned = self.last_heat.copy()
        turned[[i for i in range(len(KINDS)) if KINDS[i][0] != "turned"]] = 0.0
        eye = (-cal.R.T @ cal.tvec).ravel()
        asked = []
        for t in self._clear(peaks(turned, JUDGE_FLOOR, balls=False), table_w, table_h):
            near = [j for j in judged if j.kind == "standing" and j.cup != "silver"
                    and TURNED_BESIDE_MM ** 2 <= (t.x - j.x) ** 2 + (t.y - j.y) ** 2 < APART_MM ** 2]
            if not near or any((t.x - j.x) ** 2 + (t.y - j.y) ** 2 < TURNED_BESIDE_MM ** 2 for j in judged):
                continue
            j = min(near, key=lambda j: (t.x - j.x) ** 2 + (t.y - j.y) ** 2)
            # beyond it as seen from the camera's foot: where a turned cup's top shows
            out = np.array([j.x - eye[0], j.y - eye[1]])
            if np.dot([t.x - j.x, t.y - j.y], out) > 0:
                asked.append((t, j))
        if not asked:
            return judged
        again = self._judged(frame, cal, [t for t, _ in asked], ball_look=False)
        out = list(judged)
        for (_, j), a in zip(asked, [a for a in again if a.kind != "ball"], strict=True):
            if a.kind == "turned" and a.score >= JUDGE_SURE and j in out:
                out[out.index(j)] = a
                out = [b for b in out if not (b.kind == "ball" and (b.x, b.y) == (j.x, j.y))]
        return out

    def _judged(self, frame: np.ndarray, cal, found: list[Found], ball_look: bool = True, memo=None) -> list[Found]:
        probs, balls = self.judge.judge(frame, cal, [(f.x, f.y) for f in found], ball_look=ball_look, memo=memo)
        out = []
        for f, p, b in zip(found, probs, balls, strict=True):
            # which kind: both looks together (the finder saw the table round it, the judge the
            # place up close); whether a cup at all: the judge's
            choice = p[1:] * (f.kinds[JUDGE_ORDER] + KIND_EPS) ** KIND_WEIGHT
            choice = choice / max(float(choice.sum()), 1e-12)
            what, cup = JUDGE_CLASSES[int(np.argmax(choice)) + 1].split(".")
            if GROUP_WEIGHT != KIND_WEIGHT:
                g = p[1:] * (f.kinds[JUDGE_ORDER] + KIND_EPS) ** GROUP_WEIGHT
                up = float(g[TURNED_CLASSES].sum()) >= 0.5 * float(g.sum())
                pick = TURNED_CLASSES if up else STANDING_CLASSES
                what, cup = JUDGE_CLASSES[int(pick[np.argmax(choice[pick])]) + 1].split(".")
            out.append(Found(what, cup, f.x, f.y, float(1.0 - p[0]), f.kinds, choice))
            if what == "standing" and b >= (SILVER_BALL_SURE if cup == "silver" else BALL_SURE):
                out.append(Found("ball", "", f.x, f.y, float(b)))
        return out

    def silver_again(self, frame: np.ndarray, cal, table_w: float, table_h: float) -> list[Found]:
        """The last frame's faint silver peaks (SILVER_FLOOR up to JUDGE_FLOOR, none of them judged
        yet), judged: a metal cup mirroring a striped cloth can leave the finder all but blind."""
        assert self.last_heat is not None and self.last_judged is not None
        silver = self.last_heat.copy()
        silver[[i for i in range(len(KINDS) - 1) if KINDS[i] != ("standing", "silver")]] = 0.0
        faint = [f for f in self._clear(peaks(silver, SILVER_FLOOR, balls=False), table_w, table_h)
                 if all((f.x - j.x) ** 2 + (f.y - j.y) ** 2 >= APART_MM ** 2 for j in self.last_judged)]
        return self._judged(frame, cal, faint) if faint else []

    @staticmethod
    def _clear(found: list[Found], table_w: float, table_h: float) -> list[Found]:
        # a marker's white square is no silver cup, nor its black one a turned cup or a ball; a
        # cup of a colour may stand on a marker's edge (a crowded 1.6 m table: its rim seen 48 mm
        # from the marker's centre, the set-up refused for it, rendered validation s095702)
        corners = ((0.0, 0.0), (table_w, 0.0), (table_w, table_h), (0.0, table_h))
        return [f for f in found if (f.kind == "standing" and f.cup != "silver")
                or all(max(abs(f.x - mx), abs(f.y - my)) > MARKER_CLEAR_MM for mx, my in corners)]

    def refind(self, table_w: float, table_h: float, sure: float | None = None) -> list[Found]:
        """The last frame's finds again, at another threshold (no second run of the network)."""
        assert self.last_heat is not None
        if self.last_judged is not None:
            return [f for f in self.last_judged if _kept(f, sure)]
        return self._clear(peaks(self.last_heat, SURE if sure is None else sure), table_w, table_h)


def _kept(f: Found, sure: float | None) -> bool:
    """A judged find is a thing: a ball as sure as BALL_SURE; a cup at the judge's ``sure`` where
    one is asked for (a set-up's), else at JUDGE_SURE or by the finder's word (JUDGE_ALSO)."""
    if f.kind == "ball":
        return f.score >= BALL_SURE
    if sure is not None:
        return f.score >= sure
    bar = TURNED_SURE if f.kind == "turned" else JUDGE_SURE
    return f.score >= bar or (f.score >= JUDGE_ALSO and float(np.max(f.kinds)) >= HEAT_ALSO)


def peaks(heat: np.ndarray, sure: float = SURE, balls: bool = True) -> list[Found]:
    cups = heat[:-1]
    best = cups.max(axis=0)
    kind = cups.argmax(axis=0)
    # a peak: the highest of the cup maps within a cell round it
    top = cv2.dilate(best.astype(np.float32), np.ones((3, 3), np.uint8))
    ii, jj = np.nonzero((best >= sure) & (best >= top))
    order = np.argsort(-best[ii, jj], kind="stable")
    out: list[Found] = []
    taken: list[tuple[float, float]] = []
    for k in order:
        i, j = int(ii[k]), int(jj[k])
        x, y = _refined(best, i, j)
        xm, ym = view_to_mm(np.float64(x * STRIDE + STRIDE / 2 - 0.5), np.float64(y * STRIDE + STRIDE / 2 - 0.5))
        if any((xm - a) ** 2 + (ym - b) ** 2 < APART_MM ** 2 for a, b in taken):
            continue
        what, cup = KINDS[int(kind[i, j])]
        out.append(Found(what, cup, float(xm), float(ym), float(best[i, j]), cups[:, i, j].astype(np.float64)))
        taken.append((float(xm), float(ym)))
    if not balls:
        return out
    ball = heat[-1]
    btop = cv2.dilate(ball.astype(np.float32), np.ones((3, 3), np.uint8))
    bi, bj = np.nonzero((ball >= sure) & (ball >= btop))
    for i, j in zip(bi.tolist(), bj.tolist(), strict=True):
        x, y = _refined(ball, i, j)
        xm, ym = view_to_mm(np.float64(x * STRIDE + STRIDE / 2 - 0.5), np.float64(y * STRIDE + STRIDE / 2 - 0.5))
        out.append(Found("ball", "", float(xm), float(ym), float(ball[i, j])))
    return out


def _refined(m: np.ndarray, i: int, j: int) -> tuple[float, float]:
    """A peak's position to a fraction of a cell: the centre of mass of its 3 × 3 neighbourhood."""
    i0, i1, j0, j1 = max(i - 1, 0), min(i + 2, m.shape[0]), max(j - 1, 0), min(j + 2, m.shape[1])
    w = m[i0:i1, j0:j1].astype(np.float64)
    s = w.sum()
    # (sums of rows and columns, not a grid of indices: a look has dozens of peaks)
    return float(w.sum(axis=0) @ np.arange(j0, j1) / s), float(w.sum(axis=1) @ np.arange(i0, i1) / s)


CUP_H_MM = 115.0   # a cup's height where none is known (cups 90-140 mm): where a rim stands


def stands_at(eye: np.ndarray, x, y, height: float = CUP_H_MM):
    """Where on the table a thing ``height`` above it stands, that shows at (x, y) on the table's
    plane (numbers or arrays): seen from the camera at ``eye`` (table mm), it shows farther from
    the camera's foot."""
    k = (eye[2] - height) / eye[2]
    return eye[0] + (x - eye[0]) * k, eye[1] + (y - eye[1]) * k


def side_of(eye: np.ndarray, f: Found, table_w: float) -> str:
    """The side a find stands on: A the half nearer markers 0 and 3 (where it stands, not where its rim shows)."""
    return "A" if stands_at(eye, f.x, f.y)[0] < table_w / 2 else "B"


def reading(found: list[Found], eye: np.ndarray, table_w: float, table_h: float | None = None) -> Reading:
    """The finds as a :class:`companion.vision.cups.reader.Reading`: each cup on the side where it
    stands (side A the half nearer markers 0 and 3, x < half the table), a ball given to the
    standing cup whose rim it shows in (within 45 mm of its centre). Given the table's depth, a
    cup that would stand off the markers' rectangle (by more than OFF_TABLE_MM) is something else:
    the cups stand on the table the markers mark out."""
    out = Reading()
    off: list[Found] = []
    for f in found:
        if f.kind == "ball":
            continue
        sx, sy = stands_at(eye, f.x, f.y)
        if table_h is not None and not (-OFF_TABLE_MM < sx < table_w + OFF_TABLE_MM
                                        and -OFF_TABLE_MM < sy < table_h + OFF_TABLE_MM):
            off.append(f)
            continue
        seen = CupSeen(side_of(eye, f, table_w), f.cup, f.x, f.y, [], f.score)
        (out.cups if f.kind == "standing" else out.upside_down).append(seen)
    # a tally grows towards the players, past the near markers: a cup turned over off the table
    # counts where it continues a column of turned cups that stands on it (a drink cup does not)
    off = [f for f in off if f.kind == "turned"]
    while grown := [f for f in off if any((c.x - f.x) ** 2 + (c.y - f.y) ** 2 < TALLY_STEP_MM ** 2
                                          for c in out.upside_down)]:
        out.upside_down += [CupSeen(side_of(eye, f, table_w), f.cup, f.x, f.y, [], f.score) for f in grown]
        off = [f for f in off if f not in grown]
    for b in (f for f in found if f.kind == "ball"):
        near = [c for c in out.cups if (c.x - b.x) ** 2 + (c.y - b.y) ** 2 < BALL_IN_MM ** 2]
        if near:
            cup = min(near, key=lambda c: (c.x - b.x) ** 2 + (c.y - b.y) ** 2)
            cup.ball = max(cup.ball, 1.0)
    return out


# A cup turned over and one standing show their tops at one height, so their centres lie at least
# a rim (80 mm or more) apart on the table's plane, farther still seen from above; a turned find
# nearer a standing one than this is the same cup seen twice (the shaded side of a red cup with a
# ball in it read as a turned cup's top: hidden-like validation s091100)
ONE_CUP_MM = 75.0
ONE_CUP = True


def one_cup_a_place(found: list[Found]) -> list[Found]:
    """Where a turned find and a standing one are ONE_CUP_MM or nearer, the one the finder's heat
    of its own kind says more plainly (a ball in the standing one says standing)."""
    if not ONE_CUP:
        return found
    cups = [f for f in found if f.kind in ("standing", "turned") and f.kinds is not None]
    balls = [f for f in found if f.kind == "ball"]
    drop: set[int] = set()   # (by identity: a Found holds arrays)
    for t in (f for f in cups if f.kind == "turned"):
        for c in (f for f in cups if f.kind == "standing"):
            if (t.x - c.x) ** 2 + (t.y - c.y) ** 2 > ONE_CUP_MM ** 2 or id(c) in drop or id(t) in drop:
                continue
            heat_t, heat_c = float(t.kinds[TURNED_KINDS].max()), float(c.kinds[STANDING_KINDS].max())
            ball = any((b.x - c.x) ** 2 + (b.y - c.y) ** 2 < BALL_IN_MM ** 2 for b in balls)
            drop.add(id(t if ball or heat_c >= heat_t else c))
    return [f for f in found if id(f) not in drop]


SILVER = JUDGE_CLASSES[1:].index("standing.silver")
SILVER_FROM = 0.3   # a side with no silver cup: its colour cup this likely silver is it
SILVER_FLOOR = 0.02  # and the finder's silver peaks this faint are judged for it


def one_silver_a_side(found: list[Found], judged: list[Found], eye: np.ndarray, table_w: float) -> list[Found]:
    """Each side has one silver cup and never loses it (RULES E11): a metal cup mirrors its
    neighbours' colours, so where a side shows two, the less silver one is its next likeliest kind,
    and where it shows none, its surest place judged silver below the bar (at least JUDGE_ALSO) is
    it, else the colour cup likeliest silver (SILVER_FROM). Finds without the judge's word are as
    they were."""
    out = list(found)
    for s in "AB":
        mine = [f for f in out if f.kind == "standing" and f.choice is not None and side_of(eye, f, table_w) == s]
        silver = sorted((f for f in mine if f.cup == "silver"), key=lambda f: -f.choice[SILVER])
        for f in silver[1:]:
            rest = f.choice.copy()
            rest[SILVER] = 0.0
            what, cup = JUDGE_CLASSES[int(np.argmax(rest)) + 1].split(".")
            out[out.index(f)] = replace(f, kind=what, cup=cup)
        if silver:
            continue
        unsure = [j for j in judged if j.kind == "standing" and j.cup == "silver" and j.score >= JUDGE_ALSO
                  and side_of(eye, j, table_w) == s and j not in out]
        if unsure:
            j = max(unsure, key=lambda j: j.score)
            out += [j] + [b for b in judged if b.kind == "ball" and (b.x, b.y) == (j.x, j.y)]   # and its ball
            continue
        likely = [f for f in mine if f.choice[SILVER] >= SILVER_FROM]
        if likely:
            f = max(likely, key=lambda f: f.choice[SILVER])
            out[out.index(f)] = replace(f, cup="silver")
            # (its ball, judged at a colour cup's bar, is held to a silver cup's)
            out = [b for b in out if not (b.kind == "ball" and (b.x, b.y) == (f.x, f.y) and b.score < SILVER_BALL_SURE)]
    return out


OFF_ROW = 0.6   # a colour cup this many cup pitches across from its colour's row is off it
ROW_MIN = 3     # cups of a colour on a side that make a row to hold the others to
ROW_TURNS = np.radians(np.arange(180.0))   # the rows' direction is one of these


def rows_turn(pairs: np.ndarray) -> float:
    """The rows' direction (radians, 0-180°): the one most of these (dx, dy) pairs between a
    side's cups of one colour lie along (a cup misread or gone leaves pairs across the rows)."""
    turn = 2 * np.arctan2(pairs[:, 1], pairs[:, 0])
    return float(ROW_TURNS[int(np.argmax(np.exp(20 * (np.cos(2 * ROW_TURNS[:, None] - turn[None, :]) - 1)).sum(axis=1)))])


def in_their_rows(cups: list[CupSeen]) -> list[CupSeen]:
    """The standing cups less those that stand aside from their colour's row: a side's colour
    cups stand in rows, so a glass or a drink cup taken for one stands apart. The rows' direction
    is the one most pairs of a side's cups of one colour lie along (a cup misread or gone leaves
    pairs across the rows: the likeliest direction, not the mean); the pitch is the side's median
    distance between nearest cups. A cup more than OFF_ROW pitches across from the median of its
    colour's cups (ROW_MIN or more of them) is left out, unless ROW_MIN - 1 others of its colour
    line up with it (a colour read in two rows keeps both). The silver cup stands alone."""
    out = []
    for side in ("A", "B"):
        mine = [c for c in cups if c.side == side]
        colour = [c for c in mine if c.cup != "silver"]
        pairs = np.array([(b.x - a.x, b.y - a.y) for i, a in enumerate(colour) for b in colour[i + 1:] if a.cup == b.cup])
        if len(colour) < ROW_MIN + 1 or not len(pairs):
            out += mine
            continue
        a = rows_turn(pairs)
        across = {id(c): -c.x * np.sin(a) + c.y * np.cos(a) for c in colour}
        pitch = float(np.median([min(np.hypot(c.x - o.x, c.y - o.y) for o in colour if o is not c) for c in colour]))
        support = {id(c): sum(abs(across[id(o)] - across[id(c)]) <= OFF_ROW * pitch for o in colour
                              if o is not c and o.cup == c.cup) for c in colour}
        for c in mine:
            row = [across[id(o)] for o in colour if o.cup == c.cup]
            if (c.cup == "silver" or len(row) < ROW_MIN or support[id(c)] >= ROW_MIN - 1
                    or abs(across[id(c)] - float(np.median(row))) <= OFF_ROW * pitch):
                out.append(c)
    return out


TALLY_FROM = 1.5    # a tally's first cup stands at least this many pitches in front of its silver cup
TALLY_ALONG = 0.95  # and the line from it to the tally's first cup runs along the rows (within 18°)
TALLY_ACROSS = 0.4  # a turned cup this many pitches off the line from the silver cup is not in its column
TALLY_WALK = 4      # places judged beyond a column's last cup, at most
TALLY_WALKED = True  # (a switch for the tests)


def along_the_tally(out: Reading, frame: np.ndarray, cal, judge: CupJudge) -> None:
    """A side's tally is a column of cups turned over in front of its silver cup, a cup's pitch
    apart, and the finder misses some: past the top view's edge (150 mm beyond the near markers,
    where a long tally grows) or crowded by their neighbours in the column (24 rendered tables
    with tallies, seed 123,000: 12 of the 16 turned cups missed were in a tally). So the line from
    the silver cup through the column's cups is walked at the column's pitch, back towards the
    silver cup from its first cup and on beyond its last: each place is judged, one the judges
    are TURNED_SURE holds a colour cup is one more of the tally, and the walk stops at the first
    that does not, at a cup already read, or off the table where the finder has looked. Nothing is
    walked where no tally cup was found, nor where the line from the silver cup to it crosses
    the rows. Adds to ``out.upside_down``."""
    eye = (-cal.R.T @ cal.tvec).ravel()
    width, depth = cal.layout.table_w, cal.layout.table_h
    view_w, view_h = (n * MM_PX for n in view_size(width, depth))
    for side in ("A", "B"):
        silver = [c for c in out.cups if c.side == side and c.cup == "silver"]
        rows = [c for c in out.cups if c.side == side and c.cup != "silver"]
        if len(silver) != 1 or len(rows) < 2:
            continue
        s = np.array([silver[0].x, silver[0].y])
        pitch = float(np.median([min(np.hypot(c.x - o.x, c.y - o.y) for o in rows if o is not c) for c in rows]))
        turned = [c for c in out.upside_down if c.side == side]
        first = [c for c in turned if np.hypot(c.x - s[0], c.y - s[1]) >= TALLY_FROM * pitch]
        if not first:
            continue
        t1 = min(first, key=lambda c: np.hypot(c.x - s[0], c.y - s[1]))
        d = np.array([t1.x, t1.y]) - s
        d /= np.linalg.norm(d)
        pairs = np.array([(b.x - a.x, b.y - a.y) for i, a in enumerate(rows) for b in rows[i + 1:] if a.cup == b.cup])
        if not len(pairs):
            continue
        r = rows_turn(pairs)
        if abs(float(np.dot(d, [np.cos(r), np.sin(r)]))) < TALLY_ALONG:
            continue   # the silver cup's column runs along the rows; this turned cup stands in a row
        along = {id(c): float(np.dot([c.x - s[0], c.y - s[1]], d)) for c in turned}
        column = sorted((c for c in turned if along[id(c)] > 0
                         and abs(float(d[0] * (c.y - s[1]) - d[1] * (c.x - s[0]))) <= TALLY_ACROSS * pitch),
                        key=lambda c: along[id(c)])
        at = [along[id(c)] for c in column]
        step = float(np.median(np.diff(at))) if len(at) > 1 else pitch
        if not 0.7 * pitch <= step <= 1.5 * pitch:
            step = pitch
        everything = out.cups + out.upside_down
        # back towards the silver cup (short of it), and on past the last (TALLY_WALK places)
        for a, sign, stop in ((at[0] - step, -1, 0.75 * step), (at[-1] + step, 1, at[-1] + (TALLY_WALK + 0.5) * step)):
            while (a > stop) if sign < 0 else (a < stop):
                x, y = s + a * d
                if any(np.hypot(c.x - x, c.y - y) < 0.6 * pitch for c in everything):
                    break
                # off the table but in the finder's view, the finder and the judges have looked
                # (a cup there continuing the column counts already, reading()): a drink cup
                # standing there, judged on its own, can pass for a turned cup (validation s091005)
                sx, sy = stands_at(eye, x, y)
                off = not (0 < sx < width and 0 < sy < depth)   # (past the markers' rectangle)
                if off and -PAD_MM <= x <= view_w - PAD_MM and -PAD_MM <= y <= view_h - PAD_MM:
                    break
                probs, _ = judge.judge(frame, cal, [(float(x), float(y))], mirror=False, ball_look=False)
                p = probs[0]
                cup = JUDGE_CLASSES[int(np.argmax(p[1:])) + 1].split(".")[1]
                # a cup in the tally's column is one of it, whatever the judges take it for (they
                # see some tally cups, seen from near the camera's foot, as standing ones)
                if cup == "silver" or 1.0 - p[0] < TURNED_SURE:
                    break
                seen = CupSeen(side, cup, float(x), float(y), [], float(1.0 - p[0]))
                out.upside_down.append(seen)
                everything.append(seen)
                a += sign * step


_FINDER: CupFinder | None = None


def finder() -> CupFinder:
    """The one finder of this process (its network holds buffers; loading it costs ~20 ms)."""
    global _FINDER
    if _FINDER is None:
        _FINDER = CupFinder()
    return _FINDER


def read_photo(frame: np.ndarray, focal: float | None = None):
    """A photo of a table nobody described: its size from the markers, the camera from their
    corners, and every cup, turned cup and ball the network finds: (Reading, Calibration)."""
    from companion.vision.cups.discover import calibrate_markers

    t0 = time.perf_counter()
    cal = calibrate_markers(frame, focal)
    width, depth = cal.layout.table_w, cal.layout.table_h
    f = finder()
    found = f.find(frame, cal.homography, width, depth, cal=cal, turned_places=TURNED_PLACES)
    eye = (-cal.R.T @ cal.tvec).ravel()
    judged = f.last_judged or []
    if f.last_judged is not None and sum(x.kind == "standing" and x.cup == "silver" for x in found) < 2:
        judged = judged + f.silver_again(frame, cal, width, depth)
    out = reading(one_cup_a_place(one_silver_a_side(found, judged, eye, width)), eye, width, depth)
    out.cups = in_their_rows(out.cups)
    if f.judge is not None and TALLY_WALKED:
        along_the_tally(out, frame, cal, f.judge)
    px = cal.project(np.array([[c.x, c.y, 0.0] for c in out.cups + out.upside_down]).reshape(-1, 3))
    for c, p in zip(out.cups + out.upside_down, px.tolist(), strict=True):
        c.center = [round(p[0], 1), round(p[1], 1)]
    out.ms = (time.perf_counter() - t0) * 1000
    return out, cal


def surety(p: float) -> float:
    """A network's probability as the ring score the cup watch judges (1: a clear cup)."""
    return float(min(1.0, p / (2 * SURE)))


def reader_for(cal) -> CupReader:
    """The reader of a calibration: the network for a table whose cups were learnt by it (and
    whose model is here), the colour search otherwise."""
    if cal.view_plane is not None and CupFinder.available():
        return NetCupReader(cal)
    return CupReader(cal)


class NetCupReader(CupReader):
    """A learnt table's cups read by the network, slot by slot; the colour labels of the
    table's plane (:class:`CupReader`) still say whether a place shows bare table or
    something unexplained (a hand) for :meth:`CupReader.clean`."""

    # seconds between the frames a live watch gives it: the network costs ~25 ms a frame here
    # (100-250 on a Pi 4 core), and the watch judges a cup gone or a ball resting over half a
    # second, which five looks a second still see three times
    every_s = 0.2
    # it finds the cups turned over with the others, at no extra cost (the watch follows the
    # silver tally with them; the colour search would need a search of the whole table)
    sees_turned = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # the judges' answers at places that look as they did (the silver cups each look, every
        # cup before one is called gone): a short game's table changes somewhere at most looks,
        # its cups mostly not (4 short games: 5.3 -> 4.5 ms a frame; models/cup-judge.md, "Speed")
        self._memo = JudgeMemo()

    @property
    def reach(self) -> float:
        """How far from its place a cup is still that place's (mm): a cup knocked a little is;
        a neighbour, a rim away, is not."""
        return max(0.5 * self.layout.rim_d, 35.0)

    def read(self, frame: np.ndarray, hints: dict[str, tuple[float, float]] | None = None,
             turned: bool = True, search_all: bool = True) -> Reading:
        t0 = time.perf_counter()
        # the colour labels only say whether a place no cup stands on is bare (clean()): made
        # when the watch asks that, not at each look (~7 ms of ~25 here)
        self.last_labels, self._labels_of = None, frame
        L = self.layout
        # the finder alone (no cal: no judge): judging every place cost 35-100 ms more a look and
        # gained no throw on the rendered live sequences (models/cup-judge.md, "Live")
        found = finder().find(frame, self.cal.homography, L.table_w, L.table_h)
        self.last_found = found
        standing = [f for f in found if f.kind == "standing"]
        reach = self.reach
        out = Reading()
        for s in self.cal.slots:
            at = (hints or {}).get(s.name, (s.x, s.y))
            # whatever colour the finder names it: the slot's cup was learnt by the judge, and a
            # cup does not change places (a neighbour stands a rim away, farther than reach)
            near = [f for f in standing if math.hypot(f.x - at[0], f.y - at[1]) < reach]
            if near:
                f = min(near, key=lambda f: math.hypot(f.x - at[0], f.y - at[1]))
                standing.remove(f)
                out.cups.append(CupSeen(s.side, s.cup, f.x, f.y, [], surety(f.score), s.name))
        judge = finder().judge
        ask = []   # the cups the finder sees a ball in (the judge, where here, has the last word)
        for b in (f for f in found if f.kind == "ball"):
            near = [c for c in out.cups if math.hypot(c.x - b.x, c.y - b.y) < BALL_IN_MM]
            if near:
                cup = min(near, key=lambda c: math.hypot(c.x - b.x, c.y - b.y))
                cup.ball = 1.0
                if cup not in ask:
                    ask.append(cup)
        if judge is not None:
            # the judge says whether a ball rests there (a patch a cup, ~1 ms): the finder alone
            # proposed balls in the wrong cup, in a metal cup's shine, and missed one on a silver
            # cup's metal (rendered live sequences, models/cup-judge.md "Live")
            ask += [c for c in out.cups if c.cup == "silver" and c not in ask]
            # a silver cup the finder did not see (a ball on its metal changes its look): the
            # judge looks at its place too, and a cup it sees there is the silver cup
            seen = {c.slot for c in out.cups}
            unseen = [CupSeen(s.side, s.cup, s.x, s.y, [], 0.0, s.name) for s in self.cal.slots
                      if s.cup == "silver" and s.name not in seen]
            # (the paper's gains as measured at the last check of the markers: ~1 ms a look; not
            # the mirror look at the class nor the ball look: +1 and +1.5-2 ms a frame on average,
            # no throw more and none sooner on the validation sequences)
            probs, sure = judge.judge(frame, self.cal, [(c.x, c.y) for c in ask + unseen],
                                      self.paper_gains, mirror=False, ball_look=False, memo=self._memo)
            for c, p, b in zip(ask + unseen, probs, sure, strict=True):
                c.ball = 1.0 if b >= WATCH_BALL_SURE else 0.0
                if c.cup == "silver":   # (the finder is rarely sure of a metal cup, the judge is)
                    c.score = max(c.score, float(1.0 - p[0]))
                if c in unseen and p[0] < 0.5:
                    out.cups.append(c)
        if turned:   # (on the side where each stands, none off the table: as in a photo)
            eye = (-self.cal.R.T @ self.cal.tvec).ravel()
            out.upside_down = reading([f for f in found if f.kind == "turned"], eye, L.table_w, L.table_h).upside_down
            for c in out.upside_down:
                c.score = surety(c.score)
        self._centres(out.cups + out.upside_down)
        out.ms = (time.perf_counter() - t0) * 1000
        return out

    def second_look(self, frame: np.ndarray) -> Reading | None:
        """The frame read as a photo is: every place the finder is a little sure of judged up
        close by the cup judge (:meth:`CupFinder.find` with the calibration), each cup on the
        side where it stands. ~50-100 ms here, so the watch asks only when it is about to call a
        cup gone; the last frame's look is kept (one look serves every cup gone in it)."""
        if finder().judge is None:
            return None
        if getattr(self, "_second", (None, None))[0] is not frame:
            L = self.layout
            # (its balls are not asked: the watch takes cups standing and turned from it)
            found = finder().find(frame, self.cal.homography, L.table_w, L.table_h, cal=self.cal, ball_look=False,
                                  memo=self._memo)
            eye = (-self.cal.R.T @ self.cal.tvec).ravel()
            self._second = (frame, reading(found, eye, L.table_w, L.table_h))
        return self._second[1]

    def looks(self, frame: np.ndarray, places: list[tuple[float, float]]) -> list[np.ndarray] | None:
        """Each place's middle as the judge's patch shows it (up being up, the table's scale), in
        grey, smoothed (a dim room's sensor noise is not a change): about the rim's circle."""
        judge = finder().judge
        if judge is None or not places:
            return None
        grey = [cv2.cvtColor(p, cv2.COLOR_BGR2GRAY) for p in judge.patches(frame, self.cal, places, self.paper_gains)]
        m = LOOK_MIDDLE
        return [cv2.GaussianBlur(g, (5, 5), 0)[m:-m, m:-m] for g in grey]

    def clean(self, labels: np.ndarray | None, x: float, y: float) -> float:
        """A place the network sees no cup at, whose colours are mostly explained (bare table, a
        neighbour's wall or inside; a hand or an arm is mostly not): bare. The colour labels alone
        found a made cup's place only 69-84 % explained on rendered tables (the cups round it,
        their shadows), under the watch's 90 %."""
        if labels is None:   # (the last look's, made now: see read())
            if self.last_labels is None:
                _, self.last_labels, self._value = self.labelled(self._labels_of)
            labels = self.last_labels
        explained = super().clean(labels, x, y)
        if explained >= BARE_EXPLAINED and not any(
                f.kind != "ball" and math.hypot(f.x - x, f.y - y) < self.reach for f in getattr(self, "last_found", [])):
            return max(explained, 1.0)
        return explained

    def turned_at(self, labels: np.ndarray, cup: str, around: tuple[float, float], radius: float,
                  upright: list[tuple[float, float]] | None = None) -> tuple[float, float, float] | None:
        """A cup of this colour the network sees turned over within ``radius`` (and a rim's
        half) of ``around`` in the last frame read."""
        reach = radius + self.layout.rim_d / 2
        for f in getattr(self, "last_found", []):
            if f.kind == "turned" and f.cup == cup and math.hypot(f.x - around[0], f.y - around[1]) < reach:
                return f.x, f.y, surety(f.score)
        return None
