"""Train the dice reader's two small networks and export them to ONNX (not imported at runtime).

* ``finder`` — a fully convolutional net on the frame at half size: a heat map of die centres
  (stride 4), the die size and the sub-cell offset of its centre.
* ``reader`` — a small square crop around each found centre (``--crop``, 48 px for the shipped
  model): not-a-die or face value 1–6.

Data: ``tests/data/dice/byler`` (or ``--data DIR``) **train split only** (every 10th train image held out for
validating thresholds), plus dice drawn by :mod:`companion.sim.dice`, drawn tables of every kind
of cloth and clutter (:mod:`tools.train.scenes`, ``--scenes``) and rendered photo-realistic scenes
in the same folder format (``--extra DIR``, their ``train`` split; ``tools/render/``).

``--steps`` fixes the number of steps (the run is then the same on any machine, only slower on a
CPU); ``--device cuda`` trains on a GPU and ``--workers N`` draws the batches in N processes.

Run in a throwaway venv with torch (see ``models/dice-reader.md``)::

    /tmp/trainenv/bin/python -m tools.train.train_dice finder --minutes 14
    /tmp/trainenv/bin/python -m tools.train.train_dice reader --minutes 8
    python -m tools.train.train_dice finder --steps 6000 --batch 48 --scenes 0.5 --device cuda --workers 14
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from companion.sim.dice import BODY_BGR, draw_die, pip_colour
from tools.train.scenes import scene

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "dice" / "byler"  # --data for another copy
MODELS = ROOT / "models"
IN = 320          # finder training window (pixels of the half-size frame)
STRIDE = 4
CROP = 48         # reader input (--crop)
CROP_SCALE = 1.4  # reader crop side = CROP_SCALE × die size (--crop-scale)
SIZE_NORM = 32.0  # finder size output is die size (input px) / 32
TILT = 0.0018     # largest perspective term of the finder's windows (--tilt)
PHOTOMETRIC = 0.6  # reader: how strongly its crops are blurred (--photometric)
POOR = 0.0  # reader: share of crops seen as by a poor camera in dim light (--poor-camera)
TABLE_SCENES = 0  # reader: rendered whole tables whose dice and false finds join the bank (--tables)
GLARE = 0.0  # reader: share of crops given a reflection of the lamp on the die (--glare)
NATIVE_POOR = 0.0  # reader: share of crops made poor at the photo's own resolution (--poor-native)
SMALL = 0.0  # reader: share of crops from the die shrunk as a camera further away sees it (--small)
SCENES = 0.0  # finder: share of windows from drawn tables of any cloth and clutter (--scenes)
SCENE_BANK = 0  # reader: drawn tables whose dice, side faces, clutter and false finds join the bank
EXTRA: list[tuple[np.ndarray, np.ndarray, str]] = []  # rendered scenes (--extra), as the photos
EXTRA_SHARE = 0.35  # finder: share of the windows not from drawn tables that come from EXTRA (--extra-share)
RENDER_SHARE = 0.0  # reader: share of every batch from the rendered scenes' dice and non-dice (--render-share)
DEVICE = "cpu"
JITTER = 0.08  # reader: a die crop's centre moved by this share of its size (sd; --jitter)
SIZE_RANGE = (0.85, 1.2)  # reader: and cropped at this range of its size (--size-range)
PROPOSALS = False  # reader: also crop the rendered scenes' dice where the finder proposes them (--proposals)
SMALL_WINDOWS = 0.0  # finder: share of windows scaled so their dice come out 5-12 px (--small-windows)
READER_WIDTHS = (12, 24, 48, 48, 64)  # the shipped reader's channels, conv by conv, and its hidden layer
FREEZE_BN = False  # reader: keep the batch norms' statistics as they are (--freeze-bn)


# ---------------------------------------------------------------- data
def load_split(split: str = "train", root: Path | None = None) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """[(image, dice[n, 4] = cx, cy, size, value), name] for one upstream split of a labelled
    folder laid out as byler's (``annotations.csv`` with image paths relative to the folder)."""
    root = root or DATA
    per: dict[str, list[list[float]]] = {}
    with open(root / "annotations.csv") as f:
        for row in csv.DictReader(f):
            if row["upstream_split"] != split:
                continue
            x0, y0, x1, y1 = (float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax"))
            per.setdefault(row["image"], []).append(
                [(x0 + x1) / 2, (y0 + y1) / 2, math.sqrt((x1 - x0) * (y1 - y0)), int(row["value"])])
    out = []
    for name in sorted(per):
        img = cv2.imread(str(root / name))
        out.append((img, np.array(per[name], np.float32), name))
    return out


def synthetic(rng: np.random.Generator, w: int = 640, h: int = 640) -> tuple[np.ndarray, np.ndarray]:
    """A drawn table: random background, 1–25 dice of the games' colours and random others."""
    img = np.empty((h, w, 3), np.uint8)
    img[:] = rng.integers(0, 256, 3)
    if rng.random() < 0.5:  # a second region of another colour (tray wall, cloth edge)
        x = int(rng.integers(0, w))
        img[:, x:] = rng.integers(0, 256, 3)
    dice, placed = [], []
    n = int(rng.integers(1, 26))
    for _ in range(300):
        if len(dice) >= n:
            break
        d = float(rng.uniform(22, 70))
        cx, cy = float(rng.uniform(d * 0.3, w - d * 0.3)), float(rng.uniform(d * 0.3, h - d * 0.3))
        if any(math.hypot(cx - x, cy - y) < (d + e) * 0.75 for x, y, e in placed):
            continue
        if rng.random() < 0.7:
            color = list(BODY_BGR)[int(rng.integers(0, 6))]
            body, pips = BODY_BGR[color], pip_colour(color)
            body = tuple(int(np.clip(c + rng.normal(0, 18), 0, 255)) for c in body)
        else:
            body = tuple(int(c) for c in rng.integers(0, 256, 3))
            lum = 0.11 * body[0] + 0.59 * body[1] + 0.3 * body[2]
            pips = (20, 20, 20) if lum > 140 else (240, 240, 240)
        value = int(rng.integers(1, 7))
        x0, y0, x1, y1 = draw_die(img, (cx, cy), d, value, body, pips, float(rng.uniform(0, 90)))
        placed.append((cx, cy, d))
        dice.append([cx, cy, math.sqrt((x1 - x0) * (y1 - y0)), value])
    img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.3, 1.2)))
    return img, np.array(dice, np.float32).reshape(-1, 4)


def photometric(img: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    f = img.astype(np.float32)
    f *= rng.uniform(0.45, 1.3) * rng.uniform(0.9, 1.1, 3)  # light level, white balance
    f = (f - 128) * rng.uniform(0.8, 1.15) + 128
    if rng.random() < 0.3:
        f += rng.normal(0, rng.uniform(2, 8), f.shape)
    out = np.clip(f, 0, 255).astype(np.uint8)
    if rng.random() < 0.4 * strength:
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.4, 1.6 * strength)))
    if rng.random() < 0.35:
        out = jpeg(out, int(rng.integers(30, 90)))
    return out


def jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    """The image as a camera's JPEG at ``quality`` gives it back."""
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def poor_camera(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Dim light, a soft lens and strong JPEG compression at once: what a cheap camera gives in
    a dark room (each alone is in :func:`photometric`, rarely all three together)."""
    f = img.astype(np.float32) * rng.uniform(0.3, 0.7)
    out = cv2.GaussianBlur(np.clip(f, 0, 255).astype(np.uint8), (0, 0), float(rng.uniform(0.5, 1.5)))
    return jpeg(out, int(rng.integers(25, 60)))


def native_view(patch: np.ndarray, cx: float, cy: float, size: float, angle: float,
                shear: tuple[float, float], rng: np.random.Generator, scale: float = 1.0,
                poor: bool = False) -> np.ndarray:
    """The reader's view of a die as a camera delivers it: shrunk by ``scale`` first (a camera
    further away: fewer pixels on the die, not a blurred big die), turned and sheared at that
    resolution, with ``poor`` then dimmed, softened and JPEG-compressed there — 8×8 blocks of
    photo pixels on a grid of random phase, the blur in photo pixels — and only then cropped and
    resized as the runtime does (:func:`~companion.vision.dice.reader.crop_die`). :func:`poor_camera` on
    the finished 48-pixel crop puts the blocks on the crop's own grid and at the crop's scale,
    which no camera does."""
    from companion.vision.dice.reader import crop_die

    if scale != 1.0:
        patch = cv2.resize(patch, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        cx, cy, size = cx * scale, cy * scale, size * scale
    n = int(math.ceil(size * CROP_SCALE)) + 16
    phase = rng.uniform(0, 8, 2)
    M = turning(cx, cy, angle, 1.0, shear, np.array([n / 2, n / 2]) + phase)
    view = cv2.warpAffine(patch, M, (n + 8, n + 8), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if poor:
        view = poor_camera(view, rng)
    elif scale != 1.0 and rng.random() < 0.5:  # a camera's own compression, at its own resolution
        view = jpeg(view, int(rng.integers(50, 95)))
    return crop_die(view, n / 2 + phase[0], n / 2 + phase[1], size, CROP, CROP_SCALE)


def glare(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One to three reflections of a lamp on a shiny die: thin bright streaks and elongated soft
    spots on the top face (the die is the middle 1 / CROP_SCALE of the crop). They are never round
    and pip-sized, so the reader learns that a bright streak is not a pip, whatever the die shows."""
    h, w = crop.shape[:2]
    die = w / CROP_SCALE
    mask = np.zeros((h, w), np.float32)
    for _ in range(int(rng.integers(1, 4))):
        cx, cy = w / 2 + rng.uniform(-0.4, 0.4) * die, h / 2 + rng.uniform(-0.4, 0.4) * die
        if rng.random() < 0.7:  # a streak
            axes = (die * rng.uniform(0.1, 0.3), die * rng.uniform(0.015, 0.04))
        else:  # an elongated spot
            major = die * rng.uniform(0.08, 0.18)
            axes = (major, major / rng.uniform(2.0, 4.0))
        cv2.ellipse(mask, ((cx, cy), (2 * axes[0], 2 * axes[1]), float(rng.uniform(0, 180))), 1.0, -1, cv2.LINE_AA)
    mask = cv2.GaussianBlur(mask, (0, 0), float(rng.uniform(0.3, 1.0)))[..., None] * rng.uniform(0.5, 1.0)
    tint = np.array([255, 255, 255], np.float32) * rng.uniform(0.85, 1.0, 3)
    return np.clip(crop * (1 - mask) + tint * mask, 0, 255).astype(np.uint8)


def random_homography(rng: np.random.Generator, src_wh: tuple[int, int], scale: float) -> np.ndarray:
    """Source image → IN×IN window: rotation, scale, translation, a mild perspective tilt."""
    w, h = src_wh
    a = rng.uniform(0, 2 * math.pi)
    c, s = math.cos(a) * scale, math.sin(a) * scale
    # a random source point goes to the window centre
    px, py = rng.uniform(0.1 * w, 0.9 * w), rng.uniform(0.1 * h, 0.9 * h)
    A = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], np.float64)
    T1 = np.array([[1, 0, -px], [0, 1, -py], [0, 0, 1]], np.float64)
    T2 = np.array([[1, 0, IN / 2], [0, 1, IN / 2], [0, 0, 1]], np.float64)
    P = np.eye(3)
    if rng.random() < 0.6:
        # a camera tilted up to about 30° from straight down (g ≈ tan(tilt) / focal length in
        # window pixels, for a focal length about the photo's width)
        g, axis = rng.uniform(0, TILT), rng.uniform(0, 2 * math.pi)
        P[2, 0], P[2, 1] = g * math.cos(axis), g * math.sin(axis)
    return T2 @ P @ A @ T1


def finder_sample(img: np.ndarray, dice: np.ndarray, rng: np.random.Generator):
    scale = float(rng.uniform(0.33, 0.8))
    if len(dice) and rng.random() < SMALL_WINDOWS:
        # dice of 5-12 window pixels, which the finder otherwise sees seldom and measures too
        # big (x1.2-2 under 10 px), so the reader's looks never come closer for them (the
        # eighth round: measured better, but with more specks read as dice; not shipped)
        scale = float(rng.uniform(5, 12)) / float(np.median(dice[:, 2]))
    H = random_homography(rng, (img.shape[1], img.shape[0]), scale)
    border = tuple(int(v) for v in rng.integers(0, 256, 3))
    win = cv2.warpPerspective(img, H, (IN, IN), flags=cv2.INTER_AREA if rng.random() < 0.5 else cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=border)
    win = photometric(win, rng)
    out = IN // STRIDE
    heat = np.zeros((out, out), np.float32)
    reg = np.zeros((3, out, out), np.float32)
    mask = np.zeros((out, out), np.float32)
    if len(dice):
        pts = cv2.perspectiveTransform(dice[None, :, :2].astype(np.float64), H)[0]
        # local scale: map a point one size away
        pts2 = cv2.perspectiveTransform((dice[None, :, :2] + np.stack([dice[:, 2], 0 * dice[:, 2]], 1)[None]).astype(np.float64), H)[0]
        sizes = np.linalg.norm(pts2 - pts, axis=1)
        yy, xx = np.mgrid[0:out, 0:out].astype(np.float32)
        for (x, y), sz in zip(pts, sizes, strict=True):
            gx, gy = x / STRIDE, y / STRIDE
            if not (0 <= gx < out and 0 <= gy < out):
                continue
            sigma = max(0.6, sz / STRIDE * 0.16)
            heat = np.maximum(heat, np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * sigma ** 2)))
            ix, iy = int(gx), int(gy)
            heat[iy, ix] = 1.0
            reg[:, iy, ix] = (sz / SIZE_NORM, gx - ix, gy - iy)
            mask[iy, ix] = 1
    return win, heat, reg, mask


def turning(cx: float, cy: float, angle: float, k: float, shear: tuple[float, float],
            to: np.ndarray) -> np.ndarray:
    """The 2×3 affine map that turns by ``angle`` about (cx, cy), scales by ``k``, shears a
    little and puts (cx, cy) at ``to``."""
    M = cv2.getRotationMatrix2D((cx, cy), angle, k)
    S = np.array([[1 + shear[0], shear[1]], [shear[1], 1 - shear[0]]])
    M = np.hstack([S @ M[:, :2], np.zeros((2, 1))])
    M[:, 2] = to - M[:, :2] @ np.array([cx, cy])
    return M


def reader_crop(img: np.ndarray, cx: float, cy: float, size: float, angle: float,
                shear: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """The reader's view, turned by ``angle`` and sheared a little (a die seen slightly from the side)."""
    M = turning(cx, cy, angle, CROP / (size * CROP_SCALE), shear, np.array([CROP / 2, CROP / 2]))
    return cv2.warpAffine(img, M, (CROP, CROP), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


# ---------------------------------------------------------------- networks
def conv(i: int, o: int, k: int = 3, s: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2 if k % 2 else 0, bias=False), nn.BatchNorm2d(o),
                         nn.ReLU(inplace=True))


class Finder(nn.Module):
    """Frame → 4 maps at stride 4. The first layer takes each 4×4 block of pixels at once (a
    3×3 convolution on three channels at full size cost more than the rest together), and the
    coarse branch is added to the fine one rather than concatenated: 2.5 ms for a 320×320 input
    in OpenCV on one core, where the previous finder took 4.6."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2 = conv(3, 16, 4, 4), conv(16, 16)
        self.c3, self.c4, self.c5 = conv(16, 32, 3, 2), conv(32, 32), conv(32, 32)
        self.p = nn.Conv2d(32, 16, 1, bias=False)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.c6 = conv(16, 16, 1)
        self.head = nn.Conv2d(16, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.c2(self.c1(x))
        b = self.c5(self.c4(self.c3(a)))
        return self.head(self.c6(a + self.up(self.p(b))))


class Reader(nn.Module):
    """CROP×CROP crop → [not a die, 1, …, 6]. Two convolutions at the coarsest level: a six is
    told from a five by where its pips are, not only how many dark spots there are. Convolutions
    with stride 2 make the image smaller (OpenCV ran the max-pooling version at twice the cost
    for the same weights' shapes)."""

    def __init__(self, crop: int | None = None, widths: tuple[int, ...] = READER_WIDTHS) -> None:
        super().__init__()
        n = (crop or CROP) // 8
        a, b, c, d, h = widths
        self.f = nn.Sequential(conv(3, a, 3, 2), conv(a, b, 3, 2), conv(b, c), conv(c, d, 3, 2))
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(d * n * n, h), nn.ReLU(inplace=True), nn.Linear(h, 7))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.f(x))


def from_onnx(path: Path, net: nn.Module) -> nn.Module:
    """``net`` (a :class:`Finder` or :class:`Reader`) holding the weights of its exported ONNX
    file. The export folded each batch norm into its convolution, so the norms become the
    identity plus that bias: train it on with ``--freeze-bn`` (batch statistics would undo the
    folding). This is how a shipped network, whose training state was not kept, is fine-tuned."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in model.graph.initializer}
    convs = [n for n in model.graph.node if n.op_type == "Conv"]  # in the order they run, as in forward()
    if isinstance(net, Finder):  # forward() runs p before c6; modules() lists them as declared
        mine = [net.c1[0], net.c2[0], net.c3[0], net.c4[0], net.c5[0], net.p, net.c6[0], net.head]
    else:
        mine = [m for m in net.modules() if isinstance(m, nn.Conv2d)]
    if len(convs) != len(mine):
        raise ValueError(f"{path}: {len(convs)} convolutions, the network has {len(mine)}")
    norms = {id(seq[0]): seq[1] for seq in net.modules()
             if isinstance(seq, nn.Sequential) and len(seq) > 1 and isinstance(seq[1], nn.BatchNorm2d)}
    with torch.no_grad():
        for node, conv_ in zip(convs, mine, strict=True):
            w = weights[node.input[1]]
            if tuple(w.shape) != tuple(conv_.weight.shape):
                raise ValueError(f"{path}: weights {tuple(w.shape)} where the network has {tuple(conv_.weight.shape)}")
            conv_.weight.copy_(w)
            b = weights[node.input[2]] if len(node.input) > 2 else torch.zeros(w.shape[0])
            bn = norms.get(id(conv_))
            if bn is not None:
                bn.weight.fill_(1.0)
                bn.bias.copy_(b)
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            elif conv_.bias is not None:
                conv_.bias.copy_(b)
            elif b.abs().max() > 0:
                raise ValueError(f"{path}: a bias where the network has none")
        for name, lin in net.named_modules():
            if isinstance(lin, nn.Linear):
                lin.weight.copy_(weights[f"{name}.weight"])
                lin.bias.copy_(weights[f"{name}.bias"])
    return net


def widen(small: Reader, wide: Reader) -> Reader:
    """``wide`` answering exactly as ``small`` (net2net): each layer's old channels keep their
    weights, the new ones keep the wide network's random start, and every weight from a new
    channel into an old one is zero. Training then uses the new channels from where the trained
    reader stands, instead of learning the old ones again from nothing."""
    convs = [m for m in small.modules() if isinstance(m, nn.Conv2d)]
    wconvs = [m for m in wide.modules() if isinstance(m, nn.Conv2d)]
    norms = [m for m in small.modules() if isinstance(m, nn.BatchNorm2d)]
    wnorms = [m for m in wide.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for k, (c, w) in enumerate(zip(convs, wconvs, strict=True)):
            o, i = c.weight.shape[:2]
            if k:
                w.weight[:, i:] = 0
            w.weight[:o, :i] = c.weight
            n, m = norms[k], wnorms[k]
            m.weight.fill_(1.0)
            m.bias.zero_()
            m.running_mean.zero_()
            m.running_var.fill_(1.0 - m.eps)
            for name in ("weight", "bias", "running_mean", "running_var"):
                getattr(m, name)[:o] = getattr(n, name)
        (l1, l2), (w1, w2) = ([m for m in net.modules() if isinstance(m, nn.Linear)] for net in (small, wide))
        d, dw = convs[-1].weight.shape[0], wconvs[-1].weight.shape[0]
        cells = l1.weight.shape[1] // d  # Flatten() is channel-major: feature c * cells + p
        grid = w1.weight.view(w1.weight.shape[0], dw, cells)
        grid[:, d:] = 0
        grid[:l1.weight.shape[0], :d] = l1.weight.view(-1, d, cells)
        w1.bias[:l1.weight.shape[0]] = l1.bias
        w2.weight.zero_()
        w2.weight[:, :l2.weight.shape[1]] = l2.weight
        w2.bias.copy_(l2.bias)
    return wide


def freeze_norms(net: nn.Module) -> None:
    """Keep the batch norms' statistics (a network read back from ONNX has none to learn)."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def to_tensor(batch: list[np.ndarray]) -> torch.Tensor:
    return torch.from_numpy(np.stack(batch).astype(np.float32) / 255.0).permute(0, 3, 1, 2).contiguous()


def focal(logit: torch.Tensor, heat: torch.Tensor) -> torch.Tensor:
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    pos_loss = -torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = -torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * (1 - pos)
    return (pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1)


# ---------------------------------------------------------------- training
def budget_steps(opt: torch.optim.Optimizer, lr: float, minutes: float):
    """Step numbers 1, 2, … for ``minutes`` of wall-clock time, the learning rate following a
    cosine from ``lr`` to 0 over that time (a shared machine: time, not steps, is the budget)."""
    t0, step, budget = time.time(), 0, minutes * 60
    while time.time() - t0 < budget:
        for g in opt.param_groups:
            g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * min((time.time() - t0) / budget, 1)))
        step += 1
        yield step


def finder_batch(data, rng: np.random.Generator, n: int):
    """``n`` training windows: the photos, drawn dice, drawn tables of every cloth (``SCENES``;
    a tenth of them with no die at all) and the rendered scenes of ``EXTRA``."""
    wins, heats, regs, masks = [], [], [], []
    for _ in range(n):
        u = rng.random()
        if u < SCENES:
            img, dice, _ = scene(rng, with_dice=rng.random() > 0.1)
        elif EXTRA and u < SCENES + (1 - SCENES) * EXTRA_SHARE:
            img, dice, _ = EXTRA[int(rng.integers(0, len(EXTRA)))]
        elif rng.random() < 0.2:
            img, dice = synthetic(rng)
        else:
            img, dice, _ = data[int(rng.integers(0, len(data)))]
        w, h, r, m = finder_sample(img, dice, rng)
        wins.append(w), heats.append(h), regs.append(r), masks.append(m)
    return to_tensor(wins), *(torch.from_numpy(np.stack(a)) for a in (heats, regs, masks))


class Batches(torch.utils.data.IterableDataset):
    """Endless batches from ``make(rng)``, each worker process with its own seeded generator."""

    def __init__(self, make, seed: int):
        self.make, self.seed = make, seed

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng([self.seed, info.id if info else 0])
        while True:
            yield self.make(rng)


def batches(make, seed: int, workers: int):
    if workers <= 0:
        rng = np.random.default_rng([seed, 0])
        while True:
            yield make(rng)
    loader = torch.utils.data.DataLoader(Batches(make, seed), batch_size=None, num_workers=workers,
                                         prefetch_factor=4, persistent_workers=True)
    yield from loader


def schedule(opt: torch.optim.Optimizer, lr: float, minutes: float, steps: int | None):
    """``steps`` steps with a cosine learning rate, or ``minutes`` of wall-clock time."""
    if steps is None:
        yield from budget_steps(opt, lr, minutes)
        return
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * step / steps))
        yield step


def train_finder(data, minutes: float, rng: np.random.Generator, net: nn.Module | None = None,
                 lr: float = 3e-3, steps: int | None = None, batch: int = 12, workers: int = 0,
                 seed: int = 0) -> nn.Module:
    net = (net or Finder()).to(DEVICE)
    if FREEZE_BN:
        freeze_norms(net)
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    t0 = time.time()
    source = batches(lambda r: finder_batch(data, r, batch), seed, workers)
    for step in schedule(opt, lr, minutes, steps):
        x, heat, reg, mask = (t.to(DEVICE, non_blocking=True) for t in next(source))
        y = net(x)
        loss = focal(y[:, 0], heat)
        m = mask[:, None]
        loss = loss + 2 * (F.l1_loss(y[:, 1:] * m, reg * m, reduction="sum") / m.sum().clamp(min=1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"finder step {step} {time.time() - t0:.0f}s loss {loss.item():.3f}", flush=True)
    print(f"finder: {step} steps of {batch} windows in {time.time() - t0:.0f} s (--steps {step} repeats it)", flush=True)
    return net.cpu()


HARD_FROM: Path | None = None  # a finder (ONNX) whose false finds become negatives
CHECKPOINT: Path | None = None  # reader: also save every 1000 steps next to this path
PATCH = 3.0  # bank patches are 3 × die size: room for rotation and scale jitter


PAD = 160


def patch_of(padded: np.ndarray, cx: float, cy: float, size: float) -> tuple[np.ndarray, float, float]:
    """A patch of side PATCH × size around (cx, cy) of an image padded by PAD on every side."""
    half = int(math.ceil(size * PATCH / 2))
    x0, y0 = int(cx) - half, int(cy) - half
    p = padded[y0 + PAD:y0 + PAD + 2 * half, x0 + PAD:x0 + PAD + 2 * half].copy()
    return p, cx - x0, cy - y0


def build_bank(data, rng: np.random.Generator, synthetic_images: int = 60):
    """(patch, cx, cy, size, label, drawn) for every die and for places that are not a die's centre."""
    bank = []
    sources = [(img, dice, False) for img, dice, _ in data] + [(*synthetic(rng), True) for _ in range(synthetic_images)]
    for img, dice, drawn in sources:
        padded = cv2.copyMakeBorder(img, PAD, PAD, PAD, PAD, cv2.BORDER_REPLICATE)
        for cx, cy, sz, v in dice:
            bank.append((*patch_of(padded, cx, cy, sz), sz, int(v), drawn))
        h, w = img.shape[:2]
        mean_size = float(np.median(dice[:, 2])) if len(dice) else 40.0
        made = 0
        for _ in range(80):
            if made >= 10:
                break
            kind = rng.random()
            sz = mean_size * rng.uniform(0.7, 1.4)
            if kind < 0.45 and len(dice):
                d = dice[int(rng.integers(0, len(dice)))]
                a = rng.uniform(0, 2 * math.pi)
                r = d[2] * rng.uniform(0.62, 1.0)
                cx, cy = d[0] + r * math.cos(a), d[1] + r * math.sin(a)
            elif kind < 0.6 and len(dice) > 1:
                i, k = rng.choice(len(dice), 2, replace=False)
                cx, cy = (dice[i, 0] + dice[k, 0]) / 2, (dice[i, 1] + dice[k, 1]) / 2
            else:
                cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            if not (0 <= cx < w and 0 <= cy < h) or sz * PATCH / 2 + 2 > PAD:
                continue
            if len(dice) and (np.hypot(dice[:, 0] - cx, dice[:, 1] - cy) / dice[:, 2]).min() < 0.55:
                continue
            bank.append((*patch_of(padded, cx, cy, sz), sz, 0, drawn))
            made += 1
    return bank


def _scene_chunk(args):
    seed, scenes, finder_onnx = args
    rng = np.random.default_rng(seed)
    reader = finder_only(finder_onnx, 0.15) if finder_onnx is not None else None
    out = []
    for _ in range(scenes):
        img, dice, not_dice = scene(rng, with_dice=rng.random() > 0.1)
        padded = cv2.copyMakeBorder(img, PAD, PAD, PAD, PAD, cv2.BORDER_REPLICATE)
        h, w = img.shape[:2]
        for cx, cy, sz, v in dice:
            if sz * PATCH / 2 + 2 <= PAD:
                out.append((*patch_of(padded, cx, cy, sz), sz, int(v), True))
        size = float(np.median(dice[:, 2])) if len(dice) else float(rng.uniform(20, 60))
        places = [(x, y, max(sz, size * 0.8)) for x, y, sz in not_dice]
        places += [(rng.uniform(0, w), rng.uniform(0, h), size * rng.uniform(0.7, 1.4)) for _ in range(6)]
        if reader is not None:
            # the strongest false finds; an untrained finder's thousands would swamp the bank
            found = sorted(reader.candidates(img), key=lambda c: -c[3])[:60]
            places += [(cx, cy, sz) for cx, cy, sz, _heat in found]
        for cx, cy, sz in places:
            if sz * PATCH / 2 + 2 > PAD or not (0 <= cx < w and 0 <= cy < h):
                continue
            if len(dice) and (np.hypot(dice[:, 0] - cx, dice[:, 1] - cy) / dice[:, 2]).min() < 0.55:
                continue
            out.append((*patch_of(padded, cx, cy, sz), sz, 0, True))
    return out


def scene_bank(seed: int, scenes: int, finder_onnx: Path | None, workers: int = 0):
    """Bank patches from drawn tables (:func:`tools.train.scenes.scene`): every die's top face with
    its value; label 0 for its side faces, the clutter, random places on the cloth and, with a
    finder, every place it sees a die and there is none (specks, dots, coins, card pips). Drawn in
    chunks of 50 scenes, each from its own seed, in ``workers`` processes."""
    chunks = [(seed * 1000 + k, min(50, scenes - k * 50), finder_onnx) for k in range((scenes + 49) // 50)]
    if workers <= 1:
        return [item for chunk in chunks for item in _scene_chunk(chunk)]
    from multiprocessing import get_context

    with get_context("fork").Pool(workers) as pool:
        return [item for part in pool.map(_scene_chunk, chunks) for item in part]


def finder_only(finder_onnx: Path, threshold: float):
    """A :class:`DiceReader` with only the given finder, for its ``candidates`` (the reader network
    being trained is not needed to find where the finder is wrong)."""
    import sys

    sys.path.insert(0, str(ROOT))
    from companion.vision.colour import ColourProfiles
    from companion.vision.dice.reader import DiceReader

    reader = DiceReader.__new__(DiceReader)
    reader.finder = cv2.dnn.readNetFromONNX(str(finder_onnx))
    reader.scale, reader.find_threshold = 0.5, threshold
    reader.profiles = ColourProfiles()
    return reader


def hard_negatives(data, finder_onnx: Path, threshold: float = 0.15, copies: int = 3):
    """Bank patches (label 0) where the finder sees a die and there is none: tray walls, busy
    borders, gaps between touching dice."""
    reader = finder_only(finder_onnx, threshold)
    out = []
    for img, dice, _ in data:
        padded = cv2.copyMakeBorder(img, PAD, PAD, PAD, PAD, cv2.BORDER_REPLICATE)
        for cx, cy, size, _heat in sorted(reader.candidates(img), key=lambda c: -c[3])[:60]:
            if len(dice) and (np.hypot(dice[:, 0] - cx, dice[:, 1] - cy) / dice[:, 2]).min() < 0.55:
                continue
            if size * PATCH / 2 + 2 > PAD:
                continue
            out += [(*patch_of(padded, cx, cy, size), size, 0, False)] * copies
    return out


def proposed_dice(data, finder_onnx: Path) -> list:
    """Bank patches of the dice of ``data`` cut as the runtime cuts them: at the centre and size the
    finder proposes (at the first look, 0.5, and at the scale that suits the scene's dice), with
    the label's value: small dice are proposed up to twice their size and off centre, crops the
    label boxes alone never show. (The eighth round, ``models/dice-reader.md``: more dice read,
    as many more misread or extra; not shipped.)"""
    from companion.vision.dice.reader import scale_for

    reader = finder_only(finder_onnx, 0.25)
    out = []
    for img, dice, _ in data:
        if not len(dice):
            continue
        padded = cv2.copyMakeBorder(img, PAD, PAD, PAD, PAD, cv2.BORDER_REPLICATE)
        found = [c for scale in {0.5, scale_for(float(np.median(dice[:, 2])))} for c in reader.candidates(img, scale)]
        for x, y, side, v in dice:
            for cx, cy, size, _heat in found:
                if math.hypot(cx - x, cy - y) < 0.4 * side and size * PATCH / 2 + 2 <= PAD:
                    out.append((*patch_of(padded, cx, cy, size), size, int(v), True))
    return out


def rendered_tables(finder_onnx: Path, rng: np.random.Generator, scenes: int, copies: int = 1):
    """Bank patches from rendered 21 Exact tables seen by random cameras (seeds 90,000 and up, apart
    from every seed the tests and benches render): the set-up dice with their values, and label-0
    patches where the finder sees a die and there is none — the gaps between round cups, cup rims,
    the printed markers. The photos hold no cups, so without these a photo of the whole table had
    its cup gaps read as dice."""
    import random
    from dataclasses import replace

    from companion.sim.render import Renderer, full_table, random_look
    from companion.vision.dice.reader import scale_for
    from companion.vision.layout import Layout

    reader = finder_only(finder_onnx, 0.15)
    layout = Layout()
    dice_out, negatives = [], []
    for k in range(scenes):
        seed = 90_000 + k
        values = {side: {c: int(rng.integers(1, 7)) for c in ("blue", "red", "green", "yellow")} for side in "AB"}
        scene = full_table(layout, values)
        cups = tuple(c for c in scene.cups if rng.random() > 0.15)  # some cups already out
        dice = tuple(replace(d, angle=float(rng.uniform(0, math.pi / 2))) for d in scene.dice)
        renderer = Renderer(random_look(random.Random(seed)), layout, seed=seed)
        img = renderer.static(cups, dice)
        truth_arr = renderer.die_tops(dice)
        truth = [(x, y, side, d.value) for (x, y, side), d in zip(truth_arr, dice, strict=True)]
        padded = cv2.copyMakeBorder(img, PAD, PAD, PAD, PAD, cv2.BORDER_REPLICATE)
        found = [c for scale in (0.5, scale_for(float(np.median(truth_arr[:, 2]))))
                 for c in reader.candidates(img, scale)]
        for x, y, side, v in truth:
            # the die as the runtime crops it: the finder's centre and size (its sizes are the
            # photos' label boxes, larger than the top face), else the top face grown alike
            near = [c for c in found if math.hypot(c[0] - x, c[1] - y) < 0.4 * side]
            cx, cy, size = near[0][:3] if near else (x, y, side * 1.4)
            dice_out.append((*patch_of(padded, cx, cy, size), size, int(v), True))
        seen = set()
        for cx, cy, size, _heat in found:
            if (np.hypot(truth_arr[:, 0] - cx, truth_arr[:, 1] - cy) / truth_arr[:, 2]).min() < 0.8:
                continue
            if size * PATCH / 2 + 2 > PAD or (round(cx / 8), round(cy / 8)) in seen:
                continue
            seen.add((round(cx / 8), round(cy / 8)))
            negatives += [(*patch_of(padded, cx, cy, size), size, 0, True)] * copies
    return dice_out, negatives


def bank_sample(item, rng: np.random.Generator) -> np.ndarray:
    patch, cx, cy, sz, label, _drawn = item
    j = sz * JITTER if label else 0.0
    shear = tuple(rng.normal(0, 0.06, 2)) if rng.random() < 0.5 else (0.0, 0.0)
    poor, small = rng.random() < NATIVE_POOR, rng.random() < SMALL
    if poor or small:
        # fewer pixels on the die: the photos' dice are 30-60 px; 0.4-0.8 of that is 12-48
        view = native_view(patch, cx + rng.normal(0, j), cy + rng.normal(0, j), sz * rng.uniform(*SIZE_RANGE),
                           rng.uniform(0, 360), shear, rng, rng.uniform(0.4, 0.8) if small else 1.0, poor)
        return view if poor else photometric(view, rng, PHOTOMETRIC)
    crop = reader_crop(patch, cx + rng.normal(0, j), cy + rng.normal(0, j), sz * rng.uniform(*SIZE_RANGE),
                       rng.uniform(0, 360), shear)
    if rng.random() < GLARE:
        crop = glare(crop, rng)
    if rng.random() < POOR:
        return poor_camera(crop, rng)
    return photometric(crop, rng, PHOTOMETRIC)


def train_reader(data, minutes: float, rng: np.random.Generator, net: nn.Module | None = None,
                 lr: float = 3e-3, steps: int | None = None, workers: int = 0, seed: int = 0) -> nn.Module:
    bank = build_bank(data, rng)
    rendered = np.zeros(0, int)
    if EXTRA:  # rendered scenes: their dice and places between them, as for the photos
        extra = [(b[0], b[1], b[2], b[3], b[4], True) for b in build_bank(EXTRA, rng, synthetic_images=0)]
        if HARD_FROM is not None:
            extra += hard_negatives(EXTRA, HARD_FROM, copies=1)
        if PROPOSALS:
            extra += proposed_dice(EXTRA, HARD_FROM or MODELS / "dice-finder.onnx")
        print(f"rendered scenes: {sum(1 for b in extra if b[4])} dice, {sum(1 for b in extra if not b[4])} "
              "places that are not a die", flush=True)
        rendered = np.arange(len(bank), len(bank) + len(extra))
        bank += extra
    if SCENE_BANK:
        drawn = scene_bank(seed, SCENE_BANK, HARD_FROM, workers)
        print(f"drawn tables: {sum(1 for b in drawn if b[4])} dice, {sum(1 for b in drawn if not b[4])} "
              "places that are not a die", flush=True)
        bank += drawn
    if HARD_FROM is not None:
        hard = hard_negatives(data, HARD_FROM)
        print(f"hard negatives: {len(hard) // 3} places where the finder saw a die and there is none", flush=True)
        bank += hard
    if TABLE_SCENES:
        table_dice, table_not = rendered_tables(HARD_FROM or MODELS / "dice-finder.onnx", rng, TABLE_SCENES)
        print(f"rendered tables: {len(table_dice)} dice, {len(table_not)} places where the finder saw a die "
              "and there is none", flush=True)
        bank += table_dice + table_not
    print(f"bank: {len(bank)} patches, {sum(1 for b in bank if b[4])} dice", flush=True)
    # Draw half of every batch from the photos' dice: they are what the reader must get right,
    # and the drawn dice and the non-dice would otherwise outnumber them.
    real = np.array([i for i, b in enumerate(bank) if b[4] and not b[5]])
    other = np.array([i for i, b in enumerate(bank) if not (b[4] and not b[5])])
    # --render-share: that much of every batch from the rendered scenes (their dice and the places
    # between them), taken evenly from both halves, so that a few hundred renders are not lost
    # among thousands of drawn dice
    n_render = int(round(256 * RENDER_SHARE)) if EXTRA else 0
    net = (net or Reader()).to(DEVICE)
    if FREEZE_BN:
        freeze_norms(net)
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    t0 = time.time()

    def make(r: np.random.Generator):
        idx = np.concatenate([r.choice(real, 128 - n_render // 2), r.choice(other, 128 - (n_render - n_render // 2)),
                              r.choice(rendered, n_render) if n_render else np.zeros(0, int)])
        return to_tensor([bank_sample(bank[i], r) for i in idx]), torch.tensor([bank[i][4] for i in idx])

    source = batches(make, seed, workers)
    for step in schedule(opt, lr, minutes, steps):
        x, target = (t.to(DEVICE, non_blocking=True) for t in next(source))
        y = net(x)
        loss = F.cross_entropy(y, target, label_smoothing=0.02)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            acc = (y.argmax(1) == target).float().mean().item()
            print(f"reader step {step} {time.time() - t0:.0f}s loss {loss.item():.3f} acc {acc:.3f}", flush=True)
        if CHECKPOINT is not None and step % 1000 == 0:  # to look at a long run before it ends
            torch.save(net.state_dict(), CHECKPOINT.with_suffix(f".{step}.pt"))
    print(f"reader: {step} steps of 256 crops in {time.time() - t0:.0f} s (--steps {step} repeats it)", flush=True)
    return net.cpu()


def export(net: nn.Module, name: str, shape: tuple[int, ...], dynamic: dict, out_dir: Path = MODELS) -> Path:
    net.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.onnx"
    torch.onnx.export(net, torch.zeros(shape), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes=dynamic, opset_version=13, dynamo=False)
    return path


def main() -> None:
    global FREEZE_BN, HARD_FROM, CHECKPOINT, CROP, CROP_SCALE, TILT, PHOTOMETRIC, POOR, GLARE, TABLE_SCENES, NATIVE_POOR, SMALL
    global SCENES, SCENE_BANK, EXTRA, DEVICE, DATA, EXTRA_SHARE, RENDER_SHARE, JITTER, SIZE_RANGE, SMALL_WINDOWS
    global PROPOSALS
    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=["finder", "reader"])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--resume", type=Path, help="continue from a saved state (.pt)")
    ap.add_argument("--init-onnx", type=Path, help="start from an exported network (ONNX; use --freeze-bn)")
    ap.add_argument("--freeze-bn", action="store_true", help="keep the batch norms' statistics")
    ap.add_argument("--crops", action="append", default=[], metavar="DIR[:EVERY]",
                    help="reader: a single-die crop set (tools/train/crops.py), its train split, every EVERY-th")
    ap.add_argument("--save", type=Path, help="also save the trained state (.pt) here")
    ap.add_argument("--hard-negatives", type=Path, help="reader: add the false finds of this finder (ONNX)")
    ap.add_argument("--tilt", type=float, default=TILT, help="finder: largest perspective term of a window")
    ap.add_argument("--photometric", type=float, default=PHOTOMETRIC, help="reader: blur strength of the crops")
    ap.add_argument("--poor-camera", type=float, default=POOR,
                    help="reader: share of crops made dim, soft and JPEG-compressed at once")
    ap.add_argument("--poor-native", type=float, default=NATIVE_POOR,
                    help="reader: share of crops made dim, soft and JPEG-compressed at the photo's resolution")
    ap.add_argument("--small", type=float, default=SMALL,
                    help="reader: share of crops of dice shrunk to 0.4-0.8 of their photo size first")
    ap.add_argument("--glare", type=float, default=GLARE,
                    help="reader: share of crops given bright streaks and spots like a lamp's reflection")
    ap.add_argument("--tables", type=int, default=TABLE_SCENES,
                    help="reader: render this many whole tables (cups, markers, dice) for dice and non-dice")
    ap.add_argument("--crop", type=int, default=CROP, help="reader input side in pixels")
    ap.add_argument("--crop-scale", type=float, default=CROP_SCALE, help="reader crop side / die size")
    ap.add_argument("--all", action="store_true",
                    help="fit on every train image (once a recipe has been chosen on the held-out ones)")
    ap.add_argument("--out", type=Path, default=MODELS,
                    help="where to write the ONNX file (default models/; export elsewhere to compare first)")
    ap.add_argument("--data", type=Path, default=DATA, help="the labelled photos (byler's layout)")
    ap.add_argument("--extra", type=Path, action="append", default=[],
                    help="a folder of rendered scenes in the same layout; its train split joins the photos")
    ap.add_argument("--extra-share", type=float, default=EXTRA_SHARE,
                    help="finder: share of the windows not from drawn tables taken from --extra scenes")
    ap.add_argument("--render-share", type=float, default=RENDER_SHARE,
                    help="reader: share of every batch from the --extra scenes' dice and non-dice")
    ap.add_argument("--scenes", type=float, default=SCENES,
                    help="finder: share of windows from drawn tables of any cloth and clutter")
    ap.add_argument("--scene-bank", type=int, default=SCENE_BANK,
                    help="reader: drawn tables whose dice, side faces, clutter and false finds join the bank")
    ap.add_argument("--jitter", type=float, default=JITTER,
                    help="reader: sd of a die crop's centre shift, as a share of the die's size")
    ap.add_argument("--size-range", type=float, nargs=2, default=SIZE_RANGE, metavar=("LOW", "HIGH"),
                    help="reader: a die is cropped at LOW-HIGH times its size (the finder's sizes vary)")
    ap.add_argument("--proposals", action="store_true",
                    help="reader: also crop the rendered scenes' dice where the finder proposes them")
    ap.add_argument("--small-windows", type=float, default=SMALL_WINDOWS,
                    help="finder: share of windows scaled so their dice come out 5-12 px")
    ap.add_argument("--reader-widths", type=int, nargs=5, default=READER_WIDTHS, metavar="N",
                    help="reader: channels of its four convolutions and its hidden layer (with --init-onnx of "
                         "a narrower reader, it is widened keeping its answers)")
    ap.add_argument("--steps", type=int, help="train this many steps (instead of --minutes)")
    ap.add_argument("--batch", type=int, default=12, help="finder: windows a step")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--workers", type=int, default=0, help="processes drawing the batches")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(a.seed)
    DATA, DEVICE, SCENES, SCENE_BANK = a.data, a.device, a.scenes, a.scene_bank
    EXTRA = [item for folder in a.extra for item in load_split("train", folder)]
    if EXTRA:
        print(f"{len(EXTRA)} rendered scenes from {', '.join(map(str, a.extra))}", flush=True)
    train = load_split("train")
    fit = train if a.all else [d for i, d in enumerate(train) if i % 10 != 0]  # every 10th train image held out
    print(f"{len(fit)} images for fitting, {len(train) - len(fit)} held out", flush=True)
    HARD_FROM, CHECKPOINT, CROP, CROP_SCALE, TILT = a.hard_negatives, a.save, a.crop, a.crop_scale, a.tilt
    PHOTOMETRIC, POOR, GLARE, TABLE_SCENES = a.photometric, a.poor_camera, a.glare, a.tables
    NATIVE_POOR, SMALL, EXTRA_SHARE, RENDER_SHARE = a.poor_native, a.small, a.extra_share, a.render_share
    JITTER, SIZE_RANGE, SMALL_WINDOWS, PROPOSALS = a.jitter, tuple(a.size_range), a.small_windows, a.proposals
    widths = tuple(a.reader_widths)
    net = Finder() if a.part == "finder" else Reader(CROP, widths)
    if a.init_onnx:
        net = from_onnx(a.init_onnx, Finder() if a.part == "finder" else Reader(CROP))
        if a.part == "reader" and widths != READER_WIDTHS:
            net = widen(net, Reader(CROP, widths))
    FREEZE_BN = a.freeze_bn
    if a.crops:  # real dice the reader must get right, as the photos' dice
        from tools.train.crops import load as load_crops

        for spec in a.crops:
            folder, _, every = spec.partition(":")
            crops = load_crops(Path(folder), "train", int(every or 1))
            print(f"{len(crops)} crops from {folder}", flush=True)
            fit = fit + crops
    if a.resume:
        net.load_state_dict(torch.load(a.resume))
    if a.part == "finder":
        net = train_finder(fit, a.minutes, rng, net, a.lr, a.steps, a.batch, a.workers, a.seed)
    else:
        net = train_reader(fit, a.minutes, rng, net, a.lr, a.steps, a.workers, a.seed)
    if a.save:
        torch.save(net.state_dict(), a.save)
    if a.part == "finder":
        print(export(net, "dice-finder", (1, 3, IN, IN), {"x": {2: "h", 3: "w"}, "y": {2: "h", 3: "w"}}, a.out))
    else:
        print(export(net, "dice-reader", (1, 3, CROP, CROP), {"x": {0: "n"}, "y": {0: "n"}}, a.out))
        # the runtime crops the way this reader was trained to look
        (a.out / "dice-reader.json").write_text(json.dumps({"crop": CROP, "crop_scale": CROP_SCALE}) + "\n")


if __name__ == "__main__":
    main()
