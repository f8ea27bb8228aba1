"""Train the ball look (``models/cup-ball.onnx``, read by ``companion/vision/cups/judge.py``): does
a ball rest in the standing cup at this place? Not imported at runtime; run in the throwaway venv
with torch (see ``models/cup-judge.md``, "The ball look")::

    /tmp/trainenv/bin/python -m tools.train.train_ball --scenes /tmp/cups_tr76 ... \
        --val /tmp/cups_val77 --minutes 20 [--steps N]

The judge sees a place at 3.5 mm a pixel, where a 40 mm ball on a cup's shadowed bottom is a
dim blot of ten pixels; this look cuts the rim's own circle (BALL_SIDE_MM across) at about 2.7 mm
a pixel, near a 960 × 540 render's own, by the product's code (``judge.patch_matrix``), turned so
that up is up. Every standing cup of the labels that shows (40 % and more) is cut four times,
moved, scaled and turned a little as the finder's places are: with a ball that shows (more than
5 % of it) it is a ball, empty it is none; a ball that does not show at all teaches nothing;
``--drawn N`` adds the standing cups of N tables drawn by the project's own renderer. The patches
of each folder are kept beside it (``ball-patches.npz``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

from companion.vision.cups.judge import (
    BALL_MODEL,
    BALL_SIDE_MM,
    BALL_SIZE,
    MODELS,
    patch,
    patch_matrix,
    up_direction,
)
from companion.vision.cups.reader import paper_gains
from tools.train.train_dice import conv, schedule
from tools.train.train_judge import (
    drawn_cups,
    patch_args,
    patches_of,
    photometric,
    rim_radius,
    scene_view,
    to_tensor,
)

CACHE = "ball-patches.npz"
CUTS = 4   # patches a cup


def scene_patches(folder: Path, meta: dict, rng: np.random.Generator):
    """(patches (N, BALL_SIZE, BALL_SIZE, 3), ball (N,) 1/0) of a scene's standing cups, or None."""
    view = scene_view(folder, meta)
    if view is None:
        return None
    frame, cal, _, _, plane, eye = view
    cups = []
    for c in meta["cups"]:
        if c["state"] != "standing" or not c.get("in_frame", True) or float(c.get("visible_fraction") or 0) < 0.4:
            continue
        ball = c.get("ball")
        if ball and float(ball.get("visible_fraction", 1)) <= 0.05:
            continue   # a ball that does not show: neither ball nor none
        x, y = plane(c["rim_centre_px"])
        cups.append((x, y, rim_radius(eye, float(c["rim_d_mm"]), float(c["height_mm"])), 1 if ball else 0))
    return cups_patches(frame, cal, cups, rng)


def cups_patches(frame: np.ndarray, cal, cups: list, rng: np.random.Generator):
    """CUTS patches of each (plane x, y; rim radius there; ball 1/0) cup, moved, scaled and turned
    a little as the finder's places are."""
    gains = paper_gains(cal.paper_white(frame))
    out, balls = [], []
    for x, y, r, ball in cups:
        for _ in range(CUTS):
            a, d = rng.uniform(0, 2 * np.pi), 0.25 * r * np.sqrt(rng.uniform())
            px, py = x + d * np.cos(a), y + d * np.sin(a)
            m = patch_matrix(cal.homography, px, py, up_direction(cal, px, py), side_mm=BALL_SIDE_MM * rng.uniform(0.9, 1.1),
                             turn_deg=rng.uniform(-12, 12), size=BALL_SIZE)
            out.append(patch(frame, m, gains, BALL_SIZE))
            balls.append(ball)
    return (np.stack(out), np.array(balls, np.int64)) if out else None


def drawn_patches(seed: int):
    """The standing cups of a table drawn by the project's own renderer (``train_judge.drawn_cups``:
    flat-shaded, cups smaller than any rendered one, as ``companion bench tables`` draws them)."""
    got = drawn_cups(seed)
    if got is None:
        return None
    frame, cal, _, _, _, cups = got
    return cups_patches(frame, cal, [(p[0], p[1], r, ball) for c, p, r, ball in cups if c.upright],
                        np.random.default_rng(seed))


def drawn_set(n: int, cache: Path) -> dict[str, np.ndarray]:
    """The patches of n drawn tables (seeds 900,000 and up, apart from every seed the tests and
    benches draw), cut once and kept in ``cache``."""
    if cache.exists() and int(np.load(cache)["n"]) == n:
        return {k: v for k, v in np.load(cache).items() if k != "n"}
    parts = [p for p in (drawn_patches(900000 + k) for k in range(n)) if p is not None]
    have = {"x": np.concatenate([p[0] for p in parts]), "ball": np.concatenate([p[1] for p in parts])}
    np.savez(cache, n=n, **have)
    return have


def folder_patches(folder: Path, seed: int = 0) -> dict[str, np.ndarray]:
    """Every scene's patches of a folder, cut once and kept beside it."""
    cache = folder / CACHE
    if cache.exists():
        return dict(np.load(cache))
    parts = []
    for path in sorted((folder / "meta").glob("*.json")):
        meta = json.loads(path.read_text())
        got = scene_patches(folder, meta, np.random.default_rng([seed, int(meta["seed"]), int(meta.get("frame") or 0)]))
        if got is not None:
            parts.append(got)
    if not parts:
        return {}
    have = {"x": np.concatenate([p[0] for p in parts]), "ball": np.concatenate([p[1] for p in parts])}
    np.savez(cache, **have)
    return have


class BallNet(nn.Module):
    """A BALL_SIZE × BALL_SIZE patch → a ball logit: four stride-2 levels (32, 16, 8, 4), then every
    4 × 4 cell's features to the output (a ball shows within the rim, not at the patch's edge)."""

    def __init__(self) -> None:
        super().__init__()
        c = (16, 24, 32, 48)
        self.body = nn.Sequential(conv(3, c[0], 3, 2), conv(c[0], c[0]), conv(c[0], c[1], 3, 2), conv(c[1], c[1]),
                                  conv(c[1], c[2], 3, 2), conv(c[2], c[2]), conv(c[2], c[3], 3, 2), conv(c[3], c[3]))
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(c[3] * (BALL_SIZE // 16) ** 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.drop(torch.flatten(self.body(x), 1)))


def evaluate(net: nn.Module, data: dict[str, np.ndarray]) -> str:
    net.eval()
    with torch.no_grad():
        p = torch.cat([torch.sigmoid(net(to_tensor(data["x"][i:i + 256]))[:, 0])
                       for i in range(0, len(data["x"]), 256)]).numpy()
    net.train()
    b = data["ball"] == 1
    return " ".join(f"at {t}: found {np.mean(p[b] >= t):.3f}, false {np.mean(p[~b] >= t):.3f};"
                    for t in (0.5, 0.85)) + f" ({int(b.sum())} balls, {int((~b).sum())} empty)"


def train(data, val, minutes: float, steps: int | None, batch: int, seed: int, lr: float) -> BallNet:
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    net = BallNet()
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    # balls are few: a third of every batch
    w = np.where(data["ball"] == 1, 0.33 / max(1, (data["ball"] == 1).sum()), 0.67 / max(1, (data["ball"] == 0).sum()))
    w /= w.sum()
    t0, step = time.time(), 0
    for step in schedule(opt, lr, minutes, steps):
        idx = rng.choice(len(w), batch, p=w)
        x = to_tensor(np.stack([photometric(data["x"][i], rng) for i in idx]))
        y = torch.from_numpy(data["ball"][idx].astype(np.float32))
        loss = nn.functional.binary_cross_entropy_with_logits(net(x)[:, 0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 200 == 0:
            print(f"step {step} {time.time() - t0:.0f}s loss {loss.item():.3f}", flush=True)
        if val is not None and step % 2000 == 0 and step:
            print("  validation: " + evaluate(net, val), flush=True)
    print(f"{step} steps of {batch} patches in {time.time() - t0:.0f} s (--steps {step} repeats it)", flush=True)
    return net


def gather(folders: list[Path]) -> dict[str, np.ndarray]:
    parts = [p for p in (folder_patches(f) for f in folders) if p]
    return {k: np.concatenate([p[k] for p in parts]) for k in ("x", "ball")}


def main() -> None:
    ap = patch_args(__doc__, MODELS / BALL_MODEL, Path("/tmp/ball-drawn.npz"))
    a = ap.parse_args()
    t0 = time.time()
    data, val = patches_of(a, gather, drawn_set)
    print(f"{len(data['x'])} patches, {int((data['ball'] == 1).sum())} with a ball; cut in {time.time() - t0:.0f} s",
          flush=True)
    if a.cut_only:
        return
    net = train(data, val, a.minutes, a.steps, a.batch, a.seed, a.lr)
    if val is not None:
        print("validation: " + evaluate(net, val), flush=True)
    net.eval()
    torch.onnx.export(net, torch.zeros(2, 3, BALL_SIZE, BALL_SIZE), str(a.out), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, opset_version=13, dynamo=False)
    torch.save(net.state_dict(), a.out.with_suffix(".pt"))
    print(f"wrote {a.out} and its weights {a.out.with_suffix('.pt').name}")


if __name__ == "__main__":
    main()
