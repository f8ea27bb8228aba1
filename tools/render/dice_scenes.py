"""Photo-realistic, exactly labelled dice scenes rendered by Blender (Cycles, CPU).

    blender -b --factory-startup -noaudio -P tools/render/dice_scenes.py -- \
        --out DIR --seed N --count K [--width 640 --height 640] [--samples 16] \
        [--split test] [--factors cloth=speckle light=cool ...] [--resume]

Scene i is drawn from seed N+i alone (every random choice comes from streams named by that seed),
so a scene is the same whatever else is rendered with it. Each scene writes
``DIR/images/sNNNNNN.jpg`` (quality 90, NNNNNN = its seed), ``DIR/labels/sNNNNNN.txt`` (YOLO:
``value-1 cx cy w h``) and ``DIR/meta/sNNNNNN.json`` (everything known about it); the run ends with
``DIR/annotations.csv`` (rewritten after every scene, so a cut run is usable), one row per die
whose top face is seen: ``image,xmin,ymin,xmax,ymax,value,upstream_split,color,visible,factors``.
``companion bench dice DIR --split test`` reads the folder. See tools/render/README.md.

Runs inside Blender's own Python: no numpy, no OpenCV (the ArUco bit patterns are constants
below, made once with cv2.aruco.generateImageMarker(DICT_4X4_50, id, 6)).
"""

from __future__ import annotations

import argparse
import colorsys
import csv
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import bmesh
import bpy
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Matrix, Vector

# ---------------------------------------------------------------------------------------------
# constants

# cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), i, 6),
# rows from the top, 1 = white; the outer ring is the black border.
ARUCO_BITS = {
    0: ["000000", "010110", "001010", "000110", "000100", "000000"],
    1: ["000000", "000000", "011110", "010010", "010100", "000000"],
    2: ["000000", "000110", "000110", "000100", "011010", "000000"],
    3: ["000000", "010010", "010010", "001000", "001100", "000000"],
}
MARKER_M = 0.080  # black square side
MARKER_MARGIN_M = 0.015  # white paper round it
# 0 near left, 1 near right, 2 far right, 3 far left (companion/vision/markers.py); near = image bottom
MARKER_CORNER_UV = {0: (0.0, 0.0), 1: (1.0, 0.0), 2: (1.0, 1.0), 3: (0.0, 1.0)}

PIP_GRID = {
    1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)], 5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}
# the value on each face of the die's own frame: opposite faces sum to 7 (1-2-3 anticlockwise)
FACE_AXES = {1: (0, 0, 1), 6: (0, 0, -1), 2: (1, 0, 0), 5: (-1, 0, 0), 3: (0, 1, 0), 4: (0, -1, 0)}

# body colours, linear RGB. The six the games use carry these names in the labels.
GAME_COLOURS = {
    "white": (0.80, 0.80, 0.76), "black": (0.012, 0.012, 0.014), "red": (0.55, 0.018, 0.022),
    "blue": (0.012, 0.07, 0.50), "yellow": (0.85, 0.58, 0.015), "green": (0.02, 0.30, 0.045),
}
OTHER_COLOURS = {
    "orange": (0.85, 0.20, 0.01), "purple": (0.18, 0.025, 0.38), "pink": (0.85, 0.22, 0.38),
    "grey": (0.22, 0.22, 0.22), "brown": (0.17, 0.07, 0.025), "teal": (0.01, 0.33, 0.33),
    "ivory": (0.75, 0.64, 0.42), "light-blue": (0.18, 0.42, 0.80), "maroon": (0.16, 0.01, 0.015),
    "lime": (0.38, 0.70, 0.04),
}
GLASS_COLOURS = {
    "red": (0.8, 0.02, 0.03), "blue": (0.03, 0.15, 0.8), "green": (0.03, 0.6, 0.1),
    "yellow": (0.9, 0.7, 0.03), "purple": (0.4, 0.05, 0.7), "clear": (0.9, 0.9, 0.9),
    "smoke": (0.15, 0.15, 0.16), "orange": (0.9, 0.3, 0.02),
}
MARBLE_PAIRS = [("blue", "white"), ("black", "white"), ("red", "black"), ("green", "white"),
                ("purple", "white"), ("red", "white"), ("blue", "black"), ("yellow", "orange")]

CLOTHS = {  # family -> subtypes
    "speckle": ["carpet", "terrazzo", "confetti"],
    "felt": ["felt"],
    "wood": ["wood"],
    "print": ["dots", "checks", "stripes", "floral"],
    "plain": ["plain"],
    "tray": ["tray"],
    "cardboard": ["cardboard"],
}
CLOTH_WEIGHTS = {"speckle": 0.26, "felt": 0.12, "wood": 0.14, "print": 0.2, "plain": 0.1, "tray": 0.1,
                 "cardboard": 0.08}
LIGHTS = {"warm": 0.22, "cool": 0.22, "neutral": 0.16, "dim": 0.12, "spot": 0.14, "two": 0.14}
CLUTTER = {"none": 0.35, "some": 0.45, "heavy": 0.2}

FACTOR_KEYS = {
    "cloth": "family or subtype: " + ", ".join(f"{k} ({'/'.join(v)})" for k, v in CLOTHS.items()),
    "tilt": "camera tilt from straight down, degrees (30 or 25-40)",
    "height": "camera height above the table, metres (0.4 or 0.3-0.6)",
    "px": "die size in pixels at the image centre (20 or 12-20)",
    "light": "/".join(LIGHTS),
    "cast": "1: a colour cast (white balance left uncorrected); 0: none",
    "clutter": "/".join(CLUTTER),
    "touching": "1: dice touching in pairs/groups; 0: none",
    "tilted": "number of dice leaning on a die or the tray wall (2 or 1-3)",
    "stacked": "number of dice lying on another die",
    "markers": "1: the four ArUco table markers; 0: none",
    "dice": "number of dice (8 or 5-15)",
    "color": "every die this colour (white, blue, ... or any other colour name used)",
    "kind": "every die this kind: solid, translucent, casino, marbled",
    "defocus": "1: slightly out of focus; 0: sharp",
    "outer": "with cloth=tray: the table round the tray, a family or subtype (speckle, carpet, wood, ...)",
    "tray": "with cloth=tray: the tray's size, a share of the view (0.3-0.6; default 0.55-1.05)",
}


# ---------------------------------------------------------------------------------------------
# arguments
def scene_parser(script: str, description: str, factor_keys: dict, width: int, height: int,
                 threads: int) -> argparse.ArgumentParser:
    """The options every scene generator here takes (this one and cup_scenes.py)."""
    ap = argparse.ArgumentParser(prog=f"blender -b --factory-startup -noaudio -P tools/render/{script} --",
                                 description=description)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--width", type=int, default=width)
    ap.add_argument("--height", type=int, default=height)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--split", default="test", help="upstream_split written in annotations.csv")
    ap.add_argument("--factors", nargs="*", default=[], action="extend",
                    help="force factors: " + "; ".join(f"{k}=({v})" for k, v in factor_keys.items()))
    ap.add_argument("--threads", type=int, default=threads, help="Cycles threads (0: all cores)")
    ap.add_argument("--resume", action="store_true", help="keep scenes already written (image + meta)")
    return ap


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = scene_parser("dice_scenes.py", "Render labelled dice scenes.", FACTOR_KEYS, 640, 640, 0)
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
            if k == "colour":
                k = "color"
            if k not in FACTOR_KEYS:
                raise SystemExit(f"--factors: unknown {k!r}; known: " + ", ".join(FACTOR_KEYS))
            out[k] = v
    for key in ("cloth", "outer"):
        cloth = out.get(key)
        if cloth and cloth not in CLOTHS and not any(cloth in v for v in CLOTHS.values()):
            raise SystemExit(f"--factors {key}={cloth}: not one of {FACTOR_KEYS['cloth']}")
    cloth = out.get("cloth")
    if cloth and cloth not in CLOTHS and not any(cloth in v for v in CLOTHS.values()):
        raise SystemExit(f"--factors cloth={cloth}: not one of {FACTOR_KEYS['cloth']}")
    for k, choices in (("light", LIGHTS), ("clutter", CLUTTER)):
        if k in out and out[k] not in choices:
            raise SystemExit(f"--factors {k}={out[k]}: not one of {', '.join(choices)}")
    if "kind" in out and out["kind"] not in ("solid", "translucent", "casino", "marbled"):
        raise SystemExit(f"--factors kind={out['kind']}: solid, translucent, casino or marbled")
    return out


def num_range(text: str) -> tuple[float, float]:
    """'30' -> (30, 30); '25-40' -> (25, 40)."""
    if "-" in text[1:]:
        i = text.index("-", 1)
        return float(text[:i]), float(text[i + 1:])
    return float(text), float(text)


def forced_num(forced: dict, key: str, rng: random.Random, default, integer: bool = False):
    if key not in forced:
        return default
    lo, hi = num_range(forced[key])
    if integer:
        return rng.randint(int(lo), int(hi))
    return rng.uniform(lo, hi)


def pick(rng: random.Random, weights: dict):
    keys = list(weights)
    return rng.choices(keys, [weights[k] for k in keys])[0]


def stream(seed: int, name: str) -> random.Random:
    return random.Random(f"dice-scene/{seed}/{name}")


# ---------------------------------------------------------------------------------------------
# colour helpers
def srgb_to_linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def hsv_linear(h: float, s: float, v: float) -> tuple[float, float, float]:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return (srgb_to_linear(r), srgb_to_linear(g), srgb_to_linear(b))


def luminance(c) -> float:
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def jitter(c, rng: random.Random, amount: float = 0.12):
    return tuple(max(0.0, min(1.0, x * rng.uniform(1 - amount, 1 + amount))) for x in c)


def blackbody(kelvin: float) -> tuple[float, float, float]:
    """Linear RGB of a black body (Tanner Helland's fit, sRGB), luminance 1."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = 99.4708025861 * math.log(t) - 161.1195681661 if t <= 66 else 288.1221695283 * (t - 60) ** -0.0755148492
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5177312231 * math.log(t - 10) - 305.0447927307)
    rgb = [srgb_to_linear(max(0.0, min(255.0, x)) / 255.0) for x in (r, g, b)]
    y = luminance(rgb)
    return tuple(x / y for x in rgb)


def random_colour(rng: random.Random) -> tuple[tuple[float, float, float], str]:
    """A table colour: a third of the time one of the dice colours."""
    if rng.random() < 0.3:
        name = rng.choice(list(GAME_COLOURS))
        return jitter(GAME_COLOURS[name], rng, 0.2), name
    h, s, v = rng.random(), rng.choice([rng.uniform(0, 0.25), rng.uniform(0.25, 0.95)]), rng.uniform(0.08, 0.95)
    return hsv_linear(h, s, v), f"hsv({h:.2f},{s:.2f},{v:.2f})"


# ---------------------------------------------------------------------------------------------
# Blender helpers
def clear_scene() -> None:
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o, do_unlink=True)
    for coll in (bpy.data.meshes, bpy.data.curves, bpy.data.materials, bpy.data.lights, bpy.data.cameras,
                 bpy.data.node_groups, bpy.data.worlds):
        for block in list(coll):
            coll.remove(block)
    for img in list(bpy.data.images):
        if not img.use_fake_user and img.type not in ("RENDER_RESULT", "COMPOSITING"):
            bpy.data.images.remove(img)


def link(obj) -> None:
    bpy.context.scene.collection.objects.link(obj)


def _object(name: str, me, mat=None, smooth: bool = False):
    """An object of the finished mesh ``me``, linked into the scene."""
    if smooth:
        for p in me.polygons:
            p.use_smooth = True
    obj = bpy.data.objects.new(name, me)
    if mat is not None:
        me.materials.append(mat)
    link(obj)
    return obj


def mesh_object(name: str, verts, faces, mat=None, smooth: bool = False):
    me = bpy.data.meshes.new(name)
    me.from_pydata([tuple(v) for v in verts], [], faces)
    me.update()
    return _object(name, me, mat, smooth)


def bm_object(name: str, bm, mat=None, smooth: bool = False):
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    return _object(name, me, mat, smooth)


class Nodes:
    """Small builder for shader node trees."""

    def __init__(self, mat):
        mat.use_nodes = True
        self.nt = mat.node_tree
        self.nt.nodes.clear()
        self.out = self.nt.nodes.new("ShaderNodeOutputMaterial")

    def n(self, kind: str, inputs: dict | None = None, **props):
        node = self.nt.nodes.new(kind)
        for k, v in props.items():
            setattr(node, k, v)
        for k, v in (inputs or {}).items():
            self.put(node.inputs[k], v)
        return node

    def put(self, socket, v) -> None:
        if hasattr(v, "is_output") or hasattr(v, "links"):  # a socket
            self.nt.links.new(v, socket)
        elif isinstance(v, (tuple, list)) and len(v) == 3 and socket.type == "RGBA":
            socket.default_value = (*v, 1.0)
        else:
            socket.default_value = v

    def math(self, op: str, a, b=0.0, clamp: bool = False):
        node = self.n("ShaderNodeMath", operation=op, use_clamp=clamp)
        self.put(node.inputs[0], a)
        self.put(node.inputs[1], b)
        return node.outputs[0]

    def vmath(self, op: str, a, b=None, out: str = "Vector"):
        node = self.n("ShaderNodeVectorMath", operation=op)
        self.put(node.inputs[0], a)
        if b is not None:
            if op == "SCALE":
                self.put(node.inputs["Scale"], b)
            else:
                self.put(node.inputs[1], b)
        return node.outputs[out]

    def mix(self, fac, a, b, blend: str = "MIX"):
        node = self.n("ShaderNodeMixRGB", blend_type=blend)
        self.put(node.inputs["Fac"], fac)
        self.put(node.inputs["Color1"], a)
        self.put(node.inputs["Color2"], b)
        return node.outputs["Color"]

    def ramp(self, fac, stops, constant: bool = False):
        """stops: [(position, rgb)]."""
        node = self.n("ShaderNodeValToRGB")
        cr = node.color_ramp
        cr.interpolation = "CONSTANT" if constant else "LINEAR"
        while len(cr.elements) > 1:
            cr.elements.remove(cr.elements[-1])
        cr.elements[0].position = stops[0][0]
        cr.elements[0].color = (*stops[0][1], 1.0)
        for pos, col in stops[1:]:
            e = cr.elements.new(pos)
            e.color = (*col, 1.0)
        self.put(node.inputs["Fac"], fac)
        return node.outputs["Color"]

    def coords(self, kind: str = "Object"):
        return self.n("ShaderNodeTexCoord").outputs[kind]

    def noise(self, vec, scale, detail=2.0, rough=0.5, distortion=0.0, out="Fac"):
        return self.n("ShaderNodeTexNoise", {"Vector": vec, "Scale": scale, "Detail": detail, "Roughness": rough,
                                             "Distortion": distortion}).outputs[out]

    def voronoi(self, vec, scale, randomness=1.0, out="Distance"):
        return self.n("ShaderNodeTexVoronoi", {"Vector": vec, "Scale": scale, "Randomness": randomness}).outputs[out]

    def bsdf(self, colour, rough=0.5, spec=0.5, **extra):
        inputs = {"Base Color": colour, "Roughness": rough, "Specular": spec}
        inputs.update(extra)
        return self.n("ShaderNodeBsdfPrincipled", inputs)

    def finish(self, shader, normal=None):
        if normal is not None and "Normal" in shader.inputs:
            self.put(shader.inputs["Normal"], normal)
        self.put(self.out.inputs["Surface"], shader.outputs[0] if hasattr(shader, "outputs") else shader)

    def bump(self, height, strength=0.3, distance=0.001, invert=False):
        return self.n("ShaderNodeBump", {"Height": height, "Strength": strength, "Distance": distance},
                      invert=invert).outputs["Normal"]


def new_material(name: str):
    mat = bpy.data.materials.new(name)
    return mat, Nodes(mat)


def image_from_rows(name: str, w: int, h: int, pixel, non_color: bool = False, closest: bool = False):
    """A Blender image filled by pixel(x, y) -> (r, g, b) (y = 0 is the BOTTOM row)."""
    img = bpy.data.images.new(name, w, h, alpha=False)
    if non_color:
        img.colorspace_settings.name = "Non-Color"
    buf = []
    for y in range(h):
        for x in range(w):
            r, g, b = pixel(x, y)
            buf.extend((r, g, b, 1.0))
    img.pixels.foreach_set(buf)
    return img


# ---------------------------------------------------------------------------------------------
# dice geometry (unit cube, side 1)
def die_bmesh(bevel: float):
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    if bevel > 0.002:
        bmesh.ops.bevel(bm, geom=list(bm.edges) + list(bm.verts), offset=bevel, offset_type="OFFSET",
                        segments=3, profile=0.5, affect="EDGES", clamp_overlap=True)
    return bm


def face_uv(co, normal):
    """UV of a point on the unit die in the 6-cell pip atlas (cell value-1)."""
    ax = max(range(3), key=lambda i: abs(normal[i]))
    sign = 1 if normal[ax] > 0 else -1
    axis = [0, 0, 0]
    axis[ax] = sign
    value = next(v for v, a in FACE_AXES.items() if list(a) == axis)
    a_i, b_i = {(0): (1, 2), (1): (0, 2), (2): (0, 1)}[ax]
    a = max(-1.0, min(1.0, co[a_i] * 2))
    b = max(-1.0, min(1.0, co[b_i] * 2))
    return ((value - 1 + (a + 1) / 2) / 6.0, (b + 1) / 2)


class DieShape:
    """One rounded-cube style: its mesh data (UV-mapped to the pip atlas) and its vertices."""

    def __init__(self, bevel: float):
        self.bevel = bevel
        bm = die_bmesh(bevel)
        uv = bm.loops.layers.uv.new("UVMap")
        for f in bm.faces:
            n = f.normal
            for loop in f.loops:
                loop[uv].uv = face_uv(loop.vert.co, n)
        bm.normal_update()
        self.verts = [tuple(v.co) for v in bm.verts]
        # the six flat faces shaded flat, the rounded edges smooth: their shared edges are sharp
        for e in bm.edges:
            e.smooth = not any(max(abs(c) for c in f.normal) > 0.999 for f in e.link_faces)
        me = bpy.data.meshes.new(f"die_shape_{bevel:.3f}")
        bm.to_mesh(me)
        bm.free()
        me.use_auto_smooth = True
        me.auto_smooth_angle = math.pi
        for p in me.polygons:
            p.use_smooth = True
        self.mesh = me


def pip_atlas(name: str, offset: float, radius: float, cell: int = 96, big_one: float = 1.0):
    """Pip mask, 6 cells side by side (cell k = value k+1), 1 = pip. offset/radius in face sides."""
    img = bpy.data.images.new(name, 6 * cell, cell, alpha=False)
    buf = [0.0] * (6 * cell * cell * 4)
    w = 6 * cell
    for v in range(1, 7):
        pips = [(gx * offset, gy * offset) for gx, gy in PIP_GRID[v]]
        r = radius * (big_one if v == 1 else 1.0)
        for y in range(cell):
            fy = (y + 0.5) / cell - 0.5
            for x in range(cell):
                fx = (x + 0.5) / cell - 0.5
                d = min(math.hypot(fx - px, fy - py) for px, py in pips)
                m = (r - d) * cell + 0.5
                if m > 0:
                    m = 1.0 if m > 1 else m
                    i = (y * w + (v - 1) * cell + x) * 4
                    buf[i] = buf[i + 1] = buf[i + 2] = m
    for i in range(3, len(buf), 4):
        buf[i] = 1.0
    img.colorspace_settings.name = "Non-Color"  # before the pixels: changing it later clears them
    img.pixels.foreach_set(buf)
    return img


def rot_top(value: int) -> Matrix:
    """Rotation that brings face `value` of the die's frame to +Z."""
    return {
        1: Matrix.Identity(3), 6: Matrix.Rotation(math.pi, 3, "X"),
        2: Matrix.Rotation(-math.pi / 2, 3, "Y"), 5: Matrix.Rotation(math.pi / 2, 3, "Y"),
        3: Matrix.Rotation(math.pi / 2, 3, "X"), 4: Matrix.Rotation(-math.pi / 2, 3, "X"),
    }[value]


def top_value(rot: Matrix) -> tuple[int, Vector]:
    """The value on the face whose normal points most upward, and that local normal."""
    best = max(FACE_AXES, key=lambda v: (rot @ Vector(FACE_AXES[v])).z)
    return best, Vector(FACE_AXES[best])


# ---------------------------------------------------------------------------------------------
# collision: dice are boxes (centre, rotation, side); a die's own rounded vertices against boxes
class Box:
    def __init__(self, centre, rot: Matrix, half):
        self.c = Vector(centre)
        self.r = rot.copy()
        self.rt = rot.transposed()
        self.h = Vector(half)

    def contains(self, p, grow: float = 0.0) -> bool:
        q = self.rt @ (Vector(p) - self.c)
        return abs(q.x) < self.h.x + grow and abs(q.y) < self.h.y + grow and abs(q.z) < self.h.z + grow


def die_points(shape: DieShape, size: float, centre, rot: Matrix):
    c = Vector(centre)
    return [c + rot @ (Vector(v) * size) for v in shape.verts]


def dice_overlap(a: dict, b: dict, grow: float = 0.0) -> bool:
    ba, bb = a["box"], b["box"]
    if (ba.c - bb.c).length > (a["size"] + b["size"]) * 0.9 + 2 * grow:
        return False
    return any(bb.contains(p, grow) for p in a["points"]) or any(ba.contains(p, grow) for p in b["points"])


# ---------------------------------------------------------------------------------------------
# the plan of one scene: every random choice, before anything is built
class Camera:
    def __init__(self, loc: Vector, rot: Matrix, focal: float, w: int, h: int):
        self.loc, self.rot, self.focal, self.w, self.h = loc, rot, focal, w, h
        self.sensor = 36.0

    def ray(self, u: float, v: float) -> Vector:
        """World direction through image point (u right, v up, 0..1)."""
        x = (u - 0.5) * self.sensor / self.focal
        y = (v - 0.5) * self.sensor / self.focal * self.h / self.w
        return (self.rot @ Vector((x, y, -1.0))).normalized()

    def on_plane(self, u: float, v: float, z: float) -> Vector | None:
        d = self.ray(u, v)
        if d.z > -1e-6:
            return None
        t = (z - self.loc.z) / d.z
        return self.loc + d * t

    def uv(self, p) -> tuple[float, float, float]:
        q = self.rot.transposed() @ (Vector(p) - self.loc)
        if q.z >= 0:
            return (-1.0, -1.0, -1.0)
        x, y = q.x / -q.z, q.y / -q.z
        return (x * self.focal / self.sensor + 0.5, y * self.focal / self.sensor * self.w / self.h + 0.5, -q.z)


def plan_camera(seed: int, forced: dict, die_mm: float, need_wide: bool, w: int, h: int) -> dict:
    rng = stream(seed, "camera")
    tilt = forced_num(forced, "tilt", rng, rng.uniform(0, 40) if rng.random() < 0.8 else rng.uniform(0, 8))
    px = forced_num(forced, "px", rng, math.exp(rng.uniform(math.log(12), math.log(80))))
    yaw = rng.uniform(0, 2 * math.pi)
    roll = rng.uniform(-0.1, 0.1)
    s = die_mm / 1000.0
    if need_wide and "px" not in forced:  # four 110 mm marker sheets near the corners: a view ~0.55 m wide
        px = min(px, w * s / 0.55)
    best = None
    for _ in range(400):
        height = forced_num(forced, "height", rng, rng.uniform(0.25, 1.2))
        dist = height / math.cos(math.radians(tilt))
        focal = px * dist * 36.0 / (s * w)  # mm, full-frame equivalent (36 mm sensor width)
        view_w = dist * 36.0 / max(focal, 1e-3)
        bad = max(0.0, 24 - focal) / 24 + max(0.0, focal - 70) / 70 + (max(0.0, 0.5 - view_w) * 10 if need_wide else 0.0)
        if best is None or bad < best[0]:
            best = (bad, height, focal)
        if bad == 0:
            break
    _, height, focal = best
    focal = min(70.0, max(24.0, focal))
    look = Vector((rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), 0.0))
    far = Vector((math.sin(yaw), math.cos(yaw), 0.0))
    dist = height / math.cos(math.radians(tilt))
    loc = look - far * dist * math.sin(math.radians(tilt)) + Vector((0, 0, height))
    zc = (loc - look).normalized()
    yc = (far - zc * far.dot(zc)).normalized()
    xc = yc.cross(zc)
    rot = Matrix((xc, yc, zc)).transposed() @ Matrix.Rotation(roll, 3, "Z")
    defocus = forced_num(forced, "defocus", rng, 1.0 if rng.random() < 0.15 else 0.0) >= 0.5
    return {"tilt_deg": tilt, "yaw_deg": math.degrees(yaw) % 360, "roll_deg": math.degrees(roll),
            "height_m": height, "focal_mm": focal, "distance_m": dist, "die_px_target": px,
            "look_at": look, "far": far, "location": loc, "rotation": rot, "defocus": defocus,
            "defocus_coc_px": rng.uniform(1.0, 2.6), "focus_error": rng.choice([-1, 1]) * rng.uniform(0.08, 0.25)}


def plan_dice(seed: int, forced: dict) -> dict:
    rng = stream(seed, "dice")
    n = forced_num(forced, "dice", rng, int(1 + 14 * rng.random() ** 1.4), integer=True)
    n = max(1, n)
    mean = rng.uniform(12, 22)
    mixed_sizes = rng.random() < 0.2
    mode = rng.choices(["same", "game", "mixed"], [0.25, 0.4, 0.35])[0]
    same = rng.choice(list(GAME_COLOURS)) if rng.random() < 0.8 else rng.choice(list(OTHER_COLOURS))
    style = {"bevel": rng.uniform(0.08, 0.17), "pip_offset": rng.uniform(0.56, 0.68), "pip_radius": rng.uniform(0.17, 0.24),
             "big_one": 1.0 if rng.random() < 0.8 else rng.uniform(1.3, 1.7), "gloss": rng.uniform(0.15, 0.5)}
    dice = []
    for i in range(n):
        r = stream(seed, f"die{i}")
        size = r.uniform(12, 22) if mixed_sizes else mean * r.uniform(0.98, 1.02)
        kind = "solid"
        if mode == "mixed":
            kind = r.choices(["solid", "translucent", "casino", "marbled"], [0.62, 0.14, 0.08, 0.16])[0]
        elif r.random() < 0.06:
            kind = r.choice(["translucent", "marbled"])
        if "color" in forced:  # a forced colour means dice of that colour, solid unless a kind is forced too
            kind = "solid"
        kind = forced.get("kind", kind)
        if mode == "same":
            base = same
        elif mode == "game":
            base = r.choice(list(GAME_COLOURS))
        else:
            base = r.choice(list(GAME_COLOURS)) if r.random() < 0.55 else r.choice(list(OTHER_COLOURS))
        base = forced.get("color", base)
        d = {"size_mm": size, "kind": kind, "value": r.randint(1, 6), "yaw": r.uniform(0, 2 * math.pi)}
        if kind == "translucent":
            g = base if base in GLASS_COLOURS else r.choice(list(GLASS_COLOURS))
            d.update(color=f"translucent-{g}", body=jitter(GLASS_COLOURS[g], r, 0.08))
        elif kind == "casino":
            d.update(color="casino-red", body=jitter(GLASS_COLOURS["red"], r, 0.05))
            d["size_mm"] = min(22.0, max(16.0, size))
        elif kind == "marbled":
            a, b = r.choice(MARBLE_PAIRS)
            if "color" in forced and forced["color"] not in (a, b):
                a = forced["color"]
            ca = GAME_COLOURS.get(a) or OTHER_COLOURS.get(a) or (0.5, 0.5, 0.5)
            cb = GAME_COLOURS.get(b) or OTHER_COLOURS.get(b) or (0.5, 0.5, 0.5)
            d.update(color=f"marbled-{a}-{b}", body=jitter(ca, r, 0.08), body2=jitter(cb, r, 0.08),
                     marble_scale=r.uniform(1.5, 4.0), marble_share=r.uniform(0.3, 0.7))
        else:
            col = GAME_COLOURS.get(base) or OTHER_COLOURS.get(base)
            if col is None:
                col = random_colour(r)[0]
            d.update(color=base, body=jitter(col, r, 0.1))
        light_body = luminance(d["body"]) > 0.3 if kind != "marbled" else \
            (luminance(d["body"]) + luminance(d["body2"])) / 2 > 0.35
        if kind == "casino" or not light_body:
            pip = (0.82, 0.82, 0.8)
        elif r.random() < 0.1:
            pip = r.choice([(0.5, 0.01, 0.01), (0.01, 0.05, 0.4), (0.01, 0.2, 0.03)])
        else:
            pip = (0.012, 0.012, 0.012)
        if kind == "solid" and not light_body and r.random() < 0.1:
            pip = (0.6, 0.42, 0.1)  # gold
        d["pip"] = pip
        d["colour_class"] = d["color"] if (kind == "solid" and d["color"] in GAME_COLOURS) else "other"
        dice.append(d)
    return {"dice": dice, "mode": mode, "mean_mm": mean, "style": style}


def plan_cloth(seed: int, forced: dict) -> dict:
    rng = stream(seed, "cloth")
    family = pick(rng, CLOTH_WEIGHTS)
    sub = rng.choice(CLOTHS[family])
    want = forced.get("cloth")
    if want:
        if want in CLOTHS:
            family, sub = want, rng.choice(CLOTHS[want])
        else:
            family = next(k for k, v in CLOTHS.items() if want in v)
            sub = want
    ncol = rng.randint(2, 5)
    colours = [random_colour(rng) for _ in range(ncol)]
    p = {"family": family, "subtype": sub, "colours": [c for c, _ in colours], "colour_names": [n for _, n in colours],
         "speck_mm": rng.uniform(1.2, 6.0), "density": rng.uniform(0.15, 0.6), "scale_mm": rng.uniform(3, 30),
         "rough": rng.uniform(0.3, 1.0), "angle": rng.uniform(0, math.pi), "offset": [rng.uniform(-5, 5) for _ in range(3)],
         "floor_colour": hsv_linear(rng.random(), rng.uniform(0, 0.7), rng.uniform(0.02, 0.12)),
         "tray_kind": rng.choice(["felt", "leather", "plastic"]),
         "wall_colour": hsv_linear(rng.random(), rng.uniform(0, 0.8), rng.uniform(0.03, 0.3)),
         "wall_h": rng.uniform(0.02, 0.045), "tray_scale": (rng.uniform(0.55, 1.05), rng.uniform(0.55, 1.05)),
         "tray_rot": rng.uniform(-0.25, 0.25), "tray_shift": (rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1))}
    if "tray" in forced:  # a small tray in a wide view: a phone photo of a tray on the floor
        t = stream(seed, "cloth-tray-size")
        p["tray_scale"] = (forced_num(forced, "tray", t, 0.0), forced_num(forced, "tray", t, 0.0))
    p["outer"] = plan_cloth_outer(seed, forced.get("outer"))
    return p


def plan_cloth_outer(seed: int, want: str | None = None) -> dict:
    """The table round a tray; ``want`` (a family or subtype) forces it. A forced one draws from
    streams of its own, so the trays of scenes rendered without it stay as they were."""
    rng = stream(seed, "cloth-outer")
    fam = rng.choice(["wood", "plain", "felt", "print"])
    out = {"family": fam, "subtype": rng.choice(CLOTHS[fam]), "colours": [random_colour(rng)[0] for _ in range(3)],
           "colour_names": [], "speck_mm": 3.0, "density": 0.3, "scale_mm": rng.uniform(4, 30), "rough": rng.uniform(0.3, 1),
           "angle": rng.uniform(0, math.pi), "offset": [rng.uniform(-5, 5) for _ in range(3)]}
    if want:
        f = stream(seed, "cloth-outer-forced")
        fam = want if want in CLOTHS else next(k for k, v in CLOTHS.items() if want in v)
        colours = [random_colour(f)[0] for _ in range(f.randint(2, 5))]
        out.update(family=fam, subtype=want if want not in CLOTHS else f.choice(CLOTHS[fam]), colours=colours,
                   speck_mm=f.uniform(1.2, 6.0), density=f.uniform(0.15, 0.6))
    return out


def plan_light(seed: int, forced: dict) -> dict:
    rng = stream(seed, "light")
    kind = forced.get("light") or pick(rng, LIGHTS)
    lights = []

    def one(temp_lo, temp_hi, typ, elev, dist, size, share):
        az = rng.uniform(0, 2 * math.pi)
        el = math.radians(rng.uniform(*elev))
        r = rng.uniform(*dist)
        lights.append({"type": typ, "temp_K": rng.uniform(temp_lo, temp_hi), "azimuth": az, "elevation": el,
                       "distance": r, "size": rng.uniform(*size), "share": share,
                       "spot_deg": rng.uniform(35, 70), "aim": (rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.06))})

    if kind == "warm":
        one(2700, 3300, rng.choice(["POINT", "AREA"]), (35, 85), (0.4, 1.3), (0.03, 0.3), 1.0)
    elif kind == "cool":
        one(5500, 7000, "AREA", (20, 60), (1.2, 3.0), (0.5, 1.5), 1.0)
    elif kind == "neutral":
        one(3800, 5500, "AREA", (60, 90), (1.2, 2.5), (0.3, 1.2), 1.0)
    elif kind == "dim":
        one(2700, 6500, rng.choice(["POINT", "AREA"]), (25, 85), (0.6, 2.5), (0.05, 1.0), 1.0)
    elif kind == "spot":
        one(3000, 6000, "SPOT", (45, 88), (0.6, 1.5), (0.001, 0.008), 1.0)
    else:  # two lights, usually different temperatures
        s = rng.uniform(0.35, 0.65)
        one(2700, 3500, rng.choice(["POINT", "AREA"]), (30, 85), (0.4, 1.3), (0.03, 0.3), s)
        one(4500, 7000, "AREA", (20, 70), (1.0, 3.0), (0.3, 1.5), 1 - s)
    ev = rng.uniform(-2.8, -1.5) if kind == "dim" else rng.uniform(-0.6, 0.35)
    ambient = rng.uniform(0.03, 0.25)
    sky_temp = rng.uniform(5000, 9000) if kind in ("cool", "two") else rng.uniform(3000, 7000)
    cast = forced_num(forced, "cast", rng, 1.0 if rng.random() < 0.25 else 0.0) >= 0.5
    wb_alpha = rng.uniform(0.0, 0.45) if cast else rng.uniform(0.75, 1.0)
    tint = (rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.06)) if cast else (rng.uniform(-0.02, 0.02), 0.0)
    noise = rng.uniform(0.01, 0.035) if kind == "dim" else (rng.uniform(0.002, 0.01) if rng.random() < 0.4 else 0.0)
    view = "Filmic" if rng.random() < 0.25 else "Standard"
    return {"kind": kind, "lights": lights, "ev": ev, "ambient": ambient, "sky_temp_K": sky_temp, "cast": cast,
            "wb_alpha": wb_alpha, "tint": tint, "noise": noise, "view_transform": view,
            "noise_offset": (rng.randint(0, 10000), rng.randint(0, 10000))}


# ---------------------------------------------------------------------------------------------
# materials
def cloth_material(p: dict, name: str = "table"):
    mat, N = new_material(name)
    co = N.coords("Object")
    off = Vector(p["offset"])
    rot = N.n("ShaderNodeMapping", {"Vector": co, "Location": off, "Rotation": (0, 0, p["angle"])}).outputs["Vector"]
    cols = p["colours"]
    sub = p["subtype"]
    rough = p["rough"]
    normal = None
    spec = 0.3
    mm = 1000.0  # object units are metres; the sizes here are in mm
    if sub in ("carpet", "terrazzo", "confetti"):
        speck = p["speck_mm"]
        # base: two colours mixed by a soft noise
        base = N.mix(N.noise(rot, mm / (speck * 6), 3, 0.6), cols[0], N.mix(0.35, cols[0], cols[1 % len(cols)]))
        layers = 2 if sub == "carpet" else 1
        colour = base
        for k in range(layers + 1):
            size = speck * (1.0 if k == 0 else 0.55 ** k)
            cell = size / max(0.12, p["density"]) ** 0.5
            warp = N.vmath("ADD", rot, N.vmath("SCALE", N.noise(rot, mm / (size * 1.5), 2, 0.5, out="Color"),
                                               size / mm * 0.6))
            dist = N.voronoi(warp, mm / cell)
            cval = N.voronoi(warp, mm / cell, out="Color")
            radius = 0.5 * size / cell
            mask = N.math("LESS_THAN", dist, radius)
            pal = N.ramp(N.n("ShaderNodeSeparateColor", {"Color": cval}).outputs[0],
                         [(i / len(cols), cols[(i + k + 1) % len(cols)]) for i in range(len(cols))], constant=True)
            colour = N.mix(mask, colour, pal)
        if sub == "carpet":
            fibre = N.noise(rot, mm / 0.35, 4, 0.7)
            colour = N.mix(0.35, colour, N.mix(fibre, (0, 0, 0), colour, "MULTIPLY"), "MIX")
            normal = N.bump(N.noise(rot, mm / 0.6, 3, 0.7), 0.5, 0.002)
            rough, spec = 1.0, 0.2
        elif sub == "terrazzo":
            rough, spec = min(rough, 0.35), 0.5
        shader = N.bsdf(colour, rough, spec)
    elif sub == "felt":
        c = cols[0]
        v = N.noise(rot, mm / 0.5, 6, 0.7)
        colour = N.mix(v, jitter(c, random.Random(1), 0.0), tuple(x * 0.7 for x in c))
        colour = N.mix(N.noise(rot, mm / 30, 2, 0.5), colour, N.mix(0.5, colour, tuple(x * 1.15 for x in c)))
        normal = N.bump(v, 0.35, 0.001)
        shader = N.bsdf(colour, 1.0, 0.15, **{"Sheen": 0.6})
    elif sub == "wood":
        wr = random.Random(str(p["offset"]))
        light = hsv_linear(wr.uniform(0.04, 0.1), wr.uniform(0.35, 0.75), wr.uniform(0.25, 0.85))
        dark = tuple(x * wr.uniform(0.3, 0.6) for x in light)
        if wr.random() < 0.2:  # painted / stained in another colour
            light = cols[0]
            dark = tuple(x * 0.6 for x in light)
        stretched = N.n("ShaderNodeMapping", {"Vector": rot, "Scale": (1.0, 0.08, 1.0)}).outputs["Vector"]
        # growth rings of a log cut far from its heart: long, slightly curved, uneven bands
        ringed = N.n("ShaderNodeMapping", {"Vector": rot, "Location": (0.0, wr.uniform(0.3, 1.5), 0.0),
                                           "Scale": (0.12, 1.0, 1.0)}).outputs["Vector"]
        wave = N.n("ShaderNodeTexWave", {"Vector": ringed, "Scale": 0.628 / (p["scale_mm"] * 0.6 / mm), "Distortion": 4.0,
                                         "Detail": 3.0, "Detail Scale": 1.5},
                   wave_type="RINGS", rings_direction="SPHERICAL").outputs["Fac"]
        grain = N.noise(stretched, mm / 1.5, 3, 0.6)
        colour = N.ramp(N.math("MULTIPLY", wave, N.math("ADD", 0.7, N.math("MULTIPLY", grain, 0.5))),
                        [(0.2, dark), (0.8, light)])
        shader = N.bsdf(colour, min(rough, 0.6), 0.5)
        normal = N.bump(grain, 0.1, 0.0005)
    elif sub in ("dots", "checks", "stripes", "floral"):
        bg, fg = cols[0], cols[1]
        if sub == "dots":
            dot = p["speck_mm"] * 0.9  # pip sized
            pitch = dot * random.Random(str(p["offset"])).uniform(1.6, 3.5)
            g = N.vmath("SCALE", rot, mm / pitch)
            f = N.vmath("SUBTRACT", N.vmath("FRACTION", g), (0.5, 0.5, 0.5))
            sep = N.n("ShaderNodeSeparateXYZ", {"Vector": f}).outputs
            d = N.math("SQRT", N.math("ADD", N.math("POWER", sep[0], 2), N.math("POWER", sep[1], 2)))
            mask = N.math("LESS_THAN", d, 0.5 * dot / pitch)
            colour = N.mix(mask, bg, fg)
            if len(cols) > 2:  # a second, offset dot grid in a third colour
                g2 = N.vmath("ADD", g, (0.5, 0.5, 0.0))
                f2 = N.vmath("SUBTRACT", N.vmath("FRACTION", g2), (0.5, 0.5, 0.5))
                sep = N.n("ShaderNodeSeparateXYZ", {"Vector": f2}).outputs
                d2 = N.math("SQRT", N.math("ADD", N.math("POWER", sep[0], 2), N.math("POWER", sep[1], 2)))
                colour = N.mix(N.math("LESS_THAN", d2, 0.3 * dot / pitch), colour, cols[2])
        elif sub == "checks":
            cell = p["scale_mm"]
            sep = N.n("ShaderNodeSeparateXYZ", {"Vector": N.vmath("SCALE", rot, mm / cell)}).outputs
            fx = N.math("LESS_THAN", N.math("FRACT", sep[0]), 0.5)
            fy = N.math("LESS_THAN", N.math("FRACT", sep[1]), 0.5)
            if len(cols) > 2:  # gingham: stripes both ways, their crossing darker
                colour = N.mix(N.math("MAXIMUM", fx, fy), bg, fg)
                colour = N.mix(N.math("MULTIPLY", fx, fy), colour, cols[2])
            else:
                colour = N.mix(N.math("MODULO", N.math("ADD", fx, fy), 2.0), bg, fg)
        elif sub == "stripes":
            width = p["scale_mm"] * 0.5
            sep = N.n("ShaderNodeSeparateXYZ", {"Vector": N.vmath("SCALE", rot, mm / (width * len(cols)))}).outputs
            colour = N.ramp(N.math("FRACT", sep[0]), [(i / len(cols), cols[i]) for i in range(len(cols))], constant=True)
        else:  # floral: blobs and petals from thresholded noise
            s = p["scale_mm"]
            n1 = N.noise(rot, mm / (s * 1.5), 3, 0.55, distortion=0.6)
            colour = N.ramp(n1, [(0.0, bg), (0.58, fg), (0.66, cols[2 % len(cols)]), (0.7, bg)], constant=True)
            pet = N.voronoi(rot, mm / (s * 1.2))
            colour = N.mix(N.math("LESS_THAN", pet, 0.12), colour, cols[-1])
        weave = N.noise(rot, mm / 0.4, 2, 0.5)
        colour = N.mix(0.12, colour, N.mix(weave, (0, 0, 0), colour))
        normal = N.bump(weave, 0.15, 0.0005)
        shader = N.bsdf(colour, max(0.55, rough), 0.25)
    elif sub == "plain":
        c = cols[0]
        colour = N.mix(N.noise(rot, mm / 40, 2, 0.5), c, tuple(x * 0.9 for x in c))
        shader = N.bsdf(colour, rough * 0.8, 0.5)
    elif sub == "cardboard":
        cr = random.Random(str(p["offset"]))
        c = hsv_linear(cr.uniform(0.07, 0.1), cr.uniform(0.35, 0.6), cr.uniform(0.35, 0.6)) if cr.random() < 0.75 \
            else hsv_linear(0, 0, cr.uniform(0.3, 0.6))
        stretched = N.n("ShaderNodeMapping", {"Vector": rot, "Scale": (1.0, 0.15, 1.0)}).outputs["Vector"]
        fib = N.noise(stretched, mm / 0.8, 5, 0.7)
        colour = N.mix(fib, tuple(x * 0.8 for x in c), tuple(min(1, x * 1.15) for x in c))
        dots = N.math("LESS_THAN", N.voronoi(rot, mm / 2.5), 0.12)
        colour = N.mix(N.math("MULTIPLY", dots, 0.7), colour, tuple(x * 0.45 for x in c))
        normal = N.bump(fib, 0.2, 0.0005)
        shader = N.bsdf(colour, 0.95, 0.2)
    else:  # tray floor
        c = p.get("floor_colour", cols[0])
        v = N.noise(rot, mm / 0.5, 5, 0.7)
        colour = N.mix(v, c, tuple(x * 0.6 for x in c))
        kind = p.get("tray_kind", "felt")
        normal = N.bump(v, 0.3 if kind == "felt" else 0.1, 0.001)
        shader = N.bsdf(colour, {"felt": 1.0, "leather": 0.45, "plastic": 0.3}[kind], 0.3 if kind == "felt" else 0.5)
    N.finish(shader, normal)
    return mat


def die_material(d: dict, atlas, gloss: float, name: str):
    mat, N = new_material(name)
    uv = N.coords("UV")
    mask = N.n("ShaderNodeTexImage", {"Vector": uv}, image=atlas, interpolation="Linear",
               extension="EXTEND").outputs["Color"]
    mask = N.n("ShaderNodeSeparateColor", {"Color": mask}).outputs[0]
    if d["kind"] == "marbled":
        co = N.coords("Object")
        n = N.noise(co, d["marble_scale"], 6, 0.6, distortion=3.0)
        sh = d["marble_share"]
        body_col = N.ramp(n, [(sh - 0.04, d["body"]), (sh + 0.04, d["body2"])])
    else:
        body_col = d["body"]
    if d["kind"] in ("translucent", "casino"):
        body = N.bsdf(body_col, 0.04 if d["kind"] == "casino" else gloss * 0.3, 0.5,
                      **{"Transmission": 0.8, "IOR": 1.5})
    else:
        body = N.bsdf(body_col, gloss, 0.5, **{"Clearcoat": 0.3})
    paint = N.bsdf(d["pip"], 0.45, 0.3)
    mixed = N.n("ShaderNodeMixShader")
    N.put(mixed.inputs[0], mask)
    N.put(mixed.inputs[1], body.outputs[0])
    N.put(mixed.inputs[2], paint.outputs[0])
    normal = N.bump(mask, 0.5, 0.0004, invert=True)
    N.put(body.inputs["Normal"], normal)
    N.put(paint.inputs["Normal"], normal)
    N.put(N.out.inputs["Surface"], mixed.outputs[0])
    return mat


def plain_material(name: str, colour, rough=0.5, metal=0.0, spec=0.5, bump_scale=0.0):
    mat, N = new_material(name)
    sh = N.bsdf(colour, rough, spec, **{"Metallic": metal})
    normal = N.bump(N.noise(N.coords("Object"), bump_scale, 3, 0.6), 0.1, 0.0003) if bump_scale else None
    N.finish(sh, normal)
    return mat


def paper_material(name: str, kind: str, rng: random.Random, w: float, h: float):
    """Printed paper in object coordinates (metres, centred): 'label' (barcode and text-like
    lines), 'card' (a playing card, face up or face down)."""
    mat, N = new_material(name)
    co = N.coords("Object")
    sep = N.n("ShaderNodeSeparateXYZ", {"Vector": co}).outputs
    x, y = sep[0], sep[1]
    paper = hsv_linear(rng.uniform(0.1, 0.16), rng.uniform(0, 0.12), rng.uniform(0.8, 0.95))
    ink = (0.01, 0.01, 0.012)
    if kind == "label":
        # barcode: random bar widths from a 1-D noise across x, in the lower part
        bar_scale = rng.uniform(1500, 3000)
        bars = N.math("GREATER_THAN", N.noise(N.n("ShaderNodeCombineXYZ", {"X": N.math("MULTIPLY", x, bar_scale / 100),
                                                                          "Y": 0.37}).outputs[0], 100, 0, 0.5), 0.5)
        in_bar = N.math("MULTIPLY", N.math("LESS_THAN", N.math("ABSOLUTE", x), w * 0.4),
                        N.math("LESS_THAN", y, -h * 0.05))
        in_bar = N.math("MULTIPLY", in_bar, N.math("GREATER_THAN", y, -h * 0.42))
        mask = N.math("MULTIPLY", bars, in_bar)
        # text-like marks: lines of short dark dashes in the upper part
        line_h = rng.uniform(0.0025, 0.004)
        row = N.math("FLOOR", N.math("DIVIDE", y, line_h))
        in_line = N.math("LESS_THAN", N.math("FRACT", N.math("DIVIDE", y, line_h)), 0.62)
        word = N.math("GREATER_THAN", N.noise(N.n("ShaderNodeCombineXYZ", {"X": N.math("MULTIPLY", x, 400),
                                                                          "Y": N.math("MULTIPLY", row, 7.3)}).outputs[0],
                                               1.0, 1, 0.5), 0.47)
        in_text = N.math("MULTIPLY", N.math("LESS_THAN", N.math("ABSOLUTE", x), w * 0.42),
                         N.math("MULTIPLY", N.math("GREATER_THAN", y, h * 0.02), N.math("LESS_THAN", y, h * 0.42)))
        text = N.math("MULTIPLY", N.math("MULTIPLY", in_line, word), in_text)
        mask = N.math("MAXIMUM", mask, text)
        colour = N.mix(mask, paper, ink)
        if rng.random() < 0.4:  # a coloured band
            band = N.math("GREATER_THAN", y, h * 0.44)
            colour = N.mix(band, colour, random_colour(rng)[0])
    else:
        face_up = rng.random() < 0.6
        inner = N.math("MULTIPLY", N.math("LESS_THAN", N.math("ABSOLUTE", x), w * 0.42),
                       N.math("LESS_THAN", N.math("ABSOLUTE", y), h * 0.44))
        if face_up:
            suit = (0.5, 0.01, 0.02) if rng.random() < 0.5 else ink
            marks = N.math("LESS_THAN", N.voronoi(N.vmath("SCALE", co, rng.uniform(45, 80)), 1.0), rng.uniform(0.18, 0.3))
            marks = N.math("MULTIPLY", marks, N.math("MULTIPLY", N.math("LESS_THAN", N.math("ABSOLUTE", x), w * 0.3),
                                                       N.math("LESS_THAN", N.math("ABSOLUTE", y), h * 0.38)))
            corner = N.math("MULTIPLY", N.math("GREATER_THAN", N.math("ABSOLUTE", x), w * 0.36),
                            N.math("GREATER_THAN", N.math("ABSOLUTE", y), h * 0.33))
            corner = N.math("MULTIPLY", corner, N.math("GREATER_THAN", N.noise(N.vmath("SCALE", co, 900), 1.0, 1), 0.5))
            colour = N.mix(N.math("MAXIMUM", marks, corner), paper, suit)
        else:
            back = random_colour(rng)[0]
            sc = rng.uniform(150, 400)
            wv = N.n("ShaderNodeTexWave", {"Vector": N.vmath("SCALE", co, sc / 100), "Scale": 100},
                     wave_type="BANDS", bands_direction="DIAGONAL").outputs["Fac"]
            colour = N.mix(inner, paper, N.mix(N.math("GREATER_THAN", wv, 0.5), back, paper))
    N.finish(N.bsdf(colour, rng.uniform(0.3, 0.7), 0.4))
    return mat


# ---------------------------------------------------------------------------------------------
# building the scene
def build_camera(cam: dict, w: int, h: int):
    cd = bpy.data.cameras.new("camera")
    cd.lens = cam["focal_mm"]
    cd.sensor_width = 36.0
    cd.sensor_fit = "HORIZONTAL"
    cd.clip_start = 0.01
    cd.clip_end = 20
    obj = bpy.data.objects.new("camera", cd)
    link(obj)
    obj.matrix_world = Matrix.Translation(cam["location"]) @ cam["rotation"].to_4x4()
    bpy.context.scene.camera = obj
    if cam["defocus"]:
        d = cam["distance_m"]
        df = d * (1 + cam["focus_error"])
        f = cam["focal_mm"] / 1000
        coc_m = cam["defocus_coc_px"] * 0.036 / w  # on the sensor
        n = f * f * abs(d - df) / (d * (df - f) * coc_m)
        cd.dof.use_dof = True
        cd.dof.focus_distance = df
        cd.dof.aperture_fstop = max(0.9, n)
        cam["fstop"] = cd.dof.aperture_fstop
        cam["focus_distance_m"] = df
    return obj


def build_lights(L: dict, look: Vector):
    """Lights and world; power chosen so a white surface at the look-at point has the exposure asked."""
    target_E = math.pi * 0.85 * 2 ** L["ev"]  # irradiance for a white (albedo 1) surface to read 0.85
    out = []
    for i, lt in enumerate(L["lights"]):
        dirv = Vector((math.cos(lt["elevation"]) * math.cos(lt["azimuth"]), math.cos(lt["elevation"]) * math.sin(lt["azimuth"]),
                       math.sin(lt["elevation"])))
        pos = look + dirv * lt["distance"]
        aim = look + Vector((lt["aim"][0], lt["aim"][1], 0))
        to = (aim - pos).normalized()
        cos_i = max(0.15, dirv.z)
        E = target_E * lt["share"]
        r2 = lt["distance"] ** 2
        ld = bpy.data.lights.new(f"light{i}", lt["type"])
        if lt["type"] in ("POINT", "SPOT"):
            ld.energy = E * 4 * math.pi * r2 / cos_i
            ld.shadow_soft_size = lt["size"] if lt["type"] == "POINT" else lt["size"]
            if lt["type"] == "SPOT":
                ld.spot_size = math.radians(lt["spot_deg"])
                ld.spot_blend = 0.15
        else:
            ld.size = lt["size"]
            ld.shape = "RECTANGLE"
            ld.size_y = lt["size"] * 0.6
            ld.energy = E * math.pi * r2 / (0.75 * cos_i)
        rgb = blackbody(lt["temp_K"])
        m = max(rgb)
        ld.color = tuple(c / m for c in rgb)
        ld.energy *= m  # colour normalised to max 1: keep luminance
        ld.use_shadow = True
        obj = bpy.data.objects.new(f"light{i}", ld)
        link(obj)
        obj.matrix_world = Matrix.Translation(pos) @ to.to_track_quat("-Z", "Y").to_matrix().to_4x4()
        out.append({"type": lt["type"], "temp_K": round(lt["temp_K"]), "rgb_linear": [round(c, 4) for c in rgb],
                    "location": [round(c, 4) for c in pos], "power_W": round(ld.energy, 3), "size_m": round(lt["size"], 4),
                    "share": round(lt["share"], 3), **({"spot_deg": round(lt["spot_deg"], 1)} if lt["type"] == "SPOT" else {})})
    world = bpy.data.worlds.new("world")
    world.use_nodes = True
    bg = world.node_tree.nodes["Background"]
    sky = blackbody(L["sky_temp_K"])
    amb = target_E * L["ambient"] / math.pi
    bg.inputs["Color"].default_value = (*[c * amb for c in sky], 1.0)
    bg.inputs["Strength"].default_value = 1.0
    bpy.context.scene.world = world
    return out, {"sky_temp_K": round(L["sky_temp_K"]), "ambient_share": round(L["ambient"], 3)}


def white_balance(L: dict, lights_meta: list) -> tuple[list[float], list[float]]:
    """Camera white balance: gains that undo the light's colour by wb_alpha (1 = fully balanced)."""
    mix = [0.0, 0.0, 0.0]
    for lm in lights_meta:
        for k in range(3):
            mix[k] += lm["rgb_linear"][k] * lm["share"]
    sky = blackbody(L["sky_temp_K"])
    mix = [m * (1 - L["ambient"]) + s * L["ambient"] for m, s in zip(mix, sky, strict=True)]
    gains = [(1.0 / max(1e-3, c)) ** L["wb_alpha"] for c in mix]
    gains[0] *= 1 + L["tint"][0]
    gains[2] *= 1 + L["tint"][1]
    y = luminance([g * c for g, c in zip(gains, mix, strict=True)])
    gains = [g / y for g in gains]
    return gains, mix


def build_table(cloth: dict, cam: Camera, tray_z: float):
    """The table (a 4 m plane) and, for a tray, the tray's floor and walls. Returns wall boxes."""
    walls = []
    size = 2.5
    if cloth["family"] == "tray":
        outer_mat = cloth_material(cloth["outer"], "table")
        mesh_object("table", [(-size, -size, -tray_z), (size, -size, -tray_z), (size, size, -tray_z),
                              (-size, size, -tray_z)], [(0, 1, 2, 3)], outer_mat)
    else:
        mesh_object("table", [(-size, -size, 0), (size, -size, 0), (size, size, 0), (-size, size, 0)], [(0, 1, 2, 3)],
                    cloth_material(cloth, "table"))
    return walls


def tray_geometry(cloth: dict, cam: Camera, far: Vector) -> dict:
    """Inner rectangle of the tray (centre, axes, half sizes) sized from the view on the floor."""
    pts = [cam.on_plane(u, v, 0.0) for u, v in ((0.5, 0.5), (0, 0.5), (1, 0.5), (0.5, 0), (0.5, 1))]
    centre = pts[0]
    wx = (pts[2] - pts[1]).length / 2
    wy = (pts[4] - pts[3]).length / 2
    ang = math.atan2(far.x, far.y) * -1 + cloth["tray_rot"]
    ax = Vector((math.cos(ang), math.sin(ang), 0))
    ay = Vector((-math.sin(ang), math.cos(ang), 0))
    hx = max(0.06, wx * cloth["tray_scale"][0])
    hy = max(0.06, wy * cloth["tray_scale"][1])
    c = centre + ax * cloth["tray_shift"][0] * wx + ay * cloth["tray_shift"][1] * wy
    c.z = 0
    return {"centre": c, "ax": ax, "ay": ay, "hx": hx, "hy": hy, "wall_h": cloth["wall_h"], "wall_t": 0.012,
            "floor_t": 0.006}


def build_tray(tray: dict, cloth: dict):
    floor_mat = cloth_material({**cloth, "subtype": "tray"}, "tray_floor")
    wall_mat = plain_material("tray_wall", cloth["wall_colour"], 0.45, bump_scale=800)
    c, ax, ay = tray["centre"], tray["ax"], tray["ay"]
    hx, hy, t, wh, ft = tray["hx"], tray["hy"], tray["wall_t"], tray["wall_h"], tray["floor_t"]
    rot = Matrix((ax, ay, Vector((0, 0, 1)))).transposed()
    boxes = []

    def box(name, centre, half, mat):
        bm = bmesh.new()
        bmesh.ops.create_cube(bm, size=1.0)
        bmesh.ops.scale(bm, vec=Vector(half) * 2, verts=bm.verts)
        obj = bm_object(name, bm, mat)
        obj.matrix_world = Matrix.Translation(centre) @ rot.to_4x4()
        return Box(centre, rot, half)

    box("tray_floor", c + Vector((0, 0, -ft / 2)), (hx + t, hy + t, ft / 2), floor_mat)
    for k, (dx, dy, half) in enumerate([(hx + t / 2, 0, (t / 2, hy + t, wh / 2)), (-hx - t / 2, 0, (t / 2, hy + t, wh / 2)),
                                        (0, hy + t / 2, (hx + t, t / 2, wh / 2)), (0, -hy - t / 2, (hx + t, t / 2, wh / 2))]):
        centre = c + ax * dx + ay * dy + Vector((0, 0, wh / 2 - ft))
        b = box(f"tray_wall{k}", centre, half, wall_mat)
        b.inward = -(ax * dx + ay * dy).normalized()
        boxes.append(b)
    return boxes


def in_tray(tray, p, margin: float) -> bool:
    if tray is None:
        return True
    q = p - tray["centre"]
    return abs(q.dot(tray["ax"])) < tray["hx"] - margin and abs(q.dot(tray["ay"])) < tray["hy"] - margin


# ---------------------------------------------------------------------------------------------
# placing the dice
def place_dice(seed: int, forced: dict, dplan: dict, shapes: dict, cam: Camera, tray, walls: list, keepout: list,
               asked: dict) -> list:
    rng = stream(seed, "place")
    dice = dplan["dice"]
    n = len(dice)
    n_stacked = forced_num(forced, "stacked", rng, (1 if rng.random() < 0.12 else 0), integer=True)
    touching = forced_num(forced, "touching", rng, 1.0 if rng.random() < 0.35 else 0.0) >= 0.5
    n_tilted = forced_num(forced, "tilted", rng, (rng.randint(1, 2) if rng.random() < 0.25 else 0), integer=True)
    need = 2 * n_stacked + n_tilted + (2 if touching else 0)
    while n < need and "dice" not in forced:  # room for what was asked
        dice.append(dict(dice[-1], value=rng.randint(1, 6), yaw=rng.uniform(0, 6.283)))
        n += 1
    cluster = rng.random() < 0.5
    cu, cv = rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.7)
    spread = rng.uniform(0.1, 0.25)
    margin = rng.choice([0.0, 0.04, 0.08]) if rng.random() < 0.7 else -0.04
    placed: list[dict] = []

    def make(d, centre, rot):
        s = d["size_mm"] / 1000
        shape = shapes[d["kind"] == "casino"]
        return {**d, "size": s, "shape": shape, "centre": Vector(centre), "rot": rot,
                "box": Box(centre, rot, (s / 2, s / 2, s / 2)), "points": die_points(shape, s, centre, rot),
                "stacked": None, "leaning_on": None}

    def clear_of_all(cand, skip=(), grow=0.0008) -> bool:
        for o in placed:
            if o is cand or id(o) in skip:
                continue
            if dice_overlap(cand, o, grow):
                return False
        for w in walls:
            if any(w.contains(p, 0.00005) for p in cand["points"]):
                return False
        c2 = cand["centre"].xy
        for (kc, kr) in keepout:
            if (c2 - kc).length < kr + cand["size"] * 0.75:
                return False
        return in_tray(tray, cand["centre"], cand["size"] * 0.5) if tray else True

    def sample_xy(s):
        for k in range(80):
            if cluster and k < 40:
                u, v = rng.gauss(cu, spread), rng.gauss(cv, spread)
                if not (margin <= u <= 1 - margin and margin <= v <= 1 - margin):
                    continue
            else:
                u, v = rng.uniform(margin, 1 - margin), rng.uniform(margin, 1 - margin)
            p = cam.on_plane(u, v, s / 2)
            if p is not None and (tray is None or in_tray(tray, p, s * 0.6)):
                return p
        return None

    def free(d, grow=0.0008):
        s = d["size_mm"] / 1000
        for _ in range(120):
            p = sample_xy(s)
            if p is None:
                continue
            rot = Matrix.Rotation(d["yaw"], 3, "Z") @ rot_top(d["value"])
            cand = make(d, (p.x, p.y, s / 2), rot)
            if clear_of_all(cand, grow=grow):
                placed.append(cand)
                return cand
        return None

    def slide_to(anchor_box_test, d, rot, start: Vector, direction: Vector, z: float, lo=0.0, hi=0.08):
        """Move from start along -direction until the die no longer meets the anchor; returns the die."""
        def at(dist):
            c = start - direction * dist
            return make(d, (c.x, c.y, z), rot)
        if anchor_box_test(at(hi)):
            return None
        for _ in range(24):
            mid = (lo + hi) / 2
            if anchor_box_test(at(mid)):
                lo = mid
            else:
                hi = mid
        return at(hi + 0.0002)

    queue = list(range(n))
    # stacked pairs
    for _ in range(n_stacked):
        if len(queue) < 2:
            break
        low = free(dice[queue.pop(0)], grow=0.004)
        if low is None:
            continue
        d = dice[queue.pop(0)]
        s = d["size_mm"] / 1000
        off = Vector((rng.uniform(-0.12, 0.12) * s, rng.uniform(-0.12, 0.12) * s, 0))
        rot = Matrix.Rotation(d["yaw"], 3, "Z") @ rot_top(d["value"])
        z = low["size"] + s / 2 + 0.0001
        up = make(d, (low["centre"].x + off.x, low["centre"].y + off.y, z), rot)
        if clear_of_all(up, skip={id(low)}):
            up["stacked"] = "on"
            low["stacked"] = "under"
            up["on"] = low
            placed.append(up)
    # touching groups
    if touching:
        groups = rng.randint(1, 3)
        for _ in range(groups):
            spare = len(queue) - n_tilted  # the tilted dice are kept for later
            if spare < 2:
                break
            size = min(spare, rng.randint(2, 4))
            first = free(dice[queue.pop(0)], grow=0.02)
            if first is None:
                continue
            group = [first]
            aligned = rng.random() < 0.5
            for _ in range(size - 1):
                d = dice[queue.pop(0)]
                if aligned:
                    d["yaw"] = group[0]["yaw"] + rng.choice([0, math.pi / 2]) + rng.uniform(-0.08, 0.08)
                for _ in range(12):
                    anchor = rng.choice(group)
                    phi = rng.uniform(0, 2 * math.pi) if not aligned else \
                        anchor["yaw"] + rng.choice([0, 1, 2, 3]) * math.pi / 2 + rng.uniform(-0.3, 0.3)
                    direction = Vector((math.cos(phi), math.sin(phi), 0))
                    s = d["size_mm"] / 1000
                    rot = Matrix.Rotation(d["yaw"], 3, "Z") @ rot_top(d["value"])
                    start = anchor["centre"].copy()
                    start.z = s / 2
                    cand = slide_to(lambda c, a=anchor: dice_overlap(c, a), d, rot, start, -direction, s / 2)
                    if cand is not None and clear_of_all(cand, skip={id(anchor)}, grow=0.0):
                        placed.append(cand)
                        group.append(cand)
                        break
    # tilted dice: lean on a die standing flat, or on a tray wall
    for _ in range(n_tilted):
        if not queue:
            break
        d = dice[queue.pop(0)]
        s = d["size_mm"] / 1000
        flat = [o for o in placed if o["stacked"] is None and o["leaning_on"] is None]
        use_wall = walls and (not flat or rng.random() < 0.5)
        if not use_wall and not flat:
            sup_d = dict(d, value=rng.randint(1, 6), yaw=rng.uniform(0, 6.283))
            if len(queue) > 0:
                sup_d = dice[queue.pop(0)]
            sup = free(sup_d, grow=0.02)
            if sup is None:
                continue
            flat = [sup]
        theta = math.radians(rng.uniform(10, 35))
        for attempt in range(40):
            if attempt == 20 and walls and flat:
                use_wall = not use_wall
            if use_wall:
                wall = rng.choice(walls)
                direction = -wall.inward  # toward the wall
                q = sample_xy(s)
                if q is None:
                    continue
                # start inside the wall's face plane
                wall_face = wall.c + wall.inward * (min(wall.h.x, wall.h.y))
                start = q + direction * direction.dot(wall_face - q)
                def test(c, w=wall):
                    return any(w.contains(p) for p in c["points"])
                target = "wall"
            else:
                anchor = rng.choice(flat)
                phi = rng.uniform(0, 2 * math.pi)
                direction = Vector((math.cos(phi), math.sin(phi), 0))  # from the tilted die toward the anchor
                start = anchor["centre"].copy()
                def test(c, a=anchor):
                    return dice_overlap(c, a)
                target = anchor
            axis = Vector((0, 0, 1)).cross(direction).normalized()
            rot = Matrix.Rotation(theta, 3, axis) @ Matrix.Rotation(d["yaw"], 3, "Z") @ rot_top(d["value"])
            r = dplan["style"]["bevel"] * s
            zmin = min((rot @ (Vector(c) * (s / 2 - r))).z for c in
                       [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) - r
            z = -zmin + 0.0001
            cand = slide_to(test, d, rot, Vector((start.x, start.y, z)), direction, z)
            if cand is None:
                continue
            skip = {id(target)} if target != "wall" else set()
            if clear_of_all(cand, skip=skip, grow=0.0) and (tray is None or in_tray(tray, cand["centre"], -s)):
                cand["leaning_on"] = target
                placed.append(cand)
                break
    for i in queue:
        free(dice[i])
    asked.update(stacked=n_stacked, touching=int(touching), tilted=n_tilted)
    return placed


# ---------------------------------------------------------------------------------------------
# clutter and markers
def place_markers(seed: int, cam: Camera, far: Vector, z: float) -> list:
    rng = stream(seed, "markers")
    half = MARKER_M / 2 + MARKER_MARGIN_M
    yaw = math.atan2(-far.x, far.y)
    out = []
    for mid, (cu, cv) in MARKER_CORNER_UV.items():
        ang = yaw + rng.uniform(-0.08, 0.08)
        rot = Matrix.Rotation(ang, 3, "Z")
        placed = None
        for k in range(40):
            inset = 0.035 + k * 0.01
            u = inset if cu == 0 else 1 - inset
            v = inset if cv == 0 else 1 - inset
            p = cam.on_plane(u, v, z)
            if p is None:
                continue
            # move the marker's centre inwards so its whole paper is in view
            centre = p + rot @ Vector(((1 if cu == 0 else -1) * half, (1 if cv == 0 else -1) * half, 0))
            corners = [centre + rot @ Vector((sx * half, sy * half, 0)) for sx in (-1, 1) for sy in (-1, 1)]
            if all(0.005 < cam.uv(c)[0] < 0.995 and 0.005 < cam.uv(c)[1] < 0.995 for c in corners):
                placed = centre
                break
        if placed is None:
            return []  # the view is too small to hold the markers
        out.append({"id": mid, "centre": placed, "rot": rot, "half": half})
    # markers must not overlap one another
    for a in out:
        for b in out:
            if a is not b and (a["centre"] - b["centre"]).length < 2 * half * 1.2:
                return []
    return out


_MARKER_IMAGES: dict[int, object] = {}


def marker_image(mid: int):
    if mid in _MARKER_IMAGES:
        return _MARKER_IMAGES[mid]
    cell = 8  # pixels per marker cell; the margin is 15/13.33 cells = 9 pixels
    side = 6 * cell
    margin = round(MARKER_MARGIN_M / (MARKER_M / 6) * cell)
    n = side + 2 * margin
    bits = ARUCO_BITS[mid]

    def pixel(x, y):
        row = n - 1 - y  # image rows from the top
        if not (margin <= x < margin + side and margin <= row < margin + side):
            return (0.85, 0.85, 0.82)
        b = bits[(row - margin) // cell][(x - margin) // cell]
        return (0.85, 0.85, 0.82) if b == "1" else (0.02, 0.02, 0.02)

    img = image_from_rows(f"aruco{mid}", n, n, pixel)
    img.use_fake_user = True
    _MARKER_IMAGES[mid] = img
    return img


def build_markers(markers: list, z: float):
    for m in markers:
        mat, N = new_material(f"marker{m['id']}")
        tex = N.n("ShaderNodeTexImage", {"Vector": N.coords("UV")}, image=marker_image(m["id"]), interpolation="Closest")
        N.finish(N.bsdf(tex.outputs["Color"], 0.6, 0.3))
        h = m["half"]
        obj = mesh_object(f"marker{m['id']}", [(-h, -h, 0), (h, -h, 0), (h, h, 0), (-h, h, 0)], [(0, 1, 2, 3)], mat)
        uv = obj.data.uv_layers.new(name="UVMap")
        for loop, co in zip(uv.data, [(0, 0), (1, 0), (1, 1), (0, 1)], strict=True):
            loop.uv = co
        obj.matrix_world = Matrix.Translation(m["centre"] + Vector((0, 0, z + 0.0002))) @ m["rot"].to_4x4()


def dist_point_segment(p, a, b) -> float:
    ab = b - a
    t = max(0.0, min(1.0, (p - a).dot(ab) / max(ab.dot(ab), 1e-12)))
    return (p - (a + ab * t)).length


def place_clutter(seed: int, forced: dict, cam: Camera, dice: list, markers: list, z0: float, tray) -> tuple[list, str]:
    rng = stream(seed, "clutter")
    level = forced.get("clutter") or pick(rng, CLUTTER)
    count = {"none": 0, "some": rng.randint(1, 3), "heavy": rng.randint(4, 9)}[level]
    dice_c = [(d["centre"].xy, d["size"] * 0.8 + 0.002) for d in dice]
    taken = [(m["centre"].xy, m["half"] * 1.45) for m in markers]
    items = []
    kinds = ["cable", "coin", "card", "label", "pencil", "sticker", "cup"]
    weights = [0.2, 0.18, 0.14, 0.16, 0.12, 0.14, 0.06]
    for i in range(count):
        kind = rng.choices(kinds, weights)[0]
        for _ in range(60):
            u, v = rng.uniform(-0.1, 1.1), rng.uniform(-0.1, 1.1)
            p = cam.on_plane(u, v, z0)
            if p is None:
                continue
            ang = rng.uniform(0, 2 * math.pi)
            it = {"type": kind, "centre": p, "angle": ang, "index": i}
            if kind == "cable":
                pts = [p]
                heading = ang
                step = rng.uniform(0.03, 0.08)
                for _ in range(rng.randint(4, 8)):
                    heading += rng.uniform(-0.8, 0.8)
                    pts.append(pts[-1] + Vector((math.cos(heading), math.sin(heading), 0)) * step)
                it.update(points=pts, radius=rng.uniform(0.0015, 0.0035))
                segs = list(zip(pts[:-1], pts[1:], strict=True))
                if any(dist_point_segment(Vector((c.x, c.y, z0)), a, b) < r + it["radius"] for c, r in dice_c
                       for a, b in segs):
                    continue
                if any(dist_point_segment(Vector((c.x, c.y, z0)), a, b) < r for c, r in taken for a, b in segs):
                    continue
                samples = [a + (b - a) * (t / 6) for a, b in segs for t in range(7)]
                if any(dist_point_segment(q, a, b) < it["radius"] + o["radius"] + 0.004 for o in items
                       if o["type"] == "cable" for a, b in zip(o["points"][:-1], o["points"][1:], strict=True)
                       for q in samples):
                    continue  # cables do not cross (they would pass through one another)
                items.append(it)
                break
            if kind == "coin":
                it["radius"] = rng.uniform(0.008, 0.0135)
                foot = it["radius"]
            elif kind == "sticker":
                it["radius"] = rng.uniform(0.004, 0.01)
                foot = it["radius"]
            elif kind == "cup":
                it["radius"] = rng.uniform(0.03, 0.045)
                it["height"] = rng.uniform(0.07, 0.1)
                foot = it["radius"] + 0.004
            elif kind == "card":
                it["w"], it["h"] = 0.063, 0.088
                foot = 0.055
            elif kind == "label":
                it["w"], it["h"] = rng.uniform(0.04, 0.1), rng.uniform(0.025, 0.06)
                foot = math.hypot(it["w"], it["h"]) / 2
            else:  # pencil
                it["length"] = rng.uniform(0.1, 0.175)
                it["radius"] = 0.0036
                foot = None
            if foot is not None:
                c = p.xy
                if any((c - dc).length < foot + r for dc, r in dice_c) or any((c - tc).length < foot + r for tc, r in taken):
                    continue
                taken.append((c, foot))
            else:
                a = p - Vector((math.cos(ang), math.sin(ang), 0)) * it["length"] / 2
                b = p + Vector((math.cos(ang), math.sin(ang), 0)) * it["length"] / 2
                it["ends"] = (a, b)
                if any(dist_point_segment(Vector((c.x, c.y, z0)), a, b) < r + 0.004 for c, r in dice_c + taken):
                    continue
                for t in range(7):
                    taken.append(((a + (b - a) * (t / 6)).xy, 0.006))
            items.append(it)
            break
    return items, level


def build_clutter(items: list, seed: int, z0: float) -> list:
    rng = stream(seed, "clutter-look")
    meta = []
    for k, it in enumerate(items):
        kind = it["type"]
        p = it["centre"]
        info = {"type": kind, "centre": [round(c, 4) for c in p]}
        if kind == "cable":
            cu = bpy.data.curves.new(f"cable{k}", "CURVE")
            cu.dimensions = "3D"
            cu.bevel_depth = it["radius"]
            cu.bevel_resolution = 2
            sp = cu.splines.new("BEZIER")
            sp.bezier_points.add(len(it["points"]) - 1)
            for bp, q in zip(sp.bezier_points, it["points"], strict=True):
                bp.co = (q.x, q.y, z0 + it["radius"])
                bp.handle_left_type = bp.handle_right_type = "AUTO"
            obj = bpy.data.objects.new(f"cable{k}", cu)
            link(obj)
            col = rng.choice([(0.01, 0.01, 0.01), (0.8, 0.8, 0.8), (0.2, 0.2, 0.2), random_colour(rng)[0]])
            cu.materials.append(plain_material(f"cable{k}", col, rng.uniform(0.2, 0.6)))
            info.update(radius_m=it["radius"], points=[[round(c, 4) for c in q] for q in it["points"]])
        elif kind in ("coin", "sticker", "cup"):
            bm = bmesh.new()
            r = it["radius"]
            if kind == "cup":
                h = it["height"]
                bmesh.ops.create_cone(bm, cap_ends=True, cap_tris=False, segments=40, radius1=r * 0.8, radius2=r, depth=h)
                top = max(bm.faces, key=lambda f: f.calc_center_median().z)
                bmesh.ops.delete(bm, geom=[top], context="FACES_ONLY")
                bmesh.ops.translate(bm, vec=(0, 0, h / 2), verts=bm.verts)
                obj = bm_object(f"cup{k}", bm, plain_material(f"cup{k}", random_colour(rng)[0], rng.uniform(0.1, 0.5)),
                                smooth=True)
                obj.modifiers.new("wall", "SOLIDIFY").thickness = 0.003
                info.update(radius_m=r, height_m=h)
            else:
                h = rng.uniform(0.0015, 0.0022) if kind == "coin" else 0.0002
                bmesh.ops.create_cone(bm, cap_ends=True, cap_tris=False, segments=32, radius1=r, radius2=r, depth=h)
                bmesh.ops.translate(bm, vec=(0, 0, h / 2), verts=bm.verts)
                if kind == "coin":
                    metal = rng.choice([(0.9, 0.6, 0.25), (0.85, 0.85, 0.85), (0.8, 0.4, 0.25)])
                    mat = plain_material(f"coin{k}", metal, rng.uniform(0.2, 0.4), metal=1.0, bump_scale=600)
                else:
                    mat = plain_material(f"sticker{k}", rng.choice([(0.6, 0.01, 0.01), (0.85, 0.6, 0.01), (0.02, 0.3, 0.04),
                                                                    (0.01, 0.08, 0.5), (0.85, 0.85, 0.85),
                                                                    (0.85, 0.2, 0.01)]), 0.5)
                obj = bm_object(f"{kind}{k}", bm, mat)
                info.update(radius_m=r)
            obj.location = (p.x, p.y, z0)
        elif kind in ("card", "label"):
            w, h = it["w"], it["h"]
            mat = paper_material(f"{kind}{k}", kind, rng, w, h)
            obj = mesh_object(f"{kind}{k}", [(-w / 2, -h / 2, 0), (w / 2, -h / 2, 0), (w / 2, h / 2, 0), (-w / 2, h / 2, 0)],
                              [(0, 1, 2, 3)], mat)
            obj.location = (p.x, p.y, z0 + 0.0003 + 0.0002 * k)
            obj.rotation_euler = (0, 0, it["angle"])
            info.update(size_m=[w, h], angle_deg=round(math.degrees(it["angle"]), 1))
        else:  # pencil: hexagonal body and a cone tip
            a, b = it["ends"]
            r = it["radius"]
            L = it["length"]
            bm = bmesh.new()
            bmesh.ops.create_cone(bm, cap_ends=True, cap_tris=False, segments=6, radius1=r, radius2=r, depth=L * 0.9)
            body = bm_object(f"pencil{k}", bm, plain_material(f"pencil{k}", rng.choice(
                [(0.85, 0.55, 0.01), (0.5, 0.01, 0.01), (0.02, 0.2, 0.05), (0.01, 0.02, 0.2), (0.02, 0.02, 0.02)]), 0.35))
            bm = bmesh.new()
            bmesh.ops.create_cone(bm, cap_ends=True, cap_tris=False, segments=12, radius1=r * 0.95, radius2=0.0003,
                                  depth=L * 0.1)
            tip = bm_object(f"pencil_tip{k}", bm, plain_material(f"pencil_tip{k}", (0.6, 0.4, 0.2), 0.7))
            d = (b - a).normalized()
            rot = d.to_track_quat("Z", "Y").to_matrix().to_4x4()
            mid = (a + b) / 2
            body.matrix_world = Matrix.Translation((mid.x - d.x * L * 0.05, mid.y - d.y * L * 0.05, z0 + r * 0.87)) @ rot
            tip.matrix_world = Matrix.Translation((mid.x + d.x * L * 0.45, mid.y + d.y * L * 0.45, z0 + r * 0.87)) @ rot
            info.update(length_m=L, ends=[[round(c, 4) for c in a], [round(c, 4) for c in b]])
        meta.append(info)
    return meta


# ---------------------------------------------------------------------------------------------
# render settings and post-processing
_NOISE: dict[tuple[int, int], object] = {}


def noise_image(w: int, h: int):
    """Gaussian-like sensor noise (sum of uniforms, sd 1) per channel, made once per size."""
    if (w, h) in _NOISE:
        return _NOISE[(w, h)]
    rng = random.Random(12345)
    n = w * h
    raw = rng.randbytes(n * 3 * 2)
    buf = [0.0] * (n * 4)
    k = 0
    scale = 1.0 / (255.0 * math.sqrt(2 / 12))
    for i in range(n):
        j = i * 4
        buf[j] = (raw[k] + raw[k + 1] - 255) * scale
        buf[j + 1] = (raw[k + 2] + raw[k + 3] - 255) * scale
        buf[j + 2] = (raw[k + 4] + raw[k + 5] - 255) * scale
        buf[j + 3] = 1.0
        k += 6
    img = bpy.data.images.new("sensor_noise", w, h, alpha=False, float_buffer=True)
    img.colorspace_settings.name = "Non-Color"
    img.pixels.foreach_set(buf)
    img.use_fake_user = True
    _NOISE[(w, h)] = img
    return img


def render_settings(args, seed: int, L: dict, gains: list):
    sc = bpy.context.scene
    sc.render.engine = "CYCLES"
    cy = sc.cycles
    cy.device = "CPU"
    cy.samples = args.samples
    cy.use_adaptive_sampling = True
    cy.adaptive_threshold = 0.03
    cy.adaptive_min_samples = 0
    denoisers = [i.identifier for i in cy.bl_rna.properties["denoiser"].enum_items]
    cy.use_denoising = "OPENIMAGEDENOISE" in denoisers
    if cy.use_denoising:
        cy.denoiser = "OPENIMAGEDENOISE"
    cy.max_bounces = 4
    cy.diffuse_bounces = 1
    cy.glossy_bounces = 2
    cy.transmission_bounces = 4
    cy.transparent_max_bounces = 2
    cy.volume_bounces = 0
    cy.caustics_reflective = False
    cy.caustics_refractive = False
    cy.blur_glossy = 1.0
    cy.sample_clamp_direct = 8.0
    cy.sample_clamp_indirect = 0.5  # no fireflies from glossy floors at 16 samples
    cy.light_sampling_threshold = 0.01
    cy.seed = seed
    cy.use_auto_tile = True
    cy.tile_size = 256
    cy.filter_width = 1.5 if cy.use_denoising else 1.8
    sc.render.resolution_x = args.width
    sc.render.resolution_y = args.height
    sc.render.resolution_percentage = 100
    sc.render.threads_mode = "FIXED" if args.threads else "AUTO"
    if args.threads:
        sc.render.threads = args.threads
    sc.render.image_settings.file_format = "JPEG"
    sc.render.image_settings.quality = 90
    sc.render.image_settings.color_mode = "RGB"
    sc.render.use_compositing = True
    sc.render.dither_intensity = 1.0
    vs = sc.view_settings
    vs.view_transform = L["view_transform"]
    vs.look = "None"
    vs.exposure = 0.0 if L["view_transform"] == "Standard" else 0.6
    vs.gamma = 1.0
    vs.use_curve_mapping = True
    cm = vs.curve_mapping
    cm.white_level = tuple(1.0 / g for g in gains)
    cm.black_level = (0.0, 0.0, 0.0)
    cm.update()
    # compositor: sensor noise (added in scene-linear light, so dark parts get more of it)
    sc.use_nodes = True
    nt = sc.node_tree
    nt.nodes.clear()
    rl = nt.nodes.new("CompositorNodeRLayers")
    comp = nt.nodes.new("CompositorNodeComposite")
    last = rl.outputs["Image"]
    if L["noise"] > 0:
        img = nt.nodes.new("CompositorNodeImage")
        img.image = noise_image(args.width, args.height)
        tr = nt.nodes.new("CompositorNodeTranslate")
        tr.wrap_axis = "BOTH"
        tr.inputs["X"].default_value = L["noise_offset"][0] % args.width
        tr.inputs["Y"].default_value = L["noise_offset"][1] % args.height
        nt.links.new(img.outputs["Image"], tr.inputs["Image"])
        # noise grows with the square root of the signal, with a floor (read noise)
        sq = nt.nodes.new("CompositorNodeMath")
        sq.operation = "POWER"
        bw = nt.nodes.new("CompositorNodeRGBToBW")
        nt.links.new(last, bw.inputs[0])
        nt.links.new(bw.outputs[0], sq.inputs[0])
        sq.inputs[1].default_value = 0.5
        amp = nt.nodes.new("CompositorNodeMath")
        amp.operation = "MULTIPLY_ADD"
        nt.links.new(sq.outputs[0], amp.inputs[0])
        amp.inputs[1].default_value = L["noise"]
        amp.inputs[2].default_value = L["noise"] * 0.15
        mul = nt.nodes.new("CompositorNodeMixRGB")
        mul.blend_type = "MULTIPLY"
        mul.inputs["Fac"].default_value = 1.0
        nt.links.new(tr.outputs["Image"], mul.inputs[1])
        nt.links.new(amp.outputs[0], mul.inputs[2])
        add = nt.nodes.new("CompositorNodeMixRGB")
        add.blend_type = "ADD"
        add.inputs["Fac"].default_value = 1.0
        nt.links.new(last, add.inputs[1])
        nt.links.new(mul.outputs["Image"], add.inputs[2])
        last = add.outputs["Image"]
    nt.links.new(last, comp.inputs["Image"])


# ---------------------------------------------------------------------------------------------
# labels
def label_dice(dice: list, cam_obj, w: int, h: int) -> None:
    sc = bpy.context.scene
    dg = bpy.context.evaluated_depsgraph_get()
    origin = cam_obj.matrix_world.translation

    def seen(obj_name: str, target: Vector, tol: float) -> bool:
        d = target - origin
        hit, loc, _n, _i, obj, _m = sc.ray_cast(dg, origin, d.normalized(), distance=d.length + 0.01)
        return bool(hit) and obj is not None and obj.name == obj_name and (loc - target).length < tol

    for d in dice:
        s, rot, c = d["size"], d["rot"], d["centre"]
        value, n_local = top_value(rot)
        d["value"] = value
        normal = rot @ n_local
        top_c = c + normal * (s / 2)
        axes = [Vector(a) for a in ((1, 0, 0), (0, 1, 0), (0, 0, 1)) if abs(Vector(a).dot(n_local)) < 0.5]
        # the top face as seen: out to where the rounded edges turn down (the corners are round)
        half = s * (0.5 - 0.29 * d["shape"].bevel)
        ea, eb = rot @ axes[0] * half, rot @ axes[1] * half
        quad3 = [top_c + ea + eb, top_c - ea + eb, top_c - ea - eb, top_c + ea - eb]
        pv = world_to_camera_view(sc, cam_obj, top_c)
        centre_px = (pv.x * w, (1 - pv.y) * h)
        quad = []
        for q in quad3:
            v = world_to_camera_view(sc, cam_obj, q)
            quad.append((v.x * w, (1 - v.y) * h))
        in_frame = 0 <= pv.x <= 1 and 0 <= pv.y <= 1 and pv.z > 0
        vis = in_frame and seen(d["name"], top_c, 0.15 * s)
        # share of the top face seen (5 x 5 points)
        hits = 0
        for i in range(5):
            for j in range(5):
                a, b = (i - 2) / 2.4, (j - 2) / 2.4
                p = top_c + ea * a + eb * b
                pp = world_to_camera_view(sc, cam_obj, p)
                if 0 <= pp.x <= 1 and 0 <= pp.y <= 1 and seen(d["name"], p, 0.1 * s):
                    hits += 1
        xs = [min(max(x, 0.0), w) for x, _ in quad]
        ys = [min(max(y, 0.0), h) for _, y in quad]
        d.update(visible=bool(vis), reason="seen" if vis else ("out of frame" if not in_frame else "hidden"),
                 top_normal=normal, tilt_deg=math.degrees(math.acos(max(-1.0, min(1.0, normal.z)))),
                 centre_px=centre_px, quad_px=quad, box_px=(min(xs), min(ys), max(xs), max(ys)),
                 visible_fraction=hits / 25)


def touching_pairs(dice: list) -> None:
    for d in dice:
        d["touching_with"] = []
    for i, a in enumerate(dice):
        for j in range(i + 1, len(dice)):
            b = dice[j]
            if dice_overlap(a, b, 0.0007):
                a["touching_with"].append(j)
                b["touching_with"].append(i)


def r4(x):
    if isinstance(x, (list, tuple, Vector)):
        return [r4(v) for v in x]
    if isinstance(x, float):
        return round(x, 4)
    return x


# ---------------------------------------------------------------------------------------------
# one scene
def render_scene(args, seed: int, out: Path) -> tuple[list[dict], dict]:
    t0 = time.perf_counter()
    forced = args.forced
    w, h = args.width, args.height
    name = f"s{seed:06d}"
    clear_scene()
    dplan = plan_dice(seed, forced)
    mrng = stream(seed, "markers-on")
    markers_on = forced_num(forced, "markers", mrng, 1.0 if mrng.random() < 0.3 else 0.0) >= 0.5
    camp = plan_camera(seed, forced, dplan["mean_mm"], markers_on, w, h)
    cam = Camera(camp["location"], camp["rotation"], camp["focal_mm"], w, h)
    cloth = plan_cloth(seed, forced)
    L = plan_light(seed, forced)
    tray = tray_geometry(cloth, cam, camp["far"]) if cloth["family"] == "tray" else None
    walls = build_tray(tray, cloth) if tray else []
    build_table(cloth, cam, tray["floor_t"] if tray else 0.0)
    markers = place_markers(seed, cam, camp["far"], 0.0) if markers_on else []
    if tray:  # markers lie on the table outside the tray: only where the tray leaves room
        markers = [m for m in markers if not in_tray(tray, m["centre"], -m["half"] * 1.5 - tray["wall_t"])]
        if len(markers) < 4:
            markers = []
    keepout = [(m["centre"].xy, m["half"] * 1.42) for m in markers]
    style = dplan["style"]
    shapes = {False: DieShape(style["bevel"]), True: DieShape(0.025)}
    asked: dict = {}
    placed = place_dice(seed, forced, dplan, shapes, cam, tray, walls, keepout, asked)
    atlas = pip_atlas("pips", style["pip_offset"] * (0.5 - style["bevel"]), style["pip_radius"] * (0.5 - style["bevel"]),
                      big_one=style["big_one"])
    atlas_casino = pip_atlas("pips_casino", 0.3, 0.085)
    for k, d in enumerate(placed):
        d["name"] = f"die{k:02d}"
        mat = die_material(d, atlas_casino if d["kind"] == "casino" else atlas, style["gloss"], d["name"])
        me = d["shape"].mesh.copy()
        me.materials.append(mat)
        obj = bpy.data.objects.new(d["name"], me)
        link(obj)
        obj.matrix_world = Matrix.Translation(d["centre"]) @ d["rot"].to_4x4() @ Matrix.Scale(d["size"], 4)
    build_markers(markers, -tray["floor_t"] if tray else 0.0)
    citems, clutter_level = place_clutter(seed, forced, cam, placed, markers, 0.0, tray)
    if tray:  # clutter only inside the tray or outside it entirely
        citems = [c for c in citems if c["type"] in ("coin", "sticker", "cable") and in_tray(tray, c["centre"], 0.02)]
    clutter_meta = build_clutter(citems, seed, 0.0)
    cam_obj = build_camera(camp, w, h)
    lights_meta, world_meta = build_lights(L, camp["look_at"])
    gains, light_mix = white_balance(L, lights_meta)
    render_settings(args, seed, L, gains)
    bpy.context.view_layer.update()
    touching_pairs(placed)
    label_dice(placed, cam_obj, w, h)
    for m in markers:
        m["corners_px"] = []
        for sx, sy in ((-1, 1), (1, 1), (1, -1), (-1, -1)):  # TL, TR, BR, BL of the printed marker
            p = m["centre"] + m["rot"] @ Vector((sx * MARKER_M / 2, sy * MARKER_M / 2, 0))
            v = world_to_camera_view(bpy.context.scene, cam_obj, p)
            m["corners_px"].append((v.x * w, (1 - v.y) * h))
    t_build = time.perf_counter() - t0
    sc = bpy.context.scene
    sc.render.filepath = str(out / "images" / f"{name}.jpg")
    sc.render.use_file_extension = False
    t1 = time.perf_counter()
    bpy.ops.render.render(write_still=True)
    t_render = time.perf_counter() - t1

    vis = [d for d in placed if d["visible"]]
    factors = {"cloth": f"{cloth['family']}/{cloth['subtype']}", "tilt": round(camp["tilt_deg"]),
               "px": round(camp["die_px_target"]), "light": L["kind"], "cast": int(L["cast"]), "clutter": clutter_level,
               "touching": int(any(d["touching_with"] for d in placed)),
               "tilted": sum(1 for d in placed if d["leaning_on"] is not None),
               "stacked": sum(1 for d in placed if d["stacked"] == "on"), "markers": int(bool(markers)),
               "defocus": int(camp["defocus"]), "dice": len(placed)}
    factor_text = ";".join(f"{k}={v}" for k, v in factors.items())
    rows = []
    lines = []
    for d in vis:
        x0, y0, x1, y1 = d["box_px"]
        if x1 - x0 < 1 or y1 - y0 < 1:
            continue
        rows.append({"image": f"images/{name}.jpg", "xmin": f"{x0:.1f}", "ymin": f"{y0:.1f}", "xmax": f"{x1:.1f}",
                     "ymax": f"{y1:.1f}", "value": d["value"], "upstream_split": args.split, "color": d["color"],
                     "visible": 1, "factors": factor_text})
        lines.append(f"{d['value'] - 1} {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} {(x1 - x0) / w:.6f} {(y1 - y0) / h:.6f}")
    (out / "labels" / f"{name}.txt").write_text("".join(line + "\n" for line in lines))

    def die_meta(k, d):
        return {"index": k, "name": d["name"], "value": d["value"], "color": d["color"], "colour_class": d["colour_class"],
                "kind": d["kind"], "body_rgb_linear": r4(d["body"]), "pip_rgb_linear": r4(d["pip"]),
                **({"body2_rgb_linear": r4(d["body2"])} if "body2" in d else {}),
                "size_mm": round(d["size_mm"], 2), "centre_m": r4(d["centre"]), "rotation": r4([list(r) for r in d["rot"]]),
                "top_normal": r4(d["top_normal"]), "tilt_deg": round(d["tilt_deg"], 2), "tilted": d["tilt_deg"] > 3,
                "leaning_on": (None if d["leaning_on"] is None else
                               ("wall" if d["leaning_on"] == "wall" else placed.index(d["leaning_on"]))),
                "stacked": d["stacked"], "touching": bool(d["touching_with"]), "touching_with": d["touching_with"],
                "visible": d["visible"], "why": d["reason"], "visible_fraction": d["visible_fraction"],
                "centre_px": r4(d["centre_px"]), "quad_px": r4(d["quad_px"]), "box_px": r4(d["box_px"]),
                "in_annotations": d["visible"] and (d["box_px"][2] - d["box_px"][0]) >= 1}

    meta = {
        "name": name, "seed": seed, "image": f"images/{name}.jpg", "width": w, "height": h, "split": args.split,
        "factors": factors, "forced": forced, "asked": asked,
        "camera": {"height_m": round(camp["height_m"], 4), "tilt_deg": round(camp["tilt_deg"], 2),
                   "yaw_deg": round(camp["yaw_deg"], 2), "roll_deg": round(camp["roll_deg"], 2),
                   "focal_mm": round(camp["focal_mm"], 2), "focal_35mm_equiv_mm": round(camp["focal_mm"], 2),
                   "sensor_width_mm": 36.0, "distance_m": round(camp["distance_m"], 4),
                   "die_px_at_centre": round(camp["die_px_target"], 1), "location_m": r4(camp["location"]),
                   "look_at_m": r4(camp["look_at"]), "matrix_world": r4([list(r) for r in cam_obj.matrix_world]),
                   "defocus": ({"fstop": round(camp["fstop"], 2), "focus_distance_m": round(camp["focus_distance_m"], 4),
                                "coc_px": round(camp["defocus_coc_px"], 2)} if camp["defocus"] else None)},
        "cloth": {"family": cloth["family"], "subtype": cloth["subtype"], "colours_linear": r4(cloth["colours"]),
                  "colour_names": cloth["colour_names"], "speck_mm": round(cloth["speck_mm"], 2),
                  "pattern_mm": round(cloth["scale_mm"], 2),
                  **({"tray": {"inner_half_m": r4([tray["hx"], tray["hy"]]), "centre_m": r4(tray["centre"]),
                               "wall_height_m": round(tray["wall_h"], 4), "floor": cloth["tray_kind"],
                               "outside": f"{cloth['outer']['family']}/{cloth['outer']['subtype']}"}} if tray else {})},
        "dice_set": {"mode": dplan["mode"], "bevel": round(style["bevel"], 3), "pip_offset": round(style["pip_offset"], 3),
                     "pip_radius": round(style["pip_radius"], 3), "big_one": round(style["big_one"], 2)},
        "dice": [die_meta(k, d) for k, d in enumerate(placed)],
        "clutter": {"level": clutter_level, "items": clutter_meta},
        "light": {"kind": L["kind"], "lights": lights_meta, "world": world_meta, "exposure_ev": round(L["ev"], 3),
                  "light_colour_linear": r4(light_mix), "colour_cast": L["cast"],
                  "white_balance": {"correction": round(L["wb_alpha"], 3), "gains_rgb": r4(gains)},
                  "sensor_noise_sd": round(L["noise"], 4), "view_transform": L["view_transform"]},
        "markers": [{"id": m["id"], "centre_m": r4(m["centre"]), "corners_px": r4(m["corners_px"]),
                     "order": "top-left, top-right, bottom-right, bottom-left of the printed marker"} for m in markers],
        "render": {"samples": args.samples, "denoiser": bpy.context.scene.cycles.use_denoising,
                   "build_s": round(t_build, 2), "render_s": round(t_render, 2),
                   "total_s": round(time.perf_counter() - t0, 2), "blender": bpy.app.version_string},
    }
    (out / "meta" / f"{name}.json").write_text(json.dumps(meta, indent=1))
    return rows, meta


CSV_FIELDS = ["image", "xmin", "ymin", "xmax", "ymax", "value", "upstream_split", "color", "visible", "factors"]


def rows_from_meta(meta: dict, split: str) -> list[dict]:
    factor_text = ";".join(f"{k}={v}" for k, v in meta["factors"].items())
    out = []
    for d in meta["dice"]:
        if d["in_annotations"]:
            x0, y0, x1, y1 = d["box_px"]
            out.append({"image": meta["image"], "xmin": f"{x0:.1f}", "ymin": f"{y0:.1f}", "xmax": f"{x1:.1f}",
                        "ymax": f"{y1:.1f}", "value": d["value"], "upstream_split": split, "color": d["color"],
                        "visible": 1, "factors": factor_text})
    return out


def write_csv(out: Path, rows: list[dict]) -> None:
    tmp = out / "annotations.csv.tmp"
    with open(tmp, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        wr.writeheader()
        wr.writerows(rows)
    os.replace(tmp, out / "annotations.csv")


def main() -> int:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    args = parse_args(argv)
    out = args.out
    for sub in ("images", "labels", "meta"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    # scenes other runs wrote into DIR stay in annotations.csv: a bench set can be rendered as
    # several runs, each forcing other factors, into one folder
    mine = {f"s{args.seed + i:06d}" for i in range(args.count)}
    all_rows: list[dict] = []
    for mp in sorted((out / "meta").glob("s*.json")):
        if mp.stem not in mine and (out / "images" / f"{mp.stem}.jpg").exists():
            earlier = json.loads(mp.read_text())
            all_rows += rows_from_meta(earlier, earlier.get("split", args.split))
    times = []
    for i in range(args.count):
        seed = args.seed + i
        name = f"s{seed:06d}"
        mp = out / "meta" / f"{name}.json"
        if args.resume and mp.exists() and (out / "images" / f"{name}.jpg").exists():
            all_rows += rows_from_meta(json.loads(mp.read_text()), args.split)
            continue
        rows, meta = render_scene(args, seed, out)
        all_rows += rows
        times.append(meta["render"]["total_s"])
        write_csv(out, all_rows)
        n_vis = len(rows)
        print(f"[dice_scenes] {name}: {len(meta['dice'])} dice, {n_vis} labelled, {meta['factors']['cloth']}, "
              f"light {meta['light']['kind']}, clutter {meta['clutter']['level']}, "
              f"{meta['render']['render_s']:.1f} s render + {meta['render']['build_s']:.1f} s build", flush=True)
        if n_vis == 0:
            print(f"[dice_scenes] note: {name} has no visible die: it has an empty label file and no annotations.csv row",
                  flush=True)
    write_csv(out, all_rows)
    if times:
        print(f"[dice_scenes] {len(times)} scenes, {sum(times) / len(times):.1f} s per scene "
              f"({args.width}x{args.height}, {args.samples} samples)", flush=True)
    return 0


def run(main_fn) -> None:
    """Run a generator's main in Blender and leave with its exit status: Blender would otherwise
    carry on (and exit 0) after a Python error, and its own shutdown is slow."""
    try:
        code = main_fn()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (print(e.code, file=sys.stderr) or 2)
    except Exception:
        import traceback
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    run(main)
