"""Reading cups from one frame by their colours (CupReader, and ``companion cups IMAGE... --json
--colour-search``) as EVENTS.md specifies, including scenes the reader was never tuned on (other
cup shades, light, tables, tilt). The cup finder network that ``companion cups`` uses by default
is tested on photo-realistic tables in test_cups_learnt.py."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.sim.render import Ball, Cup, Hand, Look, Renderer, Scene, full_table
from companion.vision.calibrate import calibrate
from companion.vision.cups.discover import measure_table
from companion.vision.cups.reader import CupReader
from companion.vision.layout import Layout

LAYOUT = Layout()
FULL = {"blue": 4, "red": 4, "green": 4, "yellow": 4, "silver": 1}


def table_with(look: Look, remove: list[tuple[str, str, int]] = (), turned: list[tuple[str, str]] = (),
               ball: tuple[str, str, int] | None = None, hands: tuple[Hand, ...] = ()) -> np.ndarray:
    start = full_table(LAYOUT)
    cups = list(start.cups)
    by_key = {}
    for c in cups:
        by_key.setdefault((c.side, c.cup), []).append(c)
    for side, colour, i in remove:
        cups.remove(by_key[(side, colour)][i])
    for n, (side, colour) in enumerate(turned):
        x, y = LAYOUT.tally_spot(side)
        cups.append(Cup(side, colour, x + 35 * n, y, upright=False))
    balls = ()
    if ball is not None:
        c = by_key[(ball[0], ball[1])][ball[2]]
        balls = (Ball(c.x + 4, c.y - 3, LAYOUT.cup_h * 0.4 + 14, in_cup=c),)
    return Renderer(look, LAYOUT, seed=3).frame(Scene(tuple(cups), start.dice, balls, hands))


def read(frame: np.ndarray):
    return CupReader(calibrate(frame)).read(frame)


# Looks the reader was tuned on (the bench's range) and looks it never saw: other cup shades
# (hue shifted further than the bench ever does), a white-ish table, very dim or very bright light,
# strong vignetting and gradient, a steeper tilt, another lens, heavy noise and blur.
TUNED = [Look(tilt_deg=0), Look(tilt_deg=30, light=0.5, gradient=0.5, noise=4)]
UNSEEN = [
    Look(tilt_deg=34, roll_deg=-7, light=0.42, gradient=0.8, gradient_angle=200, table=(150, 160, 170),
         cup_tint=7, noise=6),
    Look(tilt_deg=22, light=1.3, table=(30, 60, 95), cup_tint=-7, blur=1.5, noise=2, ball="orange"),
    Look(tilt_deg=12, focal=900.0, shift=(-60, 40), light=0.7, table=(90, 75, 80), noise=7),
]


def test_cups_command_counts_at_most_four_cups_of_a_colour_a_side(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's game has four cups of each colour a side: a fifth ring of a colour on one side
    (a spare cup stood there; on a real table, more often a cloth's pattern or a die) is not a
    fifth cup to count."""
    layout = OTHER_TABLES["1200x600-wider-rows"]
    start = full_table(layout)
    spare = Cup("A", "red", 340.0, 480.0)   # between side A's red and yellow rows, at the back
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), Renderer(Look(tilt_deg=16, light=0.8), layout, seed=5).frame(
        Scene((*start.cups, spare), start.dice, ())))
    assert main(["cups", str(photo), "--json", "--colour-search"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["sides"] == {"A": FULL, "B": FULL}
    assert sum(c["side"] == "A" and c["color"] == "red" for c in line["cups"]) == 4


@pytest.mark.parametrize("tilt", [0, 16, 30])
def test_cups_their_own_colour_inside_are_not_taken_for_cups_turned_over(tilt: float, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Solid plastic cups, their colour inside with the bottom lit nearly as brightly as the lip:
    each is a disc of its colour, as a turned cup's top is, and a photo of them was read as twenty
    cups turned over. A turned cup's wall round its top is darker than the top; a standing cup's
    shaded bottom is not brighter than what is round it. Only the one turned cup is counted
    (the standing ones are counted only in part: README, "What is still weak")."""
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), table_with(Look(tilt_deg=tilt, inside="solid"), remove=[("A", "blue", 1)],
                                       turned=[("B", "red")]))
    assert main(["cups", str(photo), "--json", "--colour-search"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["upside_down"] == {"A": {}, "B": {"red": 1}}
    if tilt == 0:   # seen from straight above, the standing discs are counted as cups (not yellow's)
        assert {c: line["sides"]["A"][c] for c in ("blue", "red", "green")} == {"blue": 3, "red": 4, "green": 4}
        assert {c: line["sides"]["B"][c] for c in ("blue", "red", "green")} == {"blue": 4, "red": 4, "green": 4}


@pytest.mark.parametrize("look", TUNED + UNSEEN, ids=["straight", "tilt30-half", "steep-dim-pale-table",
                                                      "bright-dark-table-blur", "wide-lens-noisy"])
def test_counts_every_sides_cups(look: Look) -> None:
    frame = table_with(look, remove=[("A", "blue", 1), ("A", "yellow", 3), ("B", "green", 0)],
                       turned=[("B", "red")], ball=("A", "red", 2))
    reading = read(frame)
    counts = reading.counts()
    assert counts["A"] == {**FULL, "blue": 3, "yellow": 3}
    assert counts["B"] == {**FULL, "green": 3}
    assert reading.turned() == {"A": {}, "B": {"red": 1}}
    assert [(c.side, c.cup) for c in reading.balls()] == [("A", "red")]


def test_a_cup_centre_is_where_its_rim_is_in_the_picture() -> None:
    look = Look(tilt_deg=25)
    frame = table_with(look)
    reading = read(frame)
    r = Renderer(look, LAYOUT)
    truth = {(s.side, s.cup, round(s.y)): r.camera.project(np.array([[s.x, s.y, LAYOUT.cup_h]]))[0]
             for s in LAYOUT.slots()}
    for c in reading.cups:
        nearest = min(np.hypot(*(np.array(c.center) - p)) for (side, cup, _), p in truth.items()
                      if side == c.side and cup == c.cup)
        assert nearest < 5.0   # pixels: ~3 mm at this scale


def test_a_silver_cup_turned_over_is_counted_upside_down_not_as_a_cup() -> None:
    start = full_table(LAYOUT)
    silver = next(c for c in start.cups if c.side == "A" and c.cup == "silver")
    cups = tuple(Cup(c.side, c.cup, c.x, c.y, upright=c is not silver) for c in start.cups)
    frame = Renderer(Look(tilt_deg=18), LAYOUT).frame(Scene(cups, start.dice))
    reading = read(frame)
    assert reading.counts()["A"]["silver"] == 0 and reading.turned()["A"] == {"silver": 1}


def test_cups_command_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "table.png"
    cv2.imwrite(str(good), table_with(Look(tilt_deg=20), remove=[("B", "blue", 0)], turned=[("A", "green")]))
    cut = tmp_path / "cut.png"
    cv2.imwrite(str(cut), cv2.imread(str(good))[:, 500:])
    assert main(["cups", str(good), str(cut), str(tmp_path / "none.png"), str(good), "--json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 4
    first = lines[0]
    assert set(first) == {"image", "markers", "sides", "upside_down", "cups", "balls", "ms"}
    assert first["markers"] == 4 and first["image"] == str(good)
    assert first["sides"]["B"] == {**FULL, "blue": 3} and first["sides"]["A"] == FULL
    assert first["upside_down"] == {"A": {"green": 1}, "B": {}}
    assert len(first["cups"]) == 33 and {"side", "color", "center"} == set(first["cups"][0])
    assert first["balls"] == []
    assert lines[1] == {"image": str(cut), "error": {"code": "MARKERS_NOT_FOUND",
                                                    "message": "marker 0 (near left), marker 3 (far left) not seen"}}
    assert lines[2]["error"]["code"] == "NOT_FOUND"
    assert lines[3]["sides"] == first["sides"]          # and it went on after the errors


WARM = (0.70, 0.92, 1.12)   # a warm lamp (B, G, R): yellow cups turn orange, the silver cup yellowish
COOL = (1.15, 1.0, 0.85)    # a cool window: blue cups leave blue's hue band


@pytest.mark.slow
@pytest.mark.parametrize("look", [Look(tilt_deg=14, colour=WARM), Look(tilt_deg=20, light=0.7, colour=COOL),
                                  Look(tilt_deg=8, light=0.25, gradient=0.1, noise=1.5)],
                         ids=["warm-lamp", "cool-light", "quarter-light"])
def test_cups_command_reads_a_table_under_a_coloured_or_dim_light(look: Look, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The cup colours are hue bands, so the light's colour matters: under these lights a third of
    the cups (every yellow, or every blue, and the silver cups) went unseen, and in a quarter of
    the light some green ones. The markers' white paper tells the light's colour and level."""
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), table_with(look, remove=[("A", "yellow", 0), ("B", "blue", 2)], ball=("B", "yellow", 1)))
    assert main(["cups", str(photo), "--json", "--colour-search"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["sides"] == {"A": {**FULL, "yellow": 3}, "B": {**FULL, "blue": 3}}
    assert line["balls"] == [{"side": "B", "cup": "yellow", "center": line["balls"][0]["center"]}]


SEQUENCES = Path(__file__).resolve().parents[1] / "data" / "cups-sequences" / "images"


def test_cups_command_with_a_calibration_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The set-up photographed, calibrated and learnt once; a later photo read with that file:
    the ball resting on side A's silver cup's metal (a rendered table, tests/data/cups-sequences)
    is found, and only it (no shine of the metal taken for a ball)."""
    cal = tmp_path / "table.json"
    assert main(["calibrate", "table", str(SEQUENCES / "s080002_f0.jpg"), "--out", str(cal)]) == 0
    capsys.readouterr()
    image = SEQUENCES / "s080002_f2.jpg"   # the ball landed in the silver cup
    assert main(["cups", str(image), "--json", "--calibration", str(cal)]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["markers"] == 4
    assert [(b["side"], b["cup"]) for b in line["balls"]] == [("A", "silver")], line["balls"]
    (tmp_path / "bad.json").write_text("[]")
    assert main(["cups", str(image), "--calibration", str(tmp_path / "bad.json")]) == 2
    assert "not a table calibration" in capsys.readouterr().err


# ------------------------------------------------------------------ tables it has never seen
# `companion cups` without --calibration measures the table from its markers and finds the cups
# wherever they stand: a photo of another table was read as "no cups at all", without a word.
OTHER_TABLES = {
    "1200x600-wider-rows": Layout(table_w=1200, table_h=600, first_x=160, back_y=480, pitch=90, dice_y=70),
    "1100x450-rows-at-80": Layout(table_w=1100, table_h=450, first_x=110, back_y=330, pitch=80),
    "bigger-cups": Layout(table_w=1100, table_h=450, rim_d=80, base_d=56, cup_h=110, pitch=88, first_x=130,
                          back_y=320),
    "taller-cups": Layout(cup_h=120, first_x=135, back_y=300),
}


def rim_centres(layout: Layout, look: Look) -> dict[tuple[str, str], list[np.ndarray]]:
    """Where each slot's rim centre is in the picture, per side and colour."""
    camera = Renderer(look, layout).camera
    out: dict[tuple[str, str], list[np.ndarray]] = {}
    for s in layout.slots():
        out.setdefault((s.side, s.cup), []).append(camera.project(np.array([[s.x, s.y, layout.cup_h]]))[0])
    return out


def other_table(layout: Layout, look: Look) -> np.ndarray:
    start = full_table(layout)
    gone = {("A", "blue", 1), ("A", "yellow", 3), ("B", "green", 0), ("B", "red", 2)}
    seen: dict[tuple[str, str], int] = {}
    cups = []
    for c in start.cups:
        k = seen[(c.side, c.cup)] = seen.get((c.side, c.cup), -1) + 1
        if (c.side, c.cup, k) not in gone:
            cups.append(c)
    ball_cup = next(c for c in cups if c.side == "B" and c.cup == "yellow")
    ball = Ball(ball_cup.x + 4, ball_cup.y - 3, layout.cup_h * 0.4 + 14, in_cup=ball_cup)
    return Renderer(look, layout, seed=5).frame(Scene(tuple(cups), start.dice, (ball,)))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(OTHER_TABLES))
def test_cups_command_reads_a_table_of_another_size_and_arrangement(name: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    photo = tmp_path / "table.png"
    look = Look(tilt_deg=16, light=0.8)
    cv2.imwrite(str(photo), other_table(OTHER_TABLES[name], look))
    assert main(["cups", str(photo), "--json", "--colour-search"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["sides"] == {"A": {**FULL, "blue": 3, "yellow": 3}, "B": {**FULL, "green": 3, "red": 3}}
    assert line["upside_down"] == {"A": {}, "B": {}}
    assert [(b["side"], b["cup"]) for b in line["balls"]] == [("B", "yellow")]
    truth = rim_centres(OTHER_TABLES[name], look)
    for c in line["cups"]:   # each cup's centre is where its rim is in the picture (10 px: ~8 mm here)
        assert min(np.hypot(*(np.array(c["center"]) - p)) for p in truth[(c["side"], c["color"])]) < 10.0


@pytest.mark.slow
@pytest.mark.parametrize("look", TUNED + UNSEEN, ids=["straight", "tilt30-half", "steep-dim-pale-table",
                                                      "bright-dark-table-blur", "wide-lens-noisy"])
def test_cups_command_finds_the_default_tables_cups_as_the_slot_reader_does(look: Look, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), table_with(look, remove=[("A", "blue", 1), ("A", "yellow", 3), ("B", "green", 0)],
                                       turned=[("B", "red")], ball=("A", "red", 2)))
    assert main(["cups", str(photo), "--json", "--colour-search"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["sides"] == {"A": {**FULL, "blue": 3, "yellow": 3}, "B": {**FULL, "green": 3}}
    assert line["upside_down"] == {"A": {}, "B": {"red": 1}}
    balls = [(b["side"], b["cup"]) for b in line["balls"]]
    if look is UNSEEN[0]:
        # steep, dim, noisy, on a pale grey table: the white ball shows on 9 % of the samples
        # inside its cup, under the 10 % it needs (the slot reader, at 12 %, barely sees it)
        assert balls in ([], [("A", "red")])
    else:
        assert balls == [("A", "red")]


@pytest.mark.parametrize("name", ["default", "1200x600-wider-rows"])
def test_the_table_is_measured_from_its_markers(name: str) -> None:
    layout = OTHER_TABLES.get(name, Layout())
    width, depth = measure_table(Renderer(Look(tilt_deg=20), layout).frame(full_table(layout)))
    assert abs(width - layout.table_w) < 0.01 * layout.table_w and abs(depth - layout.table_h) < 0.01 * layout.table_h
