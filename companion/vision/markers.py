"""The table's four ArUco markers (DESIGN.md): ``DICT_4X4_50``, ids 0–3 at the table's corners
(0 near-left, 1 near-right, 2 far-right, 3 far-left, seen from where the players throw), an
80 mm black square on a white margin. Finding them in a frame, where they lie on the table, and
drawing them: the printable sheet and the rendered table use the same :func:`marker_image`."""

from __future__ import annotations

import functools

import cv2
import numpy as np

from companion.vision.layout import Layout

MARKER_MM = 80.0
MARGIN_MM = 15.0  # the white margin cut round each printed marker
DICTIONARY = cv2.aruco.DICT_4X4_50
MARKER_NAMES = {0: "near left", 1: "near right", 2: "far right", 3: "far left"}


def marker_name(i: int) -> str:
    return f"marker {i} ({MARKER_NAMES[i]})"


DETECTOR_: cv2.aruco.ArucoDetector | None = None


def detector() -> cv2.aruco.ArucoDetector:
    global DETECTOR_
    if DETECTOR_ is None:
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        DETECTOR_ = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(DICTIONARY), params)
    return DETECTOR_


_ONE_WINDOW: dict[int, cv2.aruco.ArucoDetector] = {}


def quick_detector(marker_px: float) -> cv2.aruco.ArucoDetector:
    """A detector that thresholds with one window, of about a marker cell's size, where
    :func:`detector` tries three (3, 13 and 23 pixels): a check for markers whose size in the
    frame is known. Near the calibrated spots of the project's rendered sequences it finds what the
    full detector finds in 4 ms a check instead of 11 (the four markers; ``check_markers`` still
    asks the full one about a marker it misses)."""
    cell = marker_px / 6   # a marker is 6 cells across, its black border included
    win = int(np.clip(2 * round(cell) + 1, 3, 23))   # odd, as OpenCV wants
    if win not in _ONE_WINDOW:
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        params.adaptiveThreshWinSizeMin = params.adaptiveThreshWinSizeMax = win
        _ONE_WINDOW[win] = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(DICTIONARY), params)
    return _ONE_WINDOW[win]


def gray_of(frame: np.ndarray) -> np.ndarray:
    return frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)


def find_markers(frame: np.ndarray) -> dict[int, np.ndarray]:
    """Marker id (0–3 only) → its four corners in pixels (top-left, top-right, bottom-right,
    bottom-left of the printed marker). A dim frame is stretched before a second try."""
    gray = gray_of(frame)
    found: dict[int, np.ndarray] = {}
    for attempt in (gray, None):
        if attempt is None:
            if len(found) == 4:
                break
            attempt = cv2.normalize(gray, None, 0, 255, cv2.NORM_MINMAX)
            attempt = cv2.createCLAHE(2.0, (8, 8)).apply(attempt)
        corners, ids, _ = detector().detectMarkers(attempt)
        for c, i in zip(corners, [] if ids is None else ids.ravel(), strict=False):
            if 0 <= int(i) <= 3 and int(i) not in found:
                found[int(i)] = c[0].astype(np.float64)
    return found


# Where a side's two markers are found and the other two are not (a tall cup leans over each far
# marker's corner: ArUco needs the whole black border), the two found say where the others can be.
NEIGHBOUR = {0: (3, (0, 1)), 1: (2, (0, 1)), 2: (1, (0, -1)), 3: (0, (0, -1))}   # across the depth
ALONG = {0: (1, (1, 0)), 1: (0, (-1, 0)), 2: (3, (-1, 0)), 3: (2, (1, 0))}       # across the width
HIDDEN_SURE = 0.55   # the pattern's correlation (margin, ring and bits) worth a closer look
# a marker's corners (mm from its centre) in detection order, as marker_table_points gives them
_SQUARE = np.array([[-1, 1], [1, 1], [1, -1], [-1, -1]]) * MARKER_MM / 2


@functools.cache
def _cell_pattern() -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Sample points (mm from a marker's centre, 8 × 8 cells: the 6 × 6 printed cells and a ring
    of the white margin round them) and, per id, each point's printed white (1) or black (0)."""
    cell = MARKER_MM / 6
    k = (np.arange(8) - 3.5) * cell
    xs, ys = np.meshgrid(k, -k)   # row 0 is the marker's top, towards the back edge (y+)
    pts = np.column_stack([xs.ravel(), ys.ravel()])
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    out = {}
    for i in range(4):
        bits = np.ones((8, 8))
        bits[1:7, 1:7] = cv2.aruco.generateImageMarker(dictionary, i, 6) > 127
        out[i] = bits.ravel()
    return pts, out


def find_hidden(frame: np.ndarray, found: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """The corners of the markers ``found`` lacks, where two markers of one side are found: the
    found pair's corners map the table's plane; each missing marker lies across the table from
    one of them, at a distance the pair does not tell, so its printed pattern (and the margin's
    white) is looked for along that line: sampled at its cells through the plane's mapping, a
    little to either side and a little larger or smaller (the mapping drifts with distance), and
    taken where it correlates best if at least HIDDEN_SURE. A partly hidden marker still
    correlates (0.6–0.9 where a cup covers a fifth of it). {} where nothing sure is found."""
    have = sorted(found)
    if len(have) != 2:
        return {}
    a, b = have
    if NEIGHBOUR[a][0] == b:        # the pair is a side of the depth: look across the width
        step = ALONG
    elif ALONG[a][0] == b:
        step = NEIGHBOUR
    else:                           # a diagonal pair: nothing to follow
        return {}
    gray = cv2.GaussianBlur(gray_of(frame).astype(np.float32), (0, 0), 1.2)
    # the pair in a frame of its own: marker a at the origin, b along its side at the measured length
    side = np.mean([np.linalg.norm(found[i][k] - found[i][(k + 1) % 4]) for i in have for k in range(4)])
    d_ab = np.array(ALONG[a][1] if step is NEIGHBOUR else NEIGHBOUR[a][1], float)
    length = MARKER_MM * np.linalg.norm(marker_centre(found[b]) - marker_centre(found[a])) / side
    img = np.vstack([np.vstack([marker_centre(found[i]), found[i]]) for i in (a, b)])
    for _ in range(10):   # the length that makes both squares 80 mm under one mapping
        obj = np.vstack([np.vstack([[0, 0], _SQUARE]), np.vstack([d_ab * length, d_ab * length + _SQUARE])])
        H, _ = cv2.findHomography(obj, img, 0)
        if H is None:
            return {}
        back = cv2.perspectiveTransform(img.reshape(1, -1, 2), np.linalg.inv(H))[0]
        sides = [np.linalg.norm(back[o + 1 + k] - back[o + 1 + (k + 1) % 4]) for o in (0, 5) for k in range(4)]
        new = length * MARKER_MM / float(np.mean(sides))
        if abs(new - length) < 0.5:
            break
        length = new
    out = {}
    for i in have:
        missing, direction = step[i]
        origin = np.zeros(2) if i == a else d_ab * length
        n = np.array(direction, float)
        t = np.array([-n[1], n[0]])
        # coarse along the line as far as it stays in the frame, then finely round the best place
        depths = np.arange(200.0, 3000.0, 8.0)
        px = cv2.perspectiveTransform((origin + depths[:, None] * n).reshape(1, -1, 2), H)[0]
        depths = depths[(px[:, 0] > 0) & (px[:, 0] < gray.shape[1]) & (px[:, 1] > 0) & (px[:, 1] < gray.shape[0])]
        if not len(depths):
            continue
        score, depth, lat, s = _search(gray, H, origin, n, t, missing, depths,
                                       np.arange(-60.0, 61.0, 10.0), (0.8, 0.9, 1.0, 1.1, 1.25))
        if score < HIDDEN_SURE - 0.15:
            continue
        score, depth, lat, s = _search(gray, H, origin, n, t, missing, depth + np.arange(-8.0, 9.0, 2.0),
                                       lat + np.arange(-10.0, 11.0, 2.0), s * np.array([0.94, 0.97, 1.0, 1.03, 1.06]))
        if score < HIDDEN_SURE:
            continue
        centre = origin + depth * n + lat * t
        corners = cv2.perspectiveTransform((centre + s * _SQUARE).reshape(1, -1, 2), H)[0]
        if _its_own_bits(gray, corners, missing):
            out[missing] = corners
    return out


def _its_own_bits(gray: np.ndarray, corners: np.ndarray, marker: int) -> bool:
    """Whether the 4 × 4 bits inside ``corners`` are ``marker``'s own: a bright margin round a dark
    ring (a cup's rim, a paper square) matches every marker's pattern a little; the marker's own
    bits match its code well and clearly better than any other id's in any turn (rendered tables:
    0.76–0.99 and at least 0.4 better where it is there; at most 0.52, and never 0.15 better, where
    it is not)."""
    pts, bits = _cell_pattern()
    inner = np.zeros((8, 8), bool)
    inner[2:6, 2:6] = True
    H = cv2.getPerspectiveTransform(_SQUARE.astype(np.float32), corners.astype(np.float32))
    q = MARKER_MM / 24   # four samples a cell, a quarter of a cell off its centre
    at = np.vstack([pts[inner.ravel()] + d for d in ((-q, -q), (-q, q), (q, -q), (q, q))])
    px = cv2.perspectiveTransform(at.reshape(1, -1, 2), H)[0].astype(np.float32)
    v = cv2.remap(gray, px[:, :1], px[:, 1:], cv2.INTER_LINEAR).reshape(4, -1).mean(0)
    v = v - v.mean()

    def ncc(b: np.ndarray) -> float:
        w = b.reshape(8, 8)[2:6, 2:6].ravel()
        w = w - w.mean()
        return float((v * w).sum() / (np.linalg.norm(v) * np.linalg.norm(w) + 1e-6))

    own = ncc(bits[marker])
    others = max(ncc(np.rot90(bits[m].reshape(8, 8), r)) for m in range(4) for r in range(4) if (m, r) != (marker, 0))
    return own >= 0.7 and own - others >= 0.3


def _search(gray: np.ndarray, H: np.ndarray, origin: np.ndarray, n: np.ndarray, t: np.ndarray, marker: int,
            depths: np.ndarray, lateral: np.ndarray, scales) -> tuple[float, float, float, float]:
    """The best correlation of ``marker``'s pattern over centres origin + depth·n + lateral·t
    (plane mm, mapped to the frame by H) and sizes: (score, depth, lateral, scale)."""
    pts, bits = _cell_pattern()
    want = bits[marker] - bits[marker].mean()
    rows, cols = gray.shape
    c = origin + depths[:, None, None] * n + lateral[None, :, None] * t      # (D, L, 2) centres
    best = (-1.0, 0.0, 0.0, 1.0)
    for s in scales:
        p = c[:, :, None, :] + s * pts[None, None]                           # (D, L, 64, 2)
        px = cv2.perspectiveTransform(p.reshape(1, -1, 2), H)[0].reshape(p.shape)
        inside = ((px[..., 0] > 0) & (px[..., 0] < cols - 1) & (px[..., 1] > 0) & (px[..., 1] < rows - 1)).all(-1)
        if not inside.any():
            continue
        v = cv2.remap(gray, px[..., 0].reshape(-1, 64).astype(np.float32),
                      px[..., 1].reshape(-1, 64).astype(np.float32), cv2.INTER_LINEAR).reshape(p.shape[:3])
        v = v - v.mean(-1, keepdims=True)
        ncc = (v * want).sum(-1) / (np.linalg.norm(v, axis=-1) * np.linalg.norm(want) + 1e-6)
        ncc[~inside] = -1
        k = int(np.argmax(ncc))
        if ncc.flat[k] > best[0]:
            di, li = np.unravel_index(k, ncc.shape)
            best = (float(ncc.flat[k]), float(depths[di]), float(lateral[li]), float(s))
    return best


def marker_outlines(frame: np.ndarray) -> list[np.ndarray]:
    """The four corners (pixels) of every printed marker, found in one pass at half size: where
    the markers are, not precise enough to calibrate from, in a quarter of the time (2.4 ms for a
    640×640 photo, 3.6 for a 1280×720 table)."""
    small = cv2.resize(gray_of(frame), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    corners, ids, _ = detector().detectMarkers(small)
    return [] if ids is None else [c[0].astype(np.float32) * 2 for c in corners]


def marker_white(frame: np.ndarray, quads: list[np.ndarray]) -> np.ndarray | None:
    """The B, G, R of the white paper in the printed markers found in a photo (``marker_outlines``):
    each marker's pixels split into its black and white cells (Otsu), the white ones well inside
    their class; the median over the markers whose two kinds differ clearly (not a glare or a
    hand). None when no marker gives it, or the frame is not colour. A photo's counterpart of the
    calibration's ``paper_white``: the light's colour and level on paper known to be white."""
    if frame.ndim != 3 or not quads:
        return None
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    whites = []
    for quad in quads:
        mask = np.zeros(grey.shape, np.uint8)
        cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)
        mask = cv2.erode(mask, np.ones((3, 3), np.uint8))  # the border's edge pixels are mixed
        g = grey[mask > 0]
        if len(g) < 50:
            continue
        t, _ = cv2.threshold(g.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        light = g > t
        if not 0.1 <= light.mean() <= 0.9 or np.median(g[light]) - np.median(g[~light]) < 40:
            continue
        whites.append(np.median(frame[(mask > 0) & (grey > (t + np.median(g[light])) / 2)], axis=0))
    return np.median(np.array(whites), axis=0).astype(np.float64) if whites else None


def marker_centre(corners: np.ndarray) -> np.ndarray:
    """Intersection of the diagonals: the projected centre, exact under perspective."""
    p0, p1, p2, p3 = corners
    d1, d2 = p2 - p0, p3 - p1
    denom = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(denom) < 1e-9:
        return corners.mean(axis=0)
    s = ((p1[0] - p0[0]) * d2[1] - (p1[1] - p0[1]) * d2[0]) / denom
    return p0 + s * d1


def marker_table_points(layout: Layout) -> dict[int, np.ndarray]:
    """Table mm of each marker's centre and its corners in detection order (the marker printed
    with its top towards the back edge: top-left is towards x−, y+)."""
    w, h, a = layout.table_w, layout.table_h, MARKER_MM / 2
    out = {}
    for i, (cx, cy) in enumerate([(0, 0), (w, 0), (w, h), (0, h)]):
        out[i] = np.array([[cx, cy], [cx - a, cy + a], [cx + a, cy + a], [cx + a, cy - a], [cx - a, cy - a]])
    return out


def marker_cells(layout: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The centre (table mm) of each of the 6 × 6 cells of every printed marker (its black border
    and its 4 × 4 bits), whether that cell is printed white, and the marker's id."""
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    cell = MARKER_MM / 6
    pts, white, ids = [], [], []
    for i, points in marker_table_points(layout).items():
        cx, cy = points[0]
        bits = cv2.aruco.generateImageMarker(dictionary, i, 6) > 127   # one pixel a cell, top row first
        for r in range(6):
            for c in range(6):   # the marker's top towards the back edge (y+), as in marker_table_points
                pts.append((cx - MARKER_MM / 2 + (c + 0.5) * cell, cy + MARKER_MM / 2 - (r + 0.5) * cell))
                white.append(bool(bits[r, c]))
                ids.append(i)
    return np.array(pts), np.array(white), np.array(ids)


def marker_image(i: int, px_per_mm: float, margin_mm: float = MARGIN_MM) -> np.ndarray:
    """Marker ``i`` as printed: the 80 mm black marker on its white margin, grey, ``px_per_mm``."""
    side = int(round(MARKER_MM * px_per_mm))
    margin = int(round(margin_mm * px_per_mm))
    img = np.full((side + 2 * margin, side + 2 * margin), 255, np.uint8)
    img[margin:margin + side, margin:margin + side] = cv2.aruco.generateImageMarker(
        cv2.aruco.getPredefinedDictionary(DICTIONARY), i, side)
    return img


DPI = 300


def sheet_pages() -> list[np.ndarray]:
    """Two A4 pages at 300 dpi, two markers each: the 80 mm black marker on a white margin, its id,
    its corner of the table, which way it faces, and an 80 mm line to check the printer's scale."""
    mm = DPI / 25.4
    w, h = int(round(210 * mm)), int(round(297 * mm))
    side = int(round(MARKER_MM * mm))
    pages = []
    for first in (0, 2):
        page = np.full((h, w), 255, np.uint8)
        for k, i in enumerate((first, first + 1)):
            cy = int(round((74 + 148 * k) * mm))
            x0, y0 = (w - side) // 2, cy - side // 2
            page[y0:y0 + side, x0:x0 + side] = marker_image(i, side / MARKER_MM, margin_mm=0)
            # cut line 15 mm around the marker (the white margin)
            m = int(round(15 * mm))
            cv2.rectangle(page, (x0 - m, y0 - m), (x0 + side + m, y0 + side + m), 190, 2)
            text = f"marker {i}: {MARKER_NAMES[i]} corner of the table"
            cv2.putText(page, text, (x0 - m, y0 - m - 40), cv2.FONT_HERSHEY_SIMPLEX, 1.6, 0, 3, cv2.LINE_AA)
            cv2.putText(page, "this edge towards the back of the table (away from the players)",
                        (x0 - m, y0 - m - 100), cv2.FONT_HERSHEY_SIMPLEX, 1.1, 80, 2, cv2.LINE_AA)
            ly = y0 + side + m + 70
            cv2.line(page, (x0, ly), (x0 + side, ly), 0, 4)
            cv2.putText(page, "80 mm: measure this line; print at 100 % (no fit to page)", (x0 - m, ly + 60),
                        cv2.FONT_HERSHEY_SIMPLEX, 1.1, 80, 2, cv2.LINE_AA)
        pages.append(page)
    return pages
