"""Photo-realistic, exactly labelled 21 Exact cup tables rendered by Blender (Cycles, CPU).

    blender -b --factory-startup -noaudio -P tools/render/cup_scenes.py -- \
        --out DIR --seed N --count K [--width 1280 --height 720] [--samples 16] \
        [--split test] [--factors make=party light=window ...] [--threads 1] [--resume] [--sequence]

A table with its four ArUco markers laid as calibration/README.md tells a user (DICT_4X4_50 ids
0-3, 80 mm on 15 mm of white, 0 near left ... 3 far left, tops towards the back edge), both
sides' rows of blue, red, green and yellow cups and a silver cup, the game dice in front of the
rows; cups standing, gone or turned over; balls on a cup's bottom, floating on water or loose.
Scene i is drawn from seed N+i alone (separate random streams per part), so a scene is the same
whatever else is rendered with it and forcing one factor leaves the other parts as they were.

Each still writes ``DIR/images/sNNNNNN.jpg`` and ``DIR/meta/sNNNNNN.json``; ``--sequence`` renders
each seed as a short live sequence instead (set-up, the ball in the air, the ball landed, the
cup removed / turned / the tally grown / the ball picked up), ``sNNNNNN_fK.jpg`` / ``.json`` per
frame and ``DIR/sequences/sNNNNNN.json``. ``DIR/annotations.csv`` has one row per cup place (and
per tally cup) of every image in DIR. See tools/render/README.md ("Cup scenes").

Reuses dice_scenes.py (imported, not copied): materials and cloths, lights and white balance,
the ArUco marker images, the game dice, clutter, render settings and sensor noise. The table,
layout, camera and projections are cup_geometry.py (pure Python, also used outside Blender).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from pathlib import Path

import bmesh
import bpy
from mathutils import Matrix, Vector

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cup_geometry as cg  # noqa: E402
import dice_scenes as ds  # noqa: E402

# ---------------------------------------------------------------------------------------------
# factors
MAKES = {"solid": 0.34, "party": 0.3, "translucent": 0.14, "metal": 0.1, "mixed": 0.12}
SILVER_MAKES = {"metal": 0.75, "plastic": 0.25}
LIGHTS = {"overhead": 0.3, "window": 0.18, "two": 0.15, "coloured": 0.11, "dim": 0.13, "spot": 0.13}
CLOTHS = {"wood": 0.24, "mat": 0.14, "print": 0.14, "speckle": 0.1, "felt": 0.1, "plain": 0.1, "owncolour": 0.18}
BALLS = {"bottom": 0.28, "floating": 0.24, "loose": 0.1, "none": 0.16, "mixed": 0.22}
STAGES = {"setup": 0.2, "game": 0.8}
CLUTTER = {"none": 0.3, "some": 0.5, "heavy": 0.2}
EVENTS = {"made": 0.45, "turned": 0.25, "silver": 0.15, "miss": 0.15}
CHOICES = {"make": MAKES, "silver": SILVER_MAKES, "light": LIGHTS, "cloth": CLOTHS, "ball": BALLS,
           "stage": STAGES, "clutter": CLUTTER, "event": EVENTS, "order": {"mirror": 1, "same": 1, "shuffle": 1},
           "tally": {"place": 1, "tally": 1}}
FACTOR_KEYS = {
    "make": "the coloured cups' make: " + "/".join(MAKES) + " (mixed: a make per colour)",
    "silver": "the silver cup: metal/plastic",
    "rim": "rim diameter, mm (95 or 80-115)",
    "cup_h": "cup height, mm (90-140)",
    "cpr": "cups per row (4 or 3-5)",
    "order": "side B's row order: mirror (the project's default), same (A's order), shuffle",
    "touching": "1: the cups of a row (and the rows) touch; 0: gaps",
    "table": "table length, m (1.2 or 0.9-1.8; grown when the cups do not fit)",
    "stage": "setup (every cup standing, no ball) or game (cups gone / turned, balls)",
    "gone": "colour cups gone per side (3 or 0-6)",
    "turned": "cups turned over per side (1 or 0-2)",
    "tally": "where turned cups stand: place (turned where they stood) or tally (in front of the silver cup)",
    "ball": "/".join(BALLS) + ": balls on a cup's bottom (dry cup), floating on water, loose on the table",
    "balls": "number of balls in cups (2 or 0-3)",
    "silver_ball": "1: each side's silver cup holds a ball too, one time in two (balls in metal are rare otherwise)",
    "loose": "number of balls loose on the table",
    "water": "1: the cups hold water (a third full); 0: dry",
    "height": "camera height above the table, m (0.7-1.6)",
    "tilt": "camera tilt from straight down, degrees (0-35)",
    "yaw": "camera heading, degrees (0: from the players' side; 180: from behind the cups)",
    "fov": "horizontal field of view, degrees (default: what the table needs plus a margin, at most 100)",
    "light": "/".join(LIGHTS),
    "cast": "1: white balance mostly uncorrected (a colour cast); 0: balanced",
    "cloth": "/".join(CLOTHS) + " or a dice_scenes subtype (carpet, dots, checks, ...)",
    "clutter": "/".join(CLUTTER) + ": phones, glasses, coins, cards, cables, pencils, a stray cup",
    "dice": "1: the game dice in front of the rows; 0: none",
    "defocus": "1: slightly out of focus; 0: sharp",
    "marker_jitter": "how far (mm) markers 1-3 lie off the table_w x table_h rectangle, at most (default 0-3)",
    "marker_turn": "how far (degrees) each marker is turned, at most (default 0-4)",
    "event": "--sequence only: " + "/".join(EVENTS),
}
SUBTYPES = {s for v in ds.CLOTHS.values() for s in v} - {"tray"}

# cup colours: (hue, saturation, value) ranges of the sRGB colour, one shade per set
CUP_HSV = {"blue": ((0.57, 0.64), (0.7, 0.95), (0.45, 0.85)), "red": ((-0.02, 0.015), (0.75, 0.95), (0.55, 0.9)),
           "green": ((0.27, 0.4), (0.6, 0.9), (0.4, 0.8)), "yellow": ((0.12, 0.16), (0.75, 0.95), (0.85, 0.98))}
BALL_RGB = {"white": (0.82, 0.82, 0.8), "orange": (0.9, 0.28, 0.015)}
LIGHT_RGB = {"red": (1.0, 0.05, 0.04), "blue": (0.08, 0.2, 1.0), "purple": (0.55, 0.08, 1.0),
             "green": (0.1, 1.0, 0.15), "amber": (1.0, 0.45, 0.02), "pink": (1.0, 0.2, 0.5), "cyan": (0.05, 0.8, 1.0)}
MM = 0.001


def stream(seed: int, name: str):
    return ds.stream(seed, "cups/" + name)


# ---------------------------------------------------------------------------------------------
# arguments
def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = ds.scene_parser("cup_scenes.py", "Render labelled 21 Exact cup tables.", FACTOR_KEYS, 1280, 720, 1)
    ap.add_argument("--filter", type=float, default=3.0,
                    help="bilateral smoothing of the diffuse light, pixels (0: none)")
    ap.add_argument("--sequence", action="store_true", help="render each seed as a live sequence of frames")
    ap.add_argument("--throws", type=int, default=1,
                    help="--sequence: throws in a row on the one table (a short game), each its flight, landing and after")
    a = ap.parse_args(argv)
    a.forced = parse_factors(a.factors)
    return a


def parse_factors(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        for tok in item.replace(",", " ").split():
            if "=" not in tok:
                raise SystemExit(f"--factors: {tok!r} is not KEY=VALUE")
            k, v = tok.split("=", 1)
            if k not in FACTOR_KEYS:
                raise SystemExit(f"--factors: unknown {k!r}; known: " + ", ".join(FACTOR_KEYS))
            if k in CHOICES and v not in CHOICES[k] and not (k == "cloth" and v in SUBTYPES):
                raise SystemExit(f"--factors {k}={v}: not one of {FACTOR_KEYS[k]}")
            out[k] = v
    return out


# ---------------------------------------------------------------------------------------------
# the plan: every random choice, before anything is built (table mm)
def cup_shade(rng, colour: str):
    (h0, h1), (s0, s1), (v0, v1) = CUP_HSV[colour]
    return ds.hsv_linear(rng.uniform(h0, h1), rng.uniform(s0, s1), rng.uniform(v0, v1))


def cup_look(rng, make: str, colour: str, rgb) -> dict:
    """Shape details and surface of one make."""
    look = {"make": make, "colour": colour, "rgb": rgb, "rough": rng.uniform(0.18, 0.5),
            "clearcoat": rng.uniform(0.0, 0.5), "ridges": False, "lip_mm": rng.uniform(1.0, 2.0),
            "wall_mm": rng.uniform(1.2, 2.2)}
    if make == "party":
        look.update(ridges=True, lip_mm=rng.uniform(1.6, 2.4), wall_mm=rng.uniform(0.8, 1.2),
                    inside_rgb=ds.jitter((0.8, 0.8, 0.78), rng, 0.05), rough=rng.uniform(0.2, 0.4))
    elif make == "translucent":
        look.update(ridges=rng.random() < 0.4, lip_mm=rng.uniform(0.8, 1.6), wall_mm=rng.uniform(1.0, 1.5),
                    rough=rng.uniform(0.03, 0.2), transmission=rng.uniform(0.85, 0.97))
    elif make == "metal":
        look.update(lip_mm=rng.choice([0.0, rng.uniform(0.6, 1.2)]), wall_mm=rng.uniform(0.6, 0.9),
                    rough=rng.uniform(0.08, 0.32), brushed=rng.random() < 0.6)
    elif make == "plastic":   # a silver-painted plastic cup
        look.update(rough=rng.uniform(0.25, 0.45), metallic=rng.uniform(0.5, 0.85))
    elif make == "solid":
        look.update(ridges=rng.random() < 0.3)
    return look


def plan_cups(seed: int, forced: dict, L: dict) -> dict:
    rng = stream(seed, "cup-looks")
    make = forced.get("make") or ds.pick(rng, MAKES)
    looks = {}
    for colour in cg.COLOURS:
        m = rng.choice(["solid", "party", "translucent", "metal"]) if make == "mixed" else make
        looks[colour] = cup_look(rng, m, colour, cup_shade(rng, colour))
    smake = forced.get("silver") or ds.pick(rng, SILVER_MAKES)
    grey = (0.86, 0.86, 0.88) if smake == "metal" else ds.jitter((0.5, 0.5, 0.52), rng, 0.15)
    looks["silver"] = cup_look(rng, "metal" if smake == "metal" else "plastic", "silver", grey)
    looks["silver"]["silver_make"] = smake
    silver_scale = rng.uniform(0.9, 1.06) if rng.random() < 0.4 else 1.0
    silver_scale = min(silver_scale, (2 * L["pitch_x"] - L["rim_d"] - 1.0) / L["rim_d"])   # clear of its neighbours
    return {"make": make, "silver_make": smake, "looks": looks, "silver_scale": silver_scale}


def cup_dims(L: dict, cups: dict, colour: str) -> dict:
    """mm: rim and base diameter, height, lip and wall, for a cup of that colour."""
    s = cups["silver_scale"] if colour == "silver" else 1.0
    lk = cups["looks"][colour]
    return {"rim_d": L["rim_d"] * s, "base_d": L["base_d"] * s, "height": L["cup_h"] * s, "lip": lk["lip_mm"],
            "wall": lk["wall_mm"], "ridges": lk["ridges"]}


def profile_of(d: dict) -> list:
    return cg.cup_profile(d["rim_d"] / 2 * MM, d["base_d"] / 2 * MM, d["height"] * MM, d["wall"] * MM, d["lip"] * MM,
                          d["ridges"])


def plan_state(seed: int, forced: dict, L: dict, cups: dict, sequence: bool) -> dict:
    """Per place: standing / gone / turned, water, a ball; tally cups; loose balls."""
    rng = stream(seed, "state")
    places = L["places"]
    stage = "setup" if sequence else (forced.get("stage") or ds.pick(rng, STAGES))
    water_all = cg.forced_num(forced, "water", rng, 1.0 if rng.random() < 0.5 else 0.0) >= 0.5
    level = rng.uniform(0.2, 0.45)
    states = ["standing"] * len(places)
    tally_mode = forced.get("tally") or rng.choice(["place", "tally"])
    tally: list[dict] = []
    if stage == "game":
        for side in ("A", "B"):
            idx = [i for i, p in enumerate(places) if p["side"] == side and p["colour"] != "silver"]
            n_gone = cg.forced_num(forced, "gone", rng, rng.randint(0, int(len(idx) * 0.6)), integer=True)
            n_turn = cg.forced_num(forced, "turned", rng, rng.choice([0, 0, 1, 1, 2]), integer=True)
            order = list(idx)
            rng.shuffle(order)
            for i in order[:n_gone]:
                states[i] = "gone"
            rest = order[n_gone:]
            if tally_mode == "place":
                for i in rest[:n_turn]:
                    states[i] = "turned"
            else:
                tx, ty = L["tally_spot"][side]
                for k in range(n_turn):
                    y = ty - k * (L["rim_d"] + rng.uniform(0.5, 12))
                    if y - L["rim_d"] / 2 < -L["inset_near"] + 15:
                        break
                    tally.append({"side": side, "colour": rng.choice(cg.COLOURS),
                                  "centre_mm": [tx + rng.uniform(-6, 6), y + rng.uniform(-4, 4)]})
    water = [water_all and s == "standing" for s in states]
    ball_mode = forced.get("ball") or ds.pick(rng, BALLS)
    ball_colour = "white" if rng.random() < 0.65 else "orange"
    balls: dict[int, dict] = {}
    loose: list[dict] = []
    if stage == "game":
        n_in = 0 if ball_mode in ("none", "loose") else rng.choice([1, 1, 1, 2, 2, 3])
        n_in = cg.forced_num(forced, "balls", rng, n_in, integer=True)
        standing = [i for i, s in enumerate(states) if s == "standing"]
        for i in rng.sample(standing, min(n_in, len(standing))):
            mode = ball_mode if ball_mode in ("bottom", "floating") else rng.choice(["bottom", "floating"])
            water[i] = mode == "floating"
            balls[i] = {"mode": mode, "offset": (rng.uniform(-1, 1), rng.uniform(-1, 1)),
                        "spin": rng.uniform(0, 2 * math.pi)}
        if forced.get("silver_ball") == "1":   # drawn only when forced: other scenes stay as they were
            for i in (i for i, p in enumerate(places) if p["colour"] == "silver" and states[i] == "standing"
                      and i not in balls and rng.random() < 0.5):
                mode = ball_mode if ball_mode in ("bottom", "floating") else rng.choice(["bottom", "floating"])
                water[i] = mode == "floating"
                balls[i] = {"mode": mode, "offset": (rng.uniform(-1, 1), rng.uniform(-1, 1)),
                            "spin": rng.uniform(0, 2 * math.pi)}
        n_loose = rng.randint(1, 2) if ball_mode in ("loose", "mixed") or rng.random() < 0.12 else 0
        n_loose = cg.forced_num(forced, "loose", rng, n_loose, integer=True)
        for _ in range(n_loose):
            p = free_spot(rng, L, taken_of(L, cups, tally, loose), 22)
            if p is not None:
                loose.append({"centre_mm": p, "spin": rng.uniform(0, 2 * math.pi)})
    return {"stage": stage, "states": states, "water": water, "water_level": level, "balls": balls,
            "ball_colour": ball_colour, "ball_mode": ball_mode if stage == "game" else "none", "tally": tally,
            "tally_mode": tally_mode, "loose": loose, "water_all": water_all}


def taken_of(L: dict, cups: dict, tally: list, loose: list, markers=None) -> list[tuple[float, float, float]]:
    """(x, y, radius) circles where nothing else may lie (mm)."""
    out = [(p["centre_mm"][0], p["centre_mm"][1], cup_dims(L, cups, p["colour"])["rim_d"] / 2 + 8) for p in L["places"]]
    out += [(t["centre_mm"][0], t["centre_mm"][1], L["rim_d"] / 2 + 8) for t in tally]
    out += [(b["centre_mm"][0], b["centre_mm"][1], 24) for b in loose]
    for spots in L["dice_spots"].values():
        out += [(x, y, 26) for x, y in spots.values()]
    for x, y in [(0, 0), (L["table_w"], 0), (L["table_w"], L["table_h"]), (0, L["table_h"])]:
        out.append((x, y, cg.MARKER_PAPER_HALF_MM * 1.45 + 8))
    return out


def free_spot(rng, L: dict, taken: list, radius: float, tries: int = 80, region=None):
    x0, y0 = -L["inset_x"] + radius + 10, -L["inset_near"] + radius + 10
    x1, y1 = L["table_w"] + L["inset_x"] - radius - 10, L["table_h"] + L["inset_far"] - radius - 10
    if region is not None:
        x0, y0, x1, y1 = max(x0, region[0]), max(y0, region[1]), min(x1, region[2]), min(y1, region[3])
    for _ in range(tries):
        x, y = rng.uniform(x0, x1), rng.uniform(y0, y1)
        if all(math.hypot(x - tx, y - ty) > r + radius for tx, ty, r in taken):
            return [x, y]
    return None


def plan_event(seed: int, forced: dict, L: dict, state: dict, throw: int = 0, silvered: tuple = ()) -> dict:
    """One throw: its kind, side and target cup. ``throw`` > 0: the game's later throws (their
    own random stream; only cups still standing; one silver throw a side, as its tally spot is one)."""
    rng = stream(seed, "event" if throw == 0 else f"event{throw}")
    kind = forced.get("event") or ds.pick(rng, EVENTS)
    places = L["places"]
    side = rng.choice(["A", "B"])
    if kind == "silver" and side in silvered:
        kind = "made"
    standing = [i for i, p in enumerate(places) if p["side"] == side and p["colour"] != "silver"
                and state["states"][i] == "standing"]
    if kind == "silver":
        target = next(i for i, p in enumerate(places) if p["side"] == side and p["colour"] == "silver")
    else:
        target = rng.choice(standing)
    mode = "floating" if state["water"][target] else "bottom"
    ev = {"kind": kind, "side": side, "target": target, "ball_mode": mode,
          "offset": (rng.uniform(-1, 1), rng.uniform(-1, 1)), "spin": rng.uniform(0, 6.28),
          "air_mm": [rng.uniform(-60, 60), rng.uniform(-260, -80), L["cup_h"] + rng.uniform(60, 250)]}
    if kind == "silver":   # a colour cup of that side turned over for the tally
        ev["tally_from"] = rng.choice(standing)
        tx, ty = L["tally_spot"][side]
        ev["tally_at"] = [tx + rng.uniform(-5, 5), ty + rng.uniform(-4, 4)]
    if kind == "miss":   # the ball lands on the table, clear of the cups
        clear = [(p["centre_mm"][0], p["centre_mm"][1], L["rim_d"] / 2 + 30) for p in places]
        ev["loose_at"] = free_spot(rng, L, clear, 22) or [L["table_w"] / 2, L["dice_y"] - 60]
    return ev


def sequence_frames(state: dict, ev: dict, places: list, tally: list | None = None) -> list[dict]:
    """Frame states: set-up, ball in the air, ball landed, after (``tally``: cups already turned
    over for the silver tally, from earlier throws)."""
    base = {**state, "balls": {}, "loose": [], "tally": list(tally or []), "air": None}
    t = ev["target"]
    p = places[t]["centre_mm"]
    air = {**base, "air": {"centre_mm": [p[0] + ev["air_mm"][0], p[1] + ev["air_mm"][1]], "z_mm": ev["air_mm"][2],
                           "spin": ev["spin"]}}
    if ev["kind"] == "miss":
        landed = {**base, "loose": [{"centre_mm": ev["loose_at"], "spin": ev["spin"]}]}
        after = dict(base)
    else:
        landed = {**base, "balls": {t: {"mode": ev["ball_mode"], "offset": ev["offset"], "spin": ev["spin"]}}}
        states = list(state["states"])
        water = list(state["water"])
        tally = list(base["tally"])
        if ev["kind"] == "made":
            states[t] = "gone"
            water[t] = False
        elif ev["kind"] == "turned":
            states[t] = "turned"
            water[t] = False
        else:
            k = ev["tally_from"]
            states[k] = "gone"
            water[k] = False
            tally.append({"side": ev["side"], "colour": places[k]["colour"], "centre_mm": ev["tally_at"]})
        after = {**base, "states": states, "water": water, "tally": tally}
    phases = ["setup", "flight", "landed", "after"]
    return [{**f, "phase": ph} for f, ph in zip([base, air, landed, after], phases, strict=True)]


def plan_light(seed: int, forced: dict) -> dict:
    """dice_scenes' light plan (its keys, so its builders and white balance take it), at the
    scale of a game table: an overhead lamp, low window light, two lights, a coloured light, dim,
    a hard spot."""
    rng = stream(seed, "light")
    kind = forced.get("light") or ds.pick(rng, LIGHTS)
    lights = []

    def one(t0, t1, typ, elev, dist, size, share, rgb=None):
        lights.append({"type": typ, "temp_K": rng.uniform(t0, t1), "azimuth": rng.uniform(0, 2 * math.pi),
                       "elevation": math.radians(rng.uniform(*elev)), "distance": rng.uniform(*dist),
                       "size": rng.uniform(*size), "share": share, "spot_deg": rng.uniform(45, 80),
                       "aim": (rng.uniform(-0.2, 0.2), rng.uniform(-0.15, 0.15)), **({"rgb": rgb} if rgb else {})})

    if kind == "overhead":
        typ = rng.choice(["POINT", "AREA", "AREA"])
        one(2700, 4800, typ, (62, 90), (0.8, 2.0), (0.05, 0.3) if typ == "POINT" else (0.2, 1.2), 1.0)
    elif kind == "window":
        one(5000, 7500, "AREA", (8, 35), (2.0, 4.0), (0.8, 2.0), 1.0)
    elif kind == "two":
        s = rng.uniform(0.35, 0.65)
        one(2700, 3500, rng.choice(["POINT", "AREA"]), (50, 88), (0.8, 1.8), (0.05, 0.5), s)
        one(5000, 7500, "AREA", (10, 40), (2.0, 4.0), (0.8, 2.0), 1 - s)
    elif kind == "coloured":
        name = rng.choice(list(LIGHT_RGB))
        s = rng.uniform(0.4, 0.9)
        one(6500, 6500, rng.choice(["POINT", "AREA", "SPOT"]), (30, 85), (0.8, 2.2), (0.05, 0.6), s,
            rgb=(name, LIGHT_RGB[name]))
        one(2800, 5500, rng.choice(["POINT", "AREA"]), (50, 88), (0.8, 2.0), (0.1, 0.8), 1 - s)
    elif kind == "dim":
        one(2700, 6500, rng.choice(["POINT", "AREA"]), (25, 88), (0.8, 2.5), (0.05, 1.0), 1.0)
    else:  # spot: hard shadows
        one(3000, 6000, "SPOT", (50, 88), (1.0, 2.2), (0.005, 0.03), 1.0)
    ev = rng.uniform(-2.8, -1.5) if kind == "dim" else rng.uniform(-0.6, 0.35)
    cast = cg.forced_num(forced, "cast", rng, 1.0 if rng.random() < 0.3 else 0.0) >= 0.5
    return {"kind": kind, "lights": lights, "ev": ev, "ambient": rng.uniform(0.04, 0.25),
            "sky_temp_K": rng.uniform(5000, 9000) if kind in ("window", "two") else rng.uniform(3000, 7000),
            "cast": cast, "wb_alpha": rng.uniform(0.0, 0.45) if cast else rng.uniform(0.75, 1.0),
            "tint": (rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.06)) if cast else (rng.uniform(-0.02, 0.02), 0.0),
            "noise": rng.uniform(0.01, 0.035) if kind == "dim" else (rng.uniform(0.002, 0.01) if rng.random() < 0.5 else 0.0),
            "view_transform": "Filmic" if rng.random() < 0.25 else "Standard",
            "noise_offset": (rng.randint(0, 10000), rng.randint(0, 10000))}


def plan_cloth(seed: int, forced: dict, cups: dict) -> dict:
    """The table's top (dice_scenes' cloths) and, for ``mat``, a mat over it under the cups."""
    rng = stream(seed, "cloth")
    want = forced.get("cloth") or ds.pick(rng, CLOTHS)
    sub_forced = want if want in SUBTYPES else None
    family = want
    if sub_forced:
        family = next(k for k, v in ds.CLOTHS.items() if want in v)
    mapping = {"wood": "wood", "mat": rng.choice(["wood", "plain"]), "print": "print", "speckle": "speckle",
               "felt": "felt", "plain": "plain", "owncolour": rng.choice(["felt", "plain", "felt"])}
    top = ds.plan_cloth(seed, {"cloth": sub_forced or mapping.get(family, family)})
    out = {"family": family, "top": top, "mat": None, "own": None}
    if family == "owncolour":   # a cloth of a cup's own colour
        colour = rng.choice(cg.COLOURS)
        top["colours"][0] = ds.jitter(cups["looks"][colour]["rgb"], rng, 0.15)
        out["own"] = colour
    if family == "mat":
        mp = ds.plan_cloth_outer(seed)
        mp["subtype"] = rng.choice(["felt", "plain", "plain", "dots", "checks"])
        if mp["subtype"] == "plain" and rng.random() < 0.5:   # a dark rubber mat
            mp["colours"][0] = ds.hsv_linear(rng.random(), rng.uniform(0, 0.3), rng.uniform(0.03, 0.12))
        out["mat"] = {"plan": mp, "thick_mm": rng.uniform(2, 5), "margin": [rng.uniform(-30, 60) for _ in range(4)]}
    out["floor"] = ds.hsv_linear(rng.uniform(0.02, 0.12), rng.uniform(0.1, 0.6), rng.uniform(0.03, 0.25))
    out["edge_mm"] = rng.uniform(18, 40)
    return out


def plan_extras(seed: int, forced: dict, L: dict, cups: dict, state_list: list) -> dict:
    """The game dice in front of the rows, and clutter on free parts of the table."""
    rng = stream(seed, "extras")
    dice_on = cg.forced_num(forced, "dice", rng, 1.0 if rng.random() < 0.85 else 0.0) >= 0.5
    dice = []
    style = {"bevel": rng.uniform(0.08, 0.16), "size_mm": rng.uniform(14, 22), "gloss": rng.uniform(0.15, 0.45),
             "pip_offset": rng.uniform(0.58, 0.66), "pip_radius": rng.uniform(0.18, 0.23)}
    if dice_on:
        for side in ("A", "B"):
            values = rng.sample(range(1, 7), 4)
            for colour, v in zip(cg.COLOURS, values, strict=True):
                x, y = L["dice_spots"][side][colour]
                dice.append({"side": side, "colour": colour, "value": v, "centre_mm": [x + rng.uniform(-8, 8),
                                                                                         y + rng.uniform(-8, 8)],
                             "yaw": rng.uniform(0, 2 * math.pi), "body": ds.jitter(ds.GAME_COLOURS[colour], rng, 0.1)})
    level = forced.get("clutter") or ds.pick(rng, CLUTTER)
    n = {"none": 0, "some": rng.randint(1, 3), "heavy": rng.randint(4, 8)}[level]
    taken = []
    for st in state_list:
        taken += taken_of(L, cups, st["tally"], st["loose"])
    items = []
    kinds = ["phone", "glass", "coin", "card", "cable", "pencil", "cup", "label"]
    weights = [0.22, 0.2, 0.12, 0.12, 0.12, 0.08, 0.06, 0.08]
    foot = {"phone": 85, "glass": 45, "coin": 15, "card": 60, "cable": 40, "pencil": 90, "cup": 50, "label": 50}
    for k in range(n):
        kind = rng.choices(kinds, weights)[0]
        p = free_spot(rng, L, taken, foot[kind])
        if p is None:
            continue
        taken.append((p[0], p[1], foot[kind]))
        it = {"type": kind, "centre_mm": p, "angle": rng.uniform(0, 2 * math.pi), "index": k}
        if kind == "phone":
            it.update(size_mm=[rng.uniform(68, 78), rng.uniform(140, 165), rng.uniform(7.5, 10)],
                      case=ds.random_colour(rng)[0] if rng.random() < 0.5 else (0.01, 0.01, 0.012))
        elif kind == "glass":
            it.update(r_mm=rng.uniform(30, 42), h_mm=rng.uniform(90, 150), fill=rng.uniform(0, 0.7),
                      drink=rng.choice([(0.9, 0.45, 0.05), (0.25, 0.05, 0.02), (0.9, 0.9, 0.9), (0.6, 0.02, 0.05)]))
        elif kind == "cable":
            pts = [p]
            heading = it["angle"]
            for _ in range(rng.randint(4, 8)):
                heading += rng.uniform(-0.8, 0.8)
                q = pts[-1]
                pts.append([q[0] + math.cos(heading) * 55, q[1] + math.sin(heading) * 55])
            it.update(points=pts, radius=rng.uniform(1.5, 3.5))
        elif kind == "coin":
            it["radius"] = rng.uniform(8, 13.5)
        elif kind == "cup":
            it.update(radius=rng.uniform(30, 45), height=rng.uniform(70, 100))
        elif kind == "card":
            it.update(w=63.0, h=88.0)
        elif kind == "label":
            it.update(w=rng.uniform(40, 100), h=rng.uniform(25, 60))
        else:
            it.update(length=rng.uniform(100, 175), radius=3.6)
        items.append(it)
    return {"dice_on": dice_on, "dice": dice, "dice_style": style, "clutter_level": level, "clutter": items}


def move_hidden_markers(L: dict, markers: list, cups: dict, frames: list, cam: dict, w: int, h: int) -> float:
    """A user whose far markers a cup hides in the picture lays them further back (both: the table
    stays a rectangle), 10 mm at a time, while their paper stays on the table and in the picture.
    Returns how far they moved (mm); the labels say what is still hidden."""
    pc = cg.PinholeCamera(cam["R"], cam["centre_mm"], cam["fx"], w, h)
    spec = []
    for p in L["places"]:
        d = cup_dims(L, cups, p["colour"])
        spec.append((p["centre_mm"], d["rim_d"] / 2, d["base_d"] / 2, d["height"]))
    for fs in frames:
        for t in fs["tally"]:
            spec.append((t["centre_mm"], L["rim_d"] / 2, L["base_d"] / 2, L["cup_h"]))
    far = [m for m in markers if m["id"] in (2, 3)]
    moved = 0.0
    for _ in range(40):
        if not any(i in (2, 3) for i in cg.hidden_markers(pc, markers, spec)):
            break
        for m in far:
            m["centre_mm"][1] += 10.0
        if not all(pc.in_frame(c) for m in far for c in cg.marker_corners(m, cg.MARKER_PAPER_HALF_MM)):
            for m in far:
                m["centre_mm"][1] -= 10.0
            break
        moved += 10.0
    if moved:
        L["table_h"] += moved
        L["inset_far"] = max(cg.MARKER_PAPER_HALF_MM + 7, L["inset_far"] - moved)
        L["table_depth"] = L["table_h"] + L["inset_far"] + L["inset_near"]
    return moved


def plan_scene(seed: int, forced: dict, w: int, h: int, sequence: bool, throws: int = 1) -> dict:
    L = cg.plan_layout(stream(seed, "layout"), forced)
    mrng = stream(seed, "markers")
    markers = cg.marker_centres(L, mrng, jitter_mm=cg.forced_num(forced, "marker_jitter", mrng, mrng.uniform(0, 3)),
                                turn_deg=cg.forced_num(forced, "marker_turn", mrng, mrng.uniform(0, 4)))
    cups = plan_cups(seed, forced, L)
    state = plan_state(seed, forced, L, cups, sequence)
    # a sequence: the set-up, then each throw's flight, landing and after, each throw planned on
    # and starting from the table the one before left (its tally cups too)
    events: list[dict] = []
    frames = [] if sequence else [{**state, "air": None, "phase": "still"}]
    for k in range(throws if sequence else 0):
        now = frames[-1] if frames else state
        events.append(plan_event(seed, forced, L, now, k, tuple(e["side"] for e in events if e["kind"] == "silver")))
        more = sequence_frames(now, events[-1], L["places"], tally=now["tally"] if frames else None)
        frames += more[1:] if frames else more
    event = events[0] if events else None
    # the camera sees every marker's paper and every cup whole
    need = [c for m in markers for c in cg.marker_corners(m, cg.MARKER_PAPER_HALF_MM)]
    for p in L["places"]:
        d = cup_dims(L, cups, p["colour"])
        for k in range(8):
            a = k * math.pi / 4
            for z, r in ((d["height"], d["rim_d"] / 2), (0.0, d["rim_d"] / 2)):
                need.append((p["centre_mm"][0] + r * math.cos(a), p["centre_mm"][1] + r * math.sin(a), z))
    cam = cg.plan_camera(stream(seed, "camera"), forced, need, (L["table_w"] / 2, L["table_h"] / 2), w, h)
    L["markers_moved_back_mm"] = move_hidden_markers(L, markers, cups, frames, cam, w, h)
    crng = stream(seed, "defocus")
    cam["defocus"] = cg.forced_num(forced, "defocus", crng, 1.0 if crng.random() < 0.1 else 0.0) >= 0.5
    cam["defocus_coc_px"] = crng.uniform(1.0, 2.4)
    cam["focus_error"] = crng.choice([-1, 1]) * crng.uniform(0.05, 0.15)
    return {"layout": L, "markers": markers, "cups": cups, "state": state, "event": event, "events": events, "frames": frames,
            "camera": cam, "light": plan_light(seed, forced), "cloth": plan_cloth(seed, forced, cups),
            "extras": plan_extras(seed, forced, L, cups, frames)}


# ---------------------------------------------------------------------------------------------
# building
def v3(p_mm, z_mm: float = 0.0) -> Vector:
    return Vector((p_mm[0] * MM, p_mm[1] * MM, z_mm * MM))


def box_object(name: str, x0, y0, z0, x1, y1, z1, mat):
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bmesh.ops.scale(bm, vec=(x1 - x0, y1 - y0, z1 - z0), verts=bm.verts)
    bmesh.ops.translate(bm, vec=((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2), verts=bm.verts)
    return ds.bm_object(name, bm, mat)


def build_table(plan: dict) -> None:
    L, cl = plan["layout"], plan["cloth"]
    x0, x1 = -L["inset_x"] * MM, (L["table_w"] + L["inset_x"]) * MM
    y0, y1 = -L["inset_near"] * MM, (L["table_h"] + L["inset_far"]) * MM
    mat_t = cl["mat"]["thick_mm"] * MM if cl["mat"] else 0.0
    top = ds.cloth_material(cl["top"], "table")
    box_object("table", x0, y0, -mat_t - cl["edge_mm"] * MM, x1, y1, -mat_t, top)
    if cl["mat"]:
        m = cl["mat"]["margin"]
        mx0, my0 = (-L["inset_x"] * 0.5 + m[0]) * MM, (-L["inset_near"] * 0.6 + m[1]) * MM
        mx1, my1 = (L["table_w"] + L["inset_x"] * 0.5 - m[2]) * MM, (L["table_h"] + L["inset_far"] * 0.5 - m[3]) * MM
        box_object("mat", max(x0, mx0), max(y0, my0), -mat_t, min(x1, mx1), min(y1, my1), 0.0,
                   ds.cloth_material(cl["mat"]["plan"], "mat"))
    s = 6.0
    ds.mesh_object("floor", [(-s, -s, -0.76), (s, -s, -0.76), (s, s, -0.76), (-s, s, -0.76)], [(0, 1, 2, 3)],
                   ds.plain_material("floor", cl["floor"], 0.6))


def build_markers(plan: dict) -> list[dict]:
    ms = []
    for m in plan["markers"]:
        ms.append({"id": m["id"], "centre": v3(m["centre_mm"]), "rot": Matrix.Rotation(math.radians(m["turn_deg"]), 3, "Z"),
                   "half": ds.MARKER_M / 2 + ds.MARKER_MARGIN_M})
    ds.build_markers(ms, 0.0)
    return ms


def revolve(name: str, prof: list, mats: list, segments: int = 64):
    """A surface of revolution of (r, z, part) points; part picks the material."""
    verts, faces, parts = [], [], []
    rings = []
    for r, z, _ in prof:
        if r < 1e-7:
            rings.append([len(verts)])
            verts.append((0.0, 0.0, z))
        else:
            ring = []
            for k in range(segments):
                a = 2 * math.pi * k / segments
                ring.append(len(verts))
                verts.append((r * math.cos(a), r * math.sin(a), z))
            rings.append(ring)
    for i in range(len(prof) - 1):
        a, b = rings[i], rings[i + 1]
        part = prof[i + 1][2] if prof[i][2] != prof[i + 1][2] else prof[i][2]
        for k in range(segments):
            k1 = (k + 1) % segments
            if len(a) == 1:
                faces.append((a[0], b[k], b[k1]))
            elif len(b) == 1:
                faces.append((a[k], b[0], a[k1]))
            else:
                faces.append((a[k], b[k], b[k1], a[k1]))
            parts.append(part)
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    me.update()
    bm = bmesh.new()
    bm.from_mesh(me)
    bmesh.ops.recalc_face_normals(bm, faces=bm.faces)
    bm.to_mesh(me)
    bm.free()
    for m in mats:
        me.materials.append(m)
    for poly, part in zip(me.polygons, parts, strict=True):
        poly.material_index = min(part, len(mats) - 1)
        poly.use_smooth = True
    me.use_auto_smooth = True
    me.auto_smooth_angle = math.radians(50)
    obj = bpy.data.objects.new(name, me)
    ds.link(obj)
    return obj


def cup_materials(look: dict, name: str) -> list:
    make, rgb = look["make"], look["rgb"]
    mat, N = ds.new_material(name)
    if make == "translucent":   # thin walls: see-through (shadows pass, tinted) rather than refracting
        tint = tuple(min(1.0, c ** 0.35) for c in rgb)
        N.finish(see_through(N, N.bsdf(rgb, look["rough"], 0.5), tint, look["transmission"] * 0.8))
        return [mat]
    if make in ("metal", "plastic"):
        metallic = 1.0 if make == "metal" else look["metallic"]
        sh = N.bsdf(rgb, look["rough"], 0.5, **{"Metallic": metallic})
        normal = None
        if look.get("brushed"):
            co = N.n("ShaderNodeMapping", {"Vector": N.coords("Object"), "Scale": (1.0, 1.0, 0.02)}).outputs["Vector"]
            normal = N.bump(N.noise(co, 3000, 2, 0.5), 0.05, 0.0002)
        N.finish(sh, normal)
        return [mat]
    N.finish(N.bsdf(rgb, look["rough"], 0.5, **{"Clearcoat": look["clearcoat"], "Clearcoat Roughness": 0.15}))
    if make == "party":
        inside, Ni = ds.new_material(name + "_inside")
        Ni.finish(Ni.bsdf(look["inside_rgb"], 0.45, 0.4))
        return [mat, inside]
    return [mat]


def see_through(N, surface, tint, share: float, ior: float = 1.45):
    """``surface`` over a transparent layer (tinted): light and shadows pass straight through, as
    through a thin wall or a flat water surface, with the surface's Fresnel reflection on top."""
    clear = N.n("ShaderNodeBsdfTransparent", {"Color": tint})
    mix = N.n("ShaderNodeMixShader", {"Fac": 1.0 - share})
    N.put(mix.inputs[1], clear.outputs[0])
    N.put(mix.inputs[2], surface.outputs[0])
    gloss = N.n("ShaderNodeBsdfGlossy", {"Color": (1.0, 1.0, 1.0), "Roughness": 0.03})
    fres = N.n("ShaderNodeFresnel", {"IOR": ior})
    top = N.n("ShaderNodeMixShader")
    N.put(top.inputs[0], fres.outputs[0])
    N.put(top.inputs[1], mix.outputs[0])
    N.put(top.inputs[2], gloss.outputs[0])
    return top


def water_material():
    mat, N = ds.new_material("water")
    N.finish(see_through(N, N.bsdf((0.8, 0.85, 0.9), 0.05, 0.5), (0.96, 0.98, 1.0), 0.97, 1.33))
    return mat


def ball_material(colour: str):
    mat, N = ds.new_material(f"ball_{colour}")
    N.finish(N.bsdf(BALL_RGB[colour], 0.42, 0.35, **{"Clearcoat": 0.1}))
    return mat


def sphere(name: str, centre: Vector, r: float, mat):
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=32, v_segments=16, radius=r)
    obj = ds.bm_object(name, bm, mat, smooth=True)
    obj.location = centre
    return obj


def disc(name: str, centre: Vector, r: float, mat, n: int = 48):
    verts = [(centre.x, centre.y, centre.z)] + [(centre.x + r * math.cos(2 * math.pi * k / n),
                                                  centre.y + r * math.sin(2 * math.pi * k / n), centre.z) for k in range(n)]
    faces = [(0, 1 + k, 1 + (k + 1) % n) for k in range(n)]
    return ds.mesh_object(name, verts, faces, mat, smooth=False)


def ball_in_cup(plan: dict, place: dict, ball: dict, water: bool) -> tuple[list[float], float]:
    """Where a ball rests in a cup: (centre mm, its z mm)."""
    L, cups = plan["layout"], plan["cups"]
    d = cup_dims(L, cups, place["colour"])
    prof = profile_of(d)
    r = cg.BALL_MM / 2
    if ball["mode"] == "floating":
        zw = water_z(plan, d)
        z = zw + 0.645 * r
    else:
        z = cg.inner_bottom(prof) / MM + r
    room = max(0.0, cg.inner_radius(prof, z * MM) / MM - r - 1.0)
    if ball["mode"] == "bottom":   # the ball touches the bottom inside the foot of the wall
        room = max(0.0, min(room, cg.inner_radius(prof, cg.inner_bottom(prof)) / MM - 4.0))
    ox, oy = ball["offset"]
    n = math.hypot(ox, oy)
    if n > 1:
        ox, oy = ox / n, oy / n
    c = place["centre_mm"]
    return [c[0] + ox * room, c[1] + oy * room], z


def water_z(plan: dict, d: dict) -> float:
    prof = profile_of(d)
    bottom = cg.inner_bottom(prof) / MM
    return bottom + plan["state"]["water_level"] * (d["height"] - bottom)


def build_cups(plan: dict, fs: dict) -> dict:
    """Every place's cup in the frame state ``fs``; tally cups; water; balls. Returns objects by role."""
    L, cups = plan["layout"], plan["cups"]
    mats = {c: cup_materials(cups["looks"][c], f"cup_{c}") for c in cg.CUPS}
    wmat = water_material()
    bmat = ball_material(fs["ball_colour"])
    objs = {"cups": {}, "water": {}, "balls": {}, "tally": [], "loose": [], "air": None, "transparent": set()}
    for i, p in enumerate(L["places"]):
        st = fs["states"][i]
        if st == "gone":
            continue
        d = cup_dims(L, cups, p["colour"])
        obj = revolve(f"cup{i:02d}", profile_of(d), mats[p["colour"]])
        c = p["centre_mm"]
        if st == "turned":
            obj.matrix_world = Matrix.Translation(v3(c, d["height"])) @ Matrix.Rotation(math.pi, 4, "X")
        else:
            obj.location = v3(c)
        objs["cups"][i] = obj
        if cups["looks"][p["colour"]]["make"] == "translucent":
            objs["transparent"].add(obj.name)
        if st == "standing" and fs["water"][i]:
            zw = water_z(plan, d)
            r = cg.inner_radius(profile_of(d), zw * MM) - 0.0003
            wo = disc(f"water{i:02d}", v3(c, zw), r, wmat)
            objs["water"][i] = wo
            objs["transparent"].add(wo.name)
        if st == "standing" and i in fs["balls"]:
            xy, z = ball_in_cup(plan, p, fs["balls"][i], fs["water"][i])
            bo = sphere(f"ball{i:02d}", v3(xy, z), cg.BALL_MM / 2 * MM, bmat)
            bo.rotation_euler = (0.3, 0.0, fs["balls"][i]["spin"])
            objs["balls"][i] = bo
    for k, t in enumerate(fs["tally"]):
        d = cup_dims(L, cups, t["colour"])
        obj = revolve(f"tally{k}", profile_of(d), mats[t["colour"]])
        obj.matrix_world = Matrix.Translation(v3(t["centre_mm"], d["height"])) @ Matrix.Rotation(math.pi, 4, "X")
        objs["tally"].append(obj)
    for k, b in enumerate(fs["loose"]):
        objs["loose"].append(sphere(f"loose{k}", v3(b["centre_mm"], cg.BALL_MM / 2), cg.BALL_MM / 2 * MM, bmat))
    if fs.get("air"):
        a = fs["air"]
        objs["air"] = sphere("ball_air", v3(a["centre_mm"], a["z_mm"]), cg.BALL_MM / 2 * MM, bmat)
    return objs


def build_extras(plan: dict, seed: int) -> dict:
    ex = plan["extras"]
    out = {"dice": [], "clutter": []}
    st = ex["dice_style"]
    if ex["dice"]:
        shape = ds.DieShape(st["bevel"])
        atlas = ds.pip_atlas("pips", st["pip_offset"] * (0.5 - st["bevel"]), st["pip_radius"] * (0.5 - st["bevel"]))
        s = st["size_mm"] * MM
        for k, d in enumerate(ex["dice"]):
            dd = {"kind": "solid", "body": d["body"], "pip": (0.85, 0.85, 0.82) if d["colour"] != "yellow" else
                  (0.012, 0.012, 0.012)}
            mat = ds.die_material(dd, atlas, st["gloss"], f"die{k:02d}")
            me = shape.mesh.copy()
            me.materials.append(mat)
            obj = bpy.data.objects.new(f"die{k:02d}", me)
            ds.link(obj)
            rot = Matrix.Rotation(d["yaw"], 3, "Z") @ ds.rot_top(d["value"])
            obj.matrix_world = Matrix.Translation(v3(d["centre_mm"], st["size_mm"] / 2)) @ rot.to_4x4() @ Matrix.Scale(s, 4)
            out["dice"].append(obj)
    reuse = []
    for it in ex["clutter"]:
        k = it["index"]
        c = v3(it["centre_mm"])
        if it["type"] == "phone":
            w, h, t = (x * MM for x in it["size_mm"])
            bm = bmesh.new()
            bmesh.ops.create_cube(bm, size=1.0)
            bmesh.ops.scale(bm, vec=(w, h, t), verts=bm.verts)
            bmesh.ops.bevel(bm, geom=list(bm.edges), offset=min(w, t) * 0.35, segments=3, affect="EDGES",
                            clamp_overlap=True)
            body = ds.plain_material(f"phone{k}", it["case"], 0.35)
            screen, N = ds.new_material(f"screen{k}")
            N.finish(N.bsdf((0.005, 0.006, 0.008), 0.05, 0.6, **{"Clearcoat": 1.0}))
            obj = ds.bm_object(f"phone{k}", bm, body)
            obj.data.materials.append(screen)
            for poly in obj.data.polygons:
                if poly.normal.z > 0.99:
                    poly.material_index = 1
            obj.matrix_world = Matrix.Translation(c + Vector((0, 0, t / 2))) @ Matrix.Rotation(it["angle"], 4, "Z")
        elif it["type"] == "glass":
            r, hh = it["r_mm"] * MM, it["h_mm"] * MM
            prof = [(0.0, 0.0, 0), (r * 0.85, 0.0, 0), (r * 0.88, 0.004, 0), (r, hh, 0), (r - 0.002, hh, 1),
                    (r * 0.88 - 0.002, 0.012, 1), (0.0, 0.012, 1)]
            gm, N = ds.new_material(f"glass{k}")
            N.finish(see_through(N, N.bsdf((0.9, 0.92, 0.9), 0.02, 0.5), (0.97, 0.98, 0.97), 0.95, 1.5))
            obj = revolve(f"glass{k}", prof, [gm], 48)
            obj.location = c
            if it["fill"] > 0.05:
                zf = 0.012 + it["fill"] * (hh - 0.02)
                dm, N = ds.new_material(f"drink{k}")
                N.finish(see_through(N, N.bsdf(it["drink"], 0.05, 0.5), it["drink"], 0.5, 1.33))
                rf = r * 0.88 - 0.002 + (r - 0.002 - (r * 0.88 - 0.002)) * (zf - 0.012) / (hh - 0.012) - 0.0005
                disc(f"drink{k}", c + Vector((0, 0, zf)), rf, dm)
        else:
            reuse.append(clutter_item(it))
    out["clutter"] = ds.build_clutter(reuse, seed, 0.0)
    for info in out["clutter"]:   # dice_scenes writes metres
        info["centre_mm"] = [round(c * 1000, 1) for c in info.pop("centre")]
    return out


def clutter_item(it: dict) -> dict:
    """A planned clutter item (mm) as dice_scenes.build_clutter takes it (metres, Vectors)."""
    c = v3(it["centre_mm"])
    out = {"type": it["type"], "centre": c, "angle": it["angle"], "index": it["index"]}
    kind = it["type"]
    if kind == "cable":
        out.update(points=[v3(q) for q in it["points"]], radius=it["radius"] * MM)
    elif kind == "coin":
        out.update(radius=it["radius"] * MM)
    elif kind == "cup":
        out.update(radius=it["radius"] * MM, height=it["height"] * MM)
    elif kind in ("card", "label"):
        out.update(w=it["w"] * MM, h=it["h"] * MM)
    else:  # pencil
        half = Vector((math.cos(it["angle"]), math.sin(it["angle"]), 0)) * it["length"] * MM / 2
        out.update(length=it["length"] * MM, radius=it["radius"] * MM, ends=(c - half, c + half))
    return out


def build_camera(plan: dict, w: int, h: int):
    cam = plan["camera"]
    R = Matrix(cam["R"])
    rot_bl = R.transposed() @ Matrix(((1, 0, 0), (0, -1, 0), (0, 0, -1)))
    dist = cam["height_mm"] / max(0.2, math.cos(math.radians(cam["tilt_deg"]))) * MM
    spec = {"focal_mm": cam["fx"] * cg.SENSOR_MM / w, "location": v3(cam["centre_mm"][:2], cam["centre_mm"][2]),
            "rotation": rot_bl, "defocus": cam["defocus"], "distance_m": dist, "focus_error": cam["focus_error"],
            "defocus_coc_px": cam["defocus_coc_px"]}
    obj = ds.build_camera(spec, w, h)
    cam["fstop"] = spec.get("fstop")
    return obj


def build_lights(plan: dict) -> tuple[list, dict]:
    """dice_scenes' lights; a coloured light takes its colour here (same luminance)."""
    L = plan["light"]
    look = v3([plan["layout"]["table_w"] / 2, plan["layout"]["table_h"] / 2])
    meta, world = ds.build_lights(L, look)
    for i, lt in enumerate(L["lights"]):
        if "rgb" in lt:
            name, rgb = lt["rgb"]
            y = ds.luminance(rgb)
            rgb = tuple(c / y for c in rgb)
            ld = bpy.data.lights[f"light{i}"]
            ld.energy = ld.energy / max(ds.blackbody(lt["temp_K"])) * max(rgb)
            ld.color = tuple(c / max(rgb) for c in rgb)
            meta[i].update(temp_K=None, colour=name, rgb_linear=[round(c, 4) for c in rgb], power_W=round(ld.energy, 3))
    return meta, world


def filter_light(sigma_px: float) -> None:
    """A small denoiser in the compositor (this Blender has no OpenImageDenoise): the diffuse
    and the glossy light (direct + indirect, each without its surface colour) are smoothed by a
    bilateral blur kept to surfaces of one colour and facing, then multiplied by the surfaces'
    colour again; transmitted, emitted and background light pass as rendered. At 16 samples the insides of
    deep cups, lit mostly in the penumbra of large lamps, were salt-and-pepper grey without it."""
    sc = bpy.context.scene
    vl = sc.view_layers[0]
    for p in ("diffuse_direct", "diffuse_indirect", "diffuse_color", "glossy_direct", "glossy_indirect",
              "glossy_color", "transmission_direct", "transmission_indirect", "transmission_color", "emit",
              "environment", "normal"):
        setattr(vl, f"use_pass_{p}", True)
    nt = sc.node_tree
    rl = next(n for n in nt.nodes if n.bl_idname == "CompositorNodeRLayers")
    users = [lk.to_socket for lk in nt.links if lk.from_socket == rl.outputs["Image"]]

    def op(kind, a, b):
        n = nt.nodes.new("CompositorNodeMixRGB")
        n.blend_type = kind
        n.inputs["Fac"].default_value = 1.0
        nt.links.new(a, n.inputs[1])
        nt.links.new(b, n.inputs[2])
        return n.outputs["Image"]

    o = rl.outputs
    norm = nt.nodes.new("CompositorNodeMixRGB")
    norm.blend_type = "MULTIPLY"
    norm.inputs["Fac"].default_value = 1.0
    nt.links.new(o["Normal"], norm.inputs[1])
    norm.inputs[2].default_value = (0.6, 0.6, 0.6, 1.0)

    def smoothed(kind):   # (direct + indirect) light of one kind, smoothed, times its colour
        bl = nt.nodes.new("CompositorNodeBilateralblur")
        bl.iterations = 1
        bl.sigma_color = 0.25
        bl.sigma_space = sigma_px
        nt.links.new(op("ADD", o[f"{kind}Dir"], o[f"{kind}Ind"]), bl.inputs["Image"])
        nt.links.new(op("ADD", o[f"{kind}Col"], norm.outputs["Image"]), bl.inputs["Determinator"])
        return op("MULTIPLY", bl.outputs["Image"], o[f"{kind}Col"])

    img = op("ADD", smoothed("Diff"), smoothed("Gloss"))
    img = op("ADD", img, op("MULTIPLY", op("ADD", o["TransDir"], o["TransInd"]), o["TransCol"]))
    img = op("ADD", img, o["Emit"])
    img = op("ADD", img, o["Env"])
    for s in users:
        nt.links.new(img, s)


# ---------------------------------------------------------------------------------------------
# labels
class Rays:
    """What the camera sees first along a ray (through transparent water, glass and translucent
    cups when asked)."""

    def __init__(self, cam_obj, transparent: set):
        self.sc = bpy.context.scene
        self.dg = bpy.context.evaluated_depsgraph_get()
        self.origin = cam_obj.matrix_world.translation.copy()
        self.transparent = transparent

    def hits(self, target: Vector, name: str, tol: float) -> tuple[bool, bool]:
        """(seen directly, seen through transparent things)."""
        o = self.origin.copy()
        d = (target - o)
        dist = d.length
        d.normalize()
        through = False
        travelled = 0.0
        for _ in range(8):
            hit, loc, _n, _i, obj, _m = self.sc.ray_cast(self.dg, o, d, distance=dist - travelled + 0.01)
            if not hit or obj is None:
                return False, False
            if obj.name == name and (loc - target).length < tol:
                return (not through), True
            if obj.name in self.transparent:
                through = True
                travelled += (loc - o).length + 1e-4
                o = loc + d * 1e-4
                continue
            return False, False
        return False, False


def r3(x, n: int = 2):
    if isinstance(x, (list, tuple)):
        return [r3(v, n) for v in x]
    if isinstance(x, float):
        return round(x, n)
    return x


def ellipse_label(pc: cg.PinholeCamera, centre, radius: float, z: float) -> dict:
    e = pc.circle_ellipse(centre, radius, z)
    return {"centre": r3(e["centre"]), "axes": r3(e["axes"]), "angle_deg": round(e["angle_deg"], 2),
            "box": r3(cg.ellipse_box(e))}


def clip_box(b, w: int, h: int) -> list[float]:
    return [min(max(b[0], -0.5), w - 0.5), min(max(b[1], -0.5), h - 0.5), min(max(b[2], -0.5), w - 0.5),
            min(max(b[3], -0.5), h - 0.5)]


def ring_seen(rays: Rays, obj_name: str, centre, r_mm: float, z_mm: float, n: int = 16) -> tuple[float, float]:
    direct = through = 0
    for k in range(n):
        a = 2 * math.pi * k / n
        p = v3((centre[0] + r_mm * math.cos(a), centre[1] + r_mm * math.sin(a)), z_mm)
        dd, tt = rays.hits(p, obj_name, 0.004)
        direct += dd
        through += tt
    return direct / n, through / n


def ball_label(pc, rays, obj, centre_mm, z_mm) -> dict:
    r = cg.BALL_MM / 2
    c = [centre_mm[0], centre_mm[1], z_mm]
    u, v, depth = pc.project(c)
    # points on the half of the ball that faces the camera
    to_cam = cg.normalize([pc.C[k] - c[k] for k in range(3)])
    a = cg.normalize(cg.cross(to_cam, [0.0, 0.0, 1.0]) if abs(to_cam[2]) < 0.99 else [1.0, 0.0, 0.0])
    b = cg.cross(to_cam, a)
    pts = [to_cam]
    for k in range(8):
        t = 2 * math.pi * k / 8
        pts.append([math.cos(0.9) * to_cam[j] + math.sin(0.9) * (math.cos(t) * a[j] + math.sin(t) * b[j]) for j in range(3)])
    direct = through = 0
    for q in pts:
        p = Vector([(c[j] + r * 0.995 * q[j]) * MM for j in range(3)])
        dd, tt = rays.hits(p, obj.name, 0.004)
        direct += dd
        through += tt
    return {"centre_mm": r3(c), "centre_px": r3([u, v]), "radius_px": round(pc.fx * r / depth, 2),
            "in_frame": pc.in_frame(c), "visible_fraction": round(direct / len(pts), 3),
            "visible_through_fraction": round(through / len(pts), 3)}


def label_frame(plan: dict, fs: dict, objs: dict, extras: dict, cam_obj, w: int, h: int) -> dict:
    L, cups = plan["layout"], plan["cups"]
    cam = plan["camera"]
    pc = cg.PinholeCamera(cam["R"], cam["centre_mm"], cam["fx"], w, h)
    rays = Rays(cam_obj, objs["transparent"])

    def cup_geom(colour, centre, turned: bool, obj):
        d = cup_dims(L, cups, colour)
        z_rim = 0.0 if turned else d["height"]
        z_base = d["height"] if turned else 0.0
        rim = ellipse_label(pc, centre, d["rim_d"] / 2, z_rim)
        pts = pc.circle_points(centre, d["rim_d"] / 2, z_rim, 32) + pc.circle_points(centre, d["base_d"] / 2, z_base, 32)
        cup_box = [min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts)]
        u, v, _ = pc.project((centre[0], centre[1], z_rim))
        g = {"rim_d_mm": round(d["rim_d"], 2), "base_d_mm": round(d["base_d"], 2), "height_mm": round(d["height"], 2),
             "lip_mm": round(d["lip"], 2), "rim_centre_mm": r3([centre[0], centre[1], z_rim]),
             "rim_centre_px": r3([u, v]), "rim_ellipse_px": rim, "rim_polygon_px": r3(pc.circle_points(
                 centre, d["rim_d"] / 2, z_rim, 16), 1), "cup_box_px": r3(cup_box),
             "in_frame": pc.in_frame((centre[0], centre[1], z_rim))}
        if turned:   # what the camera sees of a turned cup: its base, now on top
            g["top_ellipse_px"] = ellipse_label(pc, centre, d["base_d"] / 2, d["height"])
        if obj is not None:
            top_r = (d["base_d"] / 2 * 0.8) if turned else (d["rim_d"] / 2 - max(d["lip"], d["wall"] / 2))
            top_z = d["height"] - 2.5 if turned else d["height"]
            dd, tt = ring_seen(rays, obj.name, centre, top_r, top_z)
            g["visible_fraction"] = round(dd, 3)
            g["visible_through_fraction"] = round(tt, 3)
        return g

    out_cups = []
    for i, p in enumerate(L["places"]):
        st = fs["states"][i]
        obj = objs["cups"].get(i)
        look = cups["looks"][p["colour"]]
        rec = {"place": i, "side": p["side"], "colour": p["colour"], "index": p["index"], "column": p["column"],
               "make": look["make"] if p["colour"] != "silver" else f"silver-{cups['silver_make']}",
               "inside": ("white" if look["make"] == "party" else "same"), "state": st,
               "nominal_mm": r3(p["nominal_mm"]), **cup_geom(p["colour"], p["centre_mm"], st == "turned", obj)}
        if st == "gone":
            rec["visible_fraction"] = None
            rec["note"] = "gone: the geometry is where its rim would be"
        rec["water"] = ({"level_mm": round(water_z(plan, cup_dims(L, cups, p["colour"])), 1)}
                        if st == "standing" and fs["water"][i] else None)
        if i in objs["balls"]:
            xy, z = ball_in_cup(plan, p, fs["balls"][i], fs["water"][i])
            rec["ball"] = {"mode": fs["balls"][i]["mode"], **ball_label(pc, rays, objs["balls"][i], xy, z)}
        else:
            rec["ball"] = None
        out_cups.append(rec)
    tally = []
    for k, t in enumerate(fs["tally"]):
        look = cups["looks"][t["colour"]]
        tally.append({"place": "tally", "side": t["side"], "colour": t["colour"], "make": look["make"], "state": "turned",
                      **cup_geom(t["colour"], t["centre_mm"], True, objs["tally"][k])})
    loose = [ball_label(pc, rays, objs["loose"][k], b["centre_mm"], cg.BALL_MM / 2) for k, b in enumerate(fs["loose"])]
    air = None
    if fs.get("air"):
        air = ball_label(pc, rays, objs["air"], fs["air"]["centre_mm"], fs["air"]["z_mm"])
    dice = []
    for k, d in enumerate(plan["extras"]["dice"]):
        s = plan["extras"]["dice_style"]["size_mm"]
        c = [d["centre_mm"][0], d["centre_mm"][1], s]
        u, v, _ = pc.project(c)
        seen, _t = rays.hits(v3(d["centre_mm"], s), extras["dice"][k].name, 0.004)
        dice.append({"side": d["side"], "colour": d["colour"], "value": d["value"], "size_mm": round(s, 2),
                     "centre_mm": r3(c), "top_centre_px": r3([u, v]), "visible": bool(seen)})
    markers = []
    for m in plan["markers"]:
        corners = cg.marker_corners(m)
        seen = 0
        for q in corners + [[m["centre_mm"][0], m["centre_mm"][1], 0.0]]:
            inner = [m["centre_mm"][0] + (q[0] - m["centre_mm"][0]) * 0.97, m["centre_mm"][1] + (q[1] - m["centre_mm"][1]) * 0.97]
            seen += rays.hits(v3(inner, 0.2), f"marker{m['id']}", 0.004)[0]
        paper = cg.marker_corners(m, cg.MARKER_PAPER_HALF_MM)
        markers.append({"id": m["id"], "centre_mm": r3(m["centre_mm"]), "turn_deg": round(m["turn_deg"], 2),
                        "corners_mm": r3([c[:2] for c in corners]),
                        "corners_px": r3([list(pc.project(c)[:2]) for c in corners], 3),
                        "centre_px": r3(list(pc.project((m["centre_mm"][0], m["centre_mm"][1], 0.0))[:2]), 3),
                        "paper_in_frame": all(pc.in_frame(c) for c in paper), "visible_fraction": seen / 5,
                        "order": "top-left, top-right, bottom-right, bottom-left of the printed marker"})
    return {"cups": out_cups, "tally_cups": tally, "loose_balls": loose, "ball_in_air": air, "dice": dice,
            "markers": markers}


# ---------------------------------------------------------------------------------------------
# one scene (a still, or the frames of a sequence)
def camera_meta(plan: dict, w: int, h: int) -> dict:
    cam = plan["camera"]
    pc = cg.PinholeCamera(cam["R"], cam["centre_mm"], cam["fx"], w, h)
    return {"fx_px": round(cam["fx"], 4), "fy_px": round(cam["fx"], 4), "principal_px": [pc.cx, pc.cy],
            "K": r3(pc.K, 4), "distortion": [0, 0, 0, 0, 0], "hfov_deg": round(cam["hfov_deg"], 3),
            "vfov_deg": round(math.degrees(2 * math.atan(h / 2 / cam["fx"])), 3),
            "focal_mm": round(pc.focal_mm(), 4), "sensor_width_mm": cg.SENSOR_MM,
            "height_mm": round(cam["height_mm"], 2), "tilt_deg": round(cam["tilt_deg"], 3),
            "yaw_deg": round(cam["yaw_deg"], 3), "roll_deg": round(cam["roll_deg"], 3),
            "centre_mm": r3(cam["centre_mm"], 3), "look_at_mm": r3(cam["look_at_mm"], 2),
            "R": r3(cam["R"], 8), "rvec": r3(cg.rodrigues(cam["R"]), 8), "tvec_mm": r3(pc.t, 4),
            "fov_needed_deg": round(cam["fov_needed_deg"], 2), "everything_fits": cam["fits"],
            "defocus": ({"fstop": round(cam["fstop"], 2), "coc_px": round(cam["defocus_coc_px"], 2)}
                        if cam["defocus"] else None),
            "convention": "OpenCV pinhole: X_cam = R @ X_table_mm + tvec; u = fx x/z + cx; the centre of the "
                          "top-left pixel is (0, 0)"}


def factors_of(plan: dict, fs: dict) -> dict:
    L, st, cam = plan["layout"], fs, plan["camera"]
    return {"make": plan["cups"]["make"], "silver": plan["cups"]["silver_make"], "rim": round(L["rim_d"]),
            "cup_h": round(L["cup_h"]), "cpr": L["cups_per_row"], "order": L["order_B"], "touching": int(L["touching"]),
            "table": round(L["table_length"] / 1000, 2), "stage": plan["state"]["stage"],
            "gone": sum(s == "gone" for s in st["states"]), "turned": sum(s == "turned" for s in st["states"]) + len(st["tally"]),
            "tally": plan["state"]["tally_mode"], "ball": plan["state"]["ball_mode"], "balls": len(st["balls"]),
            "loose": len(st["loose"]), "water": int(any(st["water"])), "height": round(cam["height_mm"] / 1000, 2),
            "tilt": round(cam["tilt_deg"]), "yaw": round(cam["yaw_deg"]), "fov": round(cam["hfov_deg"]),
            "light": plan["light"]["kind"], "cast": int(plan["light"]["cast"]), "cloth": plan["cloth"]["family"] + (
                "/" + plan["cloth"]["top"]["subtype"] if plan["cloth"]["family"] not in ("mat", "owncolour") else ""),
            "clutter": plan["extras"]["clutter_level"], "dice": int(plan["extras"]["dice_on"]),
            "defocus": int(cam["defocus"])}


def render_frame(args, seed: int, plan: dict, fs: dict, k: int | None, out: Path) -> tuple[dict, dict]:
    t0 = time.perf_counter()
    w, h = args.width, args.height
    name = f"s{seed:06d}" if k is None else f"s{seed:06d}_f{k}"
    ds.clear_scene()
    build_table(plan)
    build_markers(plan)
    objs = build_cups(plan, fs)
    extras = build_extras(plan, seed)
    cam_obj = build_camera(plan, w, h)
    lights_meta, world_meta = build_lights(plan)
    L = dict(plan["light"])
    if k:
        L["noise_offset"] = (L["noise_offset"][0] + 211 * k, L["noise_offset"][1] + 97 * k)
    gains, light_mix = ds.white_balance(L, lights_meta)
    ds.render_settings(args, seed, L, gains)
    bpy.context.scene.cycles.transparent_max_bounces = 8   # through two walls of a translucent cup and water
    if args.filter > 0:
        filter_light(args.filter)
    if k:
        bpy.context.scene.cycles.seed = seed + 7919 * k
    bpy.context.view_layer.update()
    labels = label_frame(plan, fs, objs, extras, cam_obj, w, h)
    t_build = time.perf_counter() - t0
    sc = bpy.context.scene
    sc.render.filepath = str(out / "images" / f"{name}.jpg")
    sc.render.use_file_extension = False
    t1 = time.perf_counter()
    bpy.ops.render.render(write_still=True)
    t_render = time.perf_counter() - t1
    strip_jpeg_comments(out / "images" / f"{name}.jpg")
    Lp = plan["layout"]
    cl = plan["cloth"]
    meta = {
        "name": name, "seed": seed, "image": f"images/{name}.jpg", "width": w, "height": h, "split": args.split,
        "frame": k, "phase": fs["phase"], "factors": factors_of(plan, fs), "forced": args.forced,
        "table": {"length_mm": round(Lp["table_length"], 1), "depth_mm": round(Lp["table_depth"], 1),
                  "between_markers_mm": [round(Lp["table_w"], 2), round(Lp["table_h"], 2)],
                  "marker_inset_mm": {"ends": round(Lp["inset_x"], 1), "near": round(Lp["inset_near"], 1),
                                      "far": round(Lp["inset_far"], 1)},
                  "grown_to_fit": Lp["grown_to_fit"], "surface_z_mm": 0.0,
                  "frame": "table mm: origin marker 0's centre, x towards marker 1, y towards marker 3, z up"},
        "layout": {"rows_A": Lp["rows_A"], "rows_B": Lp["rows_B"], "order_B": Lp["order_B"],
                   "rows_note": "each side's rows from its own outer table end inwards",
                   "cups_per_row": Lp["cups_per_row"], "rim_d_mm": round(Lp["rim_d"], 2),
                   "base_d_mm": round(Lp["base_d"], 2), "cup_h_mm": round(Lp["cup_h"], 2),
                   "pitch_x_mm": round(Lp["pitch_x"], 2), "pitch_y_mm": round(Lp["pitch_y"], 2),
                   "touching": Lp["touching"], "first_x_mm": round(Lp["first_x"], 2),
                   "middle_gap_mm": round(Lp["middle_gap"], 2), "back_y_mm": round(Lp["back_y"], 2),
                   "dice_y_mm": round(Lp["dice_y"], 2), "hand_jitter_mm": round(Lp["hand_jitter_mm"], 2),
                   "skew_deg": round(Lp["skew_deg"], 3), "far_markers_moved_back_mm": Lp["markers_moved_back_mm"], "tally_spot_mm": {s: r3(v) for s, v in Lp["tally_spot"].items()},
                   "project_layout": r3(cg.project_layout(Lp), 3), "project_layout_exact": cg.layout_exact(Lp)},
        "camera": camera_meta(plan, w, h),
        "cup_set": {"make": plan["cups"]["make"], "silver": plan["cups"]["silver_make"],
                    "silver_scale": round(plan["cups"]["silver_scale"], 3),
                    "looks": {c: {kk: r3(vv, 4) for kk, vv in lk.items()} for c, lk in plan["cups"]["looks"].items()}},
        "state": {"stage": plan["state"]["stage"], "ball_colour": fs["ball_colour"], "water_fill": round(fs["water_level"], 3),
                  "tally_mode": plan["state"]["tally_mode"]},
        **labels,
        "event": plan["event"] and {kk: r3(vv) for kk, vv in plan["event"].items()},
        "cloth": {"family": cl["family"], "top": f"{cl['top']['family']}/{cl['top']['subtype']}",
                  "colours_linear": r3(cl["top"]["colours"], 4), "own_colour_of": cl["own"],
                  "mat": ({"subtype": cl["mat"]["plan"]["subtype"], "thick_mm": round(cl["mat"]["thick_mm"], 2),
                           "colours_linear": r3(cl["mat"]["plan"]["colours"], 4)} if cl["mat"] else None)},
        "clutter": {"level": plan["extras"]["clutter_level"], "items": extras["clutter"] + [
            {"type": it["type"], "centre_mm": r3(it["centre_mm"])} for it in plan["extras"]["clutter"]
            if it["type"] in ("phone", "glass")]},
        "light": {"kind": plan["light"]["kind"], "lights": lights_meta, "world": world_meta,
                  "exposure_ev": round(L["ev"], 3), "light_colour_linear": r3(light_mix, 4), "colour_cast": L["cast"],
                  "white_balance": {"correction": round(L["wb_alpha"], 3), "gains_rgb": r3(gains, 4)},
                  "sensor_noise_sd": round(L["noise"], 4), "view_transform": L["view_transform"]},
        "render": {"samples": args.samples, "denoiser": bpy.context.scene.cycles.use_denoising,
                   "light_filter_px": args.filter,
                   "blender": bpy.app.version_string, "lens": "pinhole, no distortion"},
    }
    (out / "meta" / f"{name}.json").write_text(json.dumps(meta, indent=1))
    return meta, {"build_s": round(t_build, 2), "render_s": round(t_render, 2),
                  "total_s": round(time.perf_counter() - t0, 2)}


def strip_jpeg_comments(path: Path) -> None:
    """Drop the JPEG's comment segments: Blender writes the date and Cycles its render times
    there, so the same scene would never be the same file twice."""
    b = path.read_bytes()
    out, i = bytearray(b[:2]), 2
    while i + 4 <= len(b) and b[i] == 0xFF:
        marker = b[i + 1]
        if marker == 0xDA:   # start of scan: the image data follows
            break
        n = int.from_bytes(b[i + 2:i + 4], "big")
        if marker != 0xFE:
            out += b[i:i + 2 + n]
        i += 2 + n
    out += b[i:]
    path.write_bytes(bytes(out))


CSV_FIELDS = ["image", "side", "colour", "index", "make", "state", "ball", "water", "rim_cx", "rim_cy", "rim_xmin",
              "rim_ymin", "rim_xmax", "rim_ymax", "cup_xmin", "cup_ymin", "cup_xmax", "cup_ymax", "visible",
              "upstream_split", "phase", "factors"]


def rows_from_meta(meta: dict, split: str) -> list[dict]:
    factor_text = ";".join(f"{k}={v}" for k, v in meta["factors"].items())
    w, h = meta["width"], meta["height"]
    out = []
    for c in meta["cups"] + meta["tally_cups"]:
        rb = clip_box(c["rim_ellipse_px"]["box"], w, h)
        cb = clip_box(c["cup_box_px"], w, h)
        vis = c.get("visible_fraction")
        out.append({"image": meta["image"], "side": c["side"], "colour": c["colour"], "index": c.get("index", "tally"),
                    "make": c["make"], "state": c["state"], "ball": c["ball"]["mode"] if c.get("ball") else "none",
                    "water": int(bool(c.get("water"))), "rim_cx": f"{c['rim_centre_px'][0]:.1f}",
                    "rim_cy": f"{c['rim_centre_px'][1]:.1f}", "rim_xmin": f"{rb[0]:.1f}", "rim_ymin": f"{rb[1]:.1f}",
                    "rim_xmax": f"{rb[2]:.1f}", "rim_ymax": f"{rb[3]:.1f}", "cup_xmin": f"{cb[0]:.1f}",
                    "cup_ymin": f"{cb[1]:.1f}", "cup_xmax": f"{cb[2]:.1f}", "cup_ymax": f"{cb[3]:.1f}",
                    "visible": "" if vis is None else f"{vis:.2f}", "upstream_split": split,
                    "phase": meta["phase"], "factors": factor_text})
    return out


def write_csv(out: Path, rows: list[dict]) -> None:
    tmp = out / "annotations.csv.tmp"
    with open(tmp, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        wr.writeheader()
        wr.writerows(rows)
    os.replace(tmp, out / "annotations.csv")


def scene_names(seed: int, sequence: bool, throws: int = 1) -> list[str]:
    return [f"s{seed:06d}_f{k}" for k in range(1 + 3 * throws)] if sequence else [f"s{seed:06d}"]


def main() -> int:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    args = parse_args(argv)
    out = args.out
    for sub in ("images", "meta") + (("sequences",) if args.sequence else ()):
        (out / sub).mkdir(parents=True, exist_ok=True)
    times = []
    for i in range(args.count):
        seed = args.seed + i
        names = scene_names(seed, args.sequence, args.throws)
        if args.resume and all((out / "meta" / f"{n}.json").exists() and (out / "images" / f"{n}.jpg").exists()
                               for n in names):
            continue
        plan = plan_scene(seed, args.forced, args.width, args.height, args.sequence, args.throws)
        metas = []
        for k, fs in enumerate(plan["frames"]):
            meta, t = render_frame(args, seed, plan, fs, k if args.sequence else None, out)
            metas.append(meta)
            times.append(t["total_s"])
            with open(out / "timings.csv", "a") as f:
                f.write(f"{meta['name']},{args.width}x{args.height},{args.samples},{t['build_s']},{t['render_s']},"
                        f"{t['total_s']}\n")
            fac = meta["factors"]
            print(f"[cup_scenes] {meta['name']} {meta['phase']}: {fac['make']} cups, rim {fac['rim']} mm, "
                  f"table {fac['table']} m, {fac['cloth']}, light {fac['light']}, tilt {fac['tilt']}, fov {fac['fov']}, "
                  f"{t['render_s']:.1f} s render + {t['build_s']:.1f} s build", flush=True)
        if args.sequence:
            ev = plan["event"]
            place = plan["layout"]["places"][ev["target"]]
            (out / "sequences" / f"s{seed:06d}.json").write_text(json.dumps({
                "seed": seed, "event": ev["kind"], "side": ev["side"],
                "target": {"place": ev["target"], "colour": place["colour"], "index": place["index"]},
                **({"throws": [{"event": e["kind"], "side": e["side"],
                                "target": {"place": e["target"], "colour": plan["layout"]["places"][e["target"]]["colour"],
                                           "index": plan["layout"]["places"][e["target"]]["index"]}}
                               for e in plan["events"]]} if len(plan["events"]) > 1 else {}),
                "frames": [{"image": m["image"], "meta": f"meta/{m['name']}.json", "phase": m["phase"]} for m in metas],
                "expected": {"made": "ball in the cup, then the cup is gone",
                             "turned": "ball in the cup, then the cup stands turned over where it stood",
                             "silver": "ball in the silver cup, then a colour cup of that side is turned over in "
                                       "front of the silver cup (its place is empty)",
                             "miss": "the ball lands on the table, then is picked up: no throw into a cup"}[ev["kind"]],
            }, indent=1))
        # annotations.csv: every scene in DIR (earlier runs' too), rewritten after every scene
        rows = []
        for mp in sorted((out / "meta").glob("s*.json")):
            if (out / "images" / f"{mp.stem}.jpg").exists():
                m = json.loads(mp.read_text())
                if "cups" in m:
                    rows += rows_from_meta(m, m.get("split", args.split))
        write_csv(out, rows)
    if times:
        print(f"[cup_scenes] {len(times)} images, {sum(times) / len(times):.1f} s each "
              f"({args.width}x{args.height}, {args.samples} samples)", flush=True)
    return 0


if __name__ == "__main__":
    ds.run(main)
