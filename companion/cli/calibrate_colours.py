"""``companion calibrate colours``: learn die colour profiles from one frame of dice of known
colours, under the table's own light.

Lay the dice in a row across the table, photograph them (or grab a frame), and name their
colours from left to right::

    companion calibrate colours --image row.jpg --colours white,black,red,blue,yellow,green

A colour may repeat (``red,red,blue``: more dice of a colour make a better profile). A die named
``other`` is one of none of the game's colours that is on the table all the same (a maroon die
beside the red ones): it makes no profile, and a die nearer to it than to a profile is
``"unknown"`` rather than named. Instead of
left-to-right order, ``--labels FILE`` takes ``[{"center": [x, y], "color": "red"}, ...]``: each
label names the die nearest to it. The profiles go to ``--out`` (default: where the service reads
them, ``calibration.colours`` of ``--config``'s companion.toml, else ``<data dir>/colours.json``,
which ``companion dice`` and the camera use from then on). The command
prints what it learned and warns when two colours are too alike to tell apart reliably.
Exit status 2 when the frame does not match the names (too few or too many dice, no image, an
image it cannot read or a greyscale one); nothing is written then."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from companion.vision.colour import OTHER, UNKNOWN, ColourProfiles, dice_labs
from companion.vision.dice.reader import MIN_SIDE, DiceReader
from companion.vision.images import ImageError, has_colour, load_image, red_blue_swapped


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--image", required=True, help="one frame with the dice lying face up")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--colours", help="colour names of the dice from left to right, comma-separated "
                     "(other: a die of none of the colours, to be told apart from them)")
    how.add_argument("--labels", type=Path, help='JSON list of {"center": [x, y], "color": name}')
    parser.add_argument("--out", type=Path, help="profile file to write (default: calibration.colours of "
                        "companion.toml, else <data dir>/colours.json)")
    parser.add_argument("--data-dir", help="data directory (default: [data] dir of companion.toml, else ./data)")
    parser.add_argument("--config", help="companion.toml (on the Pi: /etc/companion/companion.toml)")


def fail(message: str) -> int:
    print(f"calibrate colours: {message}")
    return 2


def target(args: argparse.Namespace) -> Path:
    """Where the profiles go: --out, else <--data-dir>/colours.json, else where the service
    reads them (companion.toml's calibration.colours, else <data dir>/colours.json)."""
    from companion import config as config_mod

    if args.out:
        return Path(args.out)
    if args.data_dir:
        return Path(args.data_dir) / "colours.json"
    cfg = config_mod.load(args.config)
    return config_mod.calibration_file(cfg, "colours") or Path(cfg["data"]["dir"]) / "colours.json"


SWAP_MARGIN = 10.0  # b* units; a red die is some 60-100 above a blue one (models/dice-colours.json)


def dice_swapped(samples: dict[str, list]) -> str | None:
    """Why the frame's red and blue look swapped, or None. The dice named red and blue are a
    known colour reference: in L*a*b*, with the light's colour undone, a red die's b* is well
    above zero (+24 to +41 in the shipped profiles) and a blue die's well below (-36 to -58). A
    camera that sends its channels in the wrong order (some Pi 5 kernels did) turns the one into
    the other, and the markers' black and white cannot show it. Only with both named."""
    if "red" not in samples or "blue" not in samples:
        return None
    red_b = float(np.median(np.asarray(samples["red"], dtype=float).reshape(-1, 3)[:, 2]))
    blue_b = float(np.median(np.asarray(samples["blue"], dtype=float).reshape(-1, 3)[:, 2]))
    if red_b >= blue_b - SWAP_MARGIN:
        return None
    return red_blue_swapped(f"the die named red looks blue and the one named blue looks red (b* {red_b:.0f} and "
                            f"{blue_b:.0f})", "the two dice were named the wrong way round") + "; nothing written"


def run(args: argparse.Namespace) -> int:
    from companion.config import ConfigError, cannot_write

    try:
        out = target(args)
    except ConfigError as err:
        return fail(str(err))
    try:
        frame = load_image(args.image, MIN_SIDE)  # as `companion dice` reads it (a 1×1 was a traceback)
    except ImageError as err:
        return fail(err.message)
    if not has_colour(frame):  # it learned and saved profiles alike for every colour, exit status 0
        return fail(f"{args.image} holds no colour (a greyscale photo?): colours cannot be learned from it; "
                    "nothing written")
    dice = DiceReader(profiles=ColourProfiles()).read(frame)
    if not dice:
        return fail("no dice found in the frame")
    samples: dict[str, list] = {}
    if args.colours is not None:
        names = [n.strip().lower() for n in args.colours.split(",") if n.strip()]
        if len(names) != len(dice):
            return fail(f"{len(names)} colours named but {len(dice)} dice found "
                        f"(at x = {', '.join(str(round(d.center[0])) for d in sorted(dice, key=lambda d: d.center[0]))})")
        pairs = list(zip(sorted(dice, key=lambda d: d.center[0]), names, strict=True))
    else:
        try:
            labels = json.loads(args.labels.read_text())
            wanted = [(str(lab["color"]).lower(), float(lab["center"][0]), float(lab["center"][1])) for lab in labels]
        except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
            return fail(f"{args.labels}: expected a JSON list of {{\"center\": [x, y], \"color\": name}} ({err})")
        pairs = []
        for name, x, y in wanted:
            near = min(dice, key=lambda d: math.hypot(d.center[0] - x, d.center[1] - y))
            if math.hypot(near.center[0] - x, near.center[1] - y) > near.size:
                return fail(f"no die near ({x:.0f}, {y:.0f}) for {name}")
            pairs.append((near, name))
    if any(name == UNKNOWN for _, name in pairs):
        return fail(f"'{UNKNOWN}' is what the reader says of a die of none of the colours: "
                    f"name such a die '{OTHER}'; nothing written")
    if all(name == OTHER for _, name in pairs):
        return fail(f"every die is named '{OTHER}': name at least one die by its colour; nothing written")
    # measured as the reader measures them: with the light's colour undone (on all the frame's dice)
    balanced = dice_labs(frame, [(d.center, d.size) for d in dice])
    lab_of = {id(d): lab for d, lab in zip(dice, balanced, strict=True)}
    for die, name in pairs:
        samples.setdefault(name, []).append(lab_of[id(die)])
    swapped = dice_swapped(samples)
    if swapped is not None:
        return fail(swapped)
    profiles = ColourProfiles.learn(samples)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        profiles.save(out)
    except OSError as err:
        return fail(cannot_write(out, err))
    others = f" and {len(profiles.others)} dice of other colours" if profiles.others else ""
    print(f"learned {len(profiles.profiles)} colours{others} from {len(pairs)} dice -> {out}")
    for name, p in profiles.profiles.items():
        L, a, b = p.lab[0]
        print(f"  {name:8s} L*a*b* ({L:.0f}, {a:.0f}, {b:.0f})  from {len(samples[name])} dice")
    for die, name in pairs:  # check: does each die come back with its own name?
        got = profiles.classify_lab(lab_of[id(die)])[0]
        if got != (UNKNOWN if name == OTHER else name):
            print(f"  warning: the {name} die at ({die.center[0]:.0f}, {die.center[1]:.0f}) reads as {got}")
    names = list(profiles.profiles)
    for i, m in enumerate(names):
        for n in names[i + 1:]:
            d = min(profiles.profiles[m].distance(np.asarray(c)) for c in profiles.profiles[n].lab)
            if d < profiles.max_distance + profiles.margin:
                print(f"  warning: {m} and {n} are alike under this light; dice may read as unknown")
    return 0
