"""Train the cup judge (``models/cup-judge.onnx``, read by ``companion/vision/cups/judge.py``) on
rendered 21 Exact tables (``tools/render/cup_scenes.py``) and export it to ONNX. Not imported at
runtime; run in a throwaway venv with torch (see ``models/cup-judge.md``)::

    /tmp/trainenv/bin/python -m tools.train.train_judge --scenes /tmp/cups_train_50000 ... \
        --val /tmp/cups_test --minutes 20 [--steps N] [--device cuda]

Each scene is calibrated as the product calibrates a photo (the project's marker detection), and
patches are cut by the product's own code (``judge.patch_matrix``) at the places the judge will be
asked about: every cup and turned cup of the labels (moved, scaled and turned a little, as the
finder's proposals are), the cup finder's own proposals at a low threshold, the places of cups
gone, loose balls and dice, and random places on the table. A place within 45 % of a rim's
radius of a labelled cup is that cup; one nearer than 110 % but not that near teaches nothing (the
finder never proposes it); the rest are "none". The patches of each folder are kept beside it
(``judge-patches.npz``) so that more renders add to them.
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

from companion.vision.cups.judge import CLASSES, MODELS, SIZE, patch, patch_matrix, up_direction
from companion.vision.cups.net import finder
from companion.vision.cups.reader import paper_gains
from tools.train.train_cups import calibrated, drawn_table
from tools.train.train_cups import photometric as cup_photometric
from tools.train.train_dice import conv, freeze_norms, from_onnx, schedule

CLASS_INDEX = {c: i for i, c in enumerate(CLASSES)}
CACHE = "judge-patches.npz"


def scene_view(folder: Path, meta: dict):
    """A rendered scene as the project calibrates it: (frame, calibration, table width and depth,
    ``plane(px)``: the table-plane point a frame pixel shows, the camera's place), or None where
    it finds no table."""
    got = calibrated(cv2.imread(str(folder / meta["image"])), float(meta["camera"]["fx_px"]))
    if got is None:
        return None
    frame, cal, w, h = got
    to_plane = np.linalg.inv(cal.homography)

    def plane(px) -> np.ndarray:
        return cv2.perspectiveTransform(np.array([[px]], np.float64), to_plane)[0, 0]

    return frame, cal, w, h, plane, -cal.R.T @ cal.tvec.reshape(3)


def scene_patches(folder: Path, meta: dict, rng: np.random.Generator):
    """(patches (N, SIZE, SIZE, 3), class (N,), ball (N,): 1/0, -1 where not taught) of a scene,
    or None where the project finds no table in it."""
    view = scene_view(folder, meta)
    if view is None:
        return None
    frame, cal, w, h, plane, eye = view
    # things: (x, y) on the plane where each shows, its radius there (mm), class or None (not taught), ball
    things = []
    for c in meta["cups"] + meta.get("tally_cups", []):
        seen = float(c.get("visible_fraction") or 0.0) if c.get("in_frame", True) else 0.0
        r = rim_radius(eye, float(c["rim_d_mm"]), float(c["height_mm"]))
        if c["state"] == "standing":
            cls = f"standing.{c['colour']}"
            ball = c.get("ball")
            b = -1 if ball and float(ball.get("visible_fraction", 1)) <= 0.05 else (1 if ball else 0)
            things.append((plane(c["rim_centre_px"]), r, cls if seen >= 0.4 else None, b))
        elif c["state"] == "turned":
            centre = (c.get("top_ellipse_px") or {}).get("centre", c["rim_centre_px"])
            cls = f"turned.{c['colour']}" if c["colour"] != "silver" else None
            things.append((plane(centre), r * float(c["base_d_mm"]) / float(c["rim_d_mm"]),
                           cls if seen >= 0.4 else None, -1))
    others = [c["nominal_mm"] for c in meta["cups"] if c["state"] == "gone"]
    for thing in meta.get("loose_balls", []) + meta.get("dice", []):
        px = thing.get("centre_px") or thing.get("top_centre_px")
        if px and thing.get("in_frame", True):
            others.append(plane(px))
    return cut(frame, cal, w, h, things, others, rng)


def rim_radius(eye: np.ndarray, rim_d: float, height: float) -> float:
    """A cup's rim radius as it shows on the table's plane, seen from ``eye`` (table mm): a rim
    ``height`` above the table looks larger there by eye height / (eye height - height)."""
    return 0.5 * rim_d * eye[2] / max(eye[2] - height, 200.0)


def drawn_cups(seed: int):
    """A table drawn by the project's own renderer (``train_cups.drawn_table``: flat-shaded, but
    other cup shapes, sizes and colours): (frame, calibration, width, depth, layout, cups), each
    cup (the scene's cup, where its rim shows on the table's plane, the rim's radius there, 1 if a
    ball rests in it), or None where the project finds no table in it."""
    got = drawn_table(seed)
    if got is None:
        return None
    frame, cal, w, h, layout, scene, renderer = got
    to_plane = np.linalg.inv(cal.homography)
    eye = -cal.R.T @ cal.tvec.reshape(3)
    with_ball = {id(b.in_cup) for b in scene.balls if b.in_cup is not None}
    r = rim_radius(eye, layout.rim_d, layout.cup_h)
    cups = []
    for c in scene.cups:
        px = renderer.camera.project(np.array([[c.x, c.y, layout.cup_h]]))
        cups.append((c, cv2.perspectiveTransform(px[None].astype(np.float64), to_plane)[0, 0], r, int(id(c) in with_ball)))
    return frame, cal, w, h, layout, cups


def drawn_patches(seed: int):
    """The patches of a drawn table (:func:`drawn_cups`)."""
    got = drawn_cups(seed)
    if got is None:
        return None
    frame, cal, w, h, layout, cups = got
    things = []
    for c, p, r, ball in cups:
        if c.upright:
            things.append((p, r, f"standing.{c.cup}", ball))
        else:
            things.append((p, r * layout.base_d / layout.rim_d, f"turned.{c.cup}" if c.cup != "silver" else None, -1))
    return cut(frame, cal, w, h, things, [], np.random.default_rng(seed))


def cut(frame: np.ndarray, cal, w: float, h: float, things: list, others: list, rng: np.random.Generator):
    """The patches of one frame: each thing (plane x, y; radius; class or None; ball) three times,
    moved, scaled and turned a little; the finder's own proposals; ``others`` (places of cups gone,
    loose balls, dice) and random places, each labelled by the things near it."""
    gains = paper_gains(cal.paper_white(frame))

    def label(x: float, y: float):
        near = False
        for (px, py), r, cls, b in things:
            d = np.hypot(px - x, py - y)
            if d < 0.45 * r:
                return (cls, b) if cls is not None else None
            near |= d < 1.1 * r
        return None if near else ("none", -1)

    places: list[tuple[float, float, float, float, object]] = []   # x, y, scale, turn, label
    for (px, py), r, cls, b in things:
        if cls is None:
            continue
        for _ in range(3):
            a, d = rng.uniform(0, 2 * np.pi), 0.3 * r * np.sqrt(rng.uniform())
            places.append((px + d * np.cos(a), py + d * np.sin(a), rng.uniform(0.9, 1.1), rng.uniform(-12, 12),
                           (cls, b)))
    for f in finder().find(frame, cal.homography, w, h, 0.08):
        if f.kind != "ball":
            places.append((f.x, f.y, rng.uniform(0.95, 1.05), rng.uniform(-6, 6), label(f.x, f.y)))
    others = list(others) + [(rng.uniform(-100, w + 100), rng.uniform(-100, h + 100)) for _ in range(12)]
    for x, y in others:
        x, y = x + rng.uniform(-30, 30), y + rng.uniform(-30, 30)
        places.append((x, y, rng.uniform(0.9, 1.1), rng.uniform(-12, 12), label(x, y)))
    out, cls, balls = [], [], []
    for x, y, s, turn, lab in places:
        if lab is None:
            continue
        m = patch_matrix(cal.homography, x, y, up_direction(cal, x, y), turn_deg=turn, side_mm=280.0 * s)
        out.append(patch(frame, m, gains))
        cls.append(CLASS_INDEX[lab[0]])
        balls.append(lab[1])
    if not out:
        return None
    return np.stack(out), np.array(cls, np.int64), np.array(balls, np.int64)


def drawn_set(n: int, cache: Path) -> dict[str, np.ndarray]:
    """The patches of n drawn tables (seeds 900,000 and up, apart from every seed the tests and
    benches draw), cut once and kept in ``cache``."""
    if cache.exists():
        have = dict(np.load(cache))
        if int(have["n"]) >= n:
            keep = have["table"] < 900000 + n
            return {k: have[k][keep] for k in ("x", "cls", "ball")}
    parts = []
    for k in range(n):
        got = drawn_patches(900000 + k)
        if got is not None:
            parts.append((*got, np.full(len(got[0]), 900000 + k)))
    x, c, b, t = (np.concatenate(z) for z in zip(*parts, strict=True))
    np.savez(cache, x=x, cls=c, ball=b, table=t, n=n)
    return {"x": x, "cls": c, "ball": b}


def folder_patches(folder: Path, seed: int = 0) -> dict[str, np.ndarray]:
    """Every scene's patches of a folder, cut once and kept beside it (a scene added since is cut
    and added)."""
    cache = folder / CACHE
    have: dict[str, np.ndarray] = dict(np.load(cache)) if cache.exists() else {}
    done = set(have["scene"].tolist()) if have else set()
    new = []
    for path in sorted((folder / "meta").glob("*.json")):
        if path.stem in done:
            continue
        meta = json.loads(path.read_text())
        got = scene_patches(folder, meta, np.random.default_rng([seed, int(meta["seed"]), int(meta.get("frame") or 0)]))
        if got is None:
            print(f"  {folder.name}/{path.stem}: no table found, left out", flush=True)
            continue
        new.append((*got, np.array([path.stem] * len(got[0]))))
    if new:
        parts = [(have["x"], have["cls"], have["ball"], have["scene"])] if have else []
        x, c, b, s = (np.concatenate(z) for z in zip(*(parts + new), strict=True))
        have = {"x": x, "cls": c, "ball": b, "scene": s}
        np.savez(cache, **have)
    return have


class JudgeNet(nn.Module):
    """A SIZE × SIZE patch → len(CLASSES) class logits and a ball logit. Four stride-2 levels
    (40, 20, 10, 5), then every 5 × 5 cell's features to the outputs: where in the patch a thing
    is matters (its centre is the place asked about; a neighbour cup at its edge is not)."""

    def __init__(self, width: float = 1.0) -> None:
        super().__init__()
        c = [max(8, int(round(k * width))) for k in (16, 24, 32, 48, 64)]
        self.body = nn.Sequential(conv(3, c[0], 3, 2), conv(c[0], c[1]), conv(c[1], c[2], 3, 2), conv(c[2], c[2]),
                                  conv(c[2], c[3], 3, 2), conv(c[3], c[3]), conv(c[3], c[4], 3, 2), conv(c[4], c[4]))
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(c[4] * (SIZE // 16) ** 2, len(CLASSES) + 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.drop(torch.flatten(self.body(x), 1)))


def photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The finder's other light and camera (``train_cups.photometric``), and a mirror image (up
    stays up)."""
    out = cup_photometric(img, rng)
    return np.ascontiguousarray(out[:, ::-1]) if rng.random() < 0.5 else out


def to_tensor(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(x.astype(np.float32) / 255.0).permute(0, 3, 1, 2).contiguous()


def losses(out: torch.Tensor, cls: torch.Tensor, ball: torch.Tensor) -> torch.Tensor:
    ce = nn.functional.cross_entropy(out[:, :len(CLASSES)], cls)
    taught = ball >= 0
    if taught.any():
        ce = ce + nn.functional.binary_cross_entropy_with_logits(out[taught, -1], ball[taught].float())
    return ce


def evaluate(net: nn.Module, data: dict[str, np.ndarray]) -> str:
    net.eval()
    with torch.no_grad():
        out = torch.cat([net(to_tensor(data["x"][i:i + 256])) for i in range(0, len(data["x"]), 256)])
    net.train()
    pred = out[:, :len(CLASSES)].argmax(1).numpy()
    cls = data["cls"]
    ball_p = torch.sigmoid(out[:, -1]).numpy() > 0.5
    t = data["ball"] >= 0
    cups = cls > 0
    lines = [f"class right {np.mean(pred == cls):.3f}; things right {np.mean(pred[cups] == cls[cups]):.3f}, "
             f"missed {np.mean(pred[cups] == 0):.3f}; none right {np.mean(pred[~cups] == 0):.3f}",
             f"balls: recall {np.mean(ball_p[t & (data['ball'] == 1)]):.3f} "
             f"false {np.mean(ball_p[t & (data['ball'] == 0)]):.3f} of {int((t & (data['ball'] == 1)).sum())} balls"]
    return "; ".join(lines)


def train(data: dict[str, np.ndarray], val: dict[str, np.ndarray] | None, minutes: float, steps: int | None,
          size: int, seed: int, device: str, lr: float, width: float = 1.0, init: Path | None = None,
          init_onnx: Path | None = None) -> JudgeNet:
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    net = JudgeNet(width)
    if init is not None:   # go on from an earlier run (its .pt beside its ONNX)
        net.load_state_dict(torch.load(init))
    if init_onnx is not None:   # a shipped judge whose training state was not kept: its norms stay as exported
        from_onnx(init_onnx, net)
        freeze_norms(net)
    net = net.to(device)
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    # balls and cups turned over are few (a game has a handful): seen four times as often
    w = np.where((data["ball"] == 1) | (data["cls"] >= CLASSES.index("turned.blue")), 4.0, 1.0)
    w /= w.sum()
    t0 = time.time()
    step = 0
    for step in schedule(opt, lr, minutes, steps):
        idx = rng.choice(len(w), size, p=w)
        x = to_tensor(np.stack([photometric(data["x"][i], rng) for i in idx])).to(device)
        cls = torch.from_numpy(data["cls"][idx]).to(device)
        ball = torch.from_numpy(data["ball"][idx]).to(device)
        loss = losses(net(x), cls, ball)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"step {step} {time.time() - t0:.0f}s loss {loss.item():.3f}", flush=True)
        if val is not None and step % 1000 == 0 and step:
            print("  validation: " + evaluate(net.cpu(), val), flush=True)
            if init_onnx is not None:
                freeze_norms(net)
            net.to(device)
    print(f"{step} steps of {size} patches in {time.time() - t0:.0f} s (--steps {step} repeats it)", flush=True)
    return net.cpu()


def export(net: nn.Module, out: Path) -> None:
    net.eval()
    torch.onnx.export(net, torch.zeros(2, 3, SIZE, SIZE), str(out), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, opset_version=13, dynamo=False)


def gather(folders: list[Path]) -> dict[str, np.ndarray]:
    parts = [folder_patches(f) for f in folders]
    parts = [p for p in parts if p]
    return {k: np.concatenate([p[k] for p in parts]) for k in ("x", "cls", "ball")}


def patch_args(doc: str | None, out: Path, drawn_cache: Path) -> argparse.ArgumentParser:
    """The options of a training on patches cut from rendered and drawn tables (this and
    ``train_ball``)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", nargs="+", type=Path, required=True, help="folders of rendered cup scenes")
    ap.add_argument("--val", nargs="*", type=Path, default=[], help="folders to report on while training")
    ap.add_argument("--drawn", type=int, default=0, help="also this many tables drawn by companion.sim.render")
    ap.add_argument("--drawn-cache", type=Path, default=drawn_cache, help="where the drawn tables' patches are kept")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--steps", type=int, help="a fixed number of steps (the same run on any machine)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument("--cut-only", action="store_true", help="cut the patches and stop")
    return ap


def patches_of(a: argparse.Namespace, gather, drawn_set) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """The training and validation patches the options name, by a training's own ``gather`` and
    ``drawn_set`` (torch's and OpenCV's threads set first)."""
    if a.threads:
        torch.set_num_threads(a.threads)
    cv2.setNumThreads(1)
    data = gather(a.scenes)
    if a.drawn:
        drawn = drawn_set(a.drawn, a.drawn_cache)
        data = {k: np.concatenate([data[k], drawn[k]]) for k in data}
    return data, (gather(a.val) if a.val else None)


def main() -> None:
    ap = patch_args(__doc__, MODELS / "cup-judge.onnx", Path("/tmp/judge-drawn.npz"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--width", type=float, default=1.0, help="the network's channels, times this")
    ap.add_argument("--init", type=Path, help="weights (.pt) of an earlier run to go on from")
    ap.add_argument("--init-onnx", type=Path, help="start from an exported judge (its batch norms kept as they are)")
    a = ap.parse_args()
    t0 = time.time()
    data, val = patches_of(a, gather, drawn_set)
    counts = np.bincount(data["cls"], minlength=len(CLASSES))
    print(f"{len(data['x'])} patches ({', '.join(f'{c} {k}' for c, k in zip(CLASSES, counts, strict=True))}), "
          f"{int((data['ball'] == 1).sum())} with a ball; cut in {time.time() - t0:.0f} s", flush=True)
    if a.cut_only:
        return
    net = train(data, val, a.minutes, a.steps, a.batch, a.seed, a.device, a.lr, a.width, a.init, a.init_onnx)
    if val is not None:
        print("validation: " + evaluate(net, val), flush=True)
    export(net, a.out)
    torch.save(net.state_dict(), a.out.with_suffix(".pt"))
    print(f"wrote {a.out} and its weights {a.out.with_suffix('.pt').name}")


if __name__ == "__main__":
    main()
