"""The colour-order check of `companion calibrate colours`: a camera that sends red and blue
swapped (some Pi 5 kernels did) is refused with a sentence, nothing written, judged on the dice
named red and blue (the markers are black and white: a swap leaves them as they are)."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest

from companion.cli import main
from tests.vision.test_colour import row_of_dice

NAMES = ["white", "black", "red", "blue", "yellow", "green"]


@pytest.mark.parametrize("light, tint", [(1.0, (1.0, 1.0, 1.0)), (0.6, (0.75, 0.95, 1.15))])
def test_a_frame_with_red_and_blue_swapped_is_refused(tmp_path: Path, capsys, light, tint) -> None:
    frame = row_of_dice(NAMES, light, tint)
    out = tmp_path / "colours.json"
    cv2.imwrite(str(tmp_path / "swapped.png"), frame[..., ::-1].copy())  # B, G, R read as R, G, B
    status = main(["calibrate", "colours", "--image", str(tmp_path / "swapped.png"), "--colours", ",".join(NAMES),
                   "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 2, printed
    assert "the die named red looks blue and the one named blue looks red" in printed
    assert "the camera's red and blue are swapped" in printed and "nothing written" in printed
    assert not out.exists()
    # the same dice as the camera should send them: learnt
    cv2.imwrite(str(tmp_path / "row.png"), frame)
    status = main(["calibrate", "colours", "--image", str(tmp_path / "row.png"), "--colours", ",".join(NAMES),
                   "--out", str(out)])
    assert status == 0, capsys.readouterr().out
    assert out.is_file()


def test_without_both_red_and_blue_nothing_is_judged(tmp_path: Path, capsys) -> None:
    names = ["white", "yellow", "green"]
    cv2.imwrite(str(tmp_path / "row.png"), row_of_dice(names)[..., ::-1].copy())
    status = main(["calibrate", "colours", "--image", str(tmp_path / "row.png"), "--colours", ",".join(names),
                   "--out", str(tmp_path / "c.json")])
    assert "looks blue" not in capsys.readouterr().out and status == 0
