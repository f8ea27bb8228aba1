"""``companion bench dice LABELLED_DIR [--split test] [--perturb] [--json]``: the dice reader's
accuracy and speed on labelled photos (``images/*.jpg`` + YOLO ``labels/*.txt``, class = value − 1).
An image without a label file is left out and named in the output (``unlabelled``); an empty
label file is a photo with no dice. A folder it cannot use (no ``labels/``, a label line that is
not ``class cx cy w h`` with class 0-5, an image OpenCV cannot read, a ``--split`` that
``annotations.csv`` does not have, no labelled image at all) is one ``error:`` line on stderr
naming the file and exit status 2.

A detection matches a labelled die when its centre lies inside the label box grown by 25 % per
side (``tests/data/dice/README.md``); each label takes at most one detection (most confident first).

* ``found_right`` — labelled dice matched by a detection with the right value (recall for value);
* ``precision`` — detections that match a die and read its value right;
* ``extra`` — detections matching no labelled die, per labelled die;
* ``images_right`` — images with every die found with its value and nothing extra;
* per value 1–6: precision and recall;
* median and p90 milliseconds per image (reading only; one OpenCV thread; the first photo is
  read three times untimed first, as a reader that runs all day is past its first, slower
  reads), the memory the reader adds to the process, the machine.

``--perturb`` reads every photo after a seeded perturbation: rotation (any angle, canvas grown so
nothing is cut), a perspective tilt up to 25°, Gaussian blur, half the light and JPEG quality 40.
``--enlarge K`` reads every photo, and its labels, scaled by K (bicubic; 2 or 3: the larger photo
of a phone, whose cloth's dots and dice's pips are then many pixels wide).
``--colour-labels FILE`` adds colour figures from hand-labelled dice (see
``tests/data/dice/byler_colours.json``). A rendered folder (``tools/render``) scores colours
from its ``annotations.csv`` ``color`` column (translucent and casino dice of the six colours
by their colour, marbled dice not scored, every other colour must be read ``unknown``) and reports every figure per factor of its scenes (``factors`` column: cloth
family, tilt and die size in ranges, light, clutter, touching, ...). ``--label-fixes FILE`` scores against labels
corrected where a person looking at the die sees another value, or a die no label covers
(``tests/data/dice/byler_label_fixes.json``); without it, the labels as they are."""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from companion.bench import bounded, machine, memory_mb
from companion.cli.dice import finder_scale
from companion.vision.colour import UNKNOWN, ColourFileError, load_profiles
from companion.vision.dice.reader import MIN_SIDE, MODELS, DiceReader, Die, off_markers
from companion.vision.images import ImageError, load_image
from companion.vision.markers import marker_outlines, marker_white


# ------------------------------------------------------------------ data
class DataError(Exception):
    """A labelled folder (or a file beside it) the benchmark cannot use: the sentence names the
    file, and the line of a label file."""


def label_rows(lab: Path, w: int, h: int) -> list[list[float]]:
    """One YOLO label file as [value, x0, y0, x1, y1] in pixels. A line that is not ``class cx
    cy w h`` (class 0-5, the rest 0-1 as YOLO has them) is an error: dropped, or read as a value
    of 7, it changed the figures silently or ended in a KeyError."""
    try:
        text = lab.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"{lab}: cannot read the labels ({err})") from None
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            c, cx, cy, bw, bh = int(line.split()[0]), *(float(p) for p in line.split()[1:])
            ok = 0 <= c <= 5 and all(0 <= v <= 1 for v in (cx, cy, bw, bh)) and bw > 0 and bh > 0
        except ValueError:  # not numbers, or not five of them
            ok = False
        if not ok:
            raise DataError(f"{lab}:{n}: {line.strip()!r} is not 'class cx cy w h' (class 0-5 = value - 1; "
                            "centre and size 0-1, shares of the image's width and height)")
        rows.append([c + 1, (cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h])
    return rows


def load_labelled(root: Path, split: str | None, unlabelled: list[str] | None = None) -> list[tuple[Path, np.ndarray]]:
    """[(image path, labels[n, 5] = value, x0, y0, x1, y1 in pixels)]. An image without a label
    file is left out, its name added to ``unlabelled``. Raises :class:`DataError`."""
    wanted = None
    if split and split != "all":
        ann = root / "annotations.csv"
        try:
            with open(ann, newline="") as f:
                table = list(csv.DictReader(f))
        except (OSError, UnicodeDecodeError, csv.Error):
            raise DataError(f"--split needs {ann} (with image and upstream_split columns)") from None
        if not table or not {"image", "upstream_split"} <= set(table[0]):
            raise DataError(f"{ann}: no image and upstream_split columns (--split needs them)")
        splits = {r["upstream_split"] for r in table}
        if split not in splits:
            raise DataError(f"no split {split!r} in {ann}: it has {', '.join(sorted(splits))} (or all)")
        wanted = {Path(r["image"]).name for r in table if r["upstream_split"] == split}
    out = []
    for img in sorted((root / "images").glob("*")):
        if img.suffix.lower() not in (".jpg", ".jpeg", ".png") or (wanted is not None and img.name not in wanted):
            continue
        lab = root / "labels" / (img.stem + ".txt")
        if not lab.exists():
            if unlabelled is not None:
                unlabelled.append(img.name)
            continue
        try:
            h, w = load_image(str(img), MIN_SIDE).shape[:2]
        except ImageError as err:
            raise DataError(err.message) from None
        out.append((img, np.array(label_rows(lab, w, h), np.float64).reshape(-1, 5)))
    if not out:
        raise DataError(f"no labelled images in {root / 'images'}" + (f" of split {split}" if wanted is not None else "")
                        + " (images/NAME.jpg or .png, each with labels/NAME.txt)")
    return out


def enlarged(img: np.ndarray, labels: np.ndarray, k: float) -> tuple[np.ndarray, np.ndarray]:
    """The photo scaled by k (bicubic up, area down) and its labels with it: a phone's larger photo."""
    img = cv2.resize(img, None, fx=k, fy=k, interpolation=cv2.INTER_CUBIC if k > 1 else cv2.INTER_AREA)
    labels = labels.astype(np.float64)   # (a copy: the caller's labels stay as they were)
    labels[:, 1:] *= k
    return img, labels


def perturb(img: np.ndarray, labels: np.ndarray, seed: int, *, tilt: bool = True, blur: bool = True,
            dark: bool = True, jpeg: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Rotation, a perspective tilt up to 25°, blur, half the light, JPEG quality 40 — labels follow.
    The keywords leave parts out (to see which one costs what); a seed gives the same rotation and
    tilt whatever is left out."""
    rng = np.random.default_rng(seed)
    h, w = img.shape[:2]
    f = float(max(w, h))  # focal length in pixels (about a 53° field of view)
    angle = math.radians(rng.uniform(10, 25))
    tilt_by = angle if tilt else 0.0
    axis = rng.uniform(0, 2 * math.pi)
    ax = np.array([math.cos(axis), math.sin(axis), 0.0])
    R, _ = cv2.Rodrigues(ax * tilt_by)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), rng.uniform(0, 360), 1.0)
    H = K @ R @ np.linalg.inv(K) @ np.vstack([rot, [0, 0, 1]])
    corners = cv2.perspectiveTransform(np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), H)[0]
    x0, y0 = corners.min(0)
    x1, y1 = corners.max(0)
    s = min(1.0, 1.4 * max(w, h) / max(x1 - x0, y1 - y0))  # keep the canvas reasonable
    H = np.array([[s, 0, -x0 * s], [0, s, -y0 * s], [0, 0, 1]]) @ H
    size = (int(math.ceil((x1 - x0) * s)), int(math.ceil((y1 - y0) * s)))
    out = cv2.warpPerspective(img, H, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                              borderValue=(128, 128, 128))
    if blur:
        out = cv2.GaussianBlur(out, (0, 0), 1.0)
    if dark:
        out = (out.astype(np.float32) * 0.5).astype(np.uint8)
    if jpeg:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 40])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    new = []
    for v, bx0, by0, bx1, by1 in labels:
        pts = np.array([[[bx0, by0], [bx1, by0], [bx1, by1], [bx0, by1]]], np.float64)
        # the die's centre moves as a point; its box is the transformed box's bounds
        c = cv2.perspectiveTransform(np.array([[[(bx0 + bx1) / 2, (by0 + by1) / 2]]]), H)[0, 0]
        q = cv2.perspectiveTransform(pts, H)[0]
        half = (q.max(0) - q.min(0)) / 2
        new.append([v, c[0] - half[0], c[1] - half[1], c[0] + half[0], c[1] + half[1]])
    return out, np.array(new, np.float64).reshape(-1, 5)


# ------------------------------------------------------------------ scoring
def pct(a: float, b: float) -> float | None:
    return round(100 * a / b, 2) if b else None


def f1(right: int, labelled: int, detections: int) -> float | None:
    """F1 of dice read with the right value: precision over the detections, recall over the labels."""
    return round(2 * right / (labelled + detections), 3) if labelled + detections else None


def match(dice: list[Die], labels: np.ndarray) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """(label index, detection index) pairs; unmatched labels; unmatched detections."""
    taken: set[int] = set()
    pairs = []
    extra = []
    for j in sorted(range(len(dice)), key=lambda k: -dice[k].confidence):
        x, y = dice[j].center
        best, best_d = None, math.inf
        for i, (_, x0, y0, x1, y1) in enumerate(labels):
            if i in taken:
                continue
            gx, gy = (x1 - x0) * 0.25, (y1 - y0) * 0.25
            if x0 - gx <= x <= x1 + gx and y0 - gy <= y <= y1 + gy:
                d = math.hypot(x - (x0 + x1) / 2, y - (y0 + y1) / 2)
                if d < best_d:
                    best, best_d = i, d
        if best is None:
            extra.append(j)
        else:
            taken.add(best)
            pairs.append((best, j))
    missed = [i for i in range(len(labels)) if i not in taken]
    return pairs, missed, extra


def colour_truth(path: Path | None, split: str | None) -> dict[str, list[dict]]:
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text())
        out: dict[str, list[dict]] = {}
        for key, per in data.items():
            if key == "about" or (split not in (None, "all") and key != split):
                continue
            for image, dice in per.items():
                out[Path(image).name] = [{"color": str(d["color"]), "center": [float(d["center"][0]), float(d["center"][1])]}
                                         for d in dice]
    except (OSError, ValueError, AttributeError, TypeError, KeyError, IndexError) as err:
        raise DataError(f"--colour-labels {path}: not the hand-labelled colours file ({err})") from None
    return out


SIX = ("white", "black", "red", "blue", "yellow", "green")  # the games' die colours
BUCKETS = {"tilt": (10, 20, 30), "px": (20, 30, 45)}  # numeric factors reported in ranges


def annotated(root: Path) -> tuple[dict[str, list[dict]], dict[str, dict[str, str]]]:
    """From a rendered folder's ``annotations.csv`` (``tools/render``): each image's dice colours
    as colour truth (a colour other than the games' six must be read ``unknown``: "other") and
    each image's factors (``cloth=speckle/carpet;tilt=23;...``). Empty for folders without the
    columns (byler's)."""
    colours: dict[str, list[dict]] = {}
    factors: dict[str, dict[str, str]] = {}
    try:
        with open(root / "annotations.csv", newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}, {}
    for r in rows:
        name = Path(r.get("image", "")).name
        if r.get("color"):
            try:
                centre = [(float(r["xmin"]) + float(r["xmax"])) / 2, (float(r["ymin"]) + float(r["ymax"])) / 2]
            except (KeyError, ValueError):
                continue
            colours.setdefault(name, []).append({"color": colour_class(r["color"]), "center": centre})
        if r.get("factors") and name not in factors:
            factors[name] = {k: v for k, _, v in (part.partition("=") for part in r["factors"].split(";")) if v}
    return colours, factors


def colour_class(name: str) -> str:
    """What a player calls a rendered die's colour: one of the six (a translucent or casino red die
    is the red die of a game), ``ambiguous`` for marbled dice (not scored, as on byler) and
    ``other`` for every other colour (grey, teal, orange, brown, ...), which must read unknown."""
    kind, _, base = name.partition("-")
    if name in SIX:
        return name
    if kind in ("translucent", "casino") and base in SIX:
        return base
    return "ambiguous" if kind == "marbled" else "other"


def factor_value(key: str, value: str) -> str:
    """A factor as reported: a cloth by its family, a number by its range."""
    if key == "cloth":
        return value.split("/")[0]
    if key in BUCKETS:
        try:
            x = float(value)
        except ValueError:
            return value
        edges = BUCKETS[key]
        lo = max([0, *[e for e in edges if e <= x]])
        hi = min([e for e in edges if e > x], default=None)
        return f"{lo}-{hi}" if hi is not None else f"{lo}+"
    return value


def label_fixes(path: Path | None) -> dict[str, list[dict]]:
    """Corrections to the labels, per image name (``tests/data/dice/byler_label_fixes.json``):
    ``{"center": [x, y], "value": v}`` gives the labelled die whose box holds that point the
    value the die shows; ``{"add": [x0, y0, x1, y1], "value": v}`` adds a die the labels leave
    out."""
    if path is None:
        return {}
    try:
        out: dict[str, list[dict]] = {}
        for fix in json.loads(Path(path).read_text())["fixes"]:
            ok = 1 <= int(fix["value"]) <= 6 and (len(fix.get("center", ())) == 2 or len(fix.get("add", ())) == 4)
            if not ok:
                raise ValueError(f"{fix}: needs value 1-6 and center [x, y] or add [x0, y0, x1, y1]")
            out.setdefault(Path(fix["image"]).name, []).append(fix)
        return out
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise DataError(f"--label-fixes {path}: not a label corrections file ({err})") from None


def fixed(labels: np.ndarray, fixes: list[dict]) -> np.ndarray:
    """The labels (value, x0, y0, x1, y1) with the corrections made; one that finds no box to
    correct is an error, not a silent no-op."""
    labels = labels.copy()
    for fix in fixes:
        if "add" in fix:
            labels = np.vstack([labels, [[int(fix["value"]), *map(float, fix["add"])]]])
            continue
        x, y = fix["center"]
        hit = [i for i, (_, x0, y0, x1, y1) in enumerate(labels) if x0 <= x <= x1 and y0 <= y <= y1]
        if len(hit) != 1:
            raise DataError(f"label fix {fix}: {len(hit)} labelled dice there, not one")
        labels[hit[0], 0] = int(fix["value"])
    return labels


def bench(root: Path, split: str | None, perturbed: bool, colour_labels: Path | None,
          colours: str | None, scale: float, models: Path | None = None, fixes: Path | None = None,
          enlarge: float = 1.0) -> dict:
    cv2.setNumThreads(1)
    unlabelled: list[str] = []
    items = load_labelled(root, split, unlabelled)
    corrections = label_fixes(fixes)
    items = [(path, fixed(labels, corrections.get(path.name, []))) for path, labels in items]
    n_fixes = sum(len(corrections.get(path.name, [])) for path, _ in items)
    truth = colour_truth(colour_labels, split)
    rendered_colours, factors = annotated(root)
    if colour_labels is None:
        truth = rendered_colours
    per_image = []
    before = memory_mb()[0]
    reader = DiceReader(load_profiles(colours), models_dir=models or MODELS, scale=scale)
    n_labels = n_det = right = wrong_value = n_extra = images_right = 0
    per_value = {v: {"labelled": 0, "read": 0, "right": 0} for v in range(1, 7)}
    ms: list[float] = []
    failures = []
    col = {"scored": 0, "right": 0, "unknown": 0, "wrong": 0, "other_named": 0, "profile_as_other_profile": 0,
           "six": 0, "six_right": 0}
    col_fail = []
    dice_counts = []
    warm = cv2.imread(str(items[0][0])) if items else None
    if warm is not None:  # a reader that runs all day is past its first, slower reads
        for _ in range(3):
            reader.read(warm)
    for k, (path, labels) in enumerate(items):
        img = cv2.imread(str(path))
        if perturbed:
            img, labels = perturb(img, labels, seed=k)
        if enlarge != 1.0:
            img, labels = enlarged(img, labels, enlarge)
        # As `companion dice` reads a photo (read_photo): markers in view give white paper and
        # no dice. Only the reader is timed: live, the calibration knows the markers already.
        quads = marker_outlines(img)
        reader.white = marker_white(img, quads) if quads else None
        t0 = time.perf_counter()
        dice = reader.read(img)
        ms.append((time.perf_counter() - t0) * 1000)
        dice = off_markers(img, dice, quads)
        dice_counts.append(len(labels))
        pairs, missed, extra = match(dice, labels)
        n_labels += len(labels)
        n_det += len(dice)
        n_extra += len(extra)
        ok = not missed and not extra
        for v in labels[:, 0]:
            per_value[int(v)]["labelled"] += 1
        for d in dice:
            per_value[d.value]["read"] += 1
        for i, j in pairs:
            if dice[j].value == int(labels[i, 0]):
                right += 1
                per_value[dice[j].value]["right"] += 1
            else:
                wrong_value += 1
                ok = False
        images_right += ok
        per_image.append((path.name, len(labels), sum(dice[j].value == int(labels[i, 0]) for i, j in pairs),
                          len(dice), len(extra), ok))
        if not ok:
            failures.append({
                "image": path.name,
                "expected": sorted(int(v) for v in labels[:, 0]),
                "got": sorted(d.value for d in dice),
                "wrong": [{"expected": int(labels[i, 0]), "got": dice[j].value,
                           "center": [round(c) for c in dice[j].center]}
                          for i, j in pairs if dice[j].value != int(labels[i, 0])],
                "missed": [{"value": int(labels[i, 0]),
                            "center": [round((labels[i, 1] + labels[i, 3]) / 2), round((labels[i, 2] + labels[i, 4]) / 2)]}
                           for i in missed],
                "extra": [{"value": dice[j].value, "center": [round(c) for c in dice[j].center],
                           "confidence": round(dice[j].confidence, 2)} for j in extra],
            })
        if not perturbed and path.name in truth:
            profiles = set(reader.profiles.profiles)
            for t in truth[path.name]:
                if t["color"] == "ambiguous":
                    continue
                cx, cy = (c * enlarge for c in t["center"])
                near = [d for d in dice if math.hypot(d.center[0] - cx, d.center[1] - cy) < 0.5 * d.size]
                if not near:
                    continue
                got, want = near[0].color, t["color"]
                col["scored"] += 1
                if want == "other":
                    good = got == UNKNOWN
                else:
                    good = got == want
                col["right" if good else ("unknown" if got == UNKNOWN else "wrong")] += 1
                if want == "other" and got != UNKNOWN:
                    col["other_named"] += 1
                if want in profiles and got in profiles and got != want:
                    col["profile_as_other_profile"] += 1
                if want in SIX:  # the measure: dice of the six game colours, named right
                    col["six"] += 1
                    col["six_right"] += got == want
                if not good and got != UNKNOWN:
                    col_fail.append({"image": path.name, "center": [cx, cy], "labelled": want, "got": got})
    after = memory_mb()[0]
    by_factor: dict[str, dict[str, dict]] = {}
    for name, n, good, found, extra_n, ok in per_image:
        for key, value in factors.get(name, {}).items():
            c = by_factor.setdefault(key, {}).setdefault(factor_value(key, value), {
                "images": 0, "dice": 0, "right": 0, "detections": 0, "extra": 0, "images_right": 0})
            c["images"] += 1
            c["dice"] += n
            c["right"] += good
            c["detections"] += found
            c["extra"] += extra_n
            c["images_right"] += ok
    for per in by_factor.values():
        for c in per.values():
            c["f1"] = f1(c["right"], c["dice"], c["detections"])
    result = {
        "data": str(root), "split": split or "all", "perturbed": perturbed, "enlarged": enlarge, "images": len(items),
        "dice": n_labels, "detections": n_det,
        "found_right_pct": pct(right, n_labels),
        "precision_pct": pct(right, n_det),
        "f1": f1(right, n_labels, n_det),
        "wrong_value": wrong_value, "missed": n_labels - right - wrong_value, "extra": n_extra,
        "extra_pct": pct(n_extra, n_labels),
        "images_right_pct": pct(images_right, len(items)),
        "unlabelled": unlabelled,
        "label_fixes": n_fixes,
        "per_value": {v: {"precision_pct": pct(c["right"], c["read"]), "recall_pct": pct(c["right"], c["labelled"])}
                      for v, c in per_value.items()},
        "ms_median": round(statistics.median(ms), 2) if ms else None,
        "ms_p90": round(float(np.percentile(ms, 90)), 2) if ms else None,
        "ms_median_images_with_20_plus_dice": round(statistics.median([m for m, c in zip(ms, dice_counts, strict=True) if c >= 20]), 2)
        if any(c >= 20 for c in dice_counts) else None,
        "image_size": "varies" if perturbed else "as stored" if enlarge == 1.0 else f"{enlarge}x as stored",
        "reader_adds_mb": round(after - before, 1),
        "machine": machine(),
        "threads": 1,
        "failures": failures,
        "by_factor": by_factor,
    }
    if col["scored"]:
        result["colour"] = {**col, "right_or_unknown_pct": pct(col["right"] + col["unknown"], col["scored"]),
                            "six_right_pct": pct(col["six_right"], col["six"]),
                            "six_as_another_pct": pct(col["profile_as_other_profile"], col["six"]),
                            "failures": col_fail}
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labelled_dir", metavar="LABELLED_DIR", type=Path)
    parser.add_argument("--split", help="only images of this upstream_split (annotations.csv): train, test or all")
    parser.add_argument("--perturb", action="store_true", help="rotate, tilt, blur, darken and JPEG-compress each photo")
    parser.add_argument("--colour-labels", type=Path, help="hand-labelled die colours (JSON) to score colours")
    parser.add_argument("--label-fixes", type=Path, metavar="FILE",
                        help="corrections to labels that do not say what the die shows (JSON, e.g. "
                             "tests/data/dice/byler_label_fixes.json); the count applied is printed")
    parser.add_argument("--colours", help="colour profile file (default models/dice-colours.json)")
    parser.add_argument("--scale", type=finder_scale, default=0.5, help="frame scale the finder starts at")
    parser.add_argument("--enlarge", type=bounded(float, 0.25, 4.0, "--enlarge lies from 0.25 to 4"), default=1.0,
                        metavar="K", help="read each photo scaled by K (2, 3: a phone's larger photo; default 1)")
    parser.add_argument("--models", type=Path, help="a folder with other dice-*.onnx files to compare (default models/)")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure")


def run(args: argparse.Namespace) -> int:
    if not ((args.labelled_dir / "images").is_dir() and (args.labelled_dir / "labels").is_dir()):
        print(f"error: {args.labelled_dir}: expected images/ and labels/ (YOLO, class = value - 1)", file=sys.stderr)
        return 2
    if args.models is not None:
        missing = [n for n in ("dice-finder.onnx", "dice-reader.onnx") if not (args.models / n).is_file()]
        if missing:
            print(f"error: --models {args.models}: no {' or '.join(missing)} there", file=sys.stderr)
            return 2
    try:
        r = bench(args.labelled_dir, args.split, args.perturb, args.colour_labels, args.colours, args.scale, args.models,
                  args.label_fixes, args.enlarge)
    except (DataError, ColourFileError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(r))
        return 0
    print(f"machine: {r['machine']} (1 OpenCV thread)")
    print(f"{r['data']} split={r['split']} perturbed={r['perturbed']} enlarged={r['enlarged']}: {r['images']} images, {r['dice']} dice, "
          f"{r['detections']} detections")
    print(f"found with the right value: {r['found_right_pct']} %   precision: {r['precision_pct']} %   "
          f"extra: {r['extra']} ({r['extra_pct']} %)   wrong value: {r['wrong_value']}   missed: {r['missed']}")
    print(f"images entirely right: {r['images_right_pct']} %   F1 (right values): {r['f1']}")
    if r["label_fixes"]:
        print(f"against the labels with {r['label_fixes']} corrections (--label-fixes)")
    if r["unlabelled"]:
        print(f"left out {len(r['unlabelled'])} images without a label file: {', '.join(r['unlabelled'])}")
    print("per value (precision/recall %): " + "  ".join(
        f"{v}: {c['precision_pct']}/{c['recall_pct']}" for v, c in r["per_value"].items()))
    print(f"ms per image: median {r['ms_median']}, p90 {r['ms_p90']}; 20+ dice median "
          f"{r['ms_median_images_with_20_plus_dice']}; reader adds {r['reader_adds_mb']} MB")
    if "colour" in r:
        c = r["colour"]
        print(f"colour: {c['scored']} labelled dice, right {c['right']}, unknown {c['unknown']}, wrong {c['wrong']} "
              f"(right or unknown {c['right_or_unknown_pct']} %; profile reported as another profile: "
              f"{c['profile_as_other_profile']})")
        print(f"  of the six game colours: {c['six']} dice, named right {c['six_right_pct']} %, named as another of "
              f"the six {c['six_as_another_pct']} %; dice of other colours given one of the six names: {c['other_named']}")
        for f in c["failures"]:
            print(f"  colour failure {f}")
    for key, per in sorted(r["by_factor"].items()):
        print(f"by {key}: " + "   ".join(
            f"{v}: {c['images']} img, {c['dice']} dice, F1 {c['f1']}, right {c['right']}, extra {c['extra']}, "
            f"all right {c['images_right']}" for v, c in sorted(per.items())))
    for f in r["failures"]:
        print(f"  failure {json.dumps(f)}")
    return 0
