"""The dice reader on real dice from other tables and cameras than the photos it was chosen on:
translucent casino dice on felt seen by an overhead drone camera, side faces showing (the top
face is the value, never a side), and white and black dice in a round dice cup in grey light
(``tests/data/dice/casino-crops``, ``tomitomi3-crops``: test crops, never trained on)."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest

from companion.vision.dice.reader import DiceReader

DATA = Path(__file__).parents[1] / "data" / "dice"


def crops(folder: Path) -> list[tuple[Path, int]]:
    return [(f, int(f.parent.name)) for f in sorted(folder.glob("*/*.*")) if f.parent.name.isdigit()]


def one_die_photo(path: Path) -> cv2.typing.MatLike:
    """The crop in the middle of a photo of that table (its edge pixels repeated round it), as
    a camera further off sees the die."""
    img = cv2.imread(str(path))
    pad = img.shape[0]
    return cv2.copyMakeBorder(img, pad, pad, pad, pad, cv2.BORDER_REPLICATE)


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    return DiceReader()


@pytest.mark.parametrize(("folder", "least"), [("casino-crops/test", 0.78), ("tomitomi3-crops", 0.95)])
def test_dice_of_other_tables_read_by_their_top_face(reader: DiceReader, folder: str, least: float) -> None:
    """Each die, alone in a photo, is found once and read by its top face: at least ``least`` of
    them (measured: casino 88 of 110, tomitomi 60 of 60; the reader before the dice of other
    tables joined its training: 72 and 54)."""
    items = crops(DATA / folder)
    right, wrong = 0, []
    for path, value in items:
        img = one_die_photo(path)
        h, w = img.shape[:2]
        near = [d for d in reader.read(img) if abs(d.center[0] - w / 2) < w / 6 and abs(d.center[1] - h / 2) < h / 6]
        got = [d.value for d in near]
        if got == [value]:
            right += 1
        else:
            wrong.append((path.name, value, got))
    assert right >= least * len(items), wrong
