"""The live dice step on a calibrated table (ISSUES #22, "Live"): the camera's frames of a drawn 21
Exact table, calibrated from its markers as the service does, read by the real dice reader and
proposed against a real table's rules. Dice off the table are never read into a roll."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from companion.live.pipeline import DiceStep
from companion.sim.render import Die, Look, Renderer, Scene, full_table
from companion.table import Table
from companion.vision.calibrate import calibrate
from companion.vision.layout import Layout

LAYOUT = Layout()
EXACT = {"type": "new_game", "game": "exact21", "sides": [{"name": "Reds"}, {"name": "Blues"}]}
VALUES = {"A": {"blue": 2, "red": 5, "green": 3, "yellow": 6}}


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path / "table.sqlite")
    t.start(EXACT)
    yield t
    t.close()


def side_a(extra: tuple[Die, ...] = ()) -> Scene:
    """Every cup standing, side A's four dice at their spots, and the ``extra`` dice."""
    full = full_table(LAYOUT, VALUES)
    return Scene(full.cups, tuple(d for d in full.dice if d.x < LAYOUT.table_w / 2) + extra)


def proposals(table: Table, renderer: Renderer, scene: Scene) -> list:
    """What the step proposes over 2 s of a still table at 10 frames a second."""
    step = DiceStep(calibrate(renderer.frame(Scene(side_a().cups)), LAYOUT), still_seconds=0.5)
    out = []
    for k in range(20):
        out += step.feed(renderer.frame(scene), k * 0.1, table.state())
    return out


def in_frame(renderer: Renderer, x: float, y: float) -> bool:
    u, v = renderer.camera.project(np.array([[x, y, 0.0]]))[0]
    return 20 <= u < renderer.look.width - 20 and 20 <= v < renderer.look.height - 20


def test_the_four_dice_on_the_table_are_proposed_for_their_side(table: Table) -> None:
    got = proposals(table, Renderer(Look(tilt_deg=15), LAYOUT, seed=2), side_a())
    assert [p.event for p in got] == [{"type": "dice", "side": "Reds", "values": VALUES["A"]}]
    table.apply(got[0].event)   # and the rules take it


def test_dice_beside_the_table_are_not_read_into_the_roll(table: Table) -> None:
    """Two more dice lie in view beyond the table's far edge (on the floor, or a player's own
    dice): read into side A's half they would make six dice, and no roll at all."""
    r = Renderer(Look(tilt_deg=15), LAYOUT, seed=2)
    beside = (Die("white", 4, 200.0, LAYOUT.table_h + 90), Die("red", 1, 320.0, LAYOUT.table_h + 120))
    assert all(in_frame(r, d.x, d.y) for d in beside)   # the camera does see them
    got = proposals(table, r, side_a(beside))
    assert [p.event for p in got] == [{"type": "dice", "side": "Reds", "values": VALUES["A"]}]
    assert len(got[0].evidence["dice"]) == 4


def test_the_reader_is_told_where_the_tilted_camera_stands() -> None:
    """A tilted camera sees the side of each die that faces it; the reader tells a side face by
    where it lies, toward the point of the table below the camera. The calibration (from the
    markers, as the service makes it) gives that point: below the frame, within 5 % of its
    distance from the frame's middle of where the drawn table's own camera stands."""
    renderer = Renderer(Look(tilt_deg=25), LAYOUT, seed=2)
    step = DiceStep(calibrate(renderer.frame(Scene(side_a().cups)), LAYOUT))
    eye = renderer.camera.eye
    foot = renderer.camera.project(np.array([[eye[0], eye[1], 0.0]]))[0]
    nadir = np.array(step.watch.reader.nadir)
    h = renderer.look.height
    assert nadir[1] > h   # below the frame: the camera stands at the table's near edge
    assert np.linalg.norm(nadir - foot) < 0.05 * np.linalg.norm(foot - [renderer.look.width / 2, h / 2])
