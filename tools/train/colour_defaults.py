"""Make ``models/dice-colours.json``, the colour profiles the reader uses before a table is
calibrated (not imported at runtime).

Per colour: two L*a*b* centres — the median of the dice hand-labelled with that colour on byler
**train** photos (``tests/data/dice/byler_colours.json``) and the body colour the renderer paints
(:data:`companion.sim.dice.BODY_BGR`) — and a spread per axis of 1.5 × the robust
standard deviation of the labelled dice, at least (12, 3, 3) — for the neutral bodies (white,
black) at least (12, 1.6, 1.6): any tint means another colour, and a dark purple or brown die is
otherwise taken for black. A die is named when within 2.5
spreads of its colour and clearly nearer to it than to any other (margin 1.0), and not nearer
to one of the ``others``: every train die hand-labelled "other" (maroon, purple, brown, orange
and marbled dice), so a dark red-brown die within red's spreads is not named red.

    PYTHONPATH=. python -m tools.train.colour_defaults
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from companion.sim.dice import BODY_BGR
from companion.vision.colour import DEFAULT_FILE, OTHER, ColourProfiles, Profile, face_lab

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "tests" / "data" / "dice" / "byler_colours.json"
BYLER = ROOT / "tests" / "data" / "dice" / "byler"
MIN_SPREAD = np.array([12.0, 3.0, 3.0])
NEUTRAL = {"white", "black"}
NEUTRAL_SPREAD = np.array([12.0, 1.6, 1.6])


def main() -> None:
    truth = json.loads(LABELS.read_text())["train"]
    samples: dict[str, list[np.ndarray]] = {}
    for image, dice in truth.items():
        frame = cv2.imread(str(BYLER / image))
        for d in dice:
            if d["color"] in BODY_BGR or d["color"] == OTHER:
                samples.setdefault(d["color"], []).append(face_lab(frame, tuple(d["center"]), d["size"]))
    profiles = {}
    for name, bgr in BODY_BGR.items():
        a = np.array(samples[name])
        centre = np.median(a, axis=0)
        robust = 1.5 * 1.4826 * np.median(np.abs(a - centre), axis=0)
        spread = np.maximum(robust, NEUTRAL_SPREAD if name in NEUTRAL else MIN_SPREAD)
        painted = cv2.cvtColor(np.array([[bgr]], np.float32) / 255, cv2.COLOR_BGR2Lab)[0, 0]
        profiles[name] = Profile([tuple(round(float(v), 1) for v in centre), tuple(round(float(v), 1) for v in painted)],
                                 tuple(round(float(v), 1) for v in spread))  # type: ignore[arg-type]
        print(f"{name}: {len(a)} labelled dice, centre {np.round(centre, 1)}, spread {np.round(spread, 1)}")
    named = ColourProfiles(profiles, max_distance=2.5, margin=1.0)
    # A die of a profile's colour (labelled, or as the renderer paints it) must not end up
    # nearer to an "other" than to its profile: such an other is a die a person could call
    # by that colour too (an orange-yellow marbled die beside the yellow ones), and is left out.
    members = [(n, lab) for n in BODY_BGR for lab in [*samples[n], *profiles[n].lab]]
    others = []
    for lab in samples[OTHER]:
        vetoed = [n for n, m in members if named.classify_lab(m)[0] == n and np.linalg.norm(
            (np.asarray(m) - lab) / np.asarray(profiles[n].spread)) < profiles[n].distance(np.asarray(m))]
        if vetoed:
            print(f"other {np.round(lab, 1)} left out: nearer than their profile to {len(vetoed)} {vetoed[0]} dice")
        else:
            others.append(tuple(round(float(v), 1) for v in lab))
    print(f"others: {len(others)} of {len(samples[OTHER])} labelled dice of none of the colours")
    named.others = others  # type: ignore[assignment]
    doc = named.to_json()
    counts = ", ".join(f"{n} {len(samples[n])}" for n in [*BODY_BGR, OTHER])
    doc["note"] = (f"Defaults so the reader works uncalibrated, made by tools/train/colour_defaults.py from "
                   f"dice hand-labelled on byler train photos ({counts}) and the renderer's colours; others: the train dice labelled other that no die of a colour is nearer to. "
                   "Calibrate a real table with `companion calibrate colours`.")
    doc["games"] = {"twentyone": ["white", "black", "red", "blue", "yellow", "green"],
                    "exact21": ["blue", "red", "green", "yellow"]}
    DEFAULT_FILE.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {DEFAULT_FILE}")


if __name__ == "__main__":
    main()
