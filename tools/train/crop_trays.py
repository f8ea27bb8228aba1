"""Real dice for the finder: a crop set's train crops pasted onto felt-coloured canvases, written
in byler's layout so ``train_dice finder --extra DIR`` takes them as it takes rendered scenes
(not imported at runtime).

The finder was trained on photos, drawn and rendered dice only; fine-tuned on rendered scenes it
read the casino crops' translucent dice worse (lost to the renders' look). A canvas of the
crops' own felt colour with a slow mottle and grain, three to seven train crops on it, each
faded into it at its edges, keeps real translucent dice in its windows. A die's centre and size
are where the shipped finder sees it in its crop (``crops.locate``); crops it does not see are
left out, so no label is a guess.

    PYTHONPATH=. python -m tools.train.crop_trays /work/shared/data/dice/casino-crops /tmp/casino_trays --count 60
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import cv2
import numpy as np

from tools.train.crops import files, locate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("crops", type=Path, help="a crop set with its own train split (DIR/train/<value>/*)")
    ap.add_argument("out", type=Path)
    ap.add_argument("--count", type=int, default=60, help="canvases to write")
    ap.add_argument("--side", type=int, default=360, help="canvas side in pixels")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    from companion.vision.dice.reader import DiceReader

    finder = DiceReader(find_threshold=0.15)
    crops = []
    for path, value in files(a.crops, "train"):
        img = cv2.imread(str(path))
        found = locate(finder, img) if img is not None else None
        if found is not None:
            crops.append((img, value, found))
    if not crops:
        raise SystemExit(f"{a.crops}: no train crop in which the finder sees a die")
    (a.out / "images").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    side, rows = a.side, []
    for k in range(a.count):
        base = crops[int(rng.integers(len(crops)))][0]
        felt = np.median(np.concatenate([base[0], base[-1], base[:, 0], base[:, -1]]).astype(np.float32), axis=0)
        mottle = cv2.resize(rng.normal(0, 1, (24, 24, 3)).astype(np.float32), (side, side), interpolation=cv2.INTER_CUBIC)
        canvas = felt + mottle * rng.uniform(3, 10) + rng.normal(0, 2.5, (side, side, 3))
        placed: list[tuple[int, int, int, int]] = []
        for _ in range(int(rng.integers(3, 8))):
            img, value, (cx, cy, size) = crops[int(rng.integers(len(crops)))]
            h, w = img.shape[:2]
            for _try in range(30):
                x0, y0 = int(rng.integers(0, side - w)), int(rng.integers(0, side - h))
                if all(abs(x0 - x) > (w + pw) / 2 + 4 or abs(y0 - y) > (h + ph) / 2 + 4 for x, y, pw, ph in placed):
                    break
            else:
                continue
            placed.append((x0, y0, w, h))
            fade = np.zeros((h, w), np.float32)  # the crop's edges fade into the canvas: no square to learn
            cv2.rectangle(fade, (4, 4), (w - 5, h - 5), 1.0, -1)
            fade = cv2.GaussianBlur(fade, (0, 0), 3)[..., None]
            canvas[y0:y0 + h, x0:x0 + w] = canvas[y0:y0 + h, x0:x0 + w] * (1 - fade) + img.astype(np.float32) * fade
            x, y = x0 + cx, y0 + cy
            rows.append([f"images/c{k:04d}.jpg", x - size / 2, y - size / 2, x + size / 2, y + size / 2, value])
        cv2.imwrite(str(a.out / "images" / f"c{k:04d}.jpg"), np.clip(canvas, 0, 255).astype(np.uint8),
                    [cv2.IMWRITE_JPEG_QUALITY, 92])
    with open(a.out / "annotations.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["image", "xmin", "ymin", "xmax", "ymax", "value", "upstream_split"])
        for r in rows:
            out.writerow([r[0], *(round(v, 1) for v in r[1:5]), r[5], "train"])
    print(f"{len(rows)} dice on {a.count} canvases from {len(crops)} located crops, in {a.out}")


if __name__ == "__main__":
    main()
