"""Table calibration: find the four ArUco markers (DESIGN.md's convention) in one camera frame,
compute where the table plane is, and store it with the table size, each side's zone and the cup
slots of the 21 Exact layout.

Maths: the marker centres (intersection of each marker's diagonals) and corners give the table
plane's homography (mm → pixels). The cups' rims stand ``cup_h`` above the table, so the tracker
needs the camera's pose too: with a pinhole of known focal length (default: a Pi Camera Module 3
at 1280 px, adjustable with ``--focal``), ``solvePnP`` on the same points gives it, and any plane
parallel to the table (the rims' plane) follows.

A camera that moved since calibration is caught by :meth:`Calibration.check_markers`: it looks
for each marker only where it was calibrated and reports a marker seen elsewhere.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.vision.layout import Layout, Slot
from companion.vision.markers import (
    MARKER_NAMES,
    detector,
    find_hidden,
    find_markers,
    gray_of,
    marker_cells,
    marker_centre,
    marker_name,
    marker_table_points,
    quick_detector,
)
from companion.vision.view import CameraView

DEFAULT_FOCAL_1280 = 985.0   # px for a 1280-wide frame: ~66° horizontal field (Pi Camera Module 3)
VERSION = 1


class CalibrationError(Exception):
    """Calibration failed; ``code`` is ``MARKERS_NOT_FOUND`` or ``BAD_MARKERS`` or ``BAD_FILE``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CameraMoved(Exception):
    """The markers are no longer where they were calibrated: the camera (or the table) moved."""


@dataclass
class Calibration:
    image_size: tuple[int, int]
    K: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    homography: np.ndarray              # table mm (z = 0) → pixels
    markers: dict[int, list[float]]     # centre pixels
    marker_px: float                    # mean side of a marker in pixels
    layout: Layout
    error_mm: float
    slots: list[Slot] = field(default_factory=list)
    ms: float = 0.0
    # Where the focal length came from: "given", "markers" (measured from their corners) or a
    # sentence saying why the default was taken (a camera looking straight down cannot tell it)
    focal_from: str = "given"
    # A calibration that learnt its cups from a frame (companion.vision.cups.discover.learn): its
    # slots and rims are where the rims show on the plane ``view_plane`` (the table's own, whose
    # view the markers fix exactly), and its cups may be of any make. None: the layout's rims
    # plane (``cup_h``) and the project's own cups.
    view_plane: float | None = None
    # the layout (the cups' places) was written by a user (calibrate table --layout): kept as it is
    layout_given: bool = False
    # what the frame was taken under (frame size, camera model, sensor mode and crop), as far as
    # the camera said: the geometry holds only for frames that show the same part of the sensor.
    # None: not known (a photo that does not say, a file from before it was kept)
    made_under: CameraView | None = None
    _cells: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, init=False, repr=False,
                                                                       compare=False)  # marker_cells(), once

    @property
    def any_make(self) -> bool:
        """Cups learnt from a frame may be of any make (coloured inside, white inside, metal)."""
        return self.view_plane is not None

    # --- geometry --------------------------------------------------------------------------
    @property
    def R(self) -> np.ndarray:
        return cv2.Rodrigues(self.rvec)[0]

    def plane_homography(self, z: float = 0.0) -> np.ndarray:
        """Table mm on the plane at height ``z`` → pixels (z = cup height: the rims)."""
        R = self.R
        H = self.K @ np.column_stack([R[:, 0], R[:, 1], R[:, 2] * z + self.tvec.ravel()])
        return H / H[2, 2]

    def project(self, pts: np.ndarray) -> np.ndarray:
        """Table mm (x, y, z) → pixels. Points on the table itself (z = 0) go through the markers'
        homography, which fits them exactly: four markers seen from straight above fix the
        camera's tilt only roughly, and a pose a few degrees off bends the table's plane by
        several percent from one side to the other."""
        pts = np.asarray(pts, np.float64)
        cam = pts @ self.R.T + self.tvec.ravel()
        uv = cam[:, :2] / cam[:, 2:3]
        px = uv * [self.K[0, 0], self.K[1, 1]] + [self.K[0, 2], self.K[1, 2]]
        flat = pts[:, 2] == 0
        if flat.any():
            px[flat] = cv2.perspectiveTransform(pts[None, flat, :2], self.homography)[0]
        return px

    def to_table(self, px: np.ndarray, z: float = 0.0) -> np.ndarray:
        """Pixels → table mm on the plane at height z."""
        pts = np.asarray(px, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, np.linalg.inv(self.plane_homography(z))).reshape(-1, 2)

    def scaled(self, width: int, height: int) -> Calibration:
        """The same calibration for frames of another size with the same aspect ratio."""
        w0, h0 = self.image_size
        if (width, height) == (w0, h0):
            return self
        if abs(width / w0 - height / h0) > 0.01:
            raise CalibrationError("BAD_FILE", f"frames are {width}×{height}, calibrated for {w0}×{h0}")
        s = width / w0
        S = np.diag([s, s, 1.0])
        return Calibration((width, height), S @ self.K, self.rvec, self.tvec, S @ self.homography,
                           {i: [c[0] * s, c[1] * s] for i, c in self.markers.items()}, self.marker_px * s,
                           self.layout, self.error_mm, self.slots, focal_from=self.focal_from,
                           view_plane=self.view_plane, layout_given=self.layout_given, made_under=self.made_under)

    # --- the light's colour ------------------------------------------------------------------
    def paper_white(self, frame: np.ndarray) -> np.ndarray | None:
        """The B, G, R of the markers' white cells in this frame: the light's colour and level (a
        warm lamp, a cool window, a camera's white balance, a dim room) measured on paper known
        to be white. Only markers seen whole count (every white cell brighter than every black
        one: no hand over it); None when none is, or the frame is not colour."""
        if frame.ndim != 3:
            return None
        if self._cells is None:
            self._cells = marker_cells(self.layout)
        pts, white, ids = self._cells
        px = np.round(cv2.perspectiveTransform(pts[None], self.homography)[0]).astype(np.int64)
        h, w = frame.shape[:2]
        r = max(0, int(self.marker_px / 6 * 0.2))   # well inside a cell
        inside = (px[:, 0] >= r) & (px[:, 1] >= r) & (px[:, 0] < w - r) & (px[:, 1] < h - r)
        ids = np.where(inside, ids, -1)   # cells off the frame count for no marker
        k = np.arange(-r, r + 1)
        ys = np.clip(px[:, 1, None, None] + k[None, :, None], 0, h - 1)
        xs = np.clip(px[:, 0, None, None] + k[None, None, :], 0, w - 1)
        bgr = frame[ys, xs].reshape(len(px), -1, 3).astype(np.float64).mean(axis=1)
        grey = bgr.mean(axis=1)
        whites = []
        for i in range(4):
            mine = ids == i
            if not (mine & white).any() or not (mine & ~white).any():
                continue
            wg, bg = grey[mine & white], grey[mine & ~white]
            if wg.min() > bg.max() + 20 and np.median(wg) > 40:
                whites.append(np.median(bgr[mine & white], axis=0))
        if not whites:
            return None
        return np.median(np.array(whites), axis=0)

    # --- camera moved? -----------------------------------------------------------------------
    def check_markers(self, frame: np.ndarray, tolerance_px: float | None = None) -> dict[int, float | None]:
        """For each marker, how far (pixels) from where it was calibrated it is now seen, or None
        when it is not seen (covered by a hand, or gone). Looks only near the calibrated spots."""
        h, w = frame.shape[:2]
        half = int(self.marker_px * 1.6)
        quick = quick_detector(self.marker_px)
        out: dict[int, float | None] = {}
        for i, (u, v) in self.markers.items():
            x0, y0 = max(0, int(u) - half), max(0, int(v) - half)
            x1, y1 = min(w, int(u) + half), min(h, int(v) + half)
            out[i] = None
            if x1 - x0 < 10 or y1 - y0 < 10:
                continue
            crop = np.ascontiguousarray(gray_of(frame[y0:y1, x0:x1]))   # (only the crops greyed)
            # one threshold window first (the live watch checks once a second during a game); a
            # marker it misses is looked for again by the full detector, so nothing is lost
            for det in (quick, detector()):
                corners, ids, _ = det.detectMarkers(crop)
                for c, j in zip(corners, [] if ids is None else ids.ravel(), strict=False):
                    if int(j) == i:
                        centre = marker_centre(c[0].astype(np.float64)) + (x0, y0)
                        out[i] = float(math.hypot(centre[0] - u, centre[1] - v))
                if out[i] is not None:
                    break
        return out

    def moved_message(self, offsets: dict[int, float | None], tolerance_px: float | None = None) -> str | None:
        """A sentence when the markers say the camera moved; None when all is well. Markers not
        seen are fine while at least two are seen where they belong (hands cover markers)."""
        found = self.moved(offsets, tolerance_px)
        return None if found is None else found[1]

    def moved(self, offsets: dict[int, float | None], tolerance_px: float | None = None) -> tuple[str, str] | None:
        """(code, sentence) of :meth:`moved_message`: ``CAMERA_MOVED`` when a marker is seen away
        from where it was calibrated, ``MARKERS_NOT_FOUND`` when fewer than two are seen at all
        (none, for a table calibrated from two markers: its one left over is still where it was)."""
        tol = tolerance_px if tolerance_px is not None else max(4.0, 0.12 * self.marker_px)
        moved = {i: d for i, d in offsets.items() if d is not None and d > tol}
        seen = [i for i, d in offsets.items() if d is not None and d <= tol]
        if moved:
            worst = max(moved, key=lambda i: moved[i])
            return "CAMERA_MOVED", (f"camera moved: {marker_name(worst)} is {moved[worst]:.0f} px from where it "
                                    "was calibrated; calibrate again (companion calibrate table)")
        if len(seen) < (2 if len(self.markers) > 2 else 1):   # (a table calibrated from two: one is enough)
            missing = [marker_name(i) for i, d in offsets.items() if d is None]
            return "MARKERS_NOT_FOUND", f"camera moved or markers covered: {', '.join(missing)} not where calibrated"
        return None

    # --- file ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "image_size": list(self.image_size),
            "camera": {"focal_px": float(self.K[0, 0]), "principal": [float(self.K[0, 2]), float(self.K[1, 2])],
                       "rvec": self.rvec.ravel().tolist(), "tvec": self.tvec.ravel().tolist(),
                       "focal_from": self.focal_from},
            "homography": self.homography.tolist(),
            "markers": {str(i): {"center": [round(c[0], 2), round(c[1], 2)]} for i, c in self.markers.items()},
            "marker_px": round(self.marker_px, 2),
            "error_mm": round(self.error_mm, 3),
            "table_mm": [self.layout.table_w, self.layout.table_h],
            "zones": {side: list(self.layout.zone(side)) for side in ("A", "B")},
            "layout": self.layout.to_dict(),
            "layout_given": self.layout_given,
            "slots": [{"side": s.side, "cup": s.cup, "index": s.index, "x": round(s.x, 1), "y": round(s.y, 1)}
                      for s in self.slots],
            **({"cups": {"learnt": True, "view_plane": self.view_plane}}
               if self.view_plane is not None else {}),
            **({"made_under": self.made_under.to_dict()} if self.made_under is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        try:
            layout = Layout.from_dict(data.get("layout", {}))
            cam = data["camera"]
            f = float(cam["focal_px"])
            cx, cy = (float(v) for v in cam["principal"])
            K = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]])
            slots = [Slot(str(s["side"]), str(s["cup"]), int(s["index"]), float(s["x"]), float(s["y"]))
                     for s in data["slots"]] if data.get("slots") else layout.slots()
            size = tuple(int(v) for v in data["image_size"])
            H = np.array(data["homography"], np.float64)
            marker_px = float(data["marker_px"])
            markers = {int(i): [float(v) for v in m["center"]] for i, m in data["markers"].items()}
            # a file edited by hand: caught here, not as a ZeroDivisionError or a cv2.error per frame
            if len(size) != 2 or min(size) < 1:
                raise ValueError(f"image_size {data['image_size']} is not [width, height] in pixels")
            if H.shape != (3, 3) or not np.isfinite(K).all() or not np.isfinite(H).all() or f <= 0 or not marker_px > 0:
                raise ValueError("its camera, homography or marker size is not usable")
            if len(markers) < 2 or not set(markers) <= set(MARKER_NAMES):
                raise ValueError(f"markers {sorted(markers)}: two or more of 0-3 are needed")
            learnt = data.get("cups") or {}
            if not isinstance(learnt, dict):
                raise ValueError("its 'cups' is not an object")
            plane = learnt.get("view_plane")
            if plane is not None and not (isinstance(plane, (int, float)) and math.isfinite(plane)):
                raise ValueError(f"cups.view_plane {plane!r} is not a height in mm")
            return cls(size, K,
                       np.array(cam["rvec"], np.float64).reshape(3, 1), np.array(cam["tvec"], np.float64).reshape(3, 1),
                       H, markers, marker_px, layout, float(data.get("error_mm", 0.0)), slots,
                       focal_from=str(cam.get("focal_from", "given")),
                       view_plane=None if plane is None else float(plane),
                       # (a file from before this field: a layout other than the default was a user's)
                       layout_given=bool(data.get("layout_given", layout != Layout())),
                       # (missing or not understood: not known, which refuses nothing)
                       made_under=CameraView.from_dict(data.get("made_under")))
        except (KeyError, TypeError, ValueError, IndexError) as err:
            why = f"no {err}" if isinstance(err, KeyError) else str(err)
            raise CalibrationError("BAD_FILE", f"not a table calibration ({why}): make one with "
                                   "companion calibrate table") from None

    def save(self, path: str | Path) -> None:
        from companion.files import write_atomic

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            data = json.loads(Path(path).read_text())
        except OSError as err:
            raise CalibrationError("BAD_FILE", f"cannot read {path}: {err.strerror}") from None
        except UnicodeDecodeError:  # an image given for the calibration, say
            raise CalibrationError("BAD_FILE", f"{path}: not JSON (not even text)") from None
        except json.JSONDecodeError as err:
            raise CalibrationError("BAD_FILE", f"{path}: not JSON ({err})") from None
        if not isinstance(data, dict):
            raise CalibrationError("BAD_FILE", f"{path}: not a table calibration")
        try:
            return cls.from_dict(data)
        except CalibrationError as err:
            raise CalibrationError(err.code, f"{path}: {err.message}") from None


def table_markers(frame: np.ndarray, least: int = 4) -> dict[int, np.ndarray]:
    """The table markers' corners (at least ``least`` of them, 2, 3 or 4), or
    :class:`CalibrationError` saying which are missing or that they do not go round the table in
    order. Three are enough where a tall cup or a hand hides the fourth: the table is a
    rectangle, and each marker's own square says how it lies. Where only one side's two are
    found, the others are looked for where those two say they can be (:func:`find_hidden`); two
    are enough only across a diagonal (a wide lens at a slant cuts the other two off at the
    frame's edge): one side's two cannot tell how far the table reaches."""
    found = find_markers(frame)
    if len(found) == 2:   # the other side's two hidden in part (cups leaning over them)
        found.update(find_hidden(frame, found))
    missing = [i for i in range(4) if i not in found]
    diagonal = sorted(found) in ([0, 2], [1, 3])
    if len(missing) > 4 - max(least, 3) and not (least <= 2 and diagonal):
        names = ", ".join(marker_name(i) for i in missing)
        raise CalibrationError("MARKERS_NOT_FOUND", f"{names} not seen" if len(missing) < 4
                               else "no table marker seen (markers 0–3 of DICT_4X4_50)")
    # the markers must go round the table the right way: 0 → 1 → 2 → 3 (a mirrored or swapped
    # placement turns the quadrilateral the other way, or crosses it)
    ring = [i for i in range(4) if i in found]
    if len(ring) == 2:   # no ring to go round: the measure of the pair checks their squares
        return found
    quad = np.array([marker_centre(found[i]) for i in ring])
    n = len(ring)
    turns = [_cross(quad[(k + 1) % n] - quad[k], quad[(k + 2) % n] - quad[(k + 1) % n]) for k in range(n)]
    if not all(t < 0 for t in turns):
        raise CalibrationError("BAD_MARKERS", "markers are not in order round the table: lay 0 near left, "
                               "1 near right, 2 far right, 3 far left, seen from where the players throw")
    return found


def calibrate(frame: np.ndarray, layout: Layout | None = None, focal: float | None = None,
              found: dict[int, np.ndarray] | None = None) -> Calibration:
    """Calibrate from one frame; raises :class:`CalibrationError` naming what is wrong. ``found``:
    the markers :func:`table_markers` already found in it (finding them costs ~15 ms)."""
    t0 = time.perf_counter()
    given = layout is not None
    layout = layout or Layout()
    if frame is None or frame.ndim not in (2, 3) or min(frame.shape[:2]) < 32:
        raise CalibrationError("BAD_IMAGE", "not an image")
    h, w = frame.shape[:2]
    found = found if found is not None else table_markers(frame, least=2)
    ids = sorted(found)
    table = marker_table_points(layout)
    centres = {i: marker_centre(found[i]) for i in ids}
    img_pts = np.vstack([np.vstack([centres[i], found[i]]) for i in ids])
    obj_pts = np.vstack([table[i] for i in ids])
    # A corner hidden by a tall cup or a hand is found off its place (and the centre with it):
    # those points are left out, or the camera's pose tips by centimetres (a 120 mm cup beside the
    # far markers moved the camera 60 mm and every rim with it)
    side_px = float(np.mean([np.linalg.norm(found[i][0] - found[i][2]) for i in ids])) / np.sqrt(2)
    _, inliers = cv2.findHomography(obj_pts, img_pts, cv2.RANSAC, max(2.0, 0.03 * side_px))
    if inliers is not None and 12 <= inliers.sum() < len(obj_pts):
        keep = inliers.ravel().astype(bool)
        obj_pts, img_pts = obj_pts[keep], img_pts[keep]
    H, _ = cv2.findHomography(obj_pts, img_pts, 0)
    err_mm = _error_mm(H, obj_pts, img_pts)
    if err_mm > 15 and len(ids) < 4:
        raise CalibrationError("BAD_MARKERS", f"markers do not lie on a {layout.table_w:.0f} × "
                               f"{layout.table_h:.0f} mm rectangle (off by {err_mm:.0f} mm), and "
                               f"{marker_name(next(i for i in range(4) if i not in found))} is not seen")
    if err_mm > 15:   # a marker lies turned: fall back to the centres alone
        H = cv2.getPerspectiveTransform(np.float32([table[i][0] for i in range(4)]),
                                        np.float32([centres[i] for i in range(4)]))
        obj_pts = np.array([table[i][0] for i in range(4)])
        img_pts = np.array([centres[i] for i in range(4)])
        err_mm = _error_mm(H, np.array([c for i in range(4) for c in table[i][1:]]),
                           np.vstack([found[i] for i in range(4)]))
        if err_mm > 25:
            raise CalibrationError("BAD_MARKERS", f"markers do not lie on a {layout.table_w:.0f} × "
                                   f"{layout.table_h:.0f} mm rectangle (off by {err_mm:.0f} mm): check "
                                   "the table size in the layout and that the markers lie flat")
    obj3 = np.column_stack([obj_pts, np.zeros(len(obj_pts))]).astype(np.float64)
    focal_from = "given"
    if focal is None:
        focal, focal_from = focal_from_markers(obj3, img_pts.astype(np.float64), (w, h))
    K = _camera(focal, w, h)
    ok, rvec, tvec = cv2.solvePnP(obj3, img_pts.astype(np.float64), K, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise CalibrationError("BAD_MARKERS", "cannot work out where the camera is from the markers")
    if len(ids) == 2:   # two squares fit a free mapping loosely far from them: the camera's pose binds it
        rvec, tvec = cv2.solvePnPRefineLM(obj3, img_pts.astype(np.float64), K, None, rvec, tvec)
        R = cv2.Rodrigues(rvec)[0]
        H = K @ np.column_stack([R[:, 0], R[:, 1], tvec.ravel()])
        err_mm = _error_mm(H, obj_pts, img_pts)
    sides = [float(np.mean([np.linalg.norm(found[i][k] - found[i][(k + 1) % 4]) for k in range(4)]))
             for i in ids]
    cal = Calibration((w, h), K, rvec, tvec, H / H[2, 2], {i: centres[i].tolist() for i in ids},
                      float(np.mean(sides)), layout, err_mm, layout.slots(), focal_from=focal_from,
                      layout_given=given)
    cal.ms = (time.perf_counter() - t0) * 1000
    return cal


MEASURABLE_TILT = 15.0   # degrees: below it the markers' corners cannot tell the focal length
FOCAL_FOV = (35.0, 120.0)   # degrees across the frame the measured focal length may give
# the first search's step (degrees across): the fit's error falls smoothly to one least over this
# range, so a coarse grid and a longer refinement find what a 1° grid did (71 rendered photos whose
# markers measure the lens: within 5e-5 of it at 5°) at 37 poses instead of 98 (~10 ms a photo here)
FOCAL_STEP = 4.0
# The markers measure a focal length within 7 % at best: one this near the product's own camera
# (the default) is that camera, whose focal length is known exactly
SAME_CAMERA = 0.10


def _camera(focal: float, w: int, h: int) -> np.ndarray:
    return np.array([[focal, 0, w / 2], [0, focal, h / 2], [0, 0, 1]], np.float64)


def _reprojection(obj3: np.ndarray, img: np.ndarray, K: np.ndarray) -> tuple[float, np.ndarray]:
    """RMS pixels of the best pose for the focal length in K, and that pose's rotation."""
    _, rvec, tvec = cv2.solvePnP(obj3, img, K, None, flags=cv2.SOLVEPNP_IPPE)
    rvec, tvec = cv2.solvePnPRefineLM(obj3, img, K, None, rvec, tvec)
    back = cv2.projectPoints(obj3, rvec, tvec, K, None)[0].reshape(-1, 2)
    return float(np.sqrt(np.mean(np.sum((back - img) ** 2, axis=1)))), rvec


def focal_from_markers(obj3: np.ndarray, img: np.ndarray, size: tuple[int, int]) -> tuple[float, str]:
    """The camera's focal length (pixels) from the markers' corners and centres: the one under
    which one pose fits them best (a plane seen at a slant shows the lens's angle in how its far
    side shrinks). Seen from nearly straight above, the markers' corners (laid by hand, a few
    millimetres and degrees off) fit every focal length alike: checked on rendered tables, a
    slant of 15° or more gives it within 7 %, under 10° anything from 0.4 to 1.7 times the truth.
    Then, and where the measure is within SAME_CAMERA of it, the default (a Pi Camera Module 3)
    is taken and the second value says why in a sentence; else it is "markers"."""
    w, h = size
    default = DEFAULT_FOCAL_1280 * w / 1280
    _, rvec = _reprojection(obj3, img, _camera(default, w, h))
    tilt = math.degrees(math.acos(min(1.0, abs(float(cv2.Rodrigues(rvec)[0][2, 2])))))
    if tilt < MEASURABLE_TILT:
        return default, (f"default {default:.0f} px (a Pi Camera Module 3): the camera looks almost straight "
                         f"down ({tilt:.0f}° from vertical), where the markers cannot tell the focal length; "
                         "give --focal for another camera")
    fovs = np.arange(FOCAL_FOV[0], FOCAL_FOV[1] + 0.1, FOCAL_STEP)   # (then refined between neighbours)
    focals = w / 2 / np.tan(np.radians(fovs) / 2)
    errs = [_reprojection(obj3, img, _camera(f, w, h))[0] for f in focals]
    k = int(np.argmin(errs))
    if k in (0, len(focals) - 1):   # the best at an end of the range: no lens of this world
        return default, (f"default {default:.0f} px (a Pi Camera Module 3): the markers fit no lens between "
                         f"{FOCAL_FOV[0]:.0f}° and {FOCAL_FOV[1]:.0f}° across; give --focal")
    lo, hi = focals[k + 1], focals[k - 1]   # then a golden-section search between its neighbours

    def err(f: float) -> float:
        return _reprojection(obj3, img, _camera(f, w, h))[0]

    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)   # a < b
    ea, eb = err(a), err(b)
    # each round keeps one of its two points (one new pose a round): as fine as 12 rounds from 1°
    for _ in range(12 + math.ceil(math.log(FOCAL_STEP) / math.log(1 / g))):
        if ea < eb:       # the least lies below b
            hi, b, eb = b, a, ea
            a = hi - g * (hi - lo)
            ea = err(a)
        else:
            lo, a, ea = a, b, eb
            b = lo + g * (hi - lo)
            eb = err(b)

    measured = (lo + hi) / 2
    if abs(measured / default - 1) < SAME_CAMERA:
        return default, (f"default {default:.0f} px (a Pi Camera Module 3): the markers measure {measured:.0f} px, "
                         "as near as they can tell")
    return measured, "markers"


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _error_mm(H: np.ndarray, obj: np.ndarray, img: np.ndarray) -> float:
    back = cv2.perspectiveTransform(img.reshape(-1, 1, 2).astype(np.float64), np.linalg.inv(H)).reshape(-1, 2)
    return float(np.sqrt(np.mean(np.sum((back - obj) ** 2, axis=1))))


# --------------------------------------------------------------------------------------------
# overlay
SIDE_BGR = {"A": (255, 160, 0), "B": (0, 140, 255)}
CUP_DRAW = {"blue": (255, 80, 0), "red": (0, 0, 255), "green": (0, 200, 0), "yellow": (0, 230, 255),
            "silver": (200, 200, 200)}


def overlay(frame: np.ndarray, cal: Calibration) -> np.ndarray:
    """The frame with what the calibration believes drawn on it: markers, the table outline, each
    side's zone, every cup slot's rim at cup height, the dice spots and the error."""
    img = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    L = cal.layout
    for side in ("A", "B"):
        x0, y0, x1, y1 = L.zone(side)
        box = cal.project(np.array([[x0, y0, 0], [x1, y0, 0], [x1, y1, 0], [x0, y1, 0]], np.float64))
        cv2.polylines(img, [np.round(box).astype(np.int32)], True, SIDE_BGR[side], 2, cv2.LINE_AA)
        c = box.mean(axis=0)
        cv2.putText(img, f"side {side}", (int(c[0]) - 40, int(box[:, 1].max()) - 8), cv2.FONT_HERSHEY_SIMPLEX,
                    0.8, SIDE_BGR[side], 2, cv2.LINE_AA)
    a = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    plane = L.cup_h if cal.view_plane is None else cal.view_plane   # (learnt rims: where they show)
    for s in cal.slots:
        ring = cal.project(np.column_stack([s.x + L.rim_d / 2 * np.cos(a), s.y + L.rim_d / 2 * np.sin(a),
                                            np.full(32, plane)]))
        cv2.polylines(img, [np.round(ring).astype(np.int32)], True, CUP_DRAW.get(s.cup, (255, 255, 255)), 2,
                      cv2.LINE_AA)
    # a layout's dice spots (learnt cups have none: the dice lie anywhere in front of them)
    for side, spots in (L.dice_spots().items() if cal.view_plane is None else ()):
        for _colour, (x, y) in spots.items():
            p = cal.project(np.array([[x, y, 0.0]]))[0]
            cv2.drawMarker(img, (int(p[0]), int(p[1])), SIDE_BGR[side], cv2.MARKER_SQUARE, 18, 2)
    for i, (u, v) in cal.markers.items():
        cv2.circle(img, (int(u), int(v)), 6, (0, 255, 0), -1)
        cv2.putText(img, str(i), (int(u) + 8, int(v) - 8), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (0, 255, 0), 2)
    cv2.putText(img, f"table {L.table_w:.0f} x {L.table_h:.0f} mm, marker error {cal.error_mm:.1f} mm",
                (12, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 4, cv2.LINE_AA)
    cv2.putText(img, f"table {L.table_w:.0f} x {L.table_h:.0f} mm, marker error {cal.error_mm:.1f} mm",
                (12, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2, cv2.LINE_AA)
    return img


