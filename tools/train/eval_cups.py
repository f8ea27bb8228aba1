"""Choose the cup finder's threshold (and with the judge, its) on held-out rendered tables (not
imported at runtime)::

    .venv/bin/python -m tools.train.eval_cups DIR [DIR ...] [--model models/cup-finder.onnx]

For each threshold: photos with every count right, and cups, turned cups and balls missed and
extra (the counts ``companion bench tables --scenes`` compares). Run it on a validation set, not
on the scenes the figures are reported for.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import cv2

from companion.bench.tables import scene_truth
from companion.vision.calibrate import CalibrationError, calibrate
from companion.vision.cups import net
from companion.vision.cups.discover import measure_table
from companion.vision.layout import Layout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--model", type=Path, default=net.MODELS / net.MODEL)
    ap.add_argument("--judge", type=Path, nargs="+", default=list(net.JUDGES),
                    help="the judges' models, answering together ('-': none)")
    a = ap.parse_args()
    finder = net.CupFinder(a.model, None if [str(j) for j in a.judge] == ["-"] else a.judge)
    heats = []
    for d in a.dirs:
        for path, truth in scene_truth(d).items():
            frame = cv2.imread(path)
            try:
                w, h = measure_table(frame)
                cal = calibrate(frame, Layout(table_w=w, table_h=h))
            except CalibrationError:
                heats.append((path, truth, None, None, None))
                continue
            finder.find(frame, cal.homography, w, h, 0.0, cal=cal)   # (every find at any threshold)
            heats.append((path, truth, (finder.last_heat, finder.last_judged, h), (-cal.R.T @ cal.tvec).ravel(), w))
    for sure in (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        right, tally = 0, Counter()
        for _, truth, heat, eye, w in heats:
            got = {"cups": Counter(), "turned": Counter(), "balls": Counter()}
            if heat is not None:
                finder.last_heat, finder.last_judged, h = heat
                r = net.reading(finder.refind(w, h, sure), eye, w, h)
                got = {"cups": Counter((c.side, c.cup) for c in r.cups),
                       "turned": Counter((c.side, c.cup) for c in r.upside_down),
                       "balls": Counter((c.side, c.cup) for c in r.balls())}
            ok = True
            for k in ("cups", "turned", "balls"):
                miss, extra = sum((truth[k] - got[k]).values()), sum((got[k] - truth[k]).values())
                tally[k + " missed"] += miss
                tally[k + " extra"] += extra
                tally[k] += sum(truth[k].values())
                ok &= miss == extra == 0
            right += ok
        print(f"sure {sure:.2f}: {right}/{len(heats)} right; " + ", ".join(
            f"{k} {tally[k + ' missed']}/{tally[k + ' extra']} of {tally[k]}" for k in ("cups", "turned", "balls")))


if __name__ == "__main__":
    main()
