"""Die colours under the light of a real room, uncalibrated: a warm lamp, a cool window and a
webcam's cast on real photos (byler, hand-labelled colours); the markers' white paper as the
measure of the light; and the casts that must not be "undone" (a table of yellow dice is not a
table of white dice under a yellow lamp)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.sim.dice import BODY_BGR, draw_die, pip_colour
from companion.vision.colour import UNKNOWN, light_gains
from companion.vision.dice.reader import DiceReader

LABELS = Path(__file__).parents[1] / "data" / "dice" / "byler_colours.json"
SIX = ("white", "black", "red", "blue", "yellow", "green")
# B, G, R gains in linear light, as an uncorrected camera sees white under each
CASTS = {"warm lamp": (0.55, 1.0, 1.35), "cool window": (1.3, 1.0, 0.8), "webcam": (1.2, 1.0, 0.85),
         "dim room": (0.5, 0.5, 0.5), "dark room": (0.15, 0.15, 0.15)}


def in_light(img: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    """The photo as if lit by a light of that colour (the cast applied in linear light)."""
    lin = (img.astype(np.float32) / 255) ** 2.2 * np.array(gains, np.float32)
    return (np.clip(lin, 0, 1) ** (1 / 2.2) * 255).astype(np.uint8)


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    return DiceReader()


@pytest.mark.parametrize("light", [None, *CASTS])
def test_real_dice_keep_their_colours_under_a_lamp_a_window_and_a_webcam(byler_dir: Path, reader: DiceReader,
                                                                         light: str | None) -> None:
    """The byler test photos (never used to build the colour defaults), as taken and under three
    casts and in a dim and a dark room: of the 55 dice hand-labelled with one of the games' six
    colours, every one is named it in every light but the dark room (there 54: a black die
    among dark other colours; before its light pips kept its name there, it was "unknown" in
    every light; before the light was measured, a warm lamp left every white die unknown; before
    the hue rules, 49; before a dim frame was brightened and the pips told white from black, half
    the light left 16 of the 17 white dice unknown and 0.15 of it named all 17 black), none is
    named another of the six, and at most four of the 34 dice
    of other colours are named one of the six: the test photos hold a gold die (named yellow),
    dark translucent red dice (red) and a black die with red pips (black) labelled "other"."""
    truth = json.loads(LABELS.read_text())["test"]
    named = unknown = 0
    crossed, others = [], []
    for image, dice in truth.items():
        frame = cv2.imread(str(byler_dir / image))
        if light is not None:
            frame = in_light(frame, CASTS[light])
        read = reader.read(frame)
        for t in dice:
            if t["color"] == "ambiguous":
                continue
            near = [d for d in read if math.hypot(d.center[0] - t["center"][0], d.center[1] - t["center"][1]) < 0.5 * d.size]
            if not near:
                continue
            got = near[0].color
            if t["color"] in SIX:
                named += got == t["color"]
                unknown += got == UNKNOWN
                if got not in (UNKNOWN, t["color"]):
                    crossed.append((image, t["color"], got))
            elif got != UNKNOWN:
                others.append((image, got))
    labelled = sum(1 for dice in truth.values() for t in dice if t["color"] in SIX)
    assert not crossed
    assert len(others) <= 4, others
    assert named >= labelled - (1 if light == "dark room" else 0), (named, unknown, labelled)


def row(colours: list[str], tint: tuple[float, float, float]) -> np.ndarray:
    img = np.full((300, 120 + 110 * len(colours), 3), (70, 90, 110), np.uint8)
    for k, c in enumerate(colours):
        draw_die(img, (90 + k * 110, 150), 40, k % 6 + 1, BODY_BGR[c], pip_colour(c), 12 * k)
    return in_light(cv2.GaussianBlur(img, (0, 0), 0.7), tint)


def test_a_table_of_yellow_dice_is_not_taken_for_white_dice_under_a_yellow_light(reader: DiceReader) -> None:
    """Yellow dice have black pips: nothing white on them. Under a cool light they are still
    named yellow (or unknown), never white, because no white on the dice measures the light."""
    frame = row(["yellow"] * 4, CASTS["cool window"])
    dice = reader.read(frame)
    assert len(dice) == 4
    assert light_gains(frame, [(d.center, d.size) for d in dice]) is None
    assert {d.color for d in dice} <= {"yellow", UNKNOWN} and "yellow" in {d.color for d in dice}


def test_a_photo_with_the_markers_in_view_is_balanced_by_their_paper(capsys) -> None:
    """A rendered table under a cool window light (tests/data/dice/rendered-validation,
    s001018, a validation scene), four blue dice on a lilac terrazzo cloth, the four printed
    markers in view: `companion dice` measures the light on the markers' white paper and names
    all four blue; by the dice's own whites, three were "unknown"."""
    image = Path(__file__).parents[1] / "data" / "dice" / "rendered-validation" / "images" / "s001018.jpg"
    assert main(["dice", str(image), "--json"]) == 0
    dice = json.loads(capsys.readouterr().out)["dice"]
    assert [d["color"] for d in dice] == ["blue"] * 4


def test_yellow_dice_outnumbering_the_white_one_are_not_taken_for_the_light(capsys) -> None:
    """A rendered table with no marker in view (tests/data/dice/rendered-validation, s034700, a
    validation scene): four yellow dice, one white, two red and two green on a blue speckled
    carpet. The light is measured on the dice: the yellow faces, pale enough to pass for white
    paper under a warm lamp, outvoted the white die, and all four were named white and the white
    die blue. The red and green dice's white pips say the light is neutral: every die is named
    its colour (before, the red and green ones were "unknown" too)."""
    data = Path(__file__).parents[1] / "data" / "dice" / "rendered-validation"
    assert main(["dice", str(data / "images" / "s034700.jpg"), "--json"]) == 0
    dice = json.loads(capsys.readouterr().out)["dice"]
    with open(data / "annotations.csv") as f:
        truth = [((float(r["xmin"]) + float(r["xmax"])) / 2, (float(r["ymin"]) + float(r["ymax"])) / 2, r["color"])
                 for r in csv.DictReader(f) if "s034700" in r["image"]]
    named = {}
    for x, y, colour in truth:
        near = min(dice, key=lambda d: math.hypot(d["center"][0] - x, d["center"][1] - y))
        assert math.hypot(near["center"][0] - x, near["center"][1] - y) < 15   # every die is found
        named[(x, y)] = (colour, near["color"])
    assert sorted(c for c, _ in named.values()) == ["green"] * 2 + ["red"] * 2 + ["white"] + ["yellow"] * 4
    assert all(want == got for want, got in named.values()), named


def test_the_markers_white_paper_measures_the_light(reader: DiceReader) -> None:
    """Live, the table's markers give the light's colour: with the paper's colour under a
    strong warm lamp, the six dice of Twenty One are named right; the paper clipped to white
    (an over-exposed frame) measures nothing and the dice's own whites are used instead."""
    six = ["white", "black", "red", "blue", "yellow", "green"]
    frame = row(six, CASTS["warm lamp"])
    paper = in_light(np.full((1, 1, 3), 225, np.uint8), CASTS["warm lamp"])[0, 0].astype(np.float64)
    try:
        reader.white = paper
        with_paper = [d.color for d in sorted(reader.read(frame), key=lambda d: d.center[0])]
        reader.white = np.array([255.0, 255.0, 255.0])
        clipped = [d.color for d in sorted(reader.read(frame), key=lambda d: d.center[0])]
    finally:
        reader.white = None
    assert with_paper == six
    assert clipped == six


def _named(capsys, folder: str, scene: str) -> list[tuple[str, str]]:
    """(labelled colour, name read) for each labelled die of a rendered scene the reader finds."""
    data = Path(__file__).parents[1] / "data" / "dice" / folder
    assert main(["dice", str(data / "images" / f"{scene}.jpg"), "--json"]) == 0
    dice = json.loads(capsys.readouterr().out)["dice"]
    with open(data / "annotations.csv") as f:
        truth = [((float(r["xmin"]) + float(r["xmax"])) / 2, (float(r["ymin"]) + float(r["ymax"])) / 2, r["color"])
                 for r in csv.DictReader(f) if f"/{scene}." in r["image"]]
    out = []
    for x, y, colour in truth:
        near = [d for d in dice if math.hypot(d["center"][0] - x, d["center"][1] - y) < 15]
        if near:
            out.append((colour, near[0]["color"]))
    return out


def test_blue_dice_are_named_by_their_light_pips_and_a_light_face_with_dark_pips_is_not_blue(capsys) -> None:
    """Rendered tables, uncalibrated. Seven blue dice on a confetti cloth under two lights of
    different colour (tests/data/dice/rendered, s066002, a test scene): every die found is named
    blue, where three were "unknown": a die of another colour the profiles know lay next to them
    (colour.BLUE_PIPS), and their white pips say blue. A light blue die with dark pips
    (rendered-validation s064400) is none of the six, and a white die under a hard spot lamp
    (s063301), tinged blue, is white: both were named blue (colour.BLUE_LIGHT)."""
    blue = _named(capsys, "rendered", "s066002")
    assert len(blue) >= 5 and all(got == "blue" for _, got in blue), blue
    light_blue = [got for want, got in _named(capsys, "rendered-validation", "s064400") if want == "light-blue"]
    assert light_blue == ["unknown"]
    white = [got for want, got in _named(capsys, "rendered-validation", "s063301") if want == "white"]
    assert white == ["white"]


def test_a_blue_die_whose_face_a_lamp_washes_out_is_still_blue(capsys) -> None:
    """Nine glossy blue dice under a warm lamp, uncalibrated (tests/data/dice/rendered-validation
    s041203): the lamp's reflection turns some top faces nearly white, their bevels stay blue.
    Two were named white; every one found is blue, and the white dice of the side-face scenes
    (s045006, s045007, white dice on wood) stay white."""
    named = _named(capsys, "rendered-validation", "s041203")
    assert len(named) >= 7 and all(got == "blue" for _, got in named), named
    whites = [got for scene in ("s045006", "s045007")
              for want, got in _named(capsys, "rendered-validation", scene) if want == "white"]
    assert len(whites) >= 6 and all(got == "white" for got in whites), whites
