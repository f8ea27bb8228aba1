"""The colour-order check: a camera that sends red and blue swapped (some Pi 5 kernels did) is
refused with one sentence and nothing written, by `companion calibrate colours` (judged on the
dice named red and blue) and by `companion calibrate table` and the service's learning of a new
game's cups (judged on the cups: yellow ones turn cyan, a colour no cup has). The markers are
black and white: a swap leaves them as they are."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.bench.cups import DICE, NEW_GAME
from companion.cli import main
from companion.live.pipeline import TableVision
from companion.sim.render import Look, Renderer, full_table
from companion.table import Table
from companion.vision.calibrate import Calibration, CalibrationError
from companion.vision.cups.discover import learn
from companion.vision.cups.net import CupFinder
from companion.vision.layout import Layout
from companion.web.i18n import texts
from companion.web.pages import alert_text
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


# -- the cups: `calibrate table` and the service's learning at a new game ---------------------

DATA = Path(__file__).resolve().parents[1] / "data"
# Every set-up (every cup standing) the project has as a photo: the rendered live sequences'
# set-up frames, and the rendered tables of markers-hidden whose cups all stand
SET_UPS = [DATA / "cups-sequences" / "images" / "s080002_f0.jpg", DATA / "cups-sequences" / "images" / "s080004_f0.jpg",
           DATA / "markers-hidden" / "s070021.jpg", DATA / "markers-hidden" / "s071119.jpg"]
# and every other table photo it has (games in progress, cups made, hidden markers, metal cups)
OTHERS = sorted({*DATA.glob("cups-*/images/*.jpg"), *DATA.glob("markers-hidden/*.jpg")} - set(SET_UPS))
SWAP_SENTENCE = "the camera's red and blue are swapped (some Pi 5 kernels send the picture in the wrong colour order)"

needs_finder = pytest.mark.skipif(not CupFinder.available(), reason="models/cup-finder.onnx is not here")


def drawn_set_up() -> np.ndarray:
    """The project's own drawn table, every cup standing (the demo's renderer)."""
    layout = Layout()
    return Renderer(Look(tilt_deg=20), layout, seed=3).frame(full_table(layout))


def set_ups() -> list[tuple[str, np.ndarray]]:
    frames = [(p.stem, cv2.imread(str(p))) for p in SET_UPS]
    return [*frames, ("drawn", drawn_set_up())]


@needs_finder
@pytest.mark.parametrize("index", range(len(SET_UPS) + 1))
def test_calibrate_table_learns_each_set_up_as_sent_and_refuses_it_with_red_and_blue_swapped(
        index: int, tmp_path: Path, capsys) -> None:
    name, frame = set_ups()[index]
    out = tmp_path / "table.json"
    cv2.imwrite(str(tmp_path / "swapped.png"), np.ascontiguousarray(frame[..., ::-1]))
    status = main(["calibrate", "table", str(tmp_path / "swapped.png"), "--out", str(out)])
    said = capsys.readouterr()
    assert status == 1, (name, said.out)
    assert "calibration failed (COLOURS_SWAPPED)" in said.err and SWAP_SENTENCE in said.err, said.err
    assert "the cups make a whole set-up only with the picture's red and blue exchanged" in said.err
    assert not out.exists() and not (tmp_path / "table-overlay.png").exists()
    # the same frame as the camera should send it: learnt, every cup, no word of colours
    cv2.imwrite(str(tmp_path / "setup.png"), frame)
    status = main(["calibrate", "table", str(tmp_path / "setup.png"), "--out", str(out)])
    said = capsys.readouterr()
    assert status == 0, (name, said.err)
    assert "cups learnt (side A: " in said.out and "swapped" not in said.out + said.err
    assert Calibration.load(out).view_plane == 0.0


@needs_finder
@pytest.mark.parametrize("path", OTHERS, ids=[p.stem for p in OTHERS])
def test_a_table_that_is_no_set_up_is_never_called_swapped(path: Path) -> None:
    """Games in progress (cups made, turned over, balls in them), hidden markers, metal cups: the
    frame as sent may fail to learn, for its own reasons, never for the colour order."""
    try:
        learn(cv2.imread(str(path)))
    except CalibrationError as err:
        assert err.code != "COLOURS_SWAPPED", err.message


@needs_finder
def test_the_service_refuses_a_swapped_set_up_at_a_new_game_and_stores_no_cups(tmp_path: Path) -> None:
    """The service learns each new 21 Exact game's cups from the camera: a camera sending red and
    blue swapped is said on every phone (the table's alert) and no cups are stored or watched;
    the same table sent right is learnt at the next try, with no restart."""
    table = Table(tmp_path / "table.sqlite")
    try:
        table.start(NEW_GAME)
        for event in DICE:
            table.apply(event)
        calibration = tmp_path / "table.json"
        vision = TableVision(table, calibration_file=calibration)
        setup = cv2.imread(str(SET_UPS[0]))
        assert vision.feed(np.ascontiguousarray(setup[..., ::-1]), 0.0) == []
        alert = vision.health()["alert"]
        assert alert is not None and alert["code"] == "COLOURS_SWAPPED", vision.status
        assert SWAP_SENTENCE in alert["message"]
        for lang in ("hu", "es"):   # every phone says it in its own words, the sentence as the detail
            t = texts(lang)
            assert alert_text(alert, t) == t["alert_COLOURS_SWAPPED"].replace("{detail}", alert["message"])
        assert vision.cups is None and "cups" not in json.loads(calibration.read_text())  # the markers only
        t = 0.0
        while vision.cups is None and t < 3 * vision.recalibrate_every:
            t += 0.5
            vision.feed(setup.copy(), t)
        assert vision.cups is not None and vision.health()["alert"] is None, vision.status
    finally:
        table.close()
