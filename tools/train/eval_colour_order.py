"""The colour-order check of learning a set-up (companion.vision.cups.discover.learn), measured:
every rendered table photo learnt as sent (never to be refused as swapped) and with channels 0
and 2 exchanged (a camera sending red and blue swapped: to be refused where the table is a
set-up the learner reads whole). Read-only on the scene folders (tools/render/cup_scenes.py's
``images/`` and ``meta/``)::

    python tools/train/eval_colour_order.py /tmp/cups_heldout /tmp/cups_val71 tests/data/cups-sequences

Prints, per folder and in all: photos, set-up photos (every cup standing, from meta), correct
photos refused as swapped (must be 0), swapped photos caught (of all, of the set-ups, of those
learnt whole as sent), and the milliseconds of learning as sent with the check."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from companion.vision.calibrate import CalibrationError
from companion.vision.cups.discover import learn, whole_set_up


def learnt(frame: np.ndarray) -> tuple[str, bool, float]:
    """(OK or the error's code, whether the set-up read is whole, ms)."""
    t0 = time.perf_counter()
    try:
        cal = learn(frame)
        code, whole = "OK", whole_set_up(cal.slots)
    except CalibrationError as err:
        code, whole = err.code, False
    return code, whole, (time.perf_counter() - t0) * 1000


def main(folders: list[str]) -> None:
    rows = []
    for folder in map(Path, folders):
        for image in sorted((folder / "images").glob("*.jpg")) + sorted((folder / "images").glob("*.png")):
            meta = folder / "meta" / f"{image.stem}.json"
            stage = json.loads(meta.read_text()).get("factors", {}).get("stage") if meta.exists() else None
            frame = cv2.imread(str(image))
            sent, whole, ms = learnt(frame)
            swapped, _, ms_swapped = learnt(np.ascontiguousarray(frame[..., ::-1]))
            rows.append((folder.name, stage == "setup", sent, whole, swapped, ms, ms_swapped))
    for name in [*dict.fromkeys(r[0] for r in rows), "all"]:
        mine = [r for r in rows if name in ("all", r[0])]
        setups = [r for r in mine if r[1]]
        whole = [r for r in mine if r[3]]

        def caught(rs: list) -> str:
            return f"{sum(r[4] == 'COLOURS_SWAPPED' for r in rs)} of {len(rs)}"

        print(f"{name}: {len(mine)} photos ({len(setups)} set-ups); correct refused as swapped "
              f"{sum(r[2] == 'COLOURS_SWAPPED' for r in mine)}; swapped caught {caught(mine)} "
              f"(set-ups {caught(setups)}, learnt whole as sent {caught(whole)}); learning ms median "
              f"{statistics.median(r[5] for r in mine):.0f} as sent, {statistics.median(r[6] for r in mine):.0f} swapped")


if __name__ == "__main__":
    main(sys.argv[1:])
