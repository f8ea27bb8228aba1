"""Train the cup finder (``models/cup-finder.onnx``, read by ``companion/vision/cups/net.py``) on
rendered 21 Exact tables (``tools/render/cup_scenes.py``) and export it to ONNX. Not imported at
runtime; run in a throwaway venv with torch (see ``models/cup-finder.md``)::

    /tmp/trainenv/bin/python -m tools.train.train_cups --scenes /tmp/cups_train_50000 /tmp/cups_train_60000 \
        --minutes 20 [--steps N] [--device cuda]

Each scene is seen as the product sees a photo: the project's own marker detection and table
measurement (``companion.vision.cups.discover.measure_table``) give the homography, and the frame
is warped to the top view of :mod:`companion.vision.cups.net`. The labels (every cup place's
state, colour and ball, the tally cups) come from the scene's ``meta/NAME.json`` and are carried
into that view through the same homography; a scene whose markers the project does not find is
left out (the product cannot read it either). Windows of the view are flipped, turned by right
angles, scaled ±15 %, and given other light, noise, blur and JPEG loss.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn

from companion.vision.calibrate import CalibrationError, calibrate
from companion.vision.cups.discover import measure_table
from companion.vision.cups.net import KINDS, MODELS, STRIDE, top_view, view_matrix
from companion.vision.layout import Layout
from tools.train.train_dice import conv, focal, jpeg, schedule

WIN = 192                # training window (view pixels: 768 mm)
SIGMA = 1.0              # heat spot's spread (cells)
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}


class CupNet(nn.Module):
    """Top view → len(KINDS) heat maps at stride 4. Three levels (stride 4, 8, 16: a cup and
    the table round it at the coarsest), each coarser one added back to the finer."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2 = conv(3, 24, 4, 4), conv(24, 24)
        self.c3, self.c4 = conv(24, 48, 3, 2), conv(48, 48)
        self.c5, self.c6, self.c7 = conv(48, 64, 3, 2), conv(64, 64), conv(64, 64)
        self.p16, self.p8 = nn.Conv2d(64, 48, 1, bias=False), nn.Conv2d(48, 24, 1, bias=False)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.c8, self.c9 = conv(48, 48), conv(24, 24)
        self.head = nn.Conv2d(24, len(KINDS), 3, padding=1)
        self.head.bias.data.fill_(-4.0)   # few cells hold a cup: start from "nothing here"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.c2(self.c1(x))
        b = self.c4(self.c3(a))
        c = self.c7(self.c6(self.c5(b)))
        b = self.c8(b + self.up(self.p16(c)))
        return self.head(self.c9(a + self.up(self.p8(b))))


def calibrated(frame: np.ndarray | None, focal: float):
    """(frame, calibration, table width, depth) as the product calibrates a photo (its markers
    measure the table), or None where it finds no table."""
    if frame is None:
        return None
    try:
        w, h = measure_table(frame)
        return frame, calibrate(frame, Layout(table_w=w, table_h=h), focal=focal), w, h
    except CalibrationError:
        return None


def scene_view(folder: Path, meta: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(top view, things (N, 3): u, v in view pixels and kind index, ignore (M, 2)) of one scene,
    or None where the project finds no table in it."""
    got = calibrated(cv2.imread(str(folder / meta["image"])), float(meta["camera"]["fx_px"]))
    if got is None:
        return None
    frame, cal, w, h = got
    view = top_view(frame, cal.homography, w, h)
    to_view = np.linalg.inv(view_matrix(cal.homography))
    things, ignore = [], []

    def put(px: list[float], kind: tuple[str, str] | None, seen: float) -> None:
        p = cv2.perspectiveTransform(np.array([[px]], np.float64), to_view)[0, 0]
        if kind is None or seen < 0.4:   # mostly hidden or out of the frame: neither taught nor punished
            ignore.append(p)
        else:
            things.append((p[0], p[1], KIND_INDEX[kind]))

    for c in meta["cups"] + meta.get("tally_cups", []):
        seen = float(c.get("visible_fraction") or 0.0) if c.get("in_frame", True) else 0.0
        if c["state"] == "standing":
            cup = "silver" if c["colour"] == "silver" else c["colour"]
            put(c["rim_centre_px"], ("standing", cup), seen)
            if c.get("ball"):
                put(c["rim_centre_px"], ("ball", ""), seen if c["ball"].get("visible_fraction", 1) > 0.05 else 0)
        elif c["state"] == "turned":
            centre = (c.get("top_ellipse_px") or {}).get("centre", c["rim_centre_px"])
            put(centre, ("turned", c["colour"]) if c["colour"] != "silver" else None, seen)
    return view, np.array(things, np.float64).reshape(-1, 3), np.array(ignore, np.float64).reshape(-1, 2)


def drawn_table(seed: int):
    """A table drawn by the project's own renderer (companion.sim.render, as ``companion bench
    tables`` draws them: any size, cups and light): (frame, calibration, width, depth, layout,
    scene, renderer), or None where the project finds no table in it."""
    import random

    from companion.bench.tables import random_layout, random_table
    from companion.sim.render import Renderer, random_look

    rng = random.Random(seed)
    layout = random_layout(rng)
    scene, _ = random_table(rng, layout)
    renderer = Renderer(random_look(rng), layout, seed)
    got = calibrated(renderer.frame(scene), float(renderer.camera.K[0, 0]))
    return None if got is None else (*got, layout, scene, renderer)


def drawn_view(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A drawn table (:func:`drawn_table`) labelled from its scene: flat-shaded, but other shapes,
    sizes and colours than the Blender cups."""
    got = drawn_table(seed)
    if got is None:
        return None
    frame, cal, w, h, layout, scene, renderer = got
    to_view = np.linalg.inv(view_matrix(cal.homography))
    things = []
    with_ball = {b.in_cup for b in scene.balls if b.in_cup is not None}
    for c in scene.cups:
        px = renderer.camera.project(np.array([[c.x, c.y, layout.cup_h]]))
        u, v = cv2.perspectiveTransform(px[None], to_view)[0, 0]
        things.append((u, v, KIND_INDEX[("standing" if c.upright else "turned", c.cup)]))
        if c in with_ball:
            things.append((u, v, KIND_INDEX[("ball", "")]))
    return top_view(frame, cal.homography, w, h), np.array(things, np.float64).reshape(-1, 3), np.zeros((0, 2))


def load(folders: list[Path], split: str | None = None) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, str]]:
    out = []
    for folder in folders:
        for path in sorted((folder / "meta").glob("*.json")):
            meta = json.loads(path.read_text())
            if split and meta.get("split") != split:
                continue
            got = scene_view(folder, meta)
            if got is None:
                print(f"  {folder.name}/{path.stem}: no table found, left out")
                continue
            out.append((*got, f"{folder.name}/{path.stem}"))
    return out


def photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Other light and another camera, keeping every colour its colour: level, contrast, gamma,
    a mild cast (the product balances the light by the markers' white), noise, blur, JPEG."""
    x = img.astype(np.float32) / 255.0
    x = x ** rng.uniform(0.75, 1.35)
    x = x * rng.uniform(0.55, 1.35) * rng.uniform(0.9, 1.1, 3)[None, None, :]
    x = (x - x.mean()) * rng.uniform(0.75, 1.25) + x.mean()
    if rng.random() < 0.5:
        x = x + rng.normal(0, rng.uniform(0.005, 0.03), x.shape)
    out = np.clip(x * 255, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.5, 1.3))
    if rng.random() < 0.3:
        out = jpeg(out, int(rng.integers(35, 90)))
    return out


def window(item, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A WIN × WIN window of a scene's view, turned, flipped and scaled, with its heat maps and
    the mask of cells that count."""
    view, things, ignore, _ = item
    s = rng.uniform(0.87, 1.15)
    angle = 90.0 * int(rng.integers(0, 4))
    flip = rng.random() < 0.5
    # a window centred on a cup two times in three, else anywhere on the view
    if len(things) and rng.random() < 0.67:
        cx, cy = things[int(rng.integers(0, len(things))), :2] + rng.uniform(-60, 60, 2)
    else:
        cx, cy = rng.uniform(0, view.shape[1]), rng.uniform(0, view.shape[0])
    A = cv2.getRotationMatrix2D((float(cx), float(cy)), angle, s)
    A[:, 2] += (WIN / 2 - cx, WIN / 2 - cy)
    if flip:
        A = np.array([[-1, 0, WIN - 1], [0, 1, 0]], np.float64) @ np.vstack([A, [0, 0, 1]])
    img = cv2.warpAffine(view, A, (WIN, WIN), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    img = photometric(img, rng)
    n = WIN // STRIDE
    heat = np.zeros((len(KINDS), n, n), np.float32)
    mask = np.ones((len(KINDS), n, n), np.float32)
    yy, xx = np.mgrid[0:n, 0:n]

    def cells(pts: np.ndarray) -> np.ndarray:
        p = pts @ A[:, :2].T + A[:, 2]
        return (p - (STRIDE / 2 - 0.5)) / STRIDE

    if len(things):
        for (u, v), k in zip(cells(things[:, :2]), things[:, 2].astype(int), strict=True):
            if not (-2 <= u < n + 2 and -2 <= v < n + 2):
                continue
            g = np.exp(-((xx - u) ** 2 + (yy - v) ** 2) / (2 * SIGMA ** 2))
            iu, iv = int(round(u)), int(round(v))
            if 0 <= iu < n and 0 <= iv < n:
                g[iv, iu] = 1.0
            heat[k] = np.maximum(heat[k], g)
    if len(ignore):
        for u, v in cells(ignore):
            mask[:, (np.hypot(xx - u, yy - v) < 2.5)] = 0.0
    # cells outside the view (black borders) teach nothing either way
    inside = cv2.warpAffine(np.ones(view.shape[:2], np.uint8), A, (WIN, WIN), flags=cv2.INTER_NEAREST)
    mask *= cv2.resize(inside, (n, n), interpolation=cv2.INTER_AREA)[None] > 0
    heat *= mask
    return img, heat, mask


def batch(data, rng: np.random.Generator, size: int):
    imgs, heats, masks = zip(*(window(data[int(rng.integers(0, len(data)))], rng) for _ in range(size)), strict=True)
    x = torch.from_numpy(np.stack(imgs).astype(np.float32) / 255.0).permute(0, 3, 1, 2).contiguous()
    return x, torch.from_numpy(np.stack(heats)), torch.from_numpy(np.stack(masks))


def masked_focal(logit: torch.Tensor, heat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # cells masked out: as if predicted exactly (no loss)
    return focal(logit * mask + (1 - mask) * torch.where(heat > 0.5, 20.0, -20.0), heat)


def train(data, minutes: float, steps: int | None, size: int, seed: int, device: str, lr: float = 3e-3,
          init: Path | None = None) -> CupNet:
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    net = CupNet()
    if init is not None:   # go on from an earlier run (its .pt beside its ONNX)
        net.load_state_dict(torch.load(init))
    net = net.to(device)
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    t0 = time.time()
    step = 0
    for step in schedule(opt, lr, minutes, steps):
        x, heat, mask = (t.to(device) for t in batch(data, rng, size))
        loss = masked_focal(net(x), heat, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(f"step {step} {time.time() - t0:.0f}s loss {loss.item():.3f}", flush=True)
    print(f"{step} steps of {size} windows in {time.time() - t0:.0f} s (--steps {step} repeats it)", flush=True)
    return net.cpu()


def export(net: nn.Module, out: Path) -> None:
    net.eval()
    torch.onnx.export(net, torch.zeros(1, 3, 96, 128), str(out), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {2: "h", 3: "w"}, "y": {2: "h4", 3: "w4"}}, opset_version=13, dynamo=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", nargs="+", type=Path, required=True, help="folders of rendered cup scenes")
    ap.add_argument("--drawn", type=int, default=0, help="also this many tables drawn by companion.sim.render")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--steps", type=int, help="a fixed number of steps (the same run on any machine)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--out", type=Path, default=MODELS / "cup-finder.onnx")
    ap.add_argument("--init", type=Path, help="weights (.pt) of an earlier run to go on from")
    ap.add_argument("--lr", type=float, default=3e-3)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    cv2.setNumThreads(1)
    t0 = time.time()
    data = load(a.scenes)
    rendered = len(data)
    for k in range(a.drawn):
        got = drawn_view(900000 + k)
        if got is not None:
            data.append((*got, f"drawn/{900000 + k}"))
    print(f"{rendered} rendered and {len(data) - rendered} drawn tables", flush=True)
    print(f"{len(data)} scenes, {sum(len(d[1]) for d in data)} cups and balls, read in {time.time() - t0:.0f} s",
          flush=True)
    net = train(data, a.minutes, a.steps, a.batch, a.seed, a.device, a.lr, a.init)
    export(net, a.out)
    torch.save(net.state_dict(), a.out.with_suffix(".pt"))   # (to go on from: --init)
    print(f"wrote {a.out} and its weights {a.out.with_suffix('.pt').name}")


if __name__ == "__main__":
    main()
