"""Pure-Python geometry of the rendered 21 Exact cup scenes (no Blender, no numpy): the table and
its layout, the camera, projections and the rim ellipses. ``cup_scenes.py`` (inside Blender)
builds the scene from these plans and labels it with these projections; the checker and the tests
use the same functions outside Blender.

Frames and units (the project's, companion/vision/layout.py and DESIGN.md):

* table millimetres: origin at marker 0's centre, x towards marker 1, y towards marker 3 (the back
  edge, away from the players), z up; the surface the markers and cups stand on is z = 0. Blender's
  world is the same frame in metres.
* the camera is OpenCV's pinhole: ``X_cam = R @ X_table_mm + t`` (x right, y down, z forward),
  pixels ``u = fx * x / z + cx``; the centre of the top-left pixel is (0, 0).
"""

from __future__ import annotations

import math
import random

COLOURS = ("blue", "red", "green", "yellow")
CUPS = (*COLOURS, "silver")
DEFAULT_ROWS = ["blue", "red", "silver", "yellow", "green"]   # Layout().rows
MARKER_MM = 80.0
MARKER_PAPER_HALF_MM = 55.0      # 80 mm black square on a 15 mm white margin
BALL_MM = 40.0
SENSOR_MM = 36.0                 # Blender camera sensor width (fit horizontal)


# ---------------------------------------------------------------------------------------------
# small linear algebra (3 x 3, row-major lists)
def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def matvec(a, v):
    return [sum(a[i][k] * v[k] for k in range(len(v))) for i in range(len(a))]


def transpose(a):
    return [list(r) for r in zip(*a, strict=True)]


def inv3(m):
    (a, b, c), (d, e, f), (g, h, i) = m
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if abs(det) < 1e-300:
        raise ZeroDivisionError("singular 3 x 3 matrix")
    adj = [[e * i - f * h, c * h - b * i, b * f - c * e],
           [f * g - d * i, a * i - c * g, c * d - a * f],
           [d * h - e * g, b * g - a * h, a * e - b * d]]
    return [[x / det for x in r] for r in adj]


def normalize(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def rodrigues(R) -> list[float]:
    """Rotation matrix -> rotation vector (axis * angle), as cv2.Rodrigues."""
    tr = R[0][0] + R[1][1] + R[2][2]
    cos = max(-1.0, min(1.0, (tr - 1) / 2))
    ang = math.acos(cos)
    if ang < 1e-9:
        return [0.0, 0.0, 0.0]
    if math.pi - ang < 1e-6:   # 180 degrees: the axis from the diagonal
        xx, yy, zz = ((R[k][k] + 1) / 2 for k in range(3))
        axis = [math.sqrt(max(0.0, xx)), math.sqrt(max(0.0, yy)), math.sqrt(max(0.0, zz))]
        k = max(range(3), key=lambda j: axis[j])
        for j in range(3):
            if j != k and (R[k][j] + R[j][k]) < 0:
                axis[j] = -axis[j]
        return [a * ang for a in normalize(axis)]
    s = 2 * math.sin(ang)
    axis = [(R[2][1] - R[1][2]) / s, (R[0][2] - R[2][0]) / s, (R[1][0] - R[0][1]) / s]
    return [a * ang for a in axis]


# ---------------------------------------------------------------------------------------------
# the camera
class PinholeCamera:
    """OpenCV pinhole in table mm: ``R`` (world -> camera rows), centre ``C`` (table mm)."""

    def __init__(self, R, C, fx: float, w: int, h: int):
        self.R = [list(r) for r in R]
        self.C = list(C)
        self.fx = fx
        self.w, self.h = w, h
        self.cx, self.cy = w / 2 - 0.5, h / 2 - 0.5
        self.t = [-x for x in matvec(self.R, self.C)]

    @property
    def K(self):
        return [[self.fx, 0.0, self.cx], [0.0, self.fx, self.cy], [0.0, 0.0, 1.0]]

    def cam(self, p):
        return matvec(self.R, [p[0] - self.C[0], p[1] - self.C[1], p[2] - self.C[2]])

    def project(self, p) -> tuple[float, float, float]:
        """Table mm -> (u, v, depth mm); depth <= 0 is behind the camera."""
        x, y, z = self.cam(p)
        if z <= 1e-9:
            return (float("nan"), float("nan"), z)
        return (self.fx * x / z + self.cx, self.fx * y / z + self.cy, z)

    def in_frame(self, p, margin: float = 0.0) -> bool:
        u, v, z = self.project(p)
        return z > 0 and margin <= u <= self.w - 1 - margin and margin <= v <= self.h - 1 - margin

    def ray_to_plane(self, u: float, v: float, z_plane: float = 0.0):
        """Pixel -> table mm on the plane z = z_plane (None when the ray misses it)."""
        d = matvec(transpose(self.R), [(u - self.cx) / self.fx, (v - self.cy) / self.fx, 1.0])
        if abs(d[2]) < 1e-12:
            return None
        s = (z_plane - self.C[2]) / d[2]
        if s <= 0:
            return None
        return [self.C[0] + s * d[0], self.C[1] + s * d[1], z_plane]

    def hfov_deg(self) -> float:
        return math.degrees(2 * math.atan(self.w / 2 / self.fx))

    def focal_mm(self) -> float:
        return self.fx * SENSOR_MM / self.w

    def plane_homography(self, z: float):
        """Table mm on the plane at height z -> pixels (3 x 3)."""
        R, t = self.R, self.t
        cols = [[R[0][0], R[0][1], R[0][2] * z + t[0]],
                [R[1][0], R[1][1], R[1][2] * z + t[1]],
                [R[2][0], R[2][1], R[2][2] * z + t[2]]]
        return matmul(self.K, cols)

    def circle_ellipse(self, centre, radius: float, z: float) -> dict:
        """The exact image of a horizontal circle (table mm): the conic H^-T C H^-1 as centre,
        semi-axes and angle (degrees, of the major axis from the image x axis)."""
        cx, cy = centre[0], centre[1]
        C = [[1.0, 0.0, -cx], [0.0, 1.0, -cy], [-cx, -cy, cx * cx + cy * cy - radius * radius]]
        Hi = inv3(self.plane_homography(z))
        Q = matmul(matmul(transpose(Hi), C), Hi)
        return conic_ellipse(Q)

    def circle_points(self, centre, radius: float, z: float, n: int = 24) -> list[tuple[float, float]]:
        out = []
        for k in range(n):
            a = 2 * math.pi * k / n
            u, v, _ = self.project((centre[0] + radius * math.cos(a), centre[1] + radius * math.sin(a), z))
            out.append((u, v))
        return out


def conic_ellipse(Q) -> dict:
    """A 3 x 3 symmetric conic matrix of an ellipse -> {centre, axes (semi, major first), angle_deg}."""
    A, B, C = Q[0][0], 2 * Q[0][1], Q[1][1]
    D, E, F = 2 * Q[0][2], 2 * Q[1][2], Q[2][2]
    det = 4 * A * C - B * B
    if det <= 0:
        raise ValueError("not an ellipse")
    x0 = (B * E - 2 * C * D) / det
    y0 = (B * D - 2 * A * E) / det
    F0 = F + (D * x0 + E * y0) / 2
    tr, dif = A + C, math.hypot(A - C, B)
    l1, l2 = (tr - dif) / 2, (tr + dif) / 2      # l1 <= l2: l1 is along the major axis
    if F0 * l1 >= 0:
        raise ValueError("not a real ellipse")
    a, b = math.sqrt(-F0 / l1), math.sqrt(-F0 / l2)
    # eigenvector of [[A, B/2], [B/2, C]] for l1
    if abs(B) > 1e-15:
        vx, vy = B / 2, l1 - A
    else:
        vx, vy = (1.0, 0.0) if A <= C else (0.0, 1.0)
    ang = math.degrees(math.atan2(vy, vx))
    ang = (ang + 90) % 180 - 90
    return {"centre": [x0, y0], "axes": [a, b], "angle_deg": ang}


def ellipse_box(e: dict) -> list[float]:
    """Axis-aligned box (x0, y0, x1, y1) of an ellipse from :func:`conic_ellipse`."""
    a, b = e["axes"]
    t = math.radians(e["angle_deg"])
    hx = math.sqrt((a * math.cos(t)) ** 2 + (b * math.sin(t)) ** 2)
    hy = math.sqrt((a * math.sin(t)) ** 2 + (b * math.cos(t)) ** 2)
    x, y = e["centre"]
    return [x - hx, y - hy, x + hx, y + hy]


def look_rotation(C, target, up_hint, roll_rad: float = 0.0):
    """OpenCV world->camera rotation looking from C at target, image *up* towards ``up_hint``."""
    z = normalize([target[k] - C[k] for k in range(3)])
    down = [-u for u in up_hint]
    dz = sum(down[k] * z[k] for k in range(3))
    y = normalize([down[k] - dz * z[k] for k in range(3)])
    x = cross(y, z)
    if roll_rad:
        c, s = math.cos(roll_rad), math.sin(roll_rad)
        x, y = [c * x[k] + s * y[k] for k in range(3)], [-s * x[k] + c * y[k] for k in range(3)]
    return [x, y, z]


# ---------------------------------------------------------------------------------------------
# numbers from the command line: '30' or '25-40'
def num_range(text: str) -> tuple[float, float]:
    if "-" in text[1:]:
        i = text.index("-", 1)
        return float(text[:i]), float(text[i + 1:])
    return float(text), float(text)


def forced_num(forced: dict, key: str, rng: random.Random, default, integer: bool = False):
    """``default`` unless the factor is forced: then a value drawn in its range."""
    if key not in forced:
        return default
    lo, hi = num_range(forced[key])
    return rng.randint(int(lo), int(hi)) if integer else rng.uniform(lo, hi)


# ---------------------------------------------------------------------------------------------
# the table and its layout
def plan_layout(rng: random.Random, forced: dict) -> dict:
    """Cups (size, taper), rows (order per side, cups a row, pitches), the table (size between the
    marker centres, physical size round them) and every place's true position, in table mm."""
    rim = forced_num(forced, "rim", rng, rng.uniform(80, 115) if rng.random() < 0.7 else rng.uniform(93, 100))
    hi_h = min(140.0, rim * 1.5)
    lo_h = max(90.0, min(hi_h, rim * 0.85))
    height = forced_num(forced, "cup_h", rng, rng.uniform(lo_h, hi_h))
    base = rim * rng.uniform(0.62, 0.78)
    cpr = forced_num(forced, "cpr", rng, rng.choices([3, 4, 5], [0.15, 0.7, 0.15])[0], integer=True)
    cpr = max(1, min(6, cpr))
    touching = forced_num(forced, "touching", rng, 1.0 if rng.random() < 0.2 else 0.0) >= 0.5
    gap_y = 0.4 if touching else rng.uniform(2, 30)
    gap_x = 0.4 if touching and rng.random() < 0.7 else rng.uniform(2, 35)
    pitch_y, pitch_x = rim + gap_y, rim + gap_x
    # rows of side A, from its outer edge towards the middle: the seed's sheet stands the silver
    # cup between the red and the yellow rows
    r = rng.random()
    if r < 0.45:
        rows_a = list(DEFAULT_ROWS)
    else:
        cols = list(COLOURS)
        rng.shuffle(cols)
        pos = 2 if r < 0.85 else rng.randint(0, 4)
        rows_a = cols[:pos] + ["silver"] + cols[pos:]
    order_b = forced.get("order") or rng.choices(["mirror", "same", "shuffle"], [0.5, 0.3, 0.2])[0]
    # rows_b lists side B's rows from its own outer end (x = table_w) inwards, as Layout does
    if order_b == "same":
        rows_b = list(reversed(rows_a))   # read left to right, B's rows run in A's order
    elif order_b == "mirror":
        rows_b = list(rows_a)             # B is A mirrored about the middle (the project's Layout)
    else:
        cols = list(COLOURS)
        rng.shuffle(cols)
        rows_b = cols[:2] + ["silver"] + cols[2:]
    # x: the outer row stands clear of the markers' paper (a tall cup beside a marker may hide part
    # of it in the picture: the labels say how much of each marker is seen)
    clear_x = MARKER_PAPER_HALF_MM + rim / 2 + rng.uniform(0.05, 0.5) * height + rng.uniform(0, 20)
    ncol = len(rows_a)
    side_span = clear_x + (ncol - 1) * pitch_x          # marker centre -> inner row's centre
    min_mid = pitch_x + rng.uniform(0, 30)              # inner rows of the two sides
    inset_x = rng.uniform(60, 110)                      # marker centre -> table end
    length = forced_num(forced, "table", rng, rng.uniform(0.9, 1.8)) * 1000
    need = 2 * side_span + min_mid + 2 * inset_x
    grown = length < need
    length = max(length, need)
    table_w = length - 2 * inset_x
    extra = table_w - 2 * side_span - min_mid
    share = rng.uniform(0.0, 0.6)                       # the rest widens the middle
    first_x = clear_x + extra * share / 2
    mid = table_w - 2 * (first_x + (ncol - 1) * pitch_x)
    # y: the back cups within a few cm of the far markers' line (near the back edge)
    inset_far = rng.uniform(50, 110)
    inset_near = rng.uniform(60, 220)
    depth_m = rng.uniform(0.5, 0.95) * 1000
    rows_len = (cpr - 1) * pitch_y
    dice_gap = rng.uniform(25, 70)
    # the back row's y in front of the far markers' line: a tall cup beside a far marker, seen from
    # the players' side, covers it in the picture
    back_off = rng.uniform(0.1, 0.5) * height + rng.uniform(0, 40)
    need_h = back_off + rows_len + rim / 2 + dice_gap + 45
    table_h = max(depth_m - inset_far - inset_near, need_h + rng.uniform(0, 60))
    depth_m = table_h + inset_far + inset_near
    back_y = table_h - back_off
    dice_y = back_y - rows_len - rim / 2 - dice_gap
    jitter = 0.3 if touching else min(6.0, max(0.3, min(gap_x, gap_y) / 2 - 0.5)) * rng.uniform(0.2, 1.0)
    skew = rng.uniform(-1.5, 1.5) if rng.random() < 0.3 else 0.0   # the cups set a little askew
    places = []
    sk, ck = math.sin(math.radians(skew)), math.cos(math.radians(skew))
    pivot = (table_w / 2, back_y)

    def col_x(side, column):
        x = first_x + column * pitch_x
        return x if side == "A" else table_w - x

    for side, rows in (("A", rows_a), ("B", rows_b)):
        for column, cup in enumerate(rows):
            # side B's columns are counted from its own outer edge (x = table_w) inwards
            x = col_x(side, column)
            n = 1 if cup == "silver" else cpr
            for i in range(n):
                y = back_y - pitch_y * (cpr - 1) / 2 if cup == "silver" else back_y - i * pitch_y
                dx, dy = x - pivot[0], y - pivot[1]
                tx, ty = pivot[0] + ck * dx - sk * dy, pivot[1] + sk * dx + ck * dy
                jx = rng.gauss(0, jitter / 2) if jitter > 0.31 else 0.0
                jy = rng.gauss(0, jitter / 2) if jitter > 0.31 else 0.0
                jx, jy = max(-jitter, min(jitter, jx)), max(-jitter, min(jitter, jy))
                places.append({"side": side, "colour": cup, "index": i, "column": column,
                               "nominal_mm": [x, y], "centre_mm": [tx + jx, ty + jy]})
    silver_x = {s: col_x(s, rows.index("silver")) for s, rows in (("A", rows_a), ("B", rows_b))}
    dice_spots = {s: {c: [col_x(s, k), dice_y] for k, c in enumerate(rows) if c != "silver"}
                  for s, rows in (("A", rows_a), ("B", rows_b))}
    return {
        "rim_d": rim, "base_d": base, "cup_h": height, "cups_per_row": cpr, "touching": touching,
        "gap_x": gap_x, "gap_y": gap_y, "pitch_x": pitch_x, "pitch_y": pitch_y, "rows_A": rows_a, "rows_B": rows_b,
        "order_B": order_b, "first_x": first_x, "middle_gap": mid, "back_y": back_y, "dice_y": dice_y,
        "table_w": table_w, "table_h": table_h, "table_length": length, "table_depth": depth_m,
        "inset_x": inset_x, "inset_near": inset_near, "inset_far": inset_far, "grown_to_fit": grown,
        "hand_jitter_mm": jitter, "skew_deg": skew, "places": places,
        "tally_spot": {s: [silver_x[s], dice_y + 15.0] for s in ("A", "B")}, "dice_spots": dice_spots,
    }


def project_layout(L: dict) -> dict:
    """The layout as companion.vision.layout.Layout's fields: exact only when side B mirrors A,
    the pitches are equal and nothing is askew (``exact`` says); the places are the truth."""
    return {"table_w": L["table_w"], "table_h": L["table_h"], "rim_d": L["rim_d"], "base_d": L["base_d"],
            "cup_h": L["cup_h"], "ball_d": BALL_MM, "pitch": L["pitch_x"], "back_y": L["back_y"],
            "first_x": L["first_x"], "dice_y": L["dice_y"], "rows": list(L["rows_A"]),
            "cups_per_row": L["cups_per_row"]}


def layout_exact(L: dict) -> bool:
    return (L["order_B"] == "mirror" and abs(L["pitch_x"] - L["pitch_y"]) < 0.01 and L["skew_deg"] == 0.0
            and L["hand_jitter_mm"] <= 0.31)


def marker_centres(L: dict, rng: random.Random, jitter_mm: float, turn_deg: float) -> list[dict]:
    """The four markers laid by hand at the corners of the table_w x table_h rectangle (marker 0
    defines the origin; the others a few mm and degrees off), their tops towards the back edge."""
    w, h = L["table_w"], L["table_h"]
    out = []
    for i, (x, y) in enumerate([(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]):
        jx = 0.0 if i == 0 else rng.uniform(-jitter_mm, jitter_mm)
        jy = 0.0 if i in (0, 1) else rng.uniform(-jitter_mm, jitter_mm)
        out.append({"id": i, "centre_mm": [x + jx, y + jy], "turn_deg": rng.uniform(-turn_deg, turn_deg)})
    return out


def marker_corners(m: dict, half: float = MARKER_MM / 2) -> list[list[float]]:
    """Table mm of a marker's corners in detection order: top-left, top-right, bottom-right,
    bottom-left of the printed marker (its top towards the back edge, y+)."""
    a = math.radians(m["turn_deg"])
    c, s = math.cos(a), math.sin(a)
    cx, cy = m["centre_mm"]
    return [[cx + c * dx - s * dy, cy + s * dx + c * dy, 0.0]
            for dx, dy in ((-half, half), (half, half), (half, -half), (-half, -half))]


def plan_camera(rng: random.Random, forced: dict, required, centre, w: int, h: int,
                max_fov: float = 100.0) -> dict:
    """Height 0.7-1.6 m, tilt 0-35 deg from straight down, the camera mostly on the players'
    side (image up = the back edge), the widest lens 100 deg across; the lens is chosen so every
    ``required`` point (table mm) is in the frame, plus a random margin."""
    tilt = forced_num(forced, "tilt", rng, rng.uniform(0, 35) if rng.random() < 0.85 else rng.uniform(0, 4))
    height = forced_num(forced, "height", rng, rng.uniform(0.7, 1.6)) * 1000
    r = rng.random()
    yaw = rng.uniform(-12, 12) if r < 0.82 else (180 + rng.uniform(-12, 12) if r < 0.92 else rng.uniform(-40, 40))
    yaw = forced_num(forced, "yaw", rng, yaw)
    roll = rng.uniform(-3, 3)
    fov_forced = forced_num(forced, "fov", rng, None)
    spare = rng.uniform(0.0, 0.25) if rng.random() < 0.7 else rng.uniform(0.25, 0.6)
    margin = 0.015
    best = None
    for attempt in range(80):
        look = [centre[0] + rng.uniform(-0.08, 0.08) * 1000, centre[1] + rng.uniform(-0.08, 0.08) * 1000, 0.0]
        far = [math.sin(math.radians(yaw)), math.cos(math.radians(yaw)), 0.0]
        back = height * math.tan(math.radians(tilt))
        C = [look[0] - far[0] * back, look[1] - far[1] * back, height]
        R = look_rotation(C, look, far, math.radians(roll))
        need = 0.0
        ok = True
        for p in required:
            x, y, z = matvec(R, [p[0] - C[0], p[1] - C[1], p[2] - C[2]])
            if z <= 1e-6:
                ok = False
                break
            need = max(need, abs(x / z), abs(y / z) * w / h)
        if not ok:
            continue
        need /= 1 - 2 * margin
        fov_need = math.degrees(2 * math.atan(need))
        if best is None or fov_need < best[0]:
            best = (fov_need, look, C, R, height)
        if fov_need <= max_fov - 2:
            break
        if "height" not in forced and attempt % 4 == 3:
            height = min(2200.0, height + 50)   # the table does not fit: the camera goes up
    fov_need, look, C, R, height = best
    if fov_forced is not None:
        fov = fov_forced
    else:
        tan_need = math.tan(math.radians(fov_need / 2))
        fov = min(max_fov, math.degrees(2 * math.atan(tan_need * (1 + spare))))
        fov = max(fov, min(fov_need, max_fov))
    fx = w / 2 / math.tan(math.radians(fov / 2))
    return {"tilt_deg": tilt, "yaw_deg": yaw, "roll_deg": roll, "height_mm": height, "look_at_mm": look,
            "centre_mm": C, "R": R, "fx": fx, "hfov_deg": fov, "fov_needed_deg": fov_need,
            "fits": fov_need <= fov + 1e-6, "spare": spare}


# ---------------------------------------------------------------------------------------------
# cup profiles (metres): (radius, z, part) from the outer bottom's centre, up the outside, over
# the lip, down the inside to the inner bottom's centre; part 0 = outside, 1 = inside
def cup_profile(rim_r: float, base_r: float, height: float, wall: float, lip: float, ridges: bool) -> list:
    pts = [(0.0, 0.0025, 0), (base_r - 0.004, 0.0025, 0), (base_r - 0.0018, 0.0, 0), (base_r - 0.0004, 0.0, 0),
           (base_r, 0.0012, 0)]
    top = height - lip

    def r_out(z):
        return base_r + (rim_r - lip - base_r) * z / top if lip > 0 else base_r + (rim_r - base_r) * z / height

    zs = [0.012, 0.3 * height, 0.3 * height + 0.0015, 0.5 * height, 0.5 * height + 0.0015, top * 0.97] if ridges \
        else [0.012, 0.5 * height, top * 0.985]
    for k, z in enumerate(zs):
        bump = 0.0007 if ridges and k in (2, 4) else 0.0
        pts.append((r_out(z) + bump, z, 0))
    if lip > 0:
        cx, cz = rim_r - lip, height - lip
        for deg in (-70, -35, 0, 35, 70, 90):
            a = math.radians(deg)
            pts.append((cx + lip * math.cos(a), cz + lip * math.sin(a), 0))
        for deg in (120, 160, 200):
            a = math.radians(deg)
            pts.append((cx + lip * math.cos(a), cz + lip * math.sin(a), 1))
        r_in_top = cx - lip * 0.94
        z_in_top = cz - lip * 0.34
    else:
        pts.append((rim_r, height - 0.0004, 0))
        pts.append((rim_r - wall / 2, height, 0))
        r_in_top, z_in_top = rim_r - wall, height - 0.0004
    bottom = 0.0025 + max(0.0015, wall)
    r_in_bottom = base_r - wall - 0.0005
    for f in (0.05, 0.5, 0.97):
        z = z_in_top + (bottom - z_in_top) * f
        pts.append((r_in_top + (r_in_bottom - r_in_top) * f, z, 1))
    pts.append((r_in_bottom - 0.0015, bottom, 1))
    pts.append((0.0, bottom, 1))
    return pts


def inner_radius(prof: list, z: float) -> float:
    """The inside wall's radius at height z (metres), from a profile of :func:`cup_profile`."""
    inside = [(r, zz) for r, zz, part in prof if part == 1 and r > 0]
    inside.sort(key=lambda p: p[1])
    if z <= inside[0][1]:
        return inside[0][0]
    for (r0, z0), (r1, z1) in zip(inside, inside[1:], strict=False):
        if z0 <= z <= z1:
            return r0 + (r1 - r0) * (z - z0) / max(z1 - z0, 1e-9)
    return inside[-1][0]


def inner_bottom(prof: list) -> float:
    return prof[-1][1]


# ---------------------------------------------------------------------------------------------
# markers a cup hides in the picture
def convex_hull(points) -> list[tuple[float, float]]:
    """Andrew's monotone chain, counter-clockwise in image coordinates' sense of the maths."""
    pts = sorted(set((float(x), float(y)) for x, y in points))
    if len(pts) < 3:
        return pts

    def turn(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and turn(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and turn(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def inside_convex(hull, p) -> bool:
    n = len(hull)
    if n < 3:
        return False
    for k in range(n):
        a, b = hull[k], hull[(k + 1) % n]
        if (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) < 0:
            return False
    return True


def cup_silhouette(pc: PinholeCamera, centre, rim_r: float, base_r: float, height: float) -> list:
    """The picture's outline of an upright cup (or an upturned one: the same frustum, ends swapped)."""
    return convex_hull(pc.circle_points(centre, rim_r, height, 24) + pc.circle_points(centre, base_r, 0.0, 24) +
                       pc.circle_points(centre, base_r, height, 24) + pc.circle_points(centre, rim_r, 0.0, 24))


def hidden_markers(pc: PinholeCamera, markers: list, cups: list) -> list[int]:
    """Ids of the markers whose paper a cup covers in the picture. ``cups``: (centre, rim_r, base_r, h)."""
    hulls = [cup_silhouette(pc, c, r, b, h) for c, r, b, h in cups]
    out = []
    for m in markers:
        paper = marker_corners(m, MARKER_PAPER_HALF_MM)
        pts = []
        for i in range(5):
            for j in range(5):
                a, b = i / 4, j / 4
                top = [paper[0][k] + (paper[1][k] - paper[0][k]) * a for k in range(3)]
                bot = [paper[3][k] + (paper[2][k] - paper[3][k]) * a for k in range(3)]
                pts.append(pc.project([top[k] + (bot[k] - top[k]) * b for k in range(3)])[:2])
        if any(inside_convex(h, p) for h in hulls for p in pts):
            out.append(m["id"])
    return out
