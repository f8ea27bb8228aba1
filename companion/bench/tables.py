"""``companion bench tables [--tables N] [--seed S] [--json]``: still photos of 21 Exact tables the
reader was never told about, read as ``companion cups IMAGE`` reads them (no calibration file).

Each table is rendered with a random camera, light, cloth and noise (the cup bench's range), and a
random layout: the table 800–1300 × 380–650 mm between the markers, cups of 60–86 mm across and
0.9–1.3 times the default's height for their size, rows 4–20 mm apart, and the arrangement of the
default layout (five rows a side, the silver cup between red and yellow) at those sizes. A third
of the coloured cups are gone, up to two balls rest in cups, and a side may have a cup turned over
in front of its silver cup. Prints the tables read entirely right (every side's upright cups per
colour, the cups turned over, the cups holding a ball), the cups and balls missed and extra, and
milliseconds per photo, with the machine.

``--scenes DIR [DIR ...]`` reads photo-realistic Blender scenes instead (``tools/render/cup_scenes.py``,
labelled in ``DIR/annotations.csv``) and gives the same figures with precision and recall, and again
per factor the scenes were drawn with (make, light, tilt …), each photo under each of its factors;
balls a cup's wall hides from the camera entirely still count as missed, and how many of the misses
they were is said (``balls_hidden_missed``, ``photos_right_but_hidden_balls``)."""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import cv2

from companion.bench import at_least_one, machine, report
from companion.cli.cups import MIN_SIDE
from companion.sim.render import Ball, Cup, Renderer, Scene, full_table, random_look
from companion.vision.cups.discover import discover
from companion.vision.cups.net import CupFinder, read_photo
from companion.vision.images import load_image
from companion.vision.layout import COLOURS, Layout


def random_layout(rng: random.Random) -> Layout:
    rim = rng.choice([60.0, 66.0, 66.0, 76.0, 86.0])
    d = Layout()
    height = rim * d.cup_h / d.rim_d * rng.uniform(0.9, 1.3)
    pitch = rim + rng.uniform(4, 20)
    # the cups stand clear of the markers (80 mm squares at the corners), as at a real table: a
    # tall cup leaning over a marker's white margin in the picture hides the marker
    clear = 40 + rim / 2 + 0.4 * height
    first_x = clear + rng.uniform(20, 50)
    width = max(rng.uniform(800, 1300), 2 * (first_x + 4 * pitch + rim / 2 + 20))
    dice_y = rng.uniform(45, 60)
    back_y = dice_y + 3 * pitch + rim / 2 + 30 + rng.uniform(0, 60)
    depth = max(rng.uniform(380, 650), back_y + clear + 20)
    return Layout(table_w=width, table_h=depth, rim_d=rim, base_d=rim * d.base_d / d.rim_d, cup_h=height,
                  pitch=pitch, first_x=first_x, back_y=back_y, dice_y=dice_y)


def random_table(rng: random.Random, layout: Layout) -> tuple[Scene, dict[str, Any]]:
    start = full_table(layout)
    cups = [c for c in start.cups if c.cup == "silver" or rng.random() >= 1 / 3]
    for side in ("A", "B"):
        if rng.random() < 0.4:
            x, y = layout.tally_spot(side)
            cups.append(Cup(side, rng.choice(COLOURS), x, y, upright=False))
    upright = [c for c in cups if c.upright]
    with_ball = rng.sample(upright, rng.choice([0, 1, 1, 2]))
    z = layout.cup_h * 0.4 + layout.ball_d / 2 - 6
    balls = tuple(Ball(c.x + rng.uniform(-6, 6), c.y + rng.uniform(-6, 6), z, in_cup=c) for c in with_ball)
    truth = {"cups": Counter((c.side, c.cup) for c in upright),
             "turned": Counter((c.side, c.cup) for c in cups if not c.upright),
             "balls": Counter((c.side, c.cup) for c in with_ball)}
    return Scene(tuple(cups), start.dice, balls), truth


def read_table(frame) -> dict[str, Counter]:
    """As ``companion cups IMAGE`` reads a photo without a calibration file."""
    if CupFinder.available():
        reading, _ = read_photo(frame)
    else:
        reader = discover(frame)
        reader.balance(frame)
        reading = reader.read(frame)
    return {"cups": Counter((c.side, c.cup) for c in reading.cups),
            "turned": Counter((c.side, c.cup) for c in reading.upside_down),
            "balls": Counter((c.side, c.cup) for c in reading.balls())}


def bench(tables: int, seed: int) -> dict[str, Any]:
    cv2.setNumThreads(1)
    ms: list[float] = []
    right = 0
    tally = Counter()
    failures = []
    for k in range(tables):
        rng = random.Random(seed + k)
        layout = random_layout(rng)
        scene, truth = random_table(rng, layout)
        frame = Renderer(random_look(rng), layout, seed + k).frame(scene)
        t0 = time.perf_counter()
        try:
            got = read_table(frame)
        except Exception as err:   # a table it cannot calibrate is a failure to count, not the end
            got = {"cups": Counter(), "turned": Counter(), "balls": Counter()}
            failures.append({"seed": seed + k, "error": f"{type(err).__name__}: {err}"})
        ms.append((time.perf_counter() - t0) * 1000)
        for what in ("cups", "turned", "balls"):
            tally[f"{what}_missed"] += sum((truth[what] - got[what]).values())
            tally[f"{what}_extra"] += sum((got[what] - truth[what]).values())
            tally[f"{what}_true"] += sum(truth[what].values())
        if got == truth:
            right += 1
        elif not failures or failures[-1]["seed"] != seed + k:
            failures.append({"seed": seed + k, "table_mm": [round(layout.table_w), round(layout.table_h)],
                             "rim_mm": layout.rim_d, **misses(truth, got)})
    return {"machine": machine(), "tables": tables, "seed": seed, "tables_right": right, **dict(tally),
            "ms_per_photo_median": round(statistics.median(ms), 1) if ms else None,
            "photo": "1280x720, one core (cv2.setNumThreads(1))", "failures": failures}


KINDS = ("cups", "turned", "balls")
# numeric factors in bins [low, high) (the last one holds its top), so that a value is a few photos
BINS = {"tilt": (0, 10, 20, 35), "height": (0.7, 1.0, 1.3, 1.6), "fov": (50, 70, 90, 100), "rim": (80, 95, 105, 115),
        "cup_h": (90, 110, 125, 140), "table": (1.1, 1.5, 1.7, 1.9)}


def factor_value(key: str, text: str) -> str:
    """A factor's value as the per-factor table groups it: a bin, the cloth's kind, the camera's side."""
    if key in BINS:
        edges = BINS[key]
        i = sum(float(text) >= e for e in edges[1:-1])
        return f"{edges[i]}–{edges[i + 1]}"
    if key == "cloth":
        return text.split("/")[0]   # "print/dots": the kind, not every pattern
    if key == "yaw":   # the renderer's camera looks from the players' side or (10 %) from behind the cups
        return "behind" if abs(float(text)) > 90 else "front"
    return text


def value_order(value: str) -> tuple:
    """Numbers and bins in numeric order ("80–95" before "105–115"), words after them."""
    try:
        return (0, float(value.split("–")[0]), "")
    except ValueError:
        return (1, 0.0, value)


def scene_truth(folder: str | Path) -> dict[str, dict[str, Any]]:
    """``DIR/annotations.csv`` → {image path: the counts per (side, colour) and the factors}: upright
    cups are the standing places (silver too), turned ones the turned places and the tally cups (their
    index is ``tally``), balls the ones resting in a standing cup (a loose ball has no place row).
    ``hidden`` counts the balls of those no ray from the camera reaches (the cup's wall hides them
    all: ``DIR/meta/NAME.json`` says so, where it is there): still balls to find, but no photo shows them."""
    out: dict[str, dict[str, Any]] = {}
    with open(Path(folder) / "annotations.csv", newline="") as f:
        for row in csv.DictReader(f):
            t = out.setdefault(str(Path(folder) / row["image"]), {
                **{k: Counter() for k in KINDS}, "hidden": Counter(),
                "factors": dict(kv.split("=", 1) for kv in row["factors"].split(";") if kv)})
            key = (row["side"], row["colour"])
            if row["state"] == "standing":
                t["cups"][key] += 1
                if row["ball"] != "none":
                    t["balls"][key] += 1
            elif row["state"] == "turned":
                t["turned"][key] += 1
    for path, t in out.items():
        meta = Path(folder) / "meta" / (Path(path).stem + ".json")
        if t["balls"] and meta.exists():
            for cup in json.loads(meta.read_text()).get("cups", []):
                ball = cup.get("ball") or {}
                if cup.get("state") == "standing" and ball and not (ball.get("visible_fraction") or
                                                                   ball.get("visible_through_fraction")):
                    t["hidden"][(cup["side"], cup["colour"])] += 1
    return out


def misses(truth: dict[str, Counter], got: dict[str, Counter]) -> dict[str, list[str]]:
    """What was missed and what was extra, as "A.red" items (empty lists left out)."""
    return {f"{w}_{kind}": sorted(f"{s}.{c}" for s, c in d.elements()) for w in KINDS
            for kind, d in (("missed", truth[w] - got[w]), ("extra", got[w] - truth[w])) if d}


def bench_scenes(folders: list[str]) -> dict[str, Any]:
    cv2.setNumThreads(1)
    truths = {path: t for folder in folders for path, t in scene_truth(folder).items()}
    ms: list[float] = []
    tally: Counter = Counter()
    per_factor: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    failures = []
    for path, truth in truths.items():
        failure: dict[str, Any] = {"image": path}
        t0 = time.perf_counter()
        try:
            got = read_table(load_image(path, MIN_SIDE))
        except Exception as err:   # a photo it cannot calibrate is a failure to count, not the end
            got = {k: Counter() for k in KINDS}
            failure["error"] = f"{type(err).__name__}: {err}"
        ms.append((time.perf_counter() - t0) * 1000)
        right = all(got[w] == truth[w] for w in KINDS)
        # right but for balls no pixel shows: what a reader could get right from this photo
        seen = right or (all(got[w] == truth[w] for w in ("cups", "turned")) and
                         not got["balls"] - truth["balls"] and not truth["balls"] - got["balls"] - truth["hidden"])
        counts = Counter(photos=1, right=int(right), right_seen=int(seen), balls_hidden=sum(truth["hidden"].values()),
                         balls_hidden_missed=sum((truth["hidden"] & (truth["balls"] - got["balls"])).values()))
        for w in KINDS:
            counts[f"{w}_true"] += sum(truth[w].values())
            counts[f"{w}_missed"] += sum((truth[w] - got[w]).values())
            counts[f"{w}_extra"] += sum((got[w] - truth[w]).values())
        tally.update(counts)   # update, not +=, which would drop the zeros
        for key, text in truth["factors"].items():
            per_factor[key][factor_value(key, text)].update(counts)
        if not right:
            failures.append({**failure, **misses(truth, got)})
    figures: dict[str, Any] = {"machine": machine(), "scenes": folders, "photos": tally["photos"],
                               "photos_right": tally["right"],
                               "photos_right_but_hidden_balls": tally["right_seen"]}
    for w in KINDS:
        true, missed, extra = tally[f"{w}_true"], tally[f"{w}_missed"], tally[f"{w}_extra"]
        found = true - missed
        figures.update({f"{w}_true": true, f"{w}_missed": missed, f"{w}_extra": extra,
                        f"{w}_precision": round(found / (found + extra), 3) if found + extra else None,
                        f"{w}_recall": round(found / true, 3) if true else None})
    figures.update({"balls_hidden": tally["balls_hidden"], "balls_hidden_missed": tally["balls_hidden_missed"]})
    figures.update({"ms_per_photo_median": round(statistics.median(ms), 1) if ms else None,
                    "photo": "as companion cups IMAGE without calibration, decoding included, one core (cv2.setNumThreads(1))",
                    "per_factor": {k: {v: dict(vals[v]) for v in sorted(vals, key=value_order)}
                                   for k, vals in per_factor.items()},
                    "failures": failures})
    return figures


def factor_lines(per_factor: dict[str, dict[str, dict[str, int]]]) -> dict[str, str]:
    """The per-factor table as text report lines: "factor make=party": "2/5 right, cups -3 +1, …"."""
    return {f"factor {k}={v}": f"{c['right']}/{c['photos']} right, "
                               + ", ".join(f"{w} -{c.get(w + '_missed', 0)} +{c.get(w + '_extra', 0)}" for w in KINDS)
            for k, vals in per_factor.items() for v, c in vals.items()}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tables", type=at_least_one("table"), default=40, help="how many rendered tables (default 40)")
    parser.add_argument("--seed", type=int, default=5000, help="first table's seed; table i uses seed + i")
    parser.add_argument("--scenes", nargs="+", metavar="DIR",
                        help="read Blender scenes (tools/render/cup_scenes.py: DIR/annotations.csv) instead")
    parser.add_argument("--json", action="store_true", help="one JSON object with the same figures")


def run(args: argparse.Namespace) -> int:
    if args.scenes:
        r = bench_scenes(args.scenes)
        if args.json:
            report(r, True)
        else:   # one line per factor value (report prints the failures last)
            report({**{k: v for k, v in r.items() if k != "per_factor"}, **factor_lines(r["per_factor"])}, False)
        return 0 if r["photos_right"] == r["photos"] else 1
    r = bench(args.tables, args.seed)
    report(r, args.json)
    return 0 if r["tables_right"] == r["tables"] else 1
