"""The table's four ArUco markers (DESIGN.md): ``DICT_4X4_50``, ids 0–3 at the table's corners
(0 near-left, 1 near-right, 2 far-right, 3 far-left, seen from where the players throw), an
80 mm black square on a white margin. Finding them in a frame, where they lie on the table, and
drawing them: the printable sheet and the rendered table use the same :func:`marker_image`."""

from __future__ import annotations

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


def marker_outlines(frame: np.ndarray) -> list[np.ndarray]:
    """The four corners (pixels) of every printed marker, found in one pass at half size: where
    the markers are, not precise enough to calibrate from, in a quarter of the time (2.4 ms for a
    640×640 photo, 3.6 for a 1280×720 table)."""
    small = cv2.resize(gray_of(frame), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    corners, ids, _ = detector().detectMarkers(small)
    return [] if ids is None else [c[0].astype(np.float32) * 2 for c in corners]


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
