"""Whole readers (finder + reader) on the held-out train photos (every 10th byler train image, as
the training script holds out) under many perturbation seeds, to choose between candidates when
the 151 held-out dice alone are all read right (not imported at runtime).

    PYTHONPATH=. python -m tools.train.eval_held models /tmp/candidate ... \\
        [--seeds 8] [--parts tilt,blur,dark,jpeg]

Each photo is perturbed as ``companion bench dice --perturb`` does, with seeds 100·s + k for
s = 100, 101, …; ``--parts`` keeps only some of the perturbation (rotation is always there):
``--parts tilt`` is a tilted camera in good light, the nearest to a clean photo that still varies.
Prints dice right, wrong, missed and extra per candidate folder. ``--tables N`` also reads N
rendered photos of a whole 21 Exact table (random cameras, light and cloth, seeds 0…N−1; the
training renders from 90,000 up) the way ``companion dice`` does, markers left out: its extras are
cup gaps and rims taken for dice.
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

import cv2

from companion.bench.dice import load_labelled, match, perturb
from companion.vision.dice.reader import DiceReader, read_photo
from tools.train.eval_reader import DATA, held_out

PARTS = ("tilt", "blur", "dark", "jpeg")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*", type=Path, default=[Path("models")])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--tables", type=int, default=0, help="also read this many rendered whole tables")
    ap.add_argument("--parts", default=",".join(PARTS), help="which perturbations: " + ",".join(PARTS))
    a = ap.parse_args()
    parts = set(a.parts.split(",")) if a.parts else set()
    if parts - set(PARTS):
        ap.error(f"unknown parts: {', '.join(sorted(parts - set(PARTS)))}")
    cv2.setNumThreads(1)
    names = {Path(name).name for name, _ in held_out()}
    held = [(cv2.imread(str(p)), lab) for p, lab in load_labelled(DATA, "train") if p.name in names]
    keep = {p: p in parts for p in PARTS}
    for folder in a.folders:
        reader = DiceReader(models_dir=folder)
        n = right = wrong = missed = extra = 0
        for s in range(100, 100 + a.seeds):
            for k, (img, labels) in enumerate(held):
                frame, truth = perturb(img, labels, seed=s * 100 + k, **keep)
                dice = reader.read(frame)
                pairs, miss, ext = match(dice, truth)
                n += len(truth)
                missed += len(miss)
                extra += len(ext)
                for i, j in pairs:
                    ok = dice[j].value == int(truth[i, 0])
                    right += ok
                    wrong += not ok
        if n:
            print(f"{folder} [{','.join(sorted(parts)) or 'rotation only'}, {a.seeds} seeds]: {right}/{n} right "
                  f"({100 * right / n:.2f} %), {wrong} wrong, {missed} missed, {extra} extra", flush=True)
        if a.tables:
            print(f"{folder} [{a.tables} rendered tables]: {tables(reader, a.tables)}", flush=True)


def tables(reader: DiceReader, count: int) -> str:
    from companion.sim.render import Renderer, full_table, random_look
    from companion.vision.layout import Layout

    layout = Layout()
    n = right = wrong = missed = extra = 0
    for seed in range(count):
        rng = random.Random(seed)
        values = {side: {c: rng.randint(1, 6) for c in ("blue", "red", "green", "yellow")} for side in "AB"}
        scene = full_table(layout, values)
        renderer = Renderer(random_look(rng), layout, seed=seed)
        frame = renderer.static(scene.cups, scene.dice)
        dice = read_photo(reader, frame)
        used = set()
        for die, (x, y, _side) in zip(scene.dice, renderer.die_tops(scene.dice), strict=True):
            here = [j for j, d in enumerate(dice) if math.hypot(d.center[0] - x, d.center[1] - y) < 15]
            n += 1
            if not here:
                missed += 1
                continue
            used.update(here)
            ok = dice[here[0]].value == die.value
            right += ok
            wrong += not ok
        extra += len(dice) - len(used)
    return f"{right}/{n} right, {wrong} wrong, {missed} missed, {extra} extra"


if __name__ == "__main__":
    main()
