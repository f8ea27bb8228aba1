"""The reader network alone on the held-out train dice (every 10th byler train image, as the
training script holds out): each labelled die cropped around its labelled centre at 12 angles ×
3 sizes, the way candidates are compared in ``models/dice-reader.md`` (not imported at runtime).

    PYTHONPATH=. python -m tools.train.eval_reader models /tmp/candidate ...

Each folder holds ``dice-reader.onnx`` and its ``dice-reader.json``. Prints the share of crops
read right, the upright crops right, and the dice right when the 36 views vote.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import cv2
import numpy as np

from companion.vision.dice.reader import to_blob
from companion.vision.nets import read_onnx

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "dice" / "byler"  # --data for another copy
ANGLES = range(0, 360, 30)
SIZES = (0.9, 1.0, 1.15)


def held_out() -> list[tuple[str, list[tuple[float, float, float, int]]]]:
    per: dict[str, list[tuple[float, float, float, int]]] = {}
    with open(DATA / "annotations.csv") as f:
        for row in csv.DictReader(f):
            if row["upstream_split"] != "train":
                continue
            x0, y0, x1, y1 = (float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax"))
            per.setdefault(row["image"], []).append(((x0 + x1) / 2, (y0 + y1) / 2, math.sqrt((x1 - x0) * (y1 - y0)),
                                                     int(row["value"])))
    return [(name, per[name]) for i, name in enumerate(sorted(per)) if i % 10 == 0]


def evaluate(folder: Path, dice: list[tuple[str, list[tuple[float, float, float, int]]]]) -> str:
    net = read_onnx(folder / "dice-reader.onnx")
    geometry = json.loads((folder / "dice-reader.json").read_text())
    crop, crop_scale = int(geometry["crop"]), float(geometry["crop_scale"])
    crops, truth = [], []
    for name, labelled in dice:
        img = cv2.imread(str(DATA / name))
        for cx, cy, size, value in labelled:
            for angle in ANGLES:
                for s in SIZES:
                    m = cv2.getRotationMatrix2D((cx, cy), angle, crop / (size * s * crop_scale))
                    m[0, 2] += crop / 2 - cx
                    m[1, 2] += crop / 2 - cy
                    crops.append(cv2.warpAffine(img, m, (crop, crop), flags=cv2.INTER_AREA,
                                                borderMode=cv2.BORDER_REPLICATE))
                    truth.append(value)
    blob = to_blob(np.stack(crops))
    logits = []
    for k in range(0, len(blob), 256):
        net.setInput(blob[k:k + 256])
        logits.append(net.forward())
    p = np.concatenate(logits)
    y = np.array(truth)
    views = len(ANGLES) * len(SIZES)
    e = np.exp(p - p.max(axis=1, keepdims=True))
    e /= e.sum(axis=1, keepdims=True)
    vote = e.reshape(-1, views, 7).mean(axis=1).argmax(axis=1) == y.reshape(-1, views)[:, 0]
    upright = p.reshape(-1, views, 7)[:, SIZES.index(1.0)].argmax(axis=1) == y.reshape(-1, views)[:, 0]
    return (f"{folder}: crops {100 * (p.argmax(axis=1) == y).mean():.2f} % right of {len(y)}, "
            f"upright {upright.sum()}/{len(upright)}, {views}-view vote {vote.sum()}/{len(vote)}")


def main() -> None:
    dice = held_out()
    for folder in sys.argv[1:] or ["models"]:
        print(evaluate(Path(folder), dice), flush=True)


if __name__ == "__main__":
    main()
