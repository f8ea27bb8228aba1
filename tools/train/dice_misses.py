"""Why the dice reader misses the dice it misses, on labelled folders (not imported at runtime)::

    .venv/bin/python -m tools.train.dice_misses DIR [DIR ...] [--list] [--models CANDIDATE_DIR]

Each photo is read as ``companion bench dice`` reads it (``read_photo``, the same matching). For
every labelled die not found it asks the two networks again: does the finder propose it at the
first look (heat at 0.5 of the frame) or at the scale that suits its size, and what does the
reader say of a crop cut at the label's own box and at the finder's proposal? The misses are
counted by cause: the finder blind to it, the reader's "not a die" even at the label (the
reader), a proposal the reader rejects (the finder's size or centre), and by size. ``--list``
prints each photo's misses, wrong values and extras. ``--finder-sizes`` instead asks the finder
alone, at five scales, how often it proposes each labelled die and how large it says it is, by
the die's size in the finder's input. ``--fixed-scales`` reads each photo once at the scale that
brings its median labelled die to the finder's target size (no adapting), and counts each die
proposed and read right at the scale that suits that die alone: whether choosing the scale is
what loses dice.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from companion.bench.dice import load_labelled, match
from companion.vision.dice.reader import MODELS, SIZE_TARGET, DiceReader, crop_die, read_photo


def geometry(label) -> tuple[float, float, float]:
    """A label's (value, x0, y0, x1, y1) as its centre and side (the root of its box's area)."""
    _v, x0, y0, x1, y1 = label
    return (x0 + x1) / 2, (y0 + y1) / 2, math.sqrt((x1 - x0) * (y1 - y0))


def near(cands, cx: float, cy: float, s: float) -> list:
    """The finder's candidates within half a die's side of its centre."""
    return [c for c in cands if math.hypot(c[0] - cx, c[1] - cy) < 0.5 * s]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--list", action="store_true", help="each photo's misses, wrong values and extras")
    ap.add_argument("--models", type=Path, default=MODELS, help="a folder with other dice-*.onnx files")
    ap.add_argument("--finder-sizes", action="store_true",
                    help="the finder alone: dice proposed and their measured size, by size in its input")
    ap.add_argument("--fixed-scales", action="store_true",
                    help="read at the scale the labels say suits each photo, and each die")
    a = ap.parse_args()
    r = DiceReader(models_dir=a.models)
    if a.finder_sizes:
        finder_sizes(r, a.dirs)
        return
    if a.fixed_scales:
        fixed_scales(r, a.dirs)
        return
    tot: Counter[str] = Counter()
    causes: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for d in a.dirs:
        for img, labels in load_labelled(d, "all"):
            f = cv2.imread(str(img))
            dice = read_photo(r, f)
            pairs, missed, extra = match(dice, labels)
            wrong = [(i, j) for i, j in pairs if dice[j].value != labels[i][0]]
            tot.update(labelled=len(labels), right=len(pairs) - len(wrong), wrong=len(wrong), missed=len(missed),
                       extra=len(extra))
            lines = []
            first_look = r.candidates(f, 0.5) if missed else []   # (one look a photo serves every miss)
            for i in missed:
                v = labels[i][0]
                cx, cy, s = geometry(labels[i])
                at_label = r._classify([crop_die(f, cx, cy, s, r.crop, r.crop_scale)])[0]
                first = near(first_look, cx, cy, s)
                fit = near(r.candidates(f, min(1.0, SIZE_TARGET / s)), cx, cy, s)
                if 1 - at_label[0] < 0.5:
                    cause = "the reader: not a die even at the label's box"
                elif not first and not fit:
                    cause = "the finder: not proposed"
                else:
                    cause = "proposed, but the reader rejects the finder's crop (size or centre)"
                causes[cause] += 1
                sizes["under 26 px" if s < 26 else "26 px or more"] += 1
                c = max(first, key=lambda q: q[3]) if first else None
                lines.append(f"  missed {int(v)} ({s:.0f} px at {cx:.0f},{cy:.0f}): at the label "
                             f"{'not a die' if at_label[0] > 0.5 else int(np.argmax(at_label[1:])) + 1} "
                             f"({1 - at_label[0]:.2f}); proposed " + (f"{c[2]:.0f} px, heat {c[3]:.2f}" if c else "no"))
            lines += [f"  read {dice[j].value} for a {int(labels[i][0])} ({dice[j].confidence:.2f})" for i, j in wrong]
            lines += [f"  extra {dice[j].value} ({dice[j].confidence:.2f}) at {dice[j].center[0]:.0f},"
                      f"{dice[j].center[1]:.0f}, {dice[j].size:.0f} px" for j in extra]
            if a.list and lines:
                print(img.name + "\n" + "\n".join(lines))
    n, det = tot["labelled"], tot["right"] + tot["wrong"] + tot["extra"]
    print(f"{n} dice: {tot['right']} right, {tot['wrong']} wrong, {tot['missed']} missed, {tot['extra']} extra; "
          f"F1 {2 * tot['right'] / max(1, n + det):.3f}")
    for k, v in causes.most_common():
        print(f"missed, {k}: {v}")
    print("missed by size: " + ", ".join(f"{k} {v}" for k, v in sizes.items()))


def finder_sizes(r: DiceReader, dirs: list[Path]) -> None:
    """Every labelled die at finder scales 0.25-1: proposed (a peak within half its size), and the
    proposed size over the label's, binned by the die's size in the finder's input pixels."""
    edges = [0, 6, 8, 10, 12, 14, 17, 20, 26, 35, 10_000]
    seen: dict[int, list[float]] = {}
    count: Counter[int] = Counter()
    for d in dirs:
        for img, labels in load_labelled(d, "all"):
            f = cv2.imread(str(img))
            for scale in (0.25, 0.35, 0.5, 0.7, 1.0):
                cands = r.candidates(f, scale)
                for label in labels:
                    cx, cy, s = geometry(label)
                    b = int(np.searchsorted(edges, s * scale, side="right")) - 1
                    count[b] += 1
                    there = near(cands, cx, cy, s)
                    if there:
                        seen.setdefault(b, []).append(max(there, key=lambda c: c[3])[2] / s)
    print("die px in finder input | dice | proposed | size measured / label: median (10th-90th percentile)")
    for b in sorted(count):
        q = np.percentile(seen[b], [50, 10, 90]) if seen.get(b) else [float("nan")] * 3
        top = f"{edges[b + 1]}" if edges[b + 1] < 10_000 else ""
        print(f"{edges[b]}-{top} | {count[b]} | {len(seen.get(b, [])) / count[b]:.2f} | {q[0]:.2f} ({q[1]:.2f}-{q[2]:.2f})")


def fixed_scales(r: DiceReader, dirs: list[Path]) -> None:
    """F1 with each photo read at one scale chosen from its labels, and dice right when each is
    read at its own scale (the finder's best peak near it, the reader on the finder's crop)."""
    tot: Counter[str] = Counter()
    r.adapt = False
    for d in dirs:
        for img, labels in load_labelled(d, "all"):
            f = cv2.imread(str(img))
            r.scale = min(1.0, SIZE_TARGET / float(np.median([geometry(label)[2] for label in labels])))
            dice = read_photo(r, f)
            pairs, _missed, _extra = match(dice, labels)
            tot.update(labelled=len(labels), found=len(dice),
                       right=sum(dice[j].value == labels[i][0] for i, j in pairs))
            for label in labels:
                v, (cx, cy, s) = label[0], geometry(label)
                there = near(r.candidates(f, min(1.0, SIZE_TARGET / s)), cx, cy, s)
                if not there:
                    tot["own scale: not proposed"] += 1
                    continue
                c = max(there, key=lambda q: q[3])
                p = r._classify([crop_die(f, c[0], c[1], c[2], r.crop, r.crop_scale)])[0]
                tot["own scale: " + ("not a die" if 1 - p[0] < r.die_threshold else
                                     "right" if int(np.argmax(p[1:])) + 1 == int(v) else "misread")] += 1
    n = tot["labelled"]
    print(f"one scale a photo, from its labels: {tot['right']} of {n} right, F1 {2 * tot['right'] / max(1, n + tot['found']):.3f}")
    print("each die at its own scale: " + ", ".join(f"{k[11:]} {v}" for k, v in sorted(tot.items()) if k.startswith("own")))


if __name__ == "__main__":
    main()
