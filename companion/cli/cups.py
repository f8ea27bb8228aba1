"""``companion cups IMAGE... --json [--calibration FILE]``: read a 21 Exact table's cups from
photos, one JSON line per image (EVENTS.md, "Reading cups from an image"). Without
``--calibration`` each image calibrates itself: the table's size from its four markers and the
cups wherever the cup finder network sees them (:mod:`companion.vision.cups.net`).
An image that cannot be read gives an ``error`` object and the command goes on; exit status 1 if
any image failed, else 0; 2 (and no image read) for a ``--calibration`` file it cannot use
(``BAD_FILE``). Codes beyond :mod:`companion.vision.images`' and the calibration's
(``MARKERS_NOT_FOUND``, ``BAD_MARKERS``): ``WRONG_SIZE`` (a frame of another shape than the
calibration's), ``CAMERA_MOVED`` (the markers are not where the calibration saw them), and
``NOT_COLOUR`` (a greyscale photo: cups are told apart by colour alone)."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import cv2

from companion.cli.output import error_line, printable, run_error
from companion.vision.calibrate import Calibration, CalibrationError
from companion.vision.cups.discover import discover
from companion.vision.cups.net import CupFinder, read_photo, reader_for
from companion.vision.images import ImageError, has_colour, load_image
from companion.vision.layout import CUPS

MIN_SIDE = 32  # the least calibrate() looks at


def read_image(path: str, cal: Calibration | None = None, network: bool = True) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        frame = load_image(path, MIN_SIDE)  # the same codes as `companion dice`
    except ImageError as err:
        return error_line(path, err.code, err.message)
    try:
        if cal is None and network and CupFinder.available():
            if not has_colour(frame):
                return error_line(path, "NOT_COLOUR", f"{path} holds no colour (a greyscale photo?): "
                                                      "the cups are told apart by their colour")
            # its own table: the size from the markers, the cups wherever the network finds them
            reading, _ = read_photo(frame)
            reader, markers = None, 4
        elif cal is None:
            reader = discover(frame)   # (no model: the colour search, as before the network)
            markers = 4
        else:
            try:
                cal = cal.scaled(frame.shape[1], frame.shape[0])
            except CalibrationError:
                w0, h0 = cal.image_size
                return error_line(path, "WRONG_SIZE", f"{path} is {frame.shape[1]}×{frame.shape[0]} pixels; the "
                                  f"calibration is for {w0}×{h0} frames (or that shape at another size): "
                                  "take the photo with the calibrated camera, or calibrate again")
            seen = cal.check_markers(frame)
            markers = sum(1 for d in seen.values() if d is not None)
            moved = cal.moved(seen)  # as the live watch checks each frame
            if moved is not None:
                code, message = moved
                if markers == 0:
                    blank = " (the image is blank)" if int(frame.max()) - int(frame.min()) < 16 else ""
                    message = f"no table marker seen where the calibration expects them{blank}: {message}"
                return error_line(path, code, message)
            reader = reader_for(cal)   # the network for cups it learnt
        if reader is not None:
            if not has_colour(frame):
                return error_line(path, "NOT_COLOUR", f"{path} holds no colour (a greyscale photo?): "
                                                      "the cups are told apart by their colour")
            reader.balance(frame)   # the light's colour, from the markers' white
            reading = reader.read(frame)
    except CalibrationError as err:
        return error_line(path, err.code, err.message)
    except (cv2.error, MemoryError) as err:  # never lose the rest of the batch to one image
        return error_line(path, "READ_FAILED", f"{path} could not be read: {type(err).__name__}")
    counts = reading.counts()
    sides = {side: {cup: counts[side][cup] for cup in CUPS} for side in ("A", "B")}
    return {
        "image": path,
        "markers": markers,
        "sides": sides,
        "upside_down": reading.turned(),
        "cups": [{"side": c.side, "color": c.cup, "center": c.center} for c in reading.cups],
        "balls": [{"side": c.side, "cup": c.cup, "center": c.center} for c in reading.balls()],
        "ms": round((time.perf_counter() - t0) * 1000, 1),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("images", nargs="+", metavar="IMAGE",
                        help="photos (PNG, JPEG); exit status 1 if any cannot be read (the rest still are), "
                             "2 if the --calibration file cannot be used")
    parser.add_argument("--json", action="store_true", help="one JSON line per image (EVENTS.md; else one line "
                        "of text per image)")
    parser.add_argument("--calibration", metavar="FILE", help="a table calibration file (companion calibrate table); "
                        "default: each photo calibrates itself from its four markers")
    parser.add_argument("--colour-search", action="store_true",
                        help="without --calibration: find the cups by their colours (the reader before the "
                             "network: flat-coloured cups with a pale inside) instead of the cup finder network")


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)
    cal = None
    if args.calibration:
        try:
            cal = Calibration.load(args.calibration)
        except CalibrationError as err:
            return run_error(args.json, err.code, err.message)
    status = 0
    for path in args.images:
        result = read_image(path, cal, network=not args.colour_search)
        if "error" in result:
            status = 1
        if args.json:
            print(json.dumps(result), flush=True)
        elif "error" in result:
            print(printable(f"{path}: {result['error']['code']}: {result['error']['message']}"), flush=True)
        else:
            sides = "; ".join(f"side {s}: " + ", ".join(f"{n} {c}" for c, n in cups.items())
                              for s, cups in result["sides"].items())
            print(printable(f"{path}: {sides}; balls in cups: {len(result['balls'])} ({result['ms']} ms)"), flush=True)
    return status
