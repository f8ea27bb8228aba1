"""The dice reader on photo-realistic tables it never trained on (``tests/data/dice/rendered``:
14 Blender scenes of test seeds, ``tools/render/dice_scenes.py``; s066002 is for the colours, in test_colour_light.py), one failure mode at a time:
speckled carpets, printed cloths and clutter that were read as dice, a camera tilted up to 40° whose side faces
were read as the value, touching dice, and the six game colours under a warm lamp, a cool window
and a camera's cast, uncalibrated."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.bench.dice import colour_class, enlarged, load_labelled, match
from companion.vision.colour import UNKNOWN
from companion.vision.dice.reader import DiceReader, read_photo

DATA = Path(__file__).parents[1] / "data" / "dice" / "rendered"
SIX = ("white", "black", "red", "blue", "yellow", "green")


@pytest.fixture(scope="module")
def read() -> dict[str, tuple[np.ndarray, list]]:
    reader = DiceReader()
    return {path.stem: (labels, reader.read(cv2.imread(str(path)))) for path, labels in load_labelled(DATA, "test")}


def tally(read: dict, scenes: list[str]) -> tuple[int, int, int, list]:
    """(dice labelled, read with the right value, extra, what went wrong) over ``scenes``."""
    labelled = right = extra = 0
    wrong = []
    for name in scenes:
        labels, dice = read[name]
        pairs, missed, more = match(dice, labels)
        labelled += len(labels)
        extra += len(more)
        for i, j in pairs:
            if dice[j].value == int(labels[i, 0]):
                right += 1
            else:
                wrong.append((name, int(labels[i, 0]), dice[j].value))
        wrong += [(name, int(labels[i, 0]), "missed") for i in missed]
        wrong += [(name, "extra", dice[j].value, [round(c) for c in dice[j].center]) for j in more]
    return labelled, right, extra, wrong


def test_patterned_cloths_and_clutter_are_not_read_as_dice(read: dict) -> None:
    """Carpets and confetti cloths of pip-sized specks, a cloth printed with flowers, and a tray
    heavy with cables, coins, cards and barcode labels: the reader once reported hundreds of
    "6"s in such specks; now nothing that is not a die, and 23 of the 28 dice read right."""
    labelled, right, extra, wrong = tally(read, ["s003000", "s003001", "s003101", "s004300", "s004501"])
    assert extra == 0, wrong
    assert right >= labelled - 5, wrong


def test_a_tilted_camera_reads_the_top_face(read: dict) -> None:
    """A camera 34° and 38° from straight down, on cardboard and on a cloth printed with dots of
    pip size: no side face is reported as a die of its own, and the top face gives the value for
    15 of the 17 dice. Still weak: two 2s on the dotted cloth are not found (the first reader
    alone read four dice higher than they are, a side face's pips counted with the top's)."""
    labelled, right, extra, wrong = tally(read, ["s004200", "s004201"])
    assert extra == 0, wrong
    assert right >= labelled - 4, wrong


def test_touching_dice_are_read_apart(read: dict) -> None:
    """Seven dice, several touching, on a speckled carpet in dim light: each is read on its own,
    and their shadows are not dice (an earlier reader reported three dark "6"s there). Still
    weak: a 6 of 14 pixels is missed, and the two readers together read a black 1 of 14 pixels
    by its side face as 4 (the first alone read it right; on the fresh and test renders, 752
    dice, the pair reads 8 more right: models/dice-reader.md, "A second reader")."""
    labelled, right, extra, wrong = tally(read, ["s004400"])
    assert extra == 0, wrong
    assert right >= labelled - 2, wrong


def test_dice_too_small_for_the_first_look_are_looked_at_finer(read: dict) -> None:
    """Eight dice of ~16 pixels on a striped cloth among four big printed markers: the first
    look (at half size) sees nothing at all, and the reader once stopped there and reported no
    die. An empty first look now also looks twice as fine: 7 of the 8 (a 6 read 5), no extra."""
    labelled, right, extra, wrong = tally(read, ["s004503"])
    assert extra == 0, wrong
    assert right >= labelled - 1, wrong


def test_the_six_colours_are_named_under_any_light_without_calibration(read: dict) -> None:
    """Dice of the six game colours under a cool window, two lights of different colour, a hard
    spot and a camera's cast: named right (the learnt profiles alone left most of them "unknown",
    as a new user met: rendered blue dice 41 of 46), and never named as another of the six."""
    colours = {}
    with open(DATA / "annotations.csv") as f:
        for row in csv.DictReader(f):
            x0, y0, x1, y1 = (float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax"))
            colours.setdefault(Path(row["image"]).stem, []).append(((x0 + x1) / 2, (y0 + y1) / 2, row["color"]))
    named = scored = 0
    crossed = []
    for name in ["s003800", "s004001", "s004100", "s004500"]:
        _, dice = read[name]
        for cx, cy, colour in colours[name]:
            want = colour_class(colour)
            near = [d for d in dice if math.hypot(d.center[0] - cx, d.center[1] - cy) < 0.5 * d.size]
            if want not in SIX or not near:
                continue
            scored += 1
            named += near[0].color == want
            if near[0].color not in (want, UNKNOWN):
                crossed.append((name, want, near[0].color))
    assert scored >= 20
    assert not crossed
    assert named >= scored - 1  # measured: 25 of 25


@pytest.mark.parametrize("factor", [2, 3])
def test_a_photo_of_high_resolution_is_read_as_the_table_not_as_its_cloths_dots(factor: int) -> None:
    """A phone's photo is large: two rendered tables (tests/data/dice/rendered-validation: a
    dotted cloth in dim light, a printed cloth; the validation scenes the looks' rules were chosen
    on) enlarged 2x and 3x are read as ``companion dice`` reads them at their own size: no more
    extra dice (but one), and as many read right but one (the printed cloth's 3x: 3 of 4). Before,
    the reader looked ever finer at the cloth's dots: 165 and 648 dice for the dotted cloth's
    three, 10 and 11 extra on the printed cloth."""
    reader = DiceReader()
    data = Path(__file__).parents[1] / "data" / "dice" / "rendered-validation"
    for path, labels in load_labelled(data, "test"):
        if path.stem not in ("s001500", "s001703"):
            continue
        frame = cv2.imread(str(path))
        as_taken = read_photo(reader, frame)
        big, scaled = enlarged(frame, labels, factor)
        dice = read_photo(reader, big)
        pairs, _, extra = match(dice, scaled)
        right = sum(dice[j].value == int(scaled[i, 0]) for i, j in pairs)
        pairs_as_taken, _, extra_as_taken = match(as_taken, labels)
        right_as_taken = sum(as_taken[j].value == int(labels[i, 0]) for i, j in pairs_as_taken)
        assert len(extra) <= len(extra_as_taken) + 1, (path.stem, factor, len(extra), [d.value for d in dice][:20])
        assert right >= right_as_taken - 1, (path.stem, factor, right, right_as_taken)


def test_a_steep_camera_sees_the_sides_of_the_dice_but_reads_only_their_tops() -> None:
    """A camera 45-53° from straight down (tests/data/dice/rendered-validation s045006, s045007:
    white dice on wood, the validation scenes the side-face rule was chosen on) sees the side of
    each die that faces it nearly as large as its top, and the reader read six of those sides as
    dice of their own (5s and 6s just below the dice). Now one is left, and no die is lost: 14 of
    the 15 read right, as before."""
    reader = DiceReader()
    data = Path(__file__).parents[1] / "data" / "dice" / "rendered-validation"
    labelled = right = 0
    extra = []
    for path, labels in load_labelled(data, "test"):
        if path.stem not in ("s045006", "s045007"):
            continue
        dice = read_photo(reader, cv2.imread(str(path)))
        pairs, _, more = match(dice, labels)
        labelled += len(labels)
        right += sum(dice[j].value == int(labels[i, 0]) for i, j in pairs)
        extra += [(path.stem, dice[j].value, [round(c) for c in dice[j].center]) for j in more]
    assert labelled == 15
    assert len(extra) <= 1, extra
    assert right >= 14


def test_a_side_face_is_looked_for_toward_where_the_camera_stands() -> None:
    """The live loop knows where the camera stands (its calibration gives the table's point below
    it, ``DiceReader.nadir``): a side face lies between a die and that point. The steep scene
    s045006 turned upside down, its camera now above the frame: told so, the reader leaves out
    the sides there (measured: 2 extra dice, 6 right); not told, it looks for them below the dice
    and reads them as dice (5 extra), the same dice right."""
    data = Path(__file__).parents[1] / "data" / "dice" / "rendered-validation"
    for path, labels in load_labelled(data, "test"):
        if path.stem == "s045006":
            frame, truth = cv2.imread(str(path)), labels.copy()
    h, w = frame.shape[:2]
    turned = np.ascontiguousarray(frame[::-1, ::-1])
    truth[:, [1, 3]], truth[:, [2, 4]] = w - truth[:, [3, 1]], h - truth[:, [4, 2]]
    reader = DiceReader()
    results = []
    for nadir in (None, (w / 2, -2.0 * h)):  # unknown (below the frame), and far above it
        reader.nadir = nadir
        dice = reader.read(turned)
        pairs, _, extra = match(dice, truth)
        results.append((sum(dice[j].value == int(truth[i, 0]) for i, j in pairs), len(extra)))
    (right_unknown, extra_unknown), (right_told, extra_told) = results
    assert extra_told <= 2 < extra_unknown, results
    assert right_told >= right_unknown, results
