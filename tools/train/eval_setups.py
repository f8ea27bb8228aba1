"""How well a set-up is learnt (``discover.learn``, what ``calibrate table`` and the live service
do at each new game) on rendered set-ups, against their labels (not imported at runtime)::

    .venv/bin/python -m tools.train.eval_setups DIR [DIR ...]

DIR is a folder of ``tools/render/cup_scenes.py``: its set-up stills (``stage`` = ``setup``) and
its sequences' first frames (``*_f0``). Each learnt slot is matched to the standing cup whose rim
it shows in (in pixels); a set-up is *exact* when every cup has its slot, of its side and colour,
and no slot is left over. *Refused* is the safe failure (the service says which cups it misses
and watches none); *learnt wrong* is the one to avoid (cups watched that are not there, or
missed without a word). One line a set-up, then the totals.
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


def set_ups(folder: Path) -> list[tuple[Path, dict]]:
    out = []
    for meta in sorted((folder / "meta").glob("*.json")):
        m = json.loads(meta.read_text())
        if m.get("phase") == "setup" or (m.get("phase") == "still" and m["factors"].get("stage") == "setup"):
            out.append((folder / m["image"], m))
    return out


def judge(image: Path, m: dict) -> tuple[str, list[str]]:
    """("exact" | "wrong" | "refused", what is wrong) for one set-up."""
    cups = [c for c in m["cups"] if c["state"] == "standing"]
    try:
        cal = learn(cv2.imread(str(image)))
    except CalibrationError as err:
        return "refused", [err.message.split(": stand every cup")[0]]
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
    return ("wrong" if notes else "exact"), notes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    args = ap.parse_args()
    totals = {"exact": 0, "refused": 0, "wrong": 0}
    ms = []
    for folder in args.dirs:
        for image, m in set_ups(folder):
            t0 = time.perf_counter()
            verdict, notes = judge(image, m)
            ms.append((time.perf_counter() - t0) * 1000)
            totals[verdict] += 1
            f = m["factors"]
            print(f"{image.stem}: {verdict} ({f['make']}, {f['light']}, {f['cloth']}, tilt {f['tilt']})"
                  + (": " + "; ".join(notes) if notes else ""))
    n = sum(totals.values())
    print(f"{n} set-ups: {totals['exact']} learnt exactly, {totals['refused']} refused, {totals['wrong']} learnt wrong; "
          f"{np.median(ms) if ms else 0:.0f} ms a set-up (median, decoding included)")


if __name__ == "__main__":
    main()
