"""Drawn training scenes for the dice networks: the tables the byler photos never show.

A real table is not a plain board: speckled carpets and terrazzo (specks of a pip's size), felt,
wood grain, printed cloths (polka dots, checks, stripes, flowers), newspaper, and clutter on it
(cables, barcode labels, coins, playing cards, pencils, stickers). Dice touch, lean and are seen
from the side, showing one or two side faces beside the top one; only the top face is the die.

Everything here is numpy and OpenCV, seeded by the caller's generator. ``scene()`` gives a frame
and its dice (cx, cy, size, value of the *top* face) plus the centres of side faces (places that
must not be read as a die), so the finder learns to fire on top faces only and the reader learns
that a side face, a speck or a coin is "not a die".
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.sim.dice import BODY_BGR, PIPS, pip_colour

FAMILIES = ("plain", "speckle", "noise", "felt", "wood", "dots", "checks", "stripes", "flowers", "terrazzo",
            "newsprint")


def _palette(rng: np.random.Generator, n: int) -> np.ndarray:
    base = rng.integers(0, 256, 3).astype(np.float32)
    out = [base]
    for _ in range(n - 1):
        if rng.random() < 0.5:
            out.append(np.clip(base + rng.normal(0, 60, 3), 0, 255))
        else:
            out.append(rng.integers(0, 256, 3).astype(np.float32))
    return np.array(out, np.float32)


def _noise(rng: np.random.Generator, h: int, w: int, cell: float) -> np.ndarray:
    """Smooth value noise in 0..1 with features about ``cell`` pixels across."""
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    small = rng.random((gh, gw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)


def texture(rng: np.random.Generator, h: int, w: int, family: str | None = None,
            speck: float = 4.0) -> tuple[np.ndarray, str]:
    """A table surface ``h`` × ``w`` (BGR uint8) of one family; ``speck`` is about a pip's size in
    pixels, so the specks and dots are of the size that fools a die finder."""
    family = family or FAMILIES[int(rng.integers(0, len(FAMILIES)))]
    pal = _palette(rng, int(rng.integers(2, 6)))
    img = np.empty((h, w, 3), np.float32)
    img[:] = pal[0]
    if family == "speckle":  # carpet, terrazzo-like specks of many sizes around a pip's
        n = int(h * w / (speck * speck) * rng.uniform(0.05, 0.5))
        xs, ys = rng.uniform(0, w, n), rng.uniform(0, h, n)
        rs = np.abs(rng.normal(speck * 0.5, speck * 0.35, n)) + 0.6
        cols = pal[rng.integers(1, len(pal), n)]
        for x, y, r, c in zip(xs, ys, rs, cols, strict=True):
            cv2.circle(img, (int(x * 4), int(y * 4)), int(r * 4), c.tolist(), -1, cv2.LINE_AA, 2)
        img += (rng.normal(0, rng.uniform(3, 14), (h, w, 1))).astype(np.float32)
    elif family == "noise":  # a mottled carpet: noise at two scales between two colours
        t = 0.6 * _noise(rng, h, w, rng.uniform(6, 40)) + 0.4 * _noise(rng, h, w, rng.uniform(1.5, 5))
        img = pal[0] * (1 - t[..., None]) + pal[1] * t[..., None]
        img += rng.normal(0, rng.uniform(4, 18), (h, w, 1)).astype(np.float32)
    elif family == "felt":
        img += (rng.normal(0, rng.uniform(3, 10), (h, w, 3)) + 30 * (_noise(rng, h, w, 60)[..., None] - 0.5))
    elif family == "wood":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, math.pi)
        u = xx * math.cos(a) + yy * math.sin(a)
        warp = _noise(rng, h, w, rng.uniform(20, 80)) * rng.uniform(5, 30)
        t = 0.5 + 0.5 * np.sin((u + warp) / rng.uniform(2, 9))
        brown = np.array([rng.uniform(20, 90), rng.uniform(50, 130), rng.uniform(90, 200)], np.float32)
        dark = brown * rng.uniform(0.45, 0.8)
        if rng.random() < 0.3:
            brown, dark = pal[0], pal[1]
        img = dark * (1 - t[..., None]) + brown * t[..., None]
        img += rng.normal(0, 4, (h, w, 1)).astype(np.float32)
    elif family == "dots":  # polka dots, pip-sized or larger, on a grid or scattered
        r = speck * rng.uniform(0.6, 3.0)
        step = r * rng.uniform(2.2, 5)
        jitter = rng.random() < 0.4
        y = 0.0
        while y < h + step:
            x = (step / 2) * (int(y / step) % 2)
            while x < w + step:
                px, py = (x + rng.normal(0, step * 0.3), y + rng.normal(0, step * 0.3)) if jitter else (x, y)
                cv2.circle(img, (int(px * 4), int(py * 4)), int(r * 4), pal[1].tolist(), -1, cv2.LINE_AA, 2)
                x += step
            y += step
    elif family == "checks":
        s = rng.uniform(speck * 2, speck * 12)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, math.pi / 2)
        u, v = xx * math.cos(a) + yy * math.sin(a), -xx * math.sin(a) + yy * math.cos(a)
        if rng.random() < 0.5:  # gingham: two stripe sets half-blended
            t = 0.5 * ((u // s) % 2) + 0.5 * ((v // s) % 2)
        else:
            t = ((u // s + v // s) % 2).astype(np.float32)
        img = pal[0] * (1 - t[..., None]) + pal[1] * t[..., None]
    elif family == "stripes":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, math.pi)
        u = xx * math.cos(a) + yy * math.sin(a)
        widths = rng.uniform(speck, speck * 10, 6)
        t = np.zeros((h, w), np.float32)
        period = widths.sum()
        k = (u % period)
        acc = 0.0
        for i, wd in enumerate(widths):
            t[(k >= acc) & (k < acc + wd)] = i % len(pal)
            acc += wd
        img = pal[t.astype(int) % len(pal)]
    elif family == "flowers":  # a printed cloth: scattered petals and blobs
        n = int(h * w / (speck * speck * 40) * rng.uniform(0.5, 2))
        for _ in range(n):
            x, y = rng.uniform(0, w), rng.uniform(0, h)
            c = pal[int(rng.integers(1, len(pal)))].tolist()
            petals, r = int(rng.integers(3, 7)), rng.uniform(speck, speck * 5)
            for k in range(petals):
                a = 2 * math.pi * k / petals
                cv2.ellipse(img, (int(x + r * math.cos(a)), int(y + r * math.sin(a))),
                            (int(r * 0.7) + 1, int(r * 0.35) + 1), math.degrees(a), 0, 360, c, -1, cv2.LINE_AA)
            cv2.circle(img, (int(x), int(y)), int(r * 0.35) + 1, pal[0].tolist(), -1, cv2.LINE_AA)
    elif family == "terrazzo":  # chips of stone or glass in a pale ground
        n = int(h * w / (speck * speck * 6) * rng.uniform(0.3, 1.2))
        for _ in range(n):
            x, y = rng.uniform(0, w), rng.uniform(0, h)
            r = abs(rng.normal(speck * 1.2, speck))+1
            k = int(rng.integers(3, 7))
            pts = np.array([(x + r * rng.uniform(0.5, 1.2) * math.cos(2 * math.pi * i / k + rng.uniform(0, 0.8)),
                             y + r * rng.uniform(0.5, 1.2) * math.sin(2 * math.pi * i / k + rng.uniform(0, 0.8)))
                            for i in range(k)], np.int32)
            cv2.fillPoly(img, [pts], pal[int(rng.integers(1, len(pal)))].tolist(), cv2.LINE_AA)
    elif family == "newsprint":  # rows of small dark marks on pale paper
        img[:] = rng.uniform(190, 245) + rng.normal(0, 6, 3)
        line = rng.uniform(speck * 1.5, speck * 4)
        y = rng.uniform(0, line)
        while y < h:
            x = rng.uniform(0, speck * 3)
            while x < w:
                wd = rng.uniform(speck * 0.5, speck * 4)
                cv2.rectangle(img, (int(x), int(y)), (int(x + wd), int(y + line * 0.55)),
                              (rng.uniform(10, 70),) * 3, -1)
                x += wd + rng.uniform(speck * 0.4, speck * 2)
            y += line
    if rng.random() < 0.5:  # uneven light across the cloth
        g = _noise(rng, h, w, max(h, w) / 2)[..., None]
        img *= 0.75 + 0.5 * g
    return np.clip(img, 0, 255).astype(np.uint8), family


def clutter(img: np.ndarray, rng: np.random.Generator, n: int, die: float) -> list[tuple[float, float]]:
    """Draw ``n`` things that are not dice; returns their centres (places to read as "not a die")."""
    h, w = img.shape[:2]
    out = []
    for _ in range(n):
        kind = rng.integers(0, 7)
        x, y = float(rng.uniform(0, w)), float(rng.uniform(0, h))
        if kind == 0:  # a cable: a thick curve with a highlight
            pts = [(x, y)]
            a = rng.uniform(0, 2 * math.pi)
            for _ in range(int(rng.integers(4, 12))):
                a += rng.normal(0, 0.5)
                step = rng.uniform(die * 0.5, die * 2)
                pts.append((pts[-1][0] + step * math.cos(a), pts[-1][1] + step * math.sin(a)))
            p = np.array(pts, np.int32)
            th = int(max(2, die * rng.uniform(0.1, 0.35)))
            c = rng.integers(0, 256, 3).tolist() if rng.random() < 0.5 else [rng.uniform(10, 60)] * 3
            cv2.polylines(img, [p], False, c, th, cv2.LINE_AA)
            cv2.polylines(img, [p + 1], False, [min(255, v + 70) for v in c], max(1, th // 4), cv2.LINE_AA)
        elif kind == 1:  # a label with a barcode and text-like marks
            lw, lh = die * rng.uniform(1.5, 4), die * rng.uniform(0.8, 2)
            box = cv2.boxPoints(((x, y), (lw, lh), float(rng.uniform(0, 180)))).astype(np.int32)
            cv2.fillConvexPoly(img, box, (rng.uniform(200, 255),) * 3, cv2.LINE_AA)
            rect = np.zeros((int(lh) + 2, int(lw) + 2, 3), np.uint8)
            bx = 2
            while bx < rect.shape[1] - 2:
                bw = int(rng.integers(1, 4))
                if rng.random() < 0.55:
                    rect[2:int(rect.shape[0] * 0.6), bx:bx + bw] = 255
                bx += bw
            for _ in range(int(rng.integers(3, 10))):
                tx = int(rng.uniform(2, rect.shape[1] - 4))
                rect[int(rect.shape[0] * 0.7):int(rect.shape[0] * 0.85), tx:tx + 2] = 255
            src = np.float32([[0, 0], [rect.shape[1], 0], [rect.shape[1], rect.shape[0]], [0, rect.shape[0]]])
            M = cv2.getPerspectiveTransform(src, box.astype(np.float32)[[1, 2, 3, 0]])
            ink = cv2.warpPerspective(rect, M, (w, h))
            img[ink[..., 0] > 127] = (rng.uniform(0, 50),) * 3
        elif kind == 2:  # a coin
            r = die * rng.uniform(0.35, 0.7)
            c = np.array([rng.uniform(40, 120), rng.uniform(110, 190), rng.uniform(140, 220)])
            if rng.random() < 0.5:
                c = np.array([rng.uniform(150, 210)] * 3)
            cv2.circle(img, (int(x), int(y)), int(r), (c * 0.7).tolist(), -1, cv2.LINE_AA)
            cv2.circle(img, (int(x), int(y)), int(r * 0.82), c.tolist(), -1, cv2.LINE_AA)
            cv2.circle(img, (int(x - r * 0.2), int(y - r * 0.2)), int(r * 0.25) + 1,
                       np.minimum(c + 60, 255).tolist(), -1, cv2.LINE_AA)
        elif kind == 3:  # a playing card: white, rounded, small red or black pips
            cw, ch = die * rng.uniform(2.5, 3.5), die * rng.uniform(3.5, 5)
            ang = float(rng.uniform(0, 180))
            box = cv2.boxPoints(((x, y), (cw, ch), ang)).astype(np.int32)
            cv2.fillConvexPoly(img, box, (rng.uniform(215, 255),) * 3, cv2.LINE_AA)
            col = (30, 30, 200) if rng.random() < 0.5 else (25, 25, 25)
            for _ in range(int(rng.integers(1, 11))):
                u, v = rng.uniform(-0.3, 0.3), rng.uniform(-0.35, 0.35)
                a = math.radians(ang)
                px = x + u * cw * math.cos(a) - v * ch * math.sin(a)
                py = y + u * cw * math.sin(a) + v * ch * math.cos(a)
                cv2.circle(img, (int(px), int(py)), int(die * 0.09) + 1, col, -1, cv2.LINE_AA)
        elif kind == 4:  # a pencil
            L, t = die * rng.uniform(3, 7), die * rng.uniform(0.2, 0.35)
            box = cv2.boxPoints(((x, y), (L, t), float(rng.uniform(0, 180)))).astype(np.int32)
            cv2.fillConvexPoly(img, box, rng.integers(0, 256, 3).tolist(), cv2.LINE_AA)
        elif kind == 5:  # a round sticker or button, pip-like dots on it
            r = die * rng.uniform(0.3, 0.6)
            cv2.circle(img, (int(x), int(y)), int(r), rng.integers(0, 256, 3).tolist(), -1, cv2.LINE_AA)
            for _ in range(int(rng.integers(0, 5))):
                cv2.circle(img, (int(x + rng.uniform(-r, r) * 0.5), int(y + rng.uniform(-r, r) * 0.5)),
                           int(r * 0.15) + 1, rng.integers(0, 256, 3).tolist(), -1, cv2.LINE_AA)
        else:  # a square printed tag (a marker, a QR code)
            s = die * rng.uniform(0.8, 2.0)
            bits = (rng.random((6, 6)) < 0.5).astype(np.uint8) * 255
            bits[0, :] = bits[-1, :] = bits[:, 0] = bits[:, -1] = 0
            tag = cv2.resize(bits, (int(s), int(s)), interpolation=cv2.INTER_NEAREST)
            x0, y0 = int(x - s / 2), int(y - s / 2)
            if 0 <= x0 and 0 <= y0 and x0 + tag.shape[1] <= w and y0 + tag.shape[0] <= h:
                img[y0:y0 + tag.shape[0], x0:x0 + tag.shape[1]] = tag[..., None]
        out.append((x, y))
    return out


_FACE = 64


def face_image(value: int, body: tuple[int, int, int], pips: tuple[int, int, int]) -> np.ndarray:
    """One face of a die, square, ``_FACE`` px: rounded corners are left to the outline drawn round it."""
    face = np.empty((_FACE, _FACE, 3), np.uint8)
    face[:] = body
    for px, py in PIPS[value]:
        cv2.circle(face, (int((0.5 + px) * _FACE * 4), int((0.5 + py) * _FACE * 4)), int(0.085 * _FACE * 4),
                   pips, -1, cv2.LINE_AA, 2)
    return face


def paste(img: np.ndarray, face: np.ndarray, quad: np.ndarray, shade: float = 1.0) -> None:
    """Warp ``face`` onto the quadrilateral ``quad`` (4 × 2, clockwise from top-left) of ``img``."""
    h, w = img.shape[:2]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 <= x0 or y1 <= y0:
        return
    src = np.float32([[0, 0], [_FACE, 0], [_FACE, _FACE], [0, _FACE]])
    M = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective((face.astype(np.float32) * shade).clip(0, 255), M, size, flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.ones((_FACE, _FACE), np.float32), M, size, flags=cv2.INTER_LINEAR)[..., None]
    region = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = (region * (1 - mask) + warped * mask).astype(np.uint8)


# The faces next to each top face (standard die: opposite faces sum to 7), any cyclic order will do
# for drawing: the reader must learn that these are never the value.
_AROUND = {1: (2, 3, 5, 4), 2: (1, 3, 6, 4), 3: (1, 2, 6, 5), 4: (1, 5, 6, 2), 5: (1, 4, 6, 3), 6: (2, 4, 5, 3)}


def solid_die(img: np.ndarray, cx: float, cy: float, size: float, value: int, body: tuple[int, int, int],
              pips: tuple[int, int, int], yaw: float, view: tuple[float, float], lean: float,
              rng: np.random.Generator) -> list[tuple[float, float, float]]:
    """A die seen a little from the side: its top face (centred on cx, cy, side ``size`` as seen,
    foreshortened along ``view``) and the side faces turned towards the camera, which show other
    numbers. ``lean`` 0 is straight from above; 0.6 shows side faces 0.6 of a face tall. Returns
    the side faces' centres and sizes (places that are not a die)."""
    c, s = math.cos(yaw), math.sin(yaw)
    vx, vy = view
    half = size / 2
    corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]], np.float64)
    corners = corners @ np.array([[c, s], [-s, c]])
    # foreshorten the top along the view direction
    along = corners @ np.array([vx, vy])
    corners -= np.outer(along * (1 - math.cos(math.asin(min(0.9, lean)))), [vx, vy])
    top = corners + [cx, cy]
    sides = []
    around = _AROUND[value]
    for k in range(4):
        a, b = top[k], top[(k + 1) % 4]
        mid = (a + b) / 2 - [cx, cy]
        n = mid / (np.linalg.norm(mid) + 1e-9)
        facing = float(n @ np.array([vx, vy]))
        if facing <= 0.05 or lean <= 0.02:
            continue
        depth = size * lean * facing
        quad = np.array([a, b, b + np.array([vx, vy]) * depth, a + np.array([vx, vy]) * depth])
        sv = around[k]
        paste(img, face_image(sv, body, pips), quad, shade=float(rng.uniform(0.55, 0.85)))
        centre = quad.mean(axis=0)
        sides.append((float(centre[0]), float(centre[1]), float(max(depth, size * 0.5))))
    paste(img, face_image(value, body, pips), top, shade=float(rng.uniform(0.95, 1.1)))
    cv2.polylines(img, [np.round(top * 4).astype(np.int32)], True, [int(v * 0.8) for v in body], 1, cv2.LINE_AA, 2)
    return sides


def die_colours(rng: np.random.Generator) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    if rng.random() < 0.65:
        name = list(BODY_BGR)[int(rng.integers(0, len(BODY_BGR)))]
        body = tuple(int(np.clip(v + rng.normal(0, 18), 0, 255)) for v in BODY_BGR[name])
        return body, pip_colour(name)
    body = tuple(int(v) for v in rng.integers(0, 256, 3))
    lum = 0.11 * body[0] + 0.59 * body[1] + 0.3 * body[2]
    return body, ((20, 20, 20) if lum > 140 else (240, 240, 240))


def scene(rng: np.random.Generator, w: int = 640, h: int = 640, with_dice: bool = True, family: str | None = None):
    """A drawn table: a cloth of some family, clutter, 0–20 dice, some touching, some seen from the
    side. Returns (image, dice[n, 4] = cx, cy, size, top value, not_dice[m, 3] = cx, cy, size)."""
    die = float(rng.uniform(18, 60))
    img, _family = texture(rng, h, w, family, speck=die * rng.uniform(0.08, 0.3))
    not_dice: list[tuple[float, float, float]] = []
    if rng.random() < 0.6:
        for x, y in clutter(img, rng, int(rng.integers(1, 8)), die):
            not_dice.append((x, y, die))
    dice: list[list[float]] = []
    placed: list[tuple[float, float, float]] = []
    n = int(rng.integers(1, 21)) if with_dice else 0
    view_a = rng.uniform(0, 2 * math.pi)
    view = (math.cos(view_a), math.sin(view_a))
    lean_all = float(rng.uniform(0, 0.55)) if rng.random() < 0.5 else 0.0
    touching = rng.random() < 0.4
    for _ in range(400):
        if len(dice) >= n:
            break
        d = die * float(rng.uniform(0.85, 1.15))
        if touching and placed and rng.random() < 0.6:
            px, py, pd = placed[int(rng.integers(0, len(placed)))]
            a = rng.uniform(0, 2 * math.pi)
            r = (d + pd) / 2 * rng.uniform(1.0, 1.2)
            cx, cy = px + r * math.cos(a), py + r * math.sin(a)
        else:
            cx, cy = float(rng.uniform(d * 0.3, w - d * 0.3)), float(rng.uniform(d * 0.3, h - d * 0.3))
        if not (0 < cx < w and 0 < cy < h):
            continue
        if any(math.hypot(cx - x, cy - y) < (d + e) * 0.5 for x, y, e in placed):
            continue
        body, pips = die_colours(rng)
        value = int(rng.integers(1, 7))
        lean = lean_all + (float(rng.uniform(0.1, 0.5)) if rng.random() < 0.15 else 0.0)
        sides = solid_die(img, cx, cy, d, value, body, pips, float(rng.uniform(0, math.pi / 2)), view, lean, rng)
        not_dice += sides
        placed.append((cx, cy, d))
        dice.append([cx, cy, d * 1.1, value])  # the photos' boxes hold a little more than the top
    img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.3, 1.2)))
    return (img, np.array(dice, np.float32).reshape(-1, 4), np.array(not_dice, np.float32).reshape(-1, 3))
