"""``companion dice IMAGE... [--json]``: read the dice in each image (EVENTS.md, "Reading dice
from an image"). One JSON line per image; an image that cannot be read gives a line with an
``error`` object (codes in :mod:`companion.vision.images`) and the command goes on. Exit status 1
if any image failed, else 0; 2 (and no image read) for a ``--colours`` file it cannot use. On a
photo of the whole table, the printed calibration markers are not reported as dice. A greyscale
photo cannot tell colours: its dice are ``"unknown"`` and the line carries a ``notice`` saying
why (an optional field, an extension of EVENTS.md)."""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace

import cv2

from companion.cli.output import error_line, printable, run_error
from companion.vision.colour import UNKNOWN, ColourFileError, load_profiles
from companion.vision.dice.reader import MIN_SIDE, DiceReader, read_photo
from companion.vision.images import ImageError, has_colour, load_image

SCALE_RANGE = (0.05, 2.0)  # 2 suits dice of 6-12 px, 0.05 dice of 250-500 px


def finder_scale(text: str) -> float:
    """--scale: a number in SCALE_RANGE (nan, inf or 100 made the finder allocate tens of GiB or
    fail; 0 or less found nothing and said nothing)."""
    try:
        scale = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    low, high = SCALE_RANGE
    if not math.isfinite(scale) or not low <= scale <= high:
        raise argparse.ArgumentTypeError(f"{text} is not a scale from {low:g} to {high:g} "
                                         "(0.5 suits dice of 25-50 px)")
    return scale


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("images", nargs="+", metavar="IMAGE",
                        help="photos (PNG, JPEG); exit status 1 if any cannot be read (the rest still are), "
                             "2 if the --colours file cannot be used")
    parser.add_argument("--json", action="store_true", help="one JSON object per line (EVENTS.md; else one line "
                        "of text per image)")
    parser.add_argument("--colours", metavar="FILE",
                        help="colour profiles (default: <data dir>/colours.json, else models/dice-colours.json; "
                             "'none' names no colours)")
    parser.add_argument("--data-dir", default="data", help="where `calibrate colours` stored its profiles")
    parser.add_argument("--scale", type=finder_scale, default=0.5,
                        help="frame scale the finder starts at (0.5 suits dice of 25-50 px); when the dice it sees are "
                             "much larger or smaller, it looks again at the scale that suits them")


def read_one(reader: DiceReader, path: str) -> dict:
    try:
        frame = load_image(path, MIN_SIDE)
    except ImageError as err:
        return error_line(path, err.code, err.message)
    t0 = time.perf_counter()
    try:
        dice = read_photo(reader, frame)
    except (cv2.error, MemoryError) as err:  # never lose the rest of the batch to one image
        return error_line(path, "READ_FAILED", f"{path} could not be read: {type(err).__name__}")
    notice = None
    if not has_colour(frame):
        dice = [replace(d, color=UNKNOWN) for d in dice]
        notice = {"code": "NOT_COLOUR", "message": f"{path} holds no colour (a greyscale photo?): "
                                                   "the dice's colours are unknown"}
    ms = (time.perf_counter() - t0) * 1000
    line = {"image": path, "dice": [d.to_json() for d in dice], "ms": round(ms, 1)}
    return line if notice is None else {**line, "notice": notice}


def run(args: argparse.Namespace) -> int:
    try:
        profiles = load_profiles(args.colours, args.data_dir)
    except ColourFileError as err:
        return run_error(args.json, "BAD_COLOURS", str(err))
    reader = DiceReader(profiles, scale=args.scale)
    failed = 0
    for path in args.images:
        line = read_one(reader, path)
        failed += "error" in line
        if args.json:
            print(json.dumps(line), flush=True)
        elif "error" in line:
            print(printable(f"{path}: {line['error']['message']}"), flush=True)
        else:
            dice = ", ".join(f"{d['value']} {d['color']} at ({d['center'][0]:.0f}, {d['center'][1]:.0f})"
                             for d in line["dice"]) or "no dice"
            notice = f" ({line['notice']['message']})" if "notice" in line else ""
            print(printable(f"{path}: {len(line['dice'])} dice: {dice} [{line['ms']} ms]{notice}"), flush=True)
    return 1 if failed else 0
