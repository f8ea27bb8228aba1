"""A table whose layout nobody gave: its size from the markers, its cups from the frame.

``companion cups`` without ``--calibration`` reads photos of tables it has never seen. The
default layout (``layout.py``) fixes the table at 900 × 400 mm and every cup's place; a photo of
another table (markers 1.2 m apart, rows at another pitch) was read as having no cups at all,
without a word. Here:

1. the table's size comes from the markers themselves: each is an 80 mm square (DESIGN.md), so
   once the four centres fix the table's shape, each marker's sides in table units give the
   table's width and depth in millimetres (least squares over the 16 sides, sides whose corner
   a cup hides left out);
2. the cups are searched over the whole table as :class:`CupReader` searches one slot (a ring
   of the cup's colour round a pale inside), on the table's own plane: the markers fix that
   plane's view exactly, while the camera's pose (and with it the plane of the rims) is only
   roughly known from four markers seen from straight above. Rims are circles on any plane
   parallel to the table, a little larger than they are; every size in :data:`APPARENT_RIMS` is
   tried, and the one under which the coloured cups stand out most is the table's;
3. the cups found become the slots of a layout with that cup size, and the usual
   :class:`CupReader` reads the frame with them (balls, cups turned over, pixel centres) as it
   reads a calibrated table, over the whole table. Each side has one silver cup (RULES.md E),
   grey as a pale table can be: it is looked for where the seed's sheet stands it, between the
   side's red and yellow cups.

Cups other than the renderer's (a helper's own renderer, written from the spec alone): a cup
may be its colour inside too (its inside, in its own shade, is darker than its lit lip: not a
turned cup), white inside (where a white ball cannot be told from the lit inside: only orange
balls are reported there), and the silver cup dark (metal) inside; no silver cup is reported
upside down (the seed turns over "unused color cups" for the tally).

Side A is the half nearer markers 0 and 3 (EVENTS.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from companion.vision.calibrate import (
    DEFAULT_FOCAL_1280,
    Calibration,
    CalibrationError,
    calibrate,
    table_markers,
)
from companion.vision.cups.reader import (
    GREY,
    LABEL,
    MM_PER_PX,
    RING_SCORE,
    SILVER_RING,
    UNKNOWN,
    CupReader,
    CupSeen,
    side_where_it_stands,
)
from companion.vision.layout import COLOURS, CUPS, Layout, Slot
from companion.vision.markers import MARKER_MM, marker_centre, marker_name, marker_table_points

# Rim diameters (mm) as they appear on the table's plane: the default cup (66 mm, 90 high) seen
# from 0.8 m looks 74 mm across there, a 95 mm party cup 12 cm high seen from 1 m, 108.
APPARENT_RIMS = (60.0, 67.0, 74.0, 82.0, 90.0, 99.0, 108.0)
FINER = (-4.5, -3.0, -1.5, 1.5, 3.0, 4.5)   # then these round the best of them
STEP = 8.0   # mm between the first candidates (the search refines every fair one)
DEFAULT = Layout()
HEIGHT_PER_RIM = DEFAULT.cup_h / DEFAULT.rim_d   # cups of another size: the default's proportions


def measure_table(frame: np.ndarray, found: dict[int, np.ndarray] | None = None) -> tuple[float, float]:
    """(width, depth) in mm between the marker centres, from the markers' own 80 mm sides (three
    markers are enough: see :func:`_measure_from_three`). ``found``: the markers already found."""
    found = found if found is not None else table_markers(frame, least=2)
    if len(found) == 2:
        return _measure_from_diagonal(found)
    if len(found) == 3:
        return _measure_from_three(found)
    centres = np.float32([marker_centre(found[i]) for i in range(4)])
    to_unit = cv2.getPerspectiveTransform(centres, np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]))
    return _sides_fit(found, to_unit)


def _sides_fit(found: dict[int, np.ndarray], to_unit: np.ndarray) -> tuple[float, float]:
    """The table's (width, depth) that makes each marker's sides 80 mm, its corners carried by
    ``to_unit`` to where the table is the unit square."""
    rows = []
    for i in found:
        c = cv2.perspectiveTransform(found[i].reshape(1, -1, 2).astype(np.float64), to_unit)[0]
        rows += [(c[(k + 1) % 4] - c[k]) ** 2 for k in range(4)]   # (du·W)² + (dv·H)² = 80²
    A = np.array(rows)
    target = np.full(len(A), MARKER_MM ** 2)
    (w2, h2), *_ = np.linalg.lstsq(A, target, rcond=None)
    for _ in range(2):   # a cup or a hand over a marker's corner moves that corner: drop its sides
        keep = np.abs(A @ [w2, h2] / MARKER_MM ** 2 - 1) < 0.06
        across = A[keep, 0] * w2 > A[keep, 1] * h2   # sides that measure mostly the width
        if across.sum() < 2 or (~across).sum() < 2:
            break
        (w2, h2), *_ = np.linalg.lstsq(A[keep], target[keep], rcond=None)
    if w2 <= 0 or h2 <= 0:
        raise CalibrationError("BAD_MARKERS", "the markers' sizes do not fit a flat rectangular table")
    return float(np.sqrt(w2)), float(np.sqrt(h2))


def _measure_from_three(found: dict[int, np.ndarray]) -> tuple[float, float]:
    """Three markers (a cup or a hand hides the fourth): the homography from the table to the
    picture fitted to their centres and corners for a guessed size, the size measured from the
    markers' sides under it, and again: from a guess 30 % off it settles within 0.1 % in five
    rounds (rendered tables), as the markers' corners fix the scale and the centres the shape."""
    ids = sorted(found)
    img = np.vstack([np.vstack([marker_centre(found[i]), found[i]]) for i in ids])
    # first guess: the distances between the centres in units of the markers' mean side
    side = np.mean([np.linalg.norm(found[i][k] - found[i][(k + 1) % 4]) for i in ids for k in range(4)])
    c = {i: marker_centre(found[i]) for i in ids}
    width = MARKER_MM * np.linalg.norm(c[1] - c[0] if {0, 1} <= c.keys() else c[2] - c[3]) / side
    depth = MARKER_MM * np.linalg.norm(c[3] - c[0] if {0, 3} <= c.keys() else c[2] - c[1]) / side
    for _ in range(6):
        obj = np.vstack([marker_table_points(Layout(table_w=width, table_h=depth))[i] for i in ids])
        H, _ = cv2.findHomography(obj, img, 0)
        if H is None:
            break
        to_unit = np.diag([1 / width, 1 / depth, 1.0]) @ np.linalg.inv(H)
        width, depth = _sides_fit(found, to_unit)
    return float(width), float(depth)


DIAGONAL_FIT_PX = 0.08   # of a marker's side: two squares that fit no one table plane worse are refused


def _measure_from_diagonal(found: dict[int, np.ndarray]) -> tuple[float, float]:
    """Two markers across a diagonal (a wide lens at a slant cuts the other two off at the
    frame's edge): the table's size is the one under which a single mapping of the table's plane
    carries both printed squares onto their corners. One square alone fixes the mapping near it;
    the far one's centre seen through it is the first guess, then (width, depth) are refined by
    Gauss-Newton on the pixels left over. Checked on rendered set-ups with two of their four
    markers painted over (``tools/train/eval_setups.py --cover``; ``docs/figures.md``, set-ups
    learnt): the size a few per cent off at most, as with four but for the depth's tail."""
    a, c = sorted(found)
    img = np.vstack([np.vstack([marker_centre(found[i]), found[i]]) for i in (a, c)]).astype(np.float64)
    side = np.mean([np.linalg.norm(found[i][k] - found[i][(k + 1) % 4]) for i in (a, c) for k in range(4)])

    def table(size: np.ndarray) -> np.ndarray:
        pts = marker_table_points(Layout(table_w=float(size[0]), table_h=float(size[1])))
        return np.vstack([pts[a], pts[c]])

    def left(size: np.ndarray) -> np.ndarray:   # pixels each point is off under the best mapping
        obj = table(size)
        H, _ = cv2.findHomography(obj, img, 0)
        if H is None:
            return np.full(2 * len(img), 1e3)
        return (cv2.perspectiveTransform(obj.reshape(1, -1, 2), H)[0] - img).ravel()

    # first guess: marker a's square alone, the other's centre carried back through it
    pts = marker_table_points(Layout(table_w=1000.0, table_h=1000.0))
    H_a, _ = cv2.findHomography(pts[a], img[:5], 0)
    if H_a is None:
        raise CalibrationError("BAD_MARKERS", "the markers' squares do not fit a flat table")
    far = cv2.perspectiveTransform(img[5:6].reshape(1, 1, 2), np.linalg.inv(H_a))[0, 0]
    size = np.maximum(np.abs(far - pts[a][0]), 4 * MARKER_MM)
    for _ in range(12):
        r = left(size)
        J = np.column_stack([left(size + d) - r for d in np.eye(2)])   # per millimetre
        step, *_ = np.linalg.lstsq(J, -r, rcond=None)
        size = np.maximum(size + step, 2 * MARKER_MM)
        if np.max(np.abs(step)) < 0.2:
            break
    rms = float(np.sqrt(np.mean(left(size) ** 2 * 2)))
    if rms > DIAGONAL_FIT_PX * side:
        raise CalibrationError("BAD_MARKERS", f"{marker_name(a)} and {marker_name(c)} do not lie square on one "
                               f"table ({rms:.1f} px off): lay the markers flat, each with its top towards the far edge")
    return float(size[0]), float(size[1])


def calibrate_markers(frame: np.ndarray, focal: float | None = None) -> Calibration:
    """The table from its markers alone: their rectangle's size measured, the camera from their
    corners (the dice need no more; the cups are learnt when a 21 Exact game is set up)."""
    found = table_markers(frame, least=2)
    width, depth = measure_table(frame, found)
    return replace(calibrate(frame, Layout(table_w=width, table_h=depth), focal, found), layout_given=False)


def _flat(width: float, depth: float, rim: float) -> Layout:
    """The table's own plane (``cup_h`` 0) with rims that look ``rim`` mm across there."""
    return Layout(table_w=width, table_h=depth, rim_d=rim, base_d=rim * DEFAULT.base_d / DEFAULT.rim_d, cup_h=0.0)


def _whole_table(layout: Layout) -> tuple[float, float, float, float]:
    pad = max(APPARENT_RIMS)
    return (-pad, -pad, layout.table_w + pad, layout.table_h + pad)


def find_cups(reader: CupReader, labels: np.ndarray, value: np.ndarray, cups: tuple[str, ...] = CUPS,
              taken: list[tuple[str, float, float]] | None = None,
              window: tuple[float, float, float, float] | None = None
              ) -> tuple[list[tuple[str, float, float]], float]:
    """Every upright cup of these colours that ``reader``'s rims fit, on the label image
    ``labels`` (unpadded, of the whole table, with its HSV ``value``), where none of the cups ``taken`` stands, only
    within ``window`` (x0, y0, x1, y1) if given: ([(cup, x, y)] surest first, the coloured cups'
    ring scores)."""
    L = reader.layout
    padded = reader.padded(labels)
    reader._value = reader.padded(value)
    if reader.weak_lips:
        reader._lips, reader.last_sat = reader.padded(reader.last_lips), reader.padded(reader.last_sat_img)
    r = L.rim_d / 2
    if window is None:
        gx, gy = np.meshgrid(np.arange(0.0, L.table_w + 0.1, STEP), np.arange(0.0, L.table_h + 0.1, STEP))
    else:
        x0, y0, x1, y1 = window
        gx, gy = np.meshgrid(np.arange(x0, x1 + 0.1, STEP / 2), np.arange(y0, y1 + 0.1, STEP / 2))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    # no cup stands on a marker (it would hide it), whose printed cells make rings of any colour
    clear = MARKER_MM / 2 + 0.5 * r
    for mx, my in ((0, 0), (L.table_w, 0), (L.table_w, L.table_h), (0, L.table_h)):
        grid = grid[(np.abs(grid[:, 0] - mx) > clear) | (np.abs(grid[:, 1] - my) > clear)]
    found: list[tuple[float, str, float, float]] = []
    # a rim is a few millimetres of its colour round a pale inside: where a patch the size of a
    # cup holds hardly any of the colour, no rim of it can be (most of the table, for each colour)
    side = int(L.rim_d / MM_PER_PX) | 1
    i, j = reader._px(grid)
    for cup in cups:
        label = LABEL[cup]
        need = SILVER_RING if label == GREY else RING_SCORE
        share = cv2.blur((labels == label).astype(np.float32), (side, side))[i, j]
        best = np.column_stack([grid[share >= 0.03], np.zeros(int((share >= 0.03).sum()))])
        want = np.full(len(best), label, np.uint8)
        reader._search(padded, want, best, np.arange(len(best)), np.zeros((1, 2)))
        fair = np.nonzero(best[:, 2] >= 0.5 * need)[0]
        for fine in (reader._mid_grid, reader._fine_grid):
            reader._search(padded, want, best, fair, fine)
        good = fair[best[fair, 2] >= need]
        if label == GREY and len(good):
            # a silver rim stands out from what is round it, round a pale or a dark (metal)
            # inside; a pale grey table in uneven light is grey rings everywhere
            around = reader._gather(padded, best[good, :2], reader.near_off) == GREY
            inside = np.isin(reader._gather(padded, best[good, :2], reader.inner_off), (GREY, UNKNOWN))
            good = good[(around.mean(axis=1) <= 0.5) & (inside.mean(axis=1) >= 0.5)]
        found += [(float(best[k, 2]), cup, float(best[k, 0]), float(best[k, 1])) for k in good]
    # strongest first; two rims cannot overlap (one cup is found from many candidates). The
    # coloured cups go first: a grey ring fits inside a coloured cup's pale inside.
    found.sort(key=lambda f: (f[1] == "silver", -f[0]))
    score = np.array([f[0] for f in found])
    colour = np.array([f[1] for f in found])
    xy = np.array([(f[2], f[3]) for f in found]).reshape(-1, 2)
    free = np.ones(len(found), bool)
    for _, x, y in taken or []:
        free &= np.hypot(xy[:, 0] - x, xy[:, 1] - y) > 0.85 * L.rim_d
    out = []
    total = 0.0
    for k in range(len(found)):
        if not free[k]:
            continue
        d = np.hypot(xy[:, 0] - xy[k, 0], xy[:, 1] - xy[k, 1])
        # the middle of the candidates about as good: a silver cup is grey all over (lip, wall
        # and inside), so its ring scores alike over a few millimetres, and the first of them
        # found can sit off centre enough that its lip looks like a ball inside it
        alike = (colour == colour[k]) & (score >= score[k] - 0.02) & (d < 0.25 * L.rim_d)
        out.append((str(colour[k]), *xy[alike].mean(axis=0).tolist()))
        total += score[k] if colour[k] != "silver" else 0.0
        free &= d > 0.85 * L.rim_d
    return out, total


def discover(frame: np.ndarray, focal: float | None = None) -> CupReader:
    """A :class:`CupReader` for this frame's own table: it views the whole table on the table's
    plane, its layout has the table's size and the rims' size as they appear on that plane (and
    the cups' height in the default's proportions), and its slots are the cups seen there."""
    width, depth = measure_table(frame)
    if focal is None:   # the rim search was tuned with the camera the default focal length gives
        focal = DEFAULT_FOCAL_1280 * frame.shape[1] / 1280
    cal = calibrate(frame, Layout(table_w=width, table_h=depth), focal)
    area = _whole_table(cal.layout)
    # one label image of the whole table serves every rim size: the plane and the area are the same
    first = CupReader(replace(cal, layout=_flat(width, depth, APPARENT_RIMS[0])), area)
    first.any_make = True   # an unknown table's cups may be one colour inside and out,
    first.weak_lips = True  # or have lips paler than their walls
    first.balance(frame)
    view = first.view(frame)
    if first.gains is not None:
        view = cv2.multiply(view, (*first.gains.tolist(), 0.0))
    labels, value = first.labels(view, first.table_model(frame))
    tried: dict[float, tuple[float, list[tuple[str, float, float]], CupReader]] = {}

    def attempt(rim: float) -> None:
        if rim not in tried and rim > 0:
            reader = first.resized(rim, rim * DEFAULT.base_d / DEFAULT.rim_d)
            reader.weak_lips = False   # the size from full-coloured lips: pale ones fit smaller rims too
            tried[rim] = (*find_cups(reader, labels, value, COLOURS)[::-1], reader)

    for rim in APPARENT_RIMS:
        attempt(rim)
    # then finer round the best: a lip of 2-3 mm is missed by a ring a few millimetres too small
    coarse = max(tried, key=lambda r: tried[r][0])
    for step in FINER:
        attempt(coarse + step)
    _, cups, reader = tried[max(tried, key=lambda r: (tried[r][0], -abs(r - coarse)))]
    reader.weak_lips = True   # then the cups of that size, pale lips too
    cups = find_cups(reader, labels, value, COLOURS)[0]
    layout = reader.layout
    # A rim on the table's plane lies farther from the camera's foot than the cup stands; the
    # cup's side is where it stands (its height in the default's proportions; the camera's
    # foot as well as four markers tell it)
    eye = -cal.R.T @ cal.tvec.ravel()
    height = HEIGHT_PER_RIM * layout.rim_d * eye[2] / (eye[2] + HEIGHT_PER_RIM * layout.rim_d)

    def side_of(x: float) -> str:
        return side_where_it_stands(layout, eye, x, height)

    # A side has four cups of each colour (RULES.md; the seed's eight a colour for two sides):
    # a fifth ring of a colour on a side is something else (a cloth's pattern, a die, a cup of
    # the other side's); the strongest four stand (``cups`` comes strongest first).
    placed = []
    count: Counter[tuple[str, str]] = Counter()
    for cup, x, y in cups:
        side = side_of(x)
        if count[(side, cup)] < DEFAULT.cups_per_row:
            placed.append((side, cup, x, y))
            count[(side, cup)] += 1
    # One silver cup a side (RULES.md E), grey as a pale table can be: the seed's sheet stands it
    # midway between the side's red and yellow cups, so it is looked for between them (across,
    # halfway; along the rows, as far as the side's cups reach: made cups leave no trace of
    # where a row ran), and anywhere on the side's half only when it has no red or no yellow cup
    # left (surest first).
    for side in ("A", "B"):
        mine = np.array([(x, y) for s, c, x, y in placed if s == side]).reshape(-1, 2)
        rows = [np.mean([(x, y) for s, c, x, y in placed if s == side and c == colour], axis=0)
                for colour in ("red", "yellow") if any(s == side and c == colour for s, c, _, _ in placed)]
        if len(rows) == 2:
            across = int(abs(rows[0][1] - rows[1][1]) > abs(rows[0][0] - rows[1][0]))  # rows apart in y
            mid = (rows[0][across] + rows[1][across]) / 2
            half = max(layout.rim_d, abs(rows[0][across] - rows[1][across])) / 2
            lo, hi = mine[:, 1 - across].min() - layout.rim_d, mine[:, 1 - across].max() + layout.rim_d
            window = (mid - half, lo, mid + half, hi) if across == 0 else (lo, mid - half, hi, mid + half)
            there = find_cups(reader, labels, value, ("silver",), cups, window)[0]
        else:
            there = [c for c in find_cups(reader, labels, value, ("silver",), cups)[0] if side_of(c[1]) == side]
        placed += [(side, "silver", x, y) for _, x, y in there[:1]]
    counts: dict[tuple[str, str], int] = {}
    slots = []
    for side, cup, x, y in sorted(placed, key=lambda c: (c[1], -c[3], c[2])):
        index = counts.get((side, cup), 0)
        counts[(side, cup)] = index + 1
        slots.append(Slot(side, cup, index, x, y))
    final = CupReader(replace(cal, layout=replace(layout, cup_h=height), slots=slots), area, plane=0.0)
    final.paper_gains = reader.paper_gains
    final.any_make = final.weak_lips = True
    return final


def learn(frame: np.ndarray, focal: float | None = None) -> Calibration:
    """The calibration of a table set up for a game (every cup standing), learnt from one frame:
    the table's size from the markers, the camera from their corners, each cup's place, size and
    make from the frame. Raises :class:`CalibrationError`: ``NO_CUPS`` where no cup is seen at
    all, ``CUPS_NOT_FOUND`` with a sentence naming what is missing where the set-up cannot be
    right: each side the same cups of each colour (RULES.md: the sides play the same game), at
    least one of each colour, and one silver cup a side; ``COLOURS_SWAPPED`` where the frame's
    red and blue are swapped (:func:`_swapped_set_up`). Nothing half-right is returned."""
    try:
        cal = _learn(frame, focal)
    except CalibrationError as err:
        if err.code not in ("NO_CUPS", "CUPS_NOT_FOUND"):
            raise
        swapped = _swapped_set_up(frame, focal, "as sent: " + err.message.split(": stand every cup")[0])
        if swapped is not None:
            raise swapped from None
        raise
    if not whole_set_up(cal.slots):
        swapped = _swapped_set_up(frame, focal, "as sent, " + _counts_words(cal.slots))
        if swapped is not None:
            raise swapped
    return cal


def _learn(frame: np.ndarray, focal: float | None) -> Calibration:
    from companion.vision.cups import net

    if net.CupFinder.available():
        cal = _learnt_by_network(frame, focal)
    else:   # (a checkout without the model: the colour search)
        cal = replace(discover(frame, focal).cal, view_plane=0.0, layout_given=False)
    if not cal.slots:
        raise CalibrationError("NO_CUPS", "no cup seen on the table")
    problems = setup_problems(cal.slots)
    if problems:
        raise CalibrationError("CUPS_NOT_FOUND", "; ".join(problems) + ": " + STAND_EVERY_CUP)
    return cal


WHOLE_ROW = 3   # the fewest cups of each colour a side that make a whole set-up for the colour-order check


def whole_set_up(slots: list[Slot]) -> bool:
    """The cups add up to a whole 21 Exact set-up (RULES.md: four of each colour a side and a
    silver cup): every colour the same number a side, give or take one the reader missed, and
    at least WHOLE_ROW. Learning takes less (any number, each side alike): this is the stricter
    test the colour-order check asks of a reading before it believes it."""
    count = Counter((s.side, s.cup) for s in slots)
    for side in ("A", "B"):
        row = [count[(side, cup)] for cup in COLOURS]
        if min(row) < WHOLE_ROW or max(row) - min(row) > 1 or count[(side, "silver")] != 1:
            return False
    return True


def _counts_words(slots: list[Slot]) -> str:
    count = Counter(s.cup for s in slots if s.side == "A")
    return "side A has " + ", ".join(f"{count[cup]} {cup}" for cup in COLOURS) + " cups"


def _swapped_set_up(frame: np.ndarray, focal: float | None, as_sent: str) -> CalibrationError | None:
    """The refusal when the frame's red and blue are swapped, else None. Asked only when the
    frame as sent is no whole set-up (:func:`whole_set_up`). A camera that sends its channels in
    the wrong order (some Pi 5 kernels did) turns red cups blue and blue ones red, which still
    adds up, but yellow ones cyan, a colour no cup has: read as sent, such a set-up has no
    yellow cups, or too many blue or green ones. Read with channels 0 and 2 exchanged it is whole
    again. That it is, to the stricter test, is the evidence: a frame sent right, read that
    way, has cyan cups in place of its yellow ones, and none of 591 rendered and drawn tables
    made a whole set-up so (docs/figures.md, "The colour-order check"). The markers' black and
    white paper cannot tell either way. ``as_sent``: what the frame as sent gave, for the sentence."""
    try:
        cal = _learn(np.ascontiguousarray(frame[..., ::-1]), focal)
    except CalibrationError:
        return None
    if not whole_set_up(cal.slots):
        return None
    from companion.vision.images import red_blue_swapped

    return CalibrationError("COLOURS_SWAPPED", red_blue_swapped(
        f"the cups make a whole set-up only with the picture's red and blue exchanged ({_counts_words(cal.slots)} "
        f"then; {as_sent.rstrip('.')})"))


STAND_EVERY_CUP = "stand every cup as at the start of a game, keep hands and the balls off the table, and calibrate again"


# Learning a set-up from the network's finds (see _learnt_by_network): a cup is taken down to
# LEARN_LOW where the other side has one as sure; one as sure as LEARN_EXTRA with no counterpart
# on the other side is a cup the set-up lacks there (or something else): refused. The surety is
# the cup judge's where its model is here (a place's pixels looked at closely), else the finder's.
LEARN_FLOOR, LEARN_LOW, LEARN_EXTRA = 0.15, 0.2, 0.7   # the finder's (38 training set-ups: 35 learnt, 29 exact)
JUDGED_FLOOR, JUDGED_LOW, JUDGED_EXTRA = 0.1, 0.2, 0.9   # the judge's (validation set-ups: models/cup-judge.md)


def _learnt_by_network(frame: np.ndarray, focal: float | None) -> Calibration:
    """The standing cups the network finds (:mod:`companion.vision.cups.net`) as the slots, where
    their rims show on the table's plane; the rims' size there from how far apart neighbouring
    cups stand (touching or a few millimetres apart, as players set them).

    A set-up is a strong check: both sides hold the same cups of every colour and one silver cup
    each. So for each colour the k-th surest find of one side is taken with the k-th of the other
    while both are at least LEARN_LOW sure (a cup the network is unsure of, a white-inside cup on a
    cloth of its colour, is vouched for by its counterpart); what is left over on a side is
    ignored unless the network is sure of it (LEARN_EXTRA): then the sides differ, and learn()
    refuses, naming the side and colour."""
    from companion.vision.cups.net import CUP_H_MM, Found, finder, reading

    cal = calibrate_markers(frame, focal)
    width, depth = cal.layout.table_w, cal.layout.table_h
    eye = (-cal.R.T @ cal.tvec).ravel()
    cupfinder = finder()
    if cupfinder.judge is not None:
        # every place the finder is a little sure of, judged up close: the finder alone learnt
        # 3 of 12 validation set-ups exactly (party cups under coloured light, translucent ones
        # on their own colour), with the judge 9 and none wrong (models/cup-judge.md, "Set-ups");
        # no ball rests in a cup at a set-up: not asked (the ball look)
        low, extra = JUDGED_LOW, JUDGED_EXTRA
        finds = cupfinder.find(frame, cal.homography, width, depth, JUDGED_FLOOR, cal=cal, ball_look=False)
        # nothing stands turned over at a set-up: a cup judged so is a standing one seen oddly
        finds = [Found("standing", f.cup, f.x, f.y, f.score) if f.kind == "turned" else f
                 for f in finds if f.kind != "ball"]
    else:
        low, extra = LEARN_LOW, LEARN_EXTRA
        finds = cupfinder.find(frame, cal.homography, width, depth, LEARN_FLOOR)
    found = reading(finds, eye, width, depth)
    _one_silver_a_side(found, cupfinder, eye, width, depth)
    kept = [c for c in found.cups if c.cup == "silver"]
    # how sure of each: the judge's, and among places it is as sure of (a bare cloth of a cup's
    # colour can look to it as sure as a cup), the finder's, which saw the table round them
    finder_sure = {(f.x, f.y): float(f.kinds.max()) for f in finds if f.kinds is not None}

    def rank(c: CupSeen) -> float:
        return -(c.score + finder_sure.get((c.x, c.y), 0.0))

    mine, pairs = {}, {}
    for colour in COLOURS:
        mine[colour] = {side: sorted((c for c in found.cups if c.cup == colour and c.side == side), key=rank)
                        for side in ("A", "B")}
        pairs[colour] = _pairs(mine[colour], low)
    # every colour stands the same number of cups a side (a row each: RULES.md, four): with the
    # judge, that number is the one most colours agree on (the most among equals: a set-up short
    # of cups is then refused, never learnt half); a colour with more pairs has found a
    # cup-coloured cloth or die, one with fewer lacks cups
    rows = max(Counter(pairs.values()).most_common(), key=lambda kv: (kv[1], kv[0]))[0] \
        if cupfinder.judge is not None else None
    if rows is not None and _recoloured_by_rows(mine, rows, low, rank):
        pairs = {colour: _pairs(mine[colour], low) for colour in COLOURS}
    for colour in COLOURS:
        n = pairs[colour] if rows is None else min(pairs[colour], rows)
        for side in ("A", "B"):
            kept += mine[colour][side][:n]
            if rows is None or n < rows:
                kept += [c for c in mine[colour][side][n:] if c.score >= extra]   # (the check then refuses)
    def has(side: str, colour: str) -> int:
        return sum(c.score >= low for c in mine[colour][side])

    short = [] if rows is None else [
        f"side {side}: {has(side, colour)} of {rows} {colour} cups found "
        + (f"(side {other} has {rows})" if has(other, colour) >= rows else f"(the other colours have {rows})")
        for colour in COLOURS for side, other in (("A", "B"), ("B", "A"))
        if pairs[colour] < rows and has(side, colour) < rows]
    if short:
        raise CalibrationError("CUPS_NOT_FOUND", "; ".join(short) + ": " + STAND_EVERY_CUP)
    count: Counter[tuple[str, str]] = Counter()
    slots = []
    for c in sorted(kept, key=lambda c: (c.side, c.cup, -c.y, c.x)):
        slots.append(Slot(c.side, c.cup, count[(c.side, c.cup)], c.x, c.y))
        count[(c.side, c.cup)] += 1
    stray = _out_of_row(slots) + _silver_astray(slots)
    if stray:
        raise CalibrationError("CUPS_NOT_FOUND", "; ".join(stray) + ": " + STAND_EVERY_CUP)
    xy = np.array([(s.x, s.y) for s in slots]).reshape(-1, 2)
    rim = float(np.clip(0.92 * _spacing(xy), 60.0, 150.0)) if len(xy) >= 2 else DEFAULT.rim_d
    per_row = max([n for (_, cup), n in count.items() if cup != "silver"], default=DEFAULT.cups_per_row)
    layout = replace(cal.layout, rim_d=rim, base_d=rim * DEFAULT.base_d / DEFAULT.rim_d, cup_h=CUP_H_MM,
                     cups_per_row=per_row)
    return replace(cal, layout=layout, slots=slots, view_plane=0.0, layout_given=False)


def _pairs(mine: dict[str, list], low: float) -> int:
    """How many of a colour's cups pair up across the sides: the k-th surest of each, both at
    least ``low`` sure."""
    n = 0
    while n < min(len(mine["A"]), len(mine["B"])) and min(mine["A"][n].score, mine["B"][n].score) >= low:
        n += 1
    return n


def _line(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The straight line through points (n × 2) that fits them best: a point on it, its direction."""
    m = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - m)
    return m, vt[0]


def _off_line(q: np.ndarray, line: tuple[np.ndarray, np.ndarray]) -> float:
    m, u = line
    d = q - m
    return float(abs(d[0] * u[1] - d[1] * u[0]))


def _along(points: np.ndarray, line: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, float]:
    """Where points (n × 2, n ≥ 2) stand along a line, in order, and their median step (a row's pitch)."""
    at = np.sort((points - line[0]) @ line[1])
    return at, float(np.median(np.diff(at)))


def _spacing(xy: np.ndarray) -> float:
    """The median distance from each point (n × 2, n ≥ 2) to its nearest neighbour: how far apart
    neighbouring cups stand."""
    d = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    np.fill_diagonal(d, np.inf)
    return float(np.median(d.min(axis=1)))


ROW_STRAY = 0.5   # a cup this many of its row's pitches off the line through the others is not in it


def _out_of_row(slots: list[Slot]) -> list[str]:
    """Each colour stands in a row of its own (the sheet puts each colour's die "in front of each
    row of the matching colour cups"): a cup of three or more that stands off the line through
    the others is a patch of cloth or clutter the judge took for that colour, its real cup missed
    (a green floral print, validation render: the set-up was learnt wrong, counts and all). Such
    a set-up is refused, naming the side and colour. Cups of correct validation set-ups stand at
    most 0.11 pitches off their row."""
    out = []
    for side in ("A", "B"):
        for colour in COLOURS:
            pts = np.array([(s.x, s.y) for s in slots if s.side == side and s.cup == colour]).reshape(-1, 2)
            if len(pts) < 3:
                continue
            for i in range(len(pts)):
                rest = np.delete(pts, i, axis=0)
                line = _line(rest)
                _, pitch = _along(rest, line)
                if pitch > 0 and _off_line(pts[i], line) > ROW_STRAY * pitch:
                    out.append(f"side {side}: a {colour} cup found out of the {colour} row")
                    break
    return out


SILVER_NEAR = 1.8   # the silver cup's nearest colour cup is at most this many of the side's pitches away


def _silver_astray(slots: list[Slot]) -> list[str]:
    """The sheet stands each side's silver cup between its red and yellow rows: a silver cup
    learnt farther from every colour cup of its side than SILVER_NEAR pitches is something else
    (a shine on the table) and the real one was missed, so the set-up is refused. Silver cups of
    the validation set-ups stand at most 1.36 pitches from their nearest colour cup."""
    out = []
    for side in ("A", "B"):
        colour = np.array([(s.x, s.y) for s in slots if s.side == side and s.cup != "silver"]).reshape(-1, 2)
        silver = [(s.x, s.y) for s in slots if s.side == side and s.cup == "silver"]
        if len(colour) < 2 or not silver:
            continue
        near = float(np.hypot(*(colour - np.array(silver[0])).T).min())
        if near > SILVER_NEAR * _spacing(colour):
            out.append(f"side {side}: no silver cup found beside its coloured cups")
    return out


def _recoloured_by_rows(mine: dict[str, dict[str, list]], rows: int, low: float,
                        rank: Callable[[CupSeen], float]) -> bool:
    """A side one cup short in one colour and one over in another, where one cup of the colour
    over stands in the short colour's row and out of its own: that cup is of the short colour
    (the judge named one party cup of a row under a spot lamp in its neighbour's colour, and the
    set-up was refused). Each colour stands in a row of its own; a cup that fits both rows, or
    none, or two such cups, change nothing (the set-up is then refused, as before)."""
    changed = False
    for side in ("A", "B"):
        sure = {c: [k for k in mine[c][side] if k.score >= low] for c in COLOURS}
        short = [c for c in COLOURS if len(sure[c]) == rows - 1]
        over = [c for c in COLOURS if len(sure[c]) == rows + 1]
        if len(short) != 1 or len(over) != 1 or rows < 3 \
                or any(len(sure[c]) != rows for c in COLOURS if c not in (short[0], over[0])):
            continue
        want, extra = short[0], over[0]
        row = np.array([(k.x, k.y) for k in sure[want]])
        line = _line(row)
        gaps, pitch = _along(row, line)
        fits = []
        for k in sure[extra]:
            q = np.array([k.x, k.y])
            rest = np.array([(o.x, o.y) for o in sure[extra] if o is not k])
            own = _line(rest)
            along = (q - line[0]) @ line[1]
            if _off_line(q, line) < 0.25 * pitch and _off_line(q, own) > 0.6 * pitch \
                    and max(_off_line(r, own) for r in rest) < 0.25 * pitch \
                    and gaps[0] - 1.5 * pitch < along < gaps[-1] + 1.5 * pitch:
                fits.append(k)
        if len(fits) == 1:
            k = fits[0]
            mine[extra][side].remove(k)
            mine[want][side].append(replace(k, cup=want))
            mine[want][side].sort(key=rank)
            changed = True
    return changed


def _one_silver_a_side(found, cupfinder, eye: np.ndarray, width: float, depth: float) -> None:
    """A set-up has one silver cup a side (RULES.md E): on each side the place the network finds
    most silver-like (silver's own map, however unsure) is the silver cup, whatever colour it
    called it there (a grey cup's pale wall passes for a light blue one); other silver finds on
    that side are something else (a phone, a coin's shine)."""
    from companion.vision.cups.net import APART_MM, KINDS, STRIDE, stands_at, view_to_mm

    heat = cupfinder.last_heat[KINDS.index(("standing", "silver"))]
    jj = np.arange(heat.shape[1]) * STRIDE + STRIDE / 2 - 0.5
    ii = np.arange(heat.shape[0]) * STRIDE + STRIDE / 2 - 0.5
    xs, ys = view_to_mm(jj, ii)
    gx, gy = np.meshgrid(xs, ys)
    half = stands_at(eye, gx, gy)[0] < width / 2   # where a cup showing there stands
    on_table = (gx > 60) & (gx < width - 60) & (gy > -20) & (gy < depth + 20)
    for side, mine in (("A", half & on_table), ("B", ~half & on_table)):
        if not mine.any():
            continue
        k = int(np.argmax(np.where(mine, heat, -1.0)))
        if heat.flat[k] < 0.05:
            continue
        x, y = float(gx.flat[k]), float(gy.flat[k])
        found.cups[:] = [c for c in found.cups
                         if not (c.cup == "silver" and c.side == side) and math.hypot(c.x - x, c.y - y) >= APART_MM]
        sx = stands_at(eye, x, y)[0]
        found.cups.append(CupSeen("A" if sx < width / 2 else "B", "silver", x, y, [], float(heat.flat[k])))


def setup_problems(slots: list[Slot]) -> list[str]:
    """What a set-up's cups lack, in sentences ("side B: 3 of 4 green cups found"); [] when
    both sides hold the same cups of every colour, at least one each, and a silver cup."""
    count = Counter((s.side, s.cup) for s in slots)
    out = []
    for cup in CUPS:
        a, b = count[("A", cup)], count[("B", cup)]
        if cup == "silver":
            out += [f"side {side}: no silver cup found" for side, n in (("A", a), ("B", b)) if n == 0]
        elif a == b == 0:
            out.append(f"no {cup} cup found on either side")
        elif a != b:
            few, many = ("A", "B") if a < b else ("B", "A")
            out.append(f"side {few}: {min(a, b)} of {max(a, b)} {cup} cups found (side {many} has {max(a, b)})")
    return out


