"""Single-die crop sets as training and test data for the reader (not imported at runtime).

A crop set is a folder of crops labelled by folder name: ``DIR/<value>/*.png`` (tomitomi3: white
and black dice in a round cup) or ``DIR/<split>/<value>/*`` (casino: translucent dice on felt).
Each crop becomes a tiny "photo" with one die, so the bank takes it as it takes byler's photos.
The die's centre and size are where the shipped finder sees it (the size the runtime crops by),
else the crop's middle and 0.8 of its side (a casino crop is the die's box).

tomitomi3 has no split of its own: every fifth crop (by file name) is its test split.

    PYTHONPATH=. python -m tools.train.crops DIR [--split test]   # the reader on the crops
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FIND_PAD = 24  # room round a crop for the finder (a casino crop ends at the die's edges)


def files(folder: Path, split: str) -> list[tuple[Path, int]]:
    """(file, value) of one split of a crop set."""
    out = []
    if (folder / split).is_dir() or (folder / "train").is_dir():  # the source's own split
        for value in range(1, 7):
            out += [(f, value) for f in sorted((folder / split / str(value)).glob("*")) if f.is_file()]
        return out
    for value in range(1, 7):
        every = sorted((folder / str(value)).glob("*.png"))
        out += [(f, value) for k, f in enumerate(every) if (k % 5 == 0) == (split == "test")]
    return out


def locate(finder, img: np.ndarray) -> tuple[float, float, float] | None:
    """The die's centre and size in the crop where the finder sees it most surely near the middle."""
    h, w = img.shape[:2]
    padded = cv2.copyMakeBorder(img, FIND_PAD, FIND_PAD, FIND_PAD, FIND_PAD, cv2.BORDER_REPLICATE)
    best = None
    for scale in (0.3, 0.4, 0.55, 0.75):
        for cx, cy, size, heat in finder.candidates(padded, scale):
            cx, cy = cx - FIND_PAD, cy - FIND_PAD
            if math.hypot(cx - w / 2, cy - h / 2) < 0.25 * min(w, h) and (best is None or heat > best[3]):
                best = (cx, cy, size, heat)
    return None if best is None or best[3] < 0.4 else best[:3]


def load(folder: Path, split: str = "train", every: int = 1) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """[(crop as BGR, dice[1, 4] = cx, cy, size, value), name] like ``train_dice.load_split``."""
    sys.path.insert(0, str(ROOT))
    from companion.vision.dice.reader import DiceReader

    finder = DiceReader(find_threshold=0.15)  # the shipped finder: where the runtime will crop
    out = []
    for k, (path, value) in enumerate(files(folder, split)):
        if k % every:
            continue
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if img is None:
            continue
        h, w = img.shape[:2]
        found = locate(finder, img)
        cx, cy, size = found if found else (w / 2, h / 2, 0.8 * min(w, h))
        out.append((img, np.array([[cx, cy, size, value]], np.float32), str(path.relative_to(folder))))
    return out


def main() -> None:
    from companion.vision.dice.reader import DiceReader, crop_die

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--split", default="test")
    ap.add_argument("--models", type=Path, default=ROOT / "models")
    a = ap.parse_args()
    reader = DiceReader(models_dir=a.models)
    right, wrong, confusion = 0, [], np.zeros((7, 7), int)
    for img, dice, name in load(a.folder, a.split):
        cx, cy, size, value = dice[0]
        p = reader._classify([crop_die(img, cx, cy, size, reader.crop, reader.crop_scale)])[0]
        got = int(np.argmax(p))
        confusion[int(value), got] += 1
        if got == value:
            right += 1
        else:
            wrong.append((name, int(value), got))
    n = right + len(wrong)
    print(f"{a.folder.name} {a.split}: {right} of {n} crops read right ({100 * right / max(n, 1):.1f} %), "
          f"models {a.models}")
    print("confusion (rows: true 1-6; columns: not a die, 1-6):")
    for v in range(1, 7):
        print(f"  {v}: {' '.join(f'{c:4d}' for c in confusion[v])}")
    for name, v, got in wrong[:20]:
        print(f"  {name}: {v} read as {got or 'not a die'}")


if __name__ == "__main__":
    main()
