"""Write drawn tables (:mod:`tools.train.scenes`) to a folder in byler's layout, so that
``companion bench dice DIR --split all`` scores the reader on them::

    PYTHONPATH=. python -m tools.train.write_scenes /tmp/drawn --count 100 --seed 50000
    companion bench dice /tmp/drawn --split all

Each image gets its own generator (``seed + i``), apart from the streams training draws from.
``--family`` forces one cloth (``speckle``, ``dots``, ...) for a per-factor set."""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import cv2
import numpy as np

from tools.train.scenes import FAMILIES, scene


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=50_000)
    ap.add_argument("--family", choices=FAMILIES)
    ap.add_argument("--no-dice", action="store_true", help="cloths and clutter only")
    a = ap.parse_args()
    (a.out / "images").mkdir(parents=True, exist_ok=True)
    (a.out / "labels").mkdir(exist_ok=True)
    rows = []
    for i in range(a.count):
        rng = np.random.default_rng(a.seed + i)
        img, dice, _ = scene(rng, with_dice=not a.no_dice, family=a.family)
        name = f"d{a.seed + i:06d}.jpg"
        cv2.imwrite(str(a.out / "images" / name), img, [cv2.IMWRITE_JPEG_QUALITY, 90])
        h, w = img.shape[:2]
        lines = []
        for cx, cy, size, value in dice:
            half = size / 2 / 1.1  # the top face's box (scene() reports a little more, as the photos' boxes)
            rows.append({"image": f"images/{name}", "xmin": round(cx - half, 1), "ymin": round(cy - half, 1),
                         "xmax": round(cx + half, 1), "ymax": round(cy + half, 1), "value": int(value),
                         "upstream_split": "test"})
            lines.append(f"{int(value) - 1} {cx / w:.6f} {cy / h:.6f} {2 * half / w:.6f} {2 * half / h:.6f}")
        (a.out / "labels" / f"d{a.seed + i:06d}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
    with open(a.out / "annotations.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, ["image", "xmin", "ymin", "xmax", "ymax", "value", "upstream_split"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {a.count} drawn tables, {len(rows)} dice, to {a.out}")


if __name__ == "__main__":
    main()
