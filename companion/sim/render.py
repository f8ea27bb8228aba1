"""A rendered 21 Exact table: a scene description → the BGR frame a camera above the table would
see, and scripted whole games as frames over time (:func:`game_sequence`).

Tests, ``companion bench cups`` and the demo use it as a camera. It is built so the tracker cannot
cheat: cups are solids with height (seen in perspective, they lean away from the camera and hide
the table behind them), water and balls are seen through the rim, hands and a leaning player come
in from the players' edge with their shadows, the light is uneven, the sensor noisy.

Speed: the table, the markers, the dice and the cups that stand still are drawn once into a
*static* image (redrawn only when a cup is taken, knocked or turned); a frame is a copy of it with
the moving parts (balls, hands) drawn on top and a slice of a pre-made noise image added.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from companion.sim.dice import BODY_BGR, PIP_GRID, pip_colour
from companion.vision.layout import COLOURS, Layout
from companion.vision.markers import marker_image

# BGR body colours of the cups and dice (a scene may shift them: "other cup shades").
CUP_BGR = {"blue": (200, 90, 25), "red": (40, 35, 205), "green": (55, 165, 40),
           "yellow": (35, 205, 235), "silver": (188, 188, 182)}
DIE_BGR = BODY_BGR  # one palette for every drawn die (the default colour profiles know it)
BALL_BGR = {"white": (238, 242, 242), "orange": (30, 140, 250)}
SKIN_BGR = [(125, 155, 205), (95, 125, 175), (60, 85, 125), (150, 180, 225)]
TABLES = {"wood": (70, 110, 150), "grey": (120, 118, 112), "dark": (48, 45, 42), "felt": (60, 95, 40)}



# --------------------------------------------------------------------------------------------
# camera
@dataclass(frozen=True)
class Look:
    """How the camera sees the table: pose, lens, light, sensor. Varying these is "other light,
    other tilt, other table"."""

    width: int = 1280
    height: int = 720
    focal: float = 985.0            # px at 1280 wide (~66° horizontal field, a Pi Camera Module 3)
    tilt_deg: float = 0.0           # camera tilted towards the far edge, placed back over the players
    roll_deg: float = 0.0
    shift: tuple[float, float] = (0.0, 0.0)   # lens position off the table centre, mm
    light: float = 1.0              # overall brightness (0.5 = half light)
    colour: tuple[float, float, float] = (1.0, 1.0, 1.0)  # the light's colour, B G R (a warm lamp: less blue)
    gradient: float = 0.25          # uneven light: brightness change across the frame
    gradient_angle: float = 30.0
    table: tuple[int, int, int] = TABLES["wood"]
    noise: float = 3.0              # sensor noise, grey levels (sigma)
    blur: float = 0.0               # defocus, pixels (sigma)
    cup_tint: float = 0.0           # hue shift of the cup colours, OpenCV hue units
    ball: str = "white"
    inside: str = "pale"            # "solid": cups their own colour inside (solid plastic), not white

    def scaled(self, width: int, height: int) -> Look:
        return replace(self, width=width, height=height, focal=self.focal * width / self.width)


class Camera:
    """A pinhole camera placed to see the whole table; projects table millimetres (x, y, z) to
    pixels. Its distance is chosen so the four markers fit in the frame."""

    def __init__(self, look: Look, layout: Layout) -> None:
        self.look = look
        w, h = look.width, look.height
        self.K = np.array([[look.focal, 0, w / 2], [0, look.focal, h / 2], [0, 0, 1]], np.float64)
        target = np.array([layout.table_w / 2 + look.shift[0], layout.table_h / 2 + look.shift[1], 0.0])
        tilt = math.radians(look.tilt_deg)
        corners = np.array([[x, y, 0] for x in (-70, layout.table_w + 70) for y in (-70, layout.table_h + 70)],
                           np.float64)
        distance = 400.0
        while True:
            eye = target + distance * np.array([0.0, -math.sin(tilt), math.cos(tilt)])
            self._pose(eye, target, math.radians(look.roll_deg))
            px = self.project(corners)
            if (px[:, 0].min() > 8 and px[:, 0].max() < w - 8 and px[:, 1].min() > 8
                    and px[:, 1].max() < h - 8) or distance > 5000:
                break
            distance += 10.0
        self.eye = eye

    def _pose(self, eye: np.ndarray, target: np.ndarray, roll: float) -> None:
        fwd = target - eye
        fwd /= np.linalg.norm(fwd)
        right = np.cross(fwd, [0.0, 1.0, 0.0])
        right /= np.linalg.norm(right)
        down = np.cross(fwd, right)
        c, s = math.cos(roll), math.sin(roll)
        right, down = c * right + s * down, -s * right + c * down
        self.R = np.stack([right, down, fwd])
        self.t = -self.R @ eye

    def project(self, pts: np.ndarray) -> np.ndarray:
        cam = pts @ self.R.T + self.t
        uv = cam[:, :2] / cam[:, 2:3]
        return uv * [self.K[0, 0], self.K[1, 1]] + [self.K[0, 2], self.K[1, 2]]

    def plane_homography(self, z: float = 0.0) -> np.ndarray:
        """Table mm on the plane at height z → pixels."""
        H = self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], self.R[:, 2] * z + self.t])
        return H / H[2, 2]

    def scale_at(self, x: float, y: float, z: float = 0.0) -> float:
        """Pixels per mm at a point."""
        depth = (self.R @ np.array([x, y, z]) + self.t)[2]
        return float(self.K[0, 0] / depth)


# --------------------------------------------------------------------------------------------
# scene
@dataclass(frozen=True)
class Cup:
    side: str
    cup: str
    x: float
    y: float
    upright: bool = True


@dataclass(frozen=True)
class Die:
    colour: str
    value: int
    x: float
    y: float
    angle: float = 0.0


@dataclass(frozen=True)
class Ball:
    x: float
    y: float
    z: float
    vx: float = 0.0     # mm per frame, for motion blur
    vy: float = 0.0
    vz: float = 0.0
    in_cup: Cup | None = None


@dataclass(frozen=True)
class Hand:
    """An arm from the players' edge to a palm at (x, y, z). A leaning player is a wide, high one."""

    x: float
    y: float
    z: float
    width: float = 80.0
    palm: float = 100.0
    skin: int = 0
    sleeve: tuple[int, int, int] = (90, 60, 50)
    from_x: float | None = None


@dataclass(frozen=True)
class Scene:
    cups: tuple[Cup, ...]
    dice: tuple[Die, ...] = ()
    balls: tuple[Ball, ...] = ()
    hands: tuple[Hand, ...] = ()


def full_table(layout: Layout, values: dict[str, dict[str, int]] | None = None) -> Scene:
    """Every cup standing in its slot and each side's dice in front of the rows."""
    cups = tuple(Cup(s.side, s.cup, s.x, s.y) for s in layout.slots())
    dice = []
    for side, spots in layout.dice_spots().items():
        for i, (colour, (x, y)) in enumerate(spots.items()):
            value = (values or {}).get(side, {}).get(colour, [6, 4, 3, 1][i])
            dice.append(Die(colour, value, x, y))
    return Scene(cups, tuple(dice))


# --------------------------------------------------------------------------------------------
# drawing
def marker_sheet_image(ids: tuple[int, ...] = (0, 1, 2, 3), px_per_mm: float = 4.0) -> list[np.ndarray]:
    """Each marker as printed (:func:`companion.vision.markers.marker_image`), one image per id."""
    return [marker_image(i, px_per_mm) for i in ids]


def draw_die(img: np.ndarray, quad: np.ndarray, colour: str, value: int, light: float = 1.0) -> None:
    """A die seen from above: a rounded square of its body colour (``quad``: its top face's four
    corners in pixels, clockwise) with the standard pips, white on dark bodies and black on white
    and yellow ones. The one place dice are drawn (the dice reader must read these)."""
    body = np.array(DIE_BGR[colour], np.float64) * light
    pip = tuple(float(c) * light for c in pip_colour(colour))
    centre = quad.mean(axis=0)
    # rounded square: shrink the quad a little and draw it with thick round-joined outline
    size = float(np.linalg.norm(quad[1] - quad[0]))
    inner = centre + (quad - centre) * 0.82
    cv2.fillConvexPoly(img, np.round(inner * 16).astype(np.int32), tuple(body.tolist()), cv2.LINE_AA, 4)
    cv2.polylines(img, [np.round(inner * 16).astype(np.int32)], True, tuple(body.tolist()),
                  max(1, int(size * 0.18)), cv2.LINE_AA, 4)
    ex = (quad[1] - quad[0]) / 2
    ey = (quad[3] - quad[0]) / 2
    r = max(1.5, size * 0.09)
    for px, py in PIP_GRID[value]:
        p = centre + ex * px * 0.55 + ey * py * 0.55
        cv2.circle(img, (int(round(p[0] * 16)), int(round(p[1] * 16))), int(round(r * 16)), pip, -1,
                   cv2.LINE_AA, 4)


def _circle(x: float, y: float, r: float, z: float, n: int = 36) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([x + r * np.cos(a), y + r * np.sin(a), np.full(n, z)])


def _tint(bgr: tuple[int, int, int], hue_shift: float) -> np.ndarray:
    if not hue_shift:
        return np.array(bgr, np.float64)
    hsv = cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2HSV).astype(np.int32)
    hsv[0, 0, 0] = (hsv[0, 0, 0] + int(hue_shift)) % 180
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)[0, 0].astype(np.float64)


def _poly(img: np.ndarray, pts: np.ndarray, colour) -> None:
    cv2.fillPoly(img, [np.round(pts * 16).astype(np.int32)], tuple(float(c) for c in colour), cv2.LINE_AA, 4)


class Renderer:
    """Draws :class:`Scene`s as a given camera sees them."""

    def __init__(self, look: Look | None = None, layout: Layout | None = None, seed: int = 0) -> None:
        self.look = look or Look()
        self.layout = layout or Layout()
        self.camera = Camera(self.look, self.layout)
        self.rng = np.random.default_rng(seed)
        self._table = self._draw_table()
        self._light = self._light_map()
        w, h = self.look.width, self.look.height
        sigma = self.look.noise
        noise = (self.rng.standard_normal((h + 32, w + 32, 3), np.float32) * sigma if sigma > 0
                 else np.zeros((h + 32, w + 32, 3), np.float32))
        self._noise_pos = np.clip(noise, 0, 255).astype(np.uint8)
        self._noise_neg = np.clip(-noise, 0, 255).astype(np.uint8)
        self._static_key: tuple | None = None
        self._static: np.ndarray | None = None
        self._inner: dict[Cup, np.ndarray] = {}

    # the table, markers and floor: one warp of a top-view texture
    def _draw_table(self) -> np.ndarray:
        L = self.layout
        s = 2.0  # texture px per mm
        x0, y0, x1, y1 = -160.0, -120.0, L.table_w + 160.0, L.table_h + 120.0
        tw, th = int((x1 - x0) * s), int((y1 - y0) * s)
        tex = np.empty((th, tw, 3), np.uint8)
        tex[:] = (58, 60, 62)  # floor
        base = np.array(self.look.table, np.float64)
        ys = np.arange(th, dtype=np.float32)[:, None]
        xs = np.arange(tw, dtype=np.float32)[None, :]
        grain = 1.0 + 0.06 * np.sin(ys / 9.0 + 3 * np.sin(xs / 140.0)) + 0.03 * np.sin(ys / 2.3)
        speckle = cv2.resize(self.rng.normal(0, 0.02, (th // 4, tw // 4)).astype(np.float32), (tw, th))
        shade = grain + speckle
        del grain, speckle
        table = np.empty((th, tw, 3), np.uint8)  # channel by channel: a 3-channel float copy would
        for c in range(3):                       # cost ~70 MB of peak memory at this texture size
            table[..., c] = np.clip(shade * np.float32(base[c]), 0, 255)
        ty0, ty1 = int((-75 - y0) * s), int((L.table_h + 75 - y0) * s)
        tx0, tx1 = int((-75 - x0) * s), int((L.table_w + 75 - x0) * s)
        tex[ty0:ty1, tx0:tx1] = table[ty0:ty1, tx0:tx1]
        markers = marker_sheet_image(px_per_mm=s)
        # the marker's top edge faces the back (+y); texture rows grow with y, so flip vertically
        for i, (mx, my) in enumerate([(0, 0), (L.table_w, 0), (L.table_w, L.table_h), (0, L.table_h)]):
            m = cv2.cvtColor(markers[i][::-1], cv2.COLOR_GRAY2BGR)
            cx, cy = int((mx - x0) * s), int((my - y0) * s)
            hs = m.shape[0] // 2
            tex[cy - hs:cy - hs + m.shape[0], cx - hs:cx - hs + m.shape[1]] = (m * 0.93).astype(np.uint8)
        T = np.array([[1 / s, 0, x0], [0, 1 / s, y0], [0, 0, 1]])
        H = self.camera.plane_homography(0.0) @ T
        return cv2.warpPerspective(tex, H, (self.look.width, self.look.height), flags=cv2.INTER_AREA,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=(58, 60, 62))

    def _light_map(self) -> np.ndarray:
        w, h = self.look.width, self.look.height
        a = math.radians(self.look.gradient_angle)
        yy = np.arange(h, dtype=np.float32)[:, None]
        xx = np.arange(w, dtype=np.float32)[None, :]
        ramp = ((xx - w / 2) * math.cos(a) + (yy - h / 2) * math.sin(a)) / w
        vignette = 1.0 - 0.25 * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2)
        return (self.look.light * (1.0 + self.look.gradient * ramp) * vignette).astype(np.float32)

    def light_at(self, u: float, v: float) -> float:
        h, w = self._light.shape
        return float(self._light[min(h - 1, max(0, int(v))), min(w - 1, max(0, int(u)))])

    # static parts
    def _cup_colour(self, cup: str) -> np.ndarray:
        return _tint(CUP_BGR[cup], self.look.cup_tint if cup != "silver" else 0.0)

    def _draw_cup(self, img: np.ndarray, cup: Cup) -> None:
        L, cam = self.layout, self.camera
        rr, rb, H = L.rim_d / 2, L.base_d / 2, L.cup_h
        body = self._cup_colour(cup.cup)
        if cup.upright:
            bottom, top = cam.project(_circle(cup.x, cup.y, rb, 0)), cam.project(_circle(cup.x, cup.y, rr, H))
        else:
            bottom, top = cam.project(_circle(cup.x, cup.y, rr, 0)), cam.project(_circle(cup.x, cup.y, rb, H))
        hull = cv2.convexHull(np.vstack([bottom, top]).astype(np.float32))[:, 0, :]
        _poly(img, hull, body * 0.78)
        if not cup.upright:
            _poly(img, top, np.minimum(body * 1.08, 255))
            return
        _poly(img, top, np.minimum(body * 1.1, 255))             # the lip
        inner = cam.project(_circle(cup.x, cup.y, rr - 4.0, H))
        self._inner[cup] = inner
        if self.look.inside == "solid":   # its own colour, the bottom lit nearly as the lip
            pale = body * 0.95
        else:
            pale = (body * 0.25 + np.array([205, 208, 200]) * 0.75) * 0.78
        _poly(img, inner, pale)
        zw = H * 0.4
        water = cam.project(_circle(cup.x, cup.y, rb + (rr - rb) * 0.4 - 1.0, zw))
        self._clip_poly(img, water, inner, pale * 0.86)   # water: the inside's tint, a little darker

    def _clip_poly(self, img: np.ndarray, pts: np.ndarray, clip: np.ndarray, colour) -> None:
        x, y, w, h = cv2.boundingRect(np.vstack([pts, clip]).astype(np.float32))
        x, y = max(x, 0), max(y, 0)
        w, h = min(w, img.shape[1] - x), min(h, img.shape[0] - y)
        if w <= 0 or h <= 0:
            return
        a = np.zeros((h, w), np.uint8)
        b = np.zeros((h, w), np.uint8)
        cv2.fillPoly(a, [np.round(pts - (x, y)).astype(np.int32)], 255)
        cv2.fillPoly(b, [np.round(clip - (x, y)).astype(np.int32)], 255)
        roi = img[y:y + h, x:x + w]
        roi[(a & b) > 0] = np.clip(colour, 0, 255).astype(np.uint8)

    def _die_corners(self, die: Die, z: float) -> np.ndarray:
        """A die's square at height z (mm): its four corners in pixels, clockwise."""
        c, s = math.cos(die.angle), math.sin(die.angle)
        sq = np.array([[-1, 1], [1, 1], [1, -1], [-1, -1]], np.float64) * self.layout.die_mm / 2
        rot = sq @ np.array([[c, s], [-s, c]])
        return self.camera.project(np.column_stack([rot + (die.x, die.y), np.full(4, z)]))

    def die_tops(self, dice: tuple[Die, ...] | list[Die]) -> np.ndarray:
        """Where each die's top face is in the frame: rows of (x, y, side) in pixels — what a
        test or a training script checks the dice reader's answers against."""
        out = np.zeros((len(dice), 3))
        for i, die in enumerate(dice):
            top = self._die_corners(die, self.layout.die_mm)
            out[i] = (*top.mean(axis=0), float(np.linalg.norm(top[1] - top[0])))
        return out

    def _draw_dice(self, img: np.ndarray, dice: tuple[Die, ...]) -> None:
        for die in dice:
            ptop, pbot = self._die_corners(die, self.layout.die_mm), self._die_corners(die, 0.0)
            hull = cv2.convexHull(np.vstack([ptop, pbot]).astype(np.float32))[:, 0, :]
            _poly(img, hull, np.array(DIE_BGR[die.colour]) * 0.7)
            draw_die(img, ptop, die.colour, die.value)

    def static(self, cups: tuple[Cup, ...], dice: tuple[Die, ...]) -> np.ndarray:
        key = (cups, dice)
        if key != self._static_key:
            img = self._table.copy()
            self._draw_dice(img, dice)
            # far cups first (painter's order): the nearer a cup to the camera, the later
            eye = self.camera.eye
            for cup in sorted(cups, key=lambda c: -math.hypot(c.x - eye[0], c.y - eye[1])):
                self._draw_cup(img, cup)
            if self.look.blur > 0:
                img = cv2.GaussianBlur(img, (0, 0), self.look.blur)
            self._static = np.clip(img * self._light[..., None], 0, 255).astype(np.uint8)
            self._static_key = key
        assert self._static is not None
        return self._static

    # moving parts
    def _draw_ball(self, img: np.ndarray, ball: Ball) -> None:
        cam = self.camera
        colour = np.array(BALL_BGR[self.look.ball], np.float64)
        r_mm = self.layout.ball_d / 2
        p = cam.project(np.array([[ball.x, ball.y, ball.z]]))[0]
        light = self.light_at(*p)
        r = r_mm * cam.scale_at(ball.x, ball.y, ball.z)
        if not 0 < r < 150 or not (-200 < p[0] < img.shape[1] + 200 and -200 < p[1] < img.shape[0] + 200):
            return  # behind or far outside the camera
        if ball.in_cup is not None:
            clip = self._inner.get(ball.in_cup)
            if clip is not None:
                self._clip_poly(img, _circle(p[0], p[1], r, 0)[:, :2], clip, colour * light * 0.95)
                return
        if ball.z > 2:  # its shadow on the table
            sh = cam.project(np.array([[ball.x + ball.z * 0.15, ball.y - ball.z * 0.1, 0.0]]))[0]
            self._darken(img, _circle(sh[0], sh[1], r * 1.1, 0)[:, :2], 0.7)
        q = cam.project(np.array([[ball.x - ball.vx, ball.y - ball.vy, ball.z - ball.vz]]))[0]
        if np.hypot(*(q - p)) > 1.5:  # motion blur: a streak
            cv2.line(img, tuple(np.round(q).astype(int)), tuple(np.round(p).astype(int)),
                     tuple((colour * light * 0.85).tolist()), max(1, int(2 * r * 0.8)), cv2.LINE_AA)
        cv2.circle(img, (int(round(p[0] * 16)), int(round(p[1] * 16))), int(round(r * 16)),
                   tuple((colour * light).tolist()), -1, cv2.LINE_AA, 4)

    def _darken(self, img: np.ndarray, pts: np.ndarray, factor: float) -> None:
        x, y, w, h = cv2.boundingRect(pts.astype(np.float32))
        x0, y0 = max(x, 0), max(y, 0)
        x1, y1 = min(x + w, img.shape[1]), min(y + h, img.shape[0])
        if x1 <= x0 or y1 <= y0:
            return
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillPoly(mask, [np.round(pts - (x0, y0)).astype(np.int32)], 255)
        mask = cv2.blur(mask, (9, 9))
        roi = img[y0:y1, x0:x1]
        k = 1.0 - (1.0 - factor) * mask.astype(np.float32) / 255.0
        roi[:] = (roi * k[..., None]).astype(np.uint8)

    def _hand_outline(self, hand: Hand, z_shift: float = 0.0, ground: bool = False) -> np.ndarray:
        L = self.layout
        fx = hand.from_x if hand.from_x is not None else hand.x * 0.6 + L.table_w * 0.2
        start = np.array([fx, -420.0, hand.z + 260.0])
        end = np.array([hand.x, hand.y, hand.z])
        d = end[:2] - start[:2]
        d /= np.linalg.norm(d) + 1e-9
        n = np.array([-d[1], d[0]]) * hand.width / 2
        arm = [np.r_[start[:2] + n, start[2]], np.r_[end[:2] + n, end[2]],
               np.r_[end[:2] - n, end[2]], np.r_[start[:2] - n, start[2]]]
        palm = _circle(hand.x, hand.y, hand.palm / 2, hand.z, 20)
        palm[:, :2] += d * hand.palm * 0.25
        pts = np.vstack([np.array(arm), palm])
        if ground:  # shadow: drop to the table, pushed away from a light above and behind
            pts = pts.copy()
            pts[:, 0] += pts[:, 2] * 0.15
            pts[:, 1] -= pts[:, 2] * 0.1
            pts[:, 2] = 0.0
        return self.camera.project(pts)

    def _draw_hand(self, img: np.ndarray, hand: Hand) -> None:
        shadow = self._hand_outline(hand, ground=True)
        self._darken(img, cv2.convexHull(shadow.astype(np.float32))[:, 0, :], 0.6)
        px = self._hand_outline(hand)
        arm, palm = px[:4], px[4:]
        light = self.light_at(*palm.mean(axis=0))
        _poly(img, arm, np.array(hand.sleeve) * light)
        skin = np.array(SKIN_BGR[hand.skin % len(SKIN_BGR)]) * light
        _poly(img, palm, skin)
        c = palm.mean(axis=0)
        _poly(img, c + (palm - c) * 0.6, skin * 1.06)

    def frame(self, scene: Scene) -> np.ndarray:
        img = self.static(scene.cups, scene.dice).copy()
        for ball in scene.balls:
            self._draw_ball(img, ball)
        for hand in scene.hands:
            self._draw_hand(img, hand)
        if self.look.colour != (1.0, 1.0, 1.0):
            img = cv2.multiply(img, (*self.look.colour, 0.0))
        if self.look.noise > 0:
            dy, dx = (int(v) for v in self.rng.integers(0, 32, 2))
            h, w = img.shape[:2]
            cv2.add(img, self._noise_pos[dy:dy + h, dx:dx + w], dst=img)
            cv2.subtract(img, self._noise_neg[dy:dy + h, dx:dx + w], dst=img)
        return img


# --------------------------------------------------------------------------------------------
# scripted games
@dataclass
class Truth:
    """What really happened: a throw that landed in a cup (``kind`` "made" when the cup was taken,
    "stays" for an overshoot or the silver cup), at ``t`` seconds (the ball landing)."""

    t: float
    side: str
    cup: str
    kind: str
    left_t: float | None = None   # when the cup left the table (made cups)


@dataclass
class Sequence:
    look: Look
    layout: Layout
    fps: float
    scenes: list[Scene]
    truth: list[Truth]
    nasty: dict[str, int] = field(default_factory=dict)
    seed: int = 0
    misses: list[tuple[float, str]] = field(default_factory=list)  # (t, side): throws no cup caught

    def __len__(self) -> int:
        return len(self.scenes)

    def frames(self, renderer: Renderer | None = None) -> Iterator[tuple[float, np.ndarray]]:
        renderer = renderer or Renderer(self.look, self.layout, self.seed)
        for i, scene in enumerate(self.scenes):
            yield i / self.fps, renderer.frame(scene)


def random_look(rng: random.Random, width: int = 1280, height: int = 720) -> Look:
    return Look(
        tilt_deg=rng.uniform(0, 30), roll_deg=rng.uniform(-4, 4),
        shift=(rng.uniform(-40, 40), rng.uniform(-30, 30)),
        light=rng.uniform(0.5, 1.15), gradient=rng.uniform(0.0, 0.6), gradient_angle=rng.uniform(0, 360),
        table=rng.choice(list(TABLES.values())), noise=rng.uniform(1.5, 5.0),
        blur=rng.choice([0.0, 0.0, 0.8, 1.2]), cup_tint=rng.uniform(-4, 4),
        ball=rng.choice(["white", "orange"]),
    ).scaled(width, height)


def game_sequence(seed: int, fps: float = 15.0, look: Look | None = None, layout: Layout | None = None,
                  max_throws: int = 24, nasty: float = 1.0) -> Sequence:
    """A whole 21 Exact game as scenes over time, deterministic from ``seed``: throws that land in
    cups (made cups taken out by a hand, overshoots and silver hits with the ball taken out),
    misses, rim-outs, balls flying over the cups, and — at rate ``nasty`` — hands that hover or
    knock a cup a few centimetres, a player leaning over the table, silver tallies (a cup put
    down upside down)."""
    rng = random.Random(seed)
    layout = layout or Layout()
    look = look or random_look(rng)
    scenes: list[Scene] = []
    truth: list[Truth] = []
    misses: list[tuple[float, str]] = []
    counts: dict[str, int] = {}
    values = {}
    for side in ("A", "B"):
        vals = rng.sample(range(1, 7), 4)
        values[side] = dict(zip(COLOURS, vals, strict=True))
    base = full_table(layout, values)
    cups = list(base.cups)
    dice = base.dice
    totals = {"A": 0, "B": 0}
    tallies = {"A": 0, "B": 0}
    skin = rng.randrange(len(SKIN_BGR))
    rim_ball = layout.cup_h * 0.4 + layout.ball_d / 2 - 6

    def n(seconds: float) -> int:
        return max(1, int(round(seconds * fps)))

    def hold(seconds: float, balls: tuple[Ball, ...] = (), hands: tuple[Hand, ...] = ()) -> None:
        scenes.extend([Scene(tuple(cups), dice, balls, hands)] * n(seconds))

    def now() -> float:
        return len(scenes) / fps

    def flight(x0: float, y0: float, x1: float, y1: float, z1: float, seconds: float, apex: float) -> None:
        k = n(seconds)
        prev = None
        for i in range(1, k + 1):
            a = i / k
            x, y = x0 + (x1 - x0) * a, y0 + (y1 - y0) * a
            z = (1 - a) * 260 + a * z1 + 4 * apex * a * (1 - a)
            v = (0.0, 0.0, 0.0) if prev is None else (x - prev[0], y - prev[1], z - prev[2])
            prev = (x, y, z)
            scenes.append(Scene(tuple(cups), dice, (Ball(x, y, z, *v),), ()))

    def reach(x: float, y: float, seconds: float, z: float, ball: Ball | None = None,
              width: float = 80.0, palm: float = 100.0, fx: float | None = None) -> None:
        """A hand coming in from the players' edge to (x, y) and leaving again, in ``seconds``."""
        k = n(seconds)
        fx = fx if fx is not None else x + rng.uniform(-120, 120)
        for i in range(k):
            a = math.sin(math.pi * (i + 0.5) / k)  # in and out
            hy = -260 + (y + 260) * a
            hz = z + (1 - a) * 150
            balls = (ball,) if ball is not None else ()
            scenes.append(Scene(tuple(cups), dice, balls, (Hand(x, hy, hz, width, palm, skin, from_x=fx),)))

    def take(cup: Cup, seconds: float, with_ball: Ball | None, remove: bool) -> float:
        """A hand takes the cup (or only the ball) at mid-reach; returns when the cup left."""
        k = n(seconds)
        fx = cup.x + rng.uniform(-100, 100)
        left = now()
        ball = with_ball
        for i in range(k):
            a = math.sin(math.pi * (i + 0.5) / k)
            if i == k // 2:
                if remove and cup in cups:
                    cups.remove(cup)
                    left = now()
                ball = None
            hy = -260 + (cup.y + 260) * a
            hz = layout.cup_h + 25 + (1 - a) * 150
            scenes.append(Scene(tuple(cups), dice, (ball,) if ball else (),
                                (Hand(cup.x, hy, hz, 80.0, 105.0, skin, from_x=fx),)))
        return left

    def nasty_act(side: str) -> None:
        mine = [c for c in cups if c.side == side and c.upright]
        roll = rng.random()
        if not mine:
            return
        target = rng.choice(mine)
        if roll < 0.3:       # a hand hovering over the cups, touching nothing
            counts["hover"] = counts.get("hover", 0) + 1
            reach(target.x + rng.uniform(-20, 20), target.y + rng.uniform(-20, 20), rng.uniform(0.8, 1.6),
                  layout.cup_h + 20)
        elif roll < 0.55:    # a cup knocked a few centimetres
            counts["knock"] = counts.get("knock", 0) + 1
            k = n(0.8)
            fx = target.x + rng.uniform(-100, 100)
            for i in range(k):
                a = math.sin(math.pi * (i + 0.5) / k)
                if i == k // 2:
                    # a knocked cup slides where there is room: cups do not go through each other
                    for _ in range(20):
                        ang = rng.uniform(0, 2 * math.pi)
                        d = rng.uniform(15, 35)
                        moved = replace(target, x=target.x + d * math.cos(ang), y=target.y + d * math.sin(ang))
                        if all(math.hypot(c.x - moved.x, c.y - moved.y) > layout.rim_d + 2
                               for c in cups if c is not target):
                            cups[cups.index(target)] = moved
                            break
                hy = -260 + (target.y - 40 + 260) * a
                scenes.append(Scene(tuple(cups), dice, (), (Hand(target.x, hy, layout.cup_h + 15 + (1 - a) * 150,
                                                                 80.0, 100.0, skin, from_x=fx),)))
        elif roll < 0.8:     # a player leaning over the table, still for a while
            counts["lean"] = counts.get("lean", 0) + 1
            x = target.x + rng.uniform(-60, 60)
            hand = Hand(x, rng.uniform(150, 300), 420.0, 320.0, 380.0, skin, (60, 60, 90), from_x=x)
            hold(rng.uniform(0.8, 1.8), (), (hand,))
        else:                # a ball flying over the cups and off the back of the table
            counts["fly_over"] = counts.get("fly_over", 0) + 1
            flight(target.x, -250, target.x + rng.uniform(-40, 40), layout.table_h + 300, 60, 0.8, 700)

    turn = 0
    throws = 0
    while throws < max_throws:
        side = "AB"[turn % 2]
        turn += 1
        throws += 1
        hold(rng.uniform(0.3, 0.7))
        if rng.random() < 0.35 * nasty:
            nasty_act(side)
            hold(rng.uniform(0.2, 0.5))
        mine = [c for c in cups if c.side == side and c.upright]
        colour_left = [c for c in mine if c.cup != "silver"]
        silver = [c for c in mine if c.cup == "silver"]
        x0 = rng.uniform(60, 340) if side == "A" else rng.uniform(460, 740)
        r = rng.random()
        if r < 0.2 or not mine:   # a miss on the table, bouncing off the back
            misses.append((now(), side))
            tx, ty = x0 + rng.uniform(-50, 50), rng.uniform(120, 250)
            flight(x0, -250, tx, ty, 20, 0.6, 600)
            flight(tx, ty, tx + rng.uniform(-60, 60), layout.table_h + 250, 40, 0.4, 150)
            hold(0.2)
            continue
        if r < 0.3:               # in and out again: a miss
            misses.append((now(), side))
            target = rng.choice(mine)
            flight(x0, -250, target.x, target.y, rim_ball, 0.6, 650)
            hold(0.1, (Ball(target.x, target.y, rim_ball, in_cup=target),))
            flight(target.x, target.y, target.x + rng.uniform(-200, 200), layout.table_h + 250, 40, 0.5, 250)
            continue
        if r < 0.4 and silver:
            target = silver[0]
        else:
            target = rng.choice(colour_left) if colour_left else silver[0]
        flight(x0, -250, target.x, target.y, rim_ball, rng.uniform(0.5, 0.8), rng.uniform(550, 800))
        landed = now()
        ang = rng.uniform(0, 2 * math.pi)
        off = rng.uniform(0, 6)
        ball = Ball(target.x + off * math.cos(ang), target.y + off * math.sin(ang), rim_ball, in_cup=target)
        hold(rng.uniform(0.9, 1.6), (ball,))
        if target.cup == "silver":
            truth.append(Truth(landed, side, "silver", "stays"))
            take(target, rng.uniform(0.7, 1.0), ball, remove=False)
            open_value = [values[side][c.cup] for c in colour_left]
            if all(v > 21 - totals[side] for v in open_value):
                totals[side] += 1
                tx, ty = layout.tally_spot(side)
                spot = Cup(side, rng.choice(COLOURS), tx + (tallies[side] % 2) * 30 - 15, ty, upright=False)
                tallies[side] += 1
                reach(tx, ty, 0.5, layout.cup_h + 20)
                cups.append(spot)
                reach(tx, ty, 0.5, layout.cup_h + 20)
        else:
            v = values[side][target.cup]
            if totals[side] + v <= 21:
                t = Truth(landed, side, target.cup, "made")
                t.left_t = take(target, rng.uniform(0.7, 1.1), ball, remove=True)
                truth.append(t)
                totals[side] += v
            else:
                truth.append(Truth(landed, side, target.cup, "stays"))
                take(target, rng.uniform(0.7, 1.0), ball, remove=False)
        if totals[side] == 21:
            break
    hold(1.5)
    return Sequence(look, layout, fps, scenes, truth, counts, seed, misses)
