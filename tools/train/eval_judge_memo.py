"""How far the live watch's kept judge answers (``judge.JudgeMemo``) lie from fresh ones (not
imported at runtime)::

    .venv/bin/python -m tools.train.eval_judge_memo DIR [--noise 3]

DIR is a folder of ``tools/render/cup_scenes.py --sequence``. Each sequence runs through the live
service as ``companion bench cups --sequences`` runs it; every time the watch asks the judges with
its memo, the same places are judged again without it, and the two answers are compared. Prints
how many answers were kept, the largest differences in class and ball probability, and whether
any place's class changed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from companion.bench.cups import run_sequence
from companion.vision.cups import judge as J


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--noise", type=float, default=0.0, help="a camera's noise, sigma in grey levels")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    judged, recall = J.CupJudge.judge, J.JudgeMemo.recall
    rows: list[tuple[float, float, bool]] = []   # per answer: class diff, ball diff, class changed
    kept = 0

    def counted(self, *a, **k):
        nonlocal kept
        found = recall(self, *a, **k)
        kept += found is not None
        return found

    def compared(self, frame, cal, places, gains=None, mirror=True, ball_look=True, memo=None):
        p, b = judged(self, frame, cal, places, gains, mirror, ball_look, memo)
        if memo is not None and places:
            p0, b0 = judged(self, frame, cal, places, gains, mirror, ball_look, None)
            rows.extend((float(np.abs(p[i] - p0[i]).max()), abs(float(b[i] - b0[i])),
                         int(p[i].argmax()) != int(p0[i].argmax())) for i in range(len(places)))
        return p, b

    J.CupJudge.judge, J.JudgeMemo.recall = compared, counted
    try:
        for path in sorted((args.folder / "sequences").glob("*.json")):
            run_sequence(path, noise=args.noise)
    finally:
        J.CupJudge.judge, J.JudgeMemo.recall = judged, recall
    if not rows:
        print("no answer asked with the memo")
        return
    d = np.array([(c, b) for c, b, _ in rows])
    print(f"answers {len(rows)}, kept {kept}; class probability differs by at most {d[:, 0].max():.3f} "
          f"(99th percentile {np.percentile(d[:, 0], 99):.3f}); ball probability by at most {d[:, 1].max():.3f} "
          f"(99th percentile {np.percentile(d[:, 1], 99):.3f}); class changed at {sum(r[2] for r in rows)}")


if __name__ == "__main__":
    main()
