"""How well a set-up is learnt (``discover.learn``, what ``calibrate table`` and the live service
do at each new game) on rendered set-ups, against their labels (not imported at runtime)::

    .venv/bin/python -m tools.train.eval_setups DIR [DIR ...]

DIR is a folder of ``tools/render/cup_scenes.py``: its set-up stills (``stage`` = ``setup``) and
its sequences' first frames (``*_f0``). Each learnt slot is matched to the standing cup whose rim
it shows in (in pixels); a set-up is *exact* when every cup has its slot, of its side and colour,
and no slot is left over. *Refused* is the safe failure (the service says which cups it misses
and watches none); *learnt wrong* is the one to avoid (cups watched that are not there, or
missed without a word). One line a set-up, then the totals.

``--cover 1,3`` paints two markers over (as a frame's edge cuts them off) before learning, to
measure the table learnt from the other two; set-ups where those two are not found are left out.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cv2
import numpy as np

from companion.vision.calibrate import CalibrationError
from companion.vision.cups.discover import learn
from companion.vision.markers import find_markers


def set_ups(folder: Path) -> list[tuple[Path, dict]]:
    out = []
    for meta in sorted((folder / "meta").glob("*.json")):
        m = json.loads(meta.read_text())
        if m.get("phase") == "setup" or (m.get("phase") == "still" and m["factors"].get("stage") == "setup"):
            out.append((folder / m["image"], m))
    return out


def painted_over(frame: np.ndarray, corners: np.ndarray) -> None:
    """A marker and its paper painted in the colour round it."""
    centre = corners.mean(axis=0)
    paper, ring = centre + (corners - centre) * 1.9, centre + (corners - centre) * 2.6
    mask = np.zeros(frame.shape[:2], np.uint8)
    cv2.fillPoly(mask, [ring.astype(np.int32)], 1)
    cv2.fillPoly(mask, [paper.astype(np.int32)], 0)
    colour = np.median(frame[mask > 0].reshape(-1, 3), axis=0) if mask.any() else (90, 90, 90)
    cv2.fillPoly(frame, [paper.astype(np.int32)], [int(v) for v in colour])


def judge(image: Path, m: dict, cover: tuple[int, ...] = ()) -> tuple[str, list[str], tuple[float, float] | None]:
    """("exact" | "wrong" | "refused", what is wrong, the table's width and depth measured, off
    by so many per cent) for one set-up."""
    cups = [c for c in m["cups"] if c["state"] == "standing"]
    frame = cv2.imread(str(image))
    found = find_markers(frame) if cover else {}
    for i in cover:
        painted_over(frame, found[i])
    try:
        cal = learn(frame)
    except CalibrationError as err:
        return "refused", [err.message.split(": stand every cup")[0]], None
    true_w, true_h = m["table"]["between_markers_mm"]
    size = (100 * (cal.layout.table_w / true_w - 1), 100 * (cal.layout.table_h / true_h - 1))
    px = cal.project(np.array([[s.x, s.y, 0.0] for s in cal.slots]).reshape(-1, 3))
    used: set[int] = set()
    notes = []
    for s, p in zip(cal.slots, px, strict=True):
        best = None
        for i, c in enumerate(cups):
            d = float(np.hypot(*(np.array(c["rim_centre_px"]) - p)))
            if i not in used and d < max(c["rim_ellipse_px"]["axes"]) and (best is None or d < best[0]):
                best = (d, i)
        if best is None:
            notes.append(f"a {s.side} {s.cup} cup where none stands")
            continue
        used.add(best[1])
        c = cups[best[1]]
        if (c["side"], c["colour"]) != (s.side, s.cup):
            notes.append(f"side {c['side']}'s {c['colour']} cup learnt as side {s.side}'s {s.cup}")
    notes += [f"side {c['side']}'s {c['colour']} cup missed" for i, c in enumerate(cups) if i not in used]
    return ("wrong" if notes else "exact"), notes, size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--cover", type=lambda v: tuple(int(i) for i in v.split(",")), default=(),
                    help="markers to paint over before learning, e.g. 1,3")
    args = ap.parse_args()
    totals = {"exact": 0, "refused": 0, "wrong": 0}
    ms, sizes = [], []
    for folder in args.dirs:
        for image, m in set_ups(folder):
            if args.cover and not set(args.cover) <= set(find_markers(cv2.imread(str(image)))):
                print(f"{image.stem}: left out (markers {args.cover} not all found to cover)")
                continue
            t0 = time.perf_counter()
            verdict, notes, size = judge(image, m, args.cover)
            ms.append((time.perf_counter() - t0) * 1000)
            totals[verdict] += 1
            f = m["factors"]
            if size is not None:
                sizes.append(size)
            print(f"{image.stem}: {verdict} ({f['make']}, {f['light']}, {f['cloth']}, tilt {f['tilt']})"
                  + ("" if size is None else f", table {size[0]:+.1f} % × {size[1]:+.1f} %")
                  + (": " + "; ".join(notes) if notes else ""))
    n = sum(totals.values())
    print(f"{n} set-ups: {totals['exact']} learnt exactly, {totals['refused']} refused, {totals['wrong']} learnt wrong; "
          f"{np.median(ms) if ms else 0:.0f} ms a set-up (median, decoding included)")
    if sizes:
        off = np.array(sizes)
        print("table measured (width, depth), per cent off: median " + " × ".join(f"{v:+.1f}" for v in np.median(off, 0))
              + ", largest " + " × ".join(f"{v:.1f}" for v in np.abs(off).max(0)))


if __name__ == "__main__":
    main()
