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

Rendered train scenes (``--rendered DIR``, from ``tools/render``) add a third centre per colour
(the spreads stay the photos': widened to the rendered dice, dice of other colours took the six
names); their dice of other colours join the others. Every die's colour is measured with the light's colour undone, as the reader does.

    PYTHONPATH=. python -m tools.train.colour_defaults [--rendered DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path

import cv2
import numpy as np

from companion.sim.dice import BODY_BGR
from companion.vision.colour import DEFAULT_FILE, OTHER, ColourProfiles, Profile, dice_labs

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "tests" / "data" / "dice" / "byler_colours.json"
BYLER = ROOT / "tests" / "data" / "dice" / "byler"
MIN_SPREAD = np.array([12.0, 3.0, 3.0])
NEUTRAL = {"white", "black"}
NEUTRAL_SPREAD = np.array([12.0, 1.6, 1.6])


def byler_samples(samples: dict[str, list[np.ndarray]]) -> None:
    truth = json.loads(LABELS.read_text())["train"]
    for image, dice in truth.items():
        frame = cv2.imread(str(BYLER / image))
        labs = dice_labs(frame, [(tuple(d["center"]), d["size"]) for d in dice])  # the light undone, as the reader does
        for d, lab in zip(dice, labs, strict=True):
            if d["color"] in BODY_BGR or d["color"] == OTHER:
                samples.setdefault(d["color"], []).append(lab)


def rendered_samples(folder: Path, samples: dict[str, list[np.ndarray]]) -> int:
    """Dice of rendered scenes (``tools/render``, their ``color`` column): the six colours by
    name, every other colour as OTHER."""
    per: dict[str, list[tuple[tuple[float, float], float, str]]] = {}
    with open(folder / "annotations.csv") as f:
        for row in csv.DictReader(f):
            x0, y0, x1, y1 = (float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax"))
            per.setdefault(row["image"], []).append((((x0 + x1) / 2, (y0 + y1) / 2), math.sqrt((x1 - x0) * (y1 - y0)),
                                                    row["color"] if row["color"] in BODY_BGR else OTHER))
    for image, dice in per.items():
        frame = cv2.imread(str(folder / image))
        labs = dice_labs(frame, [(c, size) for c, size, _ in dice])
        for (_c, _s, name), lab in zip(dice, labs, strict=True):
            samples.setdefault(name, []).append(lab)
    return sum(len(d) for d in per.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rendered", type=Path, action="append", default=[],
                    help="rendered scenes (tools/render, train seeds) whose dice join the samples")
    a = ap.parse_args()
    samples: dict[str, list[np.ndarray]] = {}
    byler_samples(samples)
    photo_counts = {n: len(v) for n, v in samples.items()}
    rendered = {n: [] for n in [*BODY_BGR, OTHER]}
    for folder in a.rendered:
        print(f"{rendered_samples(folder, rendered)} rendered dice from {folder}")
    profiles = {}
    for name, bgr in BODY_BGR.items():
        a = np.array(samples[name])
        centre = np.median(a, axis=0)
        painted = cv2.cvtColor(np.array([[bgr]], np.float32) / 255, cv2.COLOR_BGR2Lab)[0, 0]
        centres = [centre, painted]
        if len(rendered[name]) >= 5:  # a third centre: the rendered dice, lit every way
            r = np.array(rendered[name])
            centres.append(np.median(r, axis=0))
        # the spread of the photos' dice only: the rendered ones, lit every way, widened it so far
        # that dice of other colours (maroon, teal, grey) took the six colours' names
        robust = 1.5 * 1.4826 * np.median(np.abs(a - centre), axis=0)
        spread = np.maximum(robust, NEUTRAL_SPREAD if name in NEUTRAL else MIN_SPREAD)
        profiles[name] = Profile([tuple(round(float(v), 1) for v in c) for c in centres],
                                 tuple(round(float(v), 1) for v in spread))  # type: ignore[arg-type]
        print(f"{name}: {len(a)} labelled + {len(rendered[name])} rendered dice, centres "
              f"{[np.round(c, 1).tolist() for c in centres]}, spread {np.round(spread, 1)}")
    samples[OTHER] = samples.get(OTHER, []) + rendered[OTHER]
    for name in BODY_BGR:
        samples[name] = samples[name] + rendered[name]
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
    # the hue rules (vision/colour.HueRules) are chosen by hand on renders, not made here: keep them
    rules = json.loads(DEFAULT_FILE.read_text()).get("rules") if DEFAULT_FILE.exists() else None
    if rules:
        doc["rules"] = rules
    counts = ", ".join(f"{n} {photo_counts.get(n, 0)}" for n in [*BODY_BGR, OTHER])
    shown = ", ".join(f"{n} {len(rendered[n])}" for n in [*BODY_BGR, OTHER])
    doc["note"] = (f"Defaults so the reader works uncalibrated, made by tools/train/colour_defaults.py from "
                   f"dice hand-labelled on byler train photos ({counts}), rendered train scenes ({shown}) and the "
                   "drawn dice's colours, each with the light's colour undone (vision/colour.dice_labs); others: the "
                   "train dice of other colours that no die of a colour is nearer to; where they say unknown, the "
                   "rules: hue sectors (degrees of the angle of a*, b*, and the least chroma) and lightness for "
                   "white and black (vision/colour.HueRules), chosen on rendered scenes (models/dice-reader.md). "
                   "Calibrate a real table with `companion calibrate colours`.")
    doc["games"] = {"twentyone": ["white", "black", "red", "blue", "yellow", "green"],
                    "exact21": ["blue", "red", "green", "yellow"]}
    DEFAULT_FILE.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {DEFAULT_FILE}")


if __name__ == "__main__":
    main()
