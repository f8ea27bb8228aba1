"""The cup finder network (models/cup-finder.onnx) as a user meets it: a photo of a table nobody
described read by `companion cups` (photo-realistic rendered tables in tests/data/cups-rendered,
which no model was trained or tuned on), a table set up for 21 Exact learnt by `companion
calibrate table`, and a set-up that is not whole refused in a sentence, with nothing stored."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.bench.tables import scene_truth
from companion.cli import main
from companion.sim.render import Look, Renderer, Scene, full_table
from companion.vision.calibrate import Calibration, CalibrationError
from companion.vision.cups.discover import learn
from companion.vision.cups.judge import CupJudge, JudgeMemo
from companion.vision.cups.net import CupFinder, NetCupReader, reader_for
from companion.vision.layout import CUPS, Layout

RENDERED = Path(__file__).parents[1] / "data" / "cups-rendered"
LAYOUT = Layout()

pytestmark = pytest.mark.skipif(not CupFinder.available(), reason="models/cup-finder.onnx is not here")


def drawn(look: Look, scene: Scene | None = None) -> np.ndarray:
    return Renderer(look, LAYOUT, seed=3).frame(scene or full_table(LAYOUT))


def counts(sides: dict[str, dict[str, int]]) -> Counter:
    return Counter({(side, cup): n for side, per in sides.items() for cup, n in per.items() if n})


@pytest.mark.parametrize("name", ["s000104", "s000105"])
def test_a_rendered_table_nobody_described_is_read_from_one_photo(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """s000104: mixed cup makes, a camera tilted 28°, coloured light, two cups turned over for
    the tally; s000105: party cups (white inside) seen from behind the cups. Each standing cup
    counted on its side and in its colour."""
    image = RENDERED / "images" / f"{name}.jpg"
    truth = scene_truth(RENDERED)[str(RENDERED / "images" / f"{name}.jpg")]
    assert main(["cups", str(image), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    got = counts(line["sides"])
    wrong = sum((truth["cups"] - got).values()) + sum((got - truth["cups"]).values())
    assert wrong <= MAX_WRONG[name], (dict(truth["cups"]), dict(got))
    assert line["ms"] < 1000


# the shipped finder and judge read every standing cup of these right; on 60 held-out rendered
# tables 98 % of the standing cups are found (models/cup-judge.md): a regression shows here
MAX_WRONG = {"s000104": 1, "s000105": 1}


@pytest.mark.parametrize("name", ["s000104", "s000105"])
def test_the_cups_turned_over_are_read_from_one_photo(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The tally: two cups turned over beside s000104's rows, one turned where it stood in
    s000105 (the silver rule and the watch's tally turn on them)."""
    assert main(["cups", str(RENDERED / "images" / f"{name}.jpg"), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert counts(line["upside_down"]) == scene_truth(RENDERED)[str(RENDERED / "images" / f"{name}.jpg")]["turned"]


@pytest.mark.parametrize(("name", "all_found"), [("s000105", True), ("s000104", False)])
def test_the_balls_resting_in_cups_are_read_from_one_photo(name: str, all_found: bool,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """No ball is reported where none is (a ball in a cup is a throw), and the ball lying on the
    bottom of s000105's blue cup is found. s000104's ball floats in a cup seen from its side, a
    sliver past the rim: missed (models/cup-judge.md)."""
    assert main(["cups", str(RENDERED / "images" / f"{name}.jpg"), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    want = scene_truth(RENDERED)[str(RENDERED / "images" / f"{name}.jpg")]["balls"]
    got = Counter((b["side"], b["cup"]) for b in line["balls"])
    assert not got - want, ("a ball where there is none", dict(got))
    if all_found:
        assert got == want, dict(got)


METAL = Path(__file__).parents[1] / "data" / "cups-metal"


def test_metal_cups_glints_and_loose_balls_are_not_throws(capsys: pytest.CaptureFixture[str]) -> None:
    """Metal cups under a spot lamp on felt (a validation render): the glints inside the cups and
    two balls lying loose on the table are no ball in a cup; the one ball resting in a yellow
    cup is. Judged on the patch alone the judge saw a ball in a yellow cup of side B too; the
    mirror image's answer averaged in (judge.BALL_MIRROR) leaves it out."""
    image = METAL / "images" / "s071025.jpg"
    assert main(["cups", str(image), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    want = scene_truth(METAL)[str(image)]["balls"]
    assert want == Counter({("A", "yellow"): 1})
    assert Counter((b["side"], b["cup"]) for b in line["balls"]) == want


BALLS = Path(__file__).parents[1] / "data" / "cups-balls"


def test_a_ball_dim_in_its_cups_shadow_is_found_by_the_ball_look(capsys: pytest.CaptureFixture[str]) -> None:
    """A validation render: a ball floating in side A's yellow cup, dim in the cup's shadow under a
    low window light. The ball look, finer than the judge's patch, sees it: the photo's every
    count is right, balls, standing and turned cups."""
    image = BALLS / "images" / "s071007.jpg"
    assert main(["cups", str(image), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    truth = scene_truth(BALLS)[str(image)]
    assert truth["balls"] == Counter({("A", "yellow"): 1})
    assert Counter((b["side"], b["cup"]) for b in line["balls"]) == truth["balls"]
    assert counts(line["sides"]) == truth["cups"]
    assert counts(line["upside_down"]) == truth["turned"]


def test_a_models_folder_without_the_ball_look_reads_with_the_judges_alone(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without models/cup-ball.onnx the judges' own ball answer stands, and the photo is read all
    the same; the dim ball above is the one it then misses (what the ball look is for)."""
    from companion.vision.cups import judge, net

    finder = CupFinder(judge=None)
    finder.judge = judge.CupJudge(judge.JUDGES, ball=tmp_path / judge.BALL_MODEL)
    assert finder.judge.ball is None
    monkeypatch.setattr(net, "_FINDER", finder)
    image = BALLS / "images" / "s071007.jpg"
    reading, _ = net.read_photo(cv2.imread(str(image)))
    truth = scene_truth(BALLS)[str(image)]
    assert Counter((c.side, c.cup) for c in reading.cups) == truth["cups"]
    assert not reading.balls()


SET_UPS = Path(__file__).parents[1] / "data" / "cups-setups"


def assert_learnt_as_labelled(name: str) -> None:
    """The set-up ``name`` of tests/data/cups-setups is learnt whole: every standing cup has its
    slot, on its side, in its colour, where its rim shows; nothing else."""
    meta = json.loads((SET_UPS / "meta" / f"{name}.json").read_text())
    cal = learn(cv2.imread(str(SET_UPS / "images" / f"{name}.jpg")))
    cups = [c for c in meta["cups"] if c["state"] == "standing"]
    assert Counter((s.side, s.cup) for s in cal.slots) == Counter((c["side"], c["colour"]) for c in cups)
    px = cal.project(np.array([[s.x, s.y, 0.0] for s in cal.slots]))
    for s, p in zip(cal.slots, px, strict=True):
        mine = [c for c in cups if (c["side"], c["colour"]) == (s.side, s.cup)]
        assert min(np.hypot(*(np.array(c["rim_centre_px"]) - p)) / max(c["rim_ellipse_px"]["axes"]) for c in mine) < 1, s


def test_a_cloth_of_a_cups_colour_is_no_cup_at_set_up() -> None:
    """Blue speckle cloth in the cups' shadows looks to the judge as sure a blue cup as the cups
    (a validation render): counting it, five to seven blue cups a side were found and the set-up
    refused. Every colour stands the same number of cups a side, so the blue extras are left out,
    and every cup is learnt where it stands, on its side, in its colour."""
    assert_learnt_as_labelled("s082005_f0")


def test_a_cup_named_in_its_neighbours_colour_is_learnt_in_the_colour_of_its_row() -> None:
    """A validation render: the judge names one of side B's red party cups yellow under a hard
    spot lamp, so side B showed 3 red and 5 yellow cups and the set-up was refused (a game with
    no camera). That cup stands in the red row and out of the yellow one: it is red."""
    assert_learnt_as_labelled("s082016_f0")


def test_a_cup_standing_on_a_markers_edge_is_learnt() -> None:
    """A crowded 1.6 m table (a validation render drawn to the hidden tables): side B's far red
    cup stands on marker 2's edge, its rim seen 48 mm from the marker's centre. Every find that
    near a marker was taken for the marker, so side B had 3 red cups and the set-up was refused;
    a marker is taken for no cup of a colour."""
    assert_learnt_as_labelled("s095702_f0")


@pytest.fixture
def first_judge_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's finder with only the first judge (``models/cup-judge.onnx``), and no look at
    the mirror image, as it was when these set-ups failed (monkeypatch puts both back afterwards)."""
    from companion.vision.cups import judge, net

    monkeypatch.setattr(net, "_FINDER", CupFinder(judge=judge.MODELS / judge.MODEL))
    monkeypatch.setattr(judge, "MIRROR_BELOW", 0.0)


def test_a_cup_found_out_of_its_colours_row_refuses_the_set_up_instead_of_learning_it_wrong(
        first_judge_alone: None) -> None:
    """A validation render: the first judge alone takes a green flower of the print for side A's
    third green cup and misses the real one. The counts agree, so the set-up was learnt wrong (a
    cup watched where none stands). Each colour stands in a row: the set-up is refused, saying
    where. (The two judges together find the real cup: the set-up is learnt as it stands.)"""
    with pytest.raises(CalibrationError, match="side A: a green cup found out of the green row") as err:
        learn(cv2.imread(str(SET_UPS / "images" / "s071602.jpg")))
    assert err.value.code == "CUPS_NOT_FOUND"


def test_the_two_judges_learn_that_set_up_as_it_stands() -> None:
    """The flower of the print above is no cup to the two judges together: every cup learnt."""
    assert_learnt_as_labelled("s071602")


def test_a_silver_cup_found_away_from_its_sides_cups_refuses_the_set_up(first_judge_alone: None) -> None:
    """A rendered test set-up: with the first judge alone, side A's silver cup was learnt at a
    shine two pitches and more from every colour cup, the real one missed (a silver cup watched
    where none stands). The sheet stands it between the red and yellow rows: the set-up is
    refused, saying which side. (The two judges together refuse it too: side B, 2 of 4 blue
    cups found.)"""
    with pytest.raises(CalibrationError, match="side A: no silver cup found beside its coloured cups"):
        learn(cv2.imread(str(SET_UPS / "images" / "s086003_f0.jpg")))


def test_a_table_set_up_is_learnt_stored_and_read_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every cup standing: the calibration names each side's cups, stores where they stand and
    that they were learnt, and the watch reads the same cups through the network."""
    frame = drawn(Look(tilt_deg=20))
    image, out = tmp_path / "setup.png", tmp_path / "table.json"
    cv2.imwrite(str(image), frame)
    assert main(["calibrate", "table", str(image), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "34 cups learnt (side A: 4 blue, 4 red, 4 green, 4 yellow, 1 silver; side B: 4 blue" in printed
    cal = Calibration.load(out)
    assert cal.view_plane == 0.0 and cal.any_make and not cal.layout_given
    assert Counter((s.side, s.cup) for s in cal.slots) == Counter(
        {(side, cup): 1 if cup == "silver" else 4 for side in "AB" for cup in CUPS})
    assert abs(cal.layout.table_w - LAYOUT.table_w) < 0.03 * LAYOUT.table_w
    reader = reader_for(cal)
    assert isinstance(reader, NetCupReader)
    assert len(reader.read(frame).cups) == 34


def test_a_set_up_with_a_cup_missing_is_refused_naming_it_and_nothing_is_stored(tmp_path: Path,
                                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    start = full_table(LAYOUT)
    gone = next(c for c in start.cups if c.side == "B" and c.cup == "green")
    frame = drawn(Look(tilt_deg=10), Scene(tuple(c for c in start.cups if c is not gone), start.dice, ()))
    with pytest.raises(CalibrationError) as err:
        learn(frame)
    assert err.value.code == "CUPS_NOT_FOUND"
    assert "side B: 3 of 4 green cups found (side A has 4)" in err.value.message
    image, out = tmp_path / "setup.png", tmp_path / "table.json"
    cv2.imwrite(str(image), frame)
    assert main(["calibrate", "table", str(image), "--out", str(out)]) == 1
    assert "side B: 3 of 4 green cups found" in capsys.readouterr().err
    assert not out.exists()


def test_a_rendered_game_in_progress_is_no_set_up(tmp_path: Path) -> None:
    """A photo-realistic table mid-game (cups gone on each side): learning it would watch the
    wrong cups; it is refused, each missing colour named with its side."""
    frame = cv2.imread(str(RENDERED / "images" / "s000104.jpg"))
    with pytest.raises(CalibrationError) as err:
        learn(frame)
    assert err.value.code == "CUPS_NOT_FOUND"
    assert re.search(r"side [AB]: \d+ of \d+ \w+ cups found|no \w+ cup found|no silver cup found", err.value.message)


def test_a_table_with_no_cups_is_calibrated_for_the_dice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Set up for a dice game: the markers alone, the table measured; the cups are learnt when a
    21 Exact game is set up."""
    frame = drawn(Look(tilt_deg=15), Scene((), full_table(LAYOUT).dice, ()))
    image, out = tmp_path / "dice.png", tmp_path / "table.json"
    cv2.imwrite(str(image), frame)
    assert main(["calibrate", "table", str(image), "--out", str(out)]) == 0
    assert "no cups on the table" in capsys.readouterr().out
    cal = Calibration.load(out)
    assert cal.view_plane is None and not cal.layout_given
    assert abs(cal.layout.table_h - LAYOUT.table_h) < 0.03 * LAYOUT.table_h


def _row_cups(side: str, rows: dict[str, float], n: int = 4, pitch: float = 100.0) -> dict[str, dict[str, list]]:
    """Each colour's cups of one side in a row of its own (x fixed, y apart by ``pitch``); the
    other side the same, whole."""
    from companion.vision.cups.reader import CupSeen

    mine: dict[str, dict[str, list]] = {}
    for colour, x in rows.items():
        mine[colour] = {s: [CupSeen(s, colour, x + (0 if s == "A" else 900), 100 + i * pitch, [], 1.0) for i in range(n)]
                        for s in ("A", "B")}
    return mine


@pytest.mark.parametrize(("where", "renamed"), [((300.0, 400.0), True),     # in the red row, out of the yellow
                                                ((350.0, 400.0), False),    # between the rows
                                                ((300.0, 900.0), False)])   # past the red row's end
def test_a_cup_is_learnt_in_another_colour_only_where_it_stands_in_that_colours_row(where, renamed) -> None:
    """Side A shows 3 red cups and 5 yellow ones: a yellow find standing in the red row (where the
    fourth red one is missing) and out of the yellow row is red; one in neither row, or far past
    the row's end, changes nothing (the set-up is then refused, naming side A's red cups)."""
    from companion.vision.cups.discover import _recoloured_by_rows
    from companion.vision.cups.reader import CupSeen

    mine = _row_cups("A", {"blue": 100.0, "green": 200.0, "red": 300.0, "yellow": 400.0})
    mine["red"]["A"] = [c for c in mine["red"]["A"] if c.y != 400.0]
    mine["yellow"]["A"].append(CupSeen("A", "yellow", where[0], where[1], [], 0.99))
    changed = _recoloured_by_rows(mine, 4, 0.2, lambda c: -c.score)
    assert changed is renamed
    assert (len(mine["red"]["A"]), len(mine["yellow"]["A"])) == ((4, 4) if renamed else (3, 5))
    if renamed:
        assert any(c.cup == "red" and (c.x, c.y) == where for c in mine["red"]["A"])


TALLY = Path(__file__).parents[1] / "data" / "cups-tally"


def test_a_tally_grown_past_the_near_markers_is_counted(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """s077000: three cups turned over in front of each side's silver cup, the third of each
    standing beyond the near markers' line: the column continues on the table, so it counts."""
    image = TALLY / "images" / "s077000.jpg"
    want = scene_truth(TALLY)[str(image)]["turned"]
    assert sum(want.values()) == 6
    assert main(["cups", str(image), "--json"]) == 0
    assert counts(json.loads(capsys.readouterr().out)["upside_down"]) == want
    # without the column's word the cups off the table are left out, as a drink cup would be
    monkeypatch.setattr("companion.vision.cups.net.TALLY_STEP_MM", 0.0)
    assert main(["cups", str(image), "--json"]) == 0
    got = counts(json.loads(capsys.readouterr().out)["upside_down"])
    assert sum((want - got).values()) == 2 and not got - want


TURNED = Path(__file__).parents[1] / "data" / "cups-turned"


@pytest.mark.parametrize(("name", "cup"), [("s120021", ("A", "red")), ("s121038", ("A", "yellow"))])
def test_a_turned_cup_is_judged_at_its_top_not_where_the_finder_places_it(
        name: str, cup: tuple[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The finder's surest peak beside a cup turned over lies nearer the camera's foot than the
    cup's top, where the judges see a standing cup; judged at the turned maps' own peak, the cup
    is read turned over, and every count of the photo is right."""
    image = TURNED / "images" / f"{name}.jpg"
    truth = scene_truth(TURNED)[str(image)]
    assert main(["cups", str(image), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert counts(line["sides"]) == truth["cups"] and counts(line["upside_down"]) == truth["turned"]
    # judged only where the finder is surest, that cup is missed as turned (read standing or not at all)
    monkeypatch.setattr("companion.vision.cups.net.TURNED_PLACES", False)
    assert main(["cups", str(image), "--json"]) == 0
    got = counts(json.loads(capsys.readouterr().out)["upside_down"])
    assert truth["turned"] - got == Counter({cup: 1}) and not got - truth["turned"]


def test_a_tally_is_followed_past_the_finders_view(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """s123003: each side's tally is three cups turned over in a column in front of its silver cup,
    the third past the finder's view (150 mm beyond the near markers). Walking the column from
    its cups found, a cup's pitch at a time, finds side A's third red cup and side B's green one;
    nothing turned over is reported that is not there (side B's first yellow cup stays missed)."""
    image = TURNED / "images" / "s123003.jpg"
    want = scene_truth(TURNED)[str(image)]["turned"]
    assert main(["cups", str(image), "--json"]) == 0
    got = counts(json.loads(capsys.readouterr().out)["upside_down"])
    assert got[("A", "red")] == 3 and got[("B", "green")] == 1 and not got - want
    assert want - got == Counter({("B", "yellow"): 1})
    monkeypatch.setattr("companion.vision.cups.net.TALLY_WALKED", False)
    assert main(["cups", str(image), "--json"]) == 0
    got = counts(json.loads(capsys.readouterr().out)["upside_down"])
    assert got[("A", "red")] == 2 and got[("B", "green")] == 0


def test_a_cup_is_counted_once_where_its_shaded_side_looks_turned(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """s091100: side B's far red cup stands with a ball floating in it; its shaded side, 66 mm
    from its rim, looks to the networks like a red cup turned over. A cup standing and one turned
    show their tops a rim or more apart, so that is the one cup: every count of the photo is right."""
    image = TURNED / "images" / "s091100.jpg"
    truth = scene_truth(TURNED)[str(image)]
    assert main(["cups", str(image), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert counts(line["sides"]) == truth["cups"] and counts(line["upside_down"]) == truth["turned"]
    assert Counter((b["side"], b["cup"]) for b in line["balls"]) == truth["balls"]
    monkeypatch.setattr("companion.vision.cups.net.ONE_CUP", False)
    assert main(["cups", str(image), "--json"]) == 0
    got = counts(json.loads(capsys.readouterr().out)["upside_down"])
    assert got - truth["turned"] == Counter({("B", "red"): 1}) and not truth["turned"] - got


@pytest.mark.parametrize("image", [TURNED / "images" / "s123003.jpg", TALLY / "images" / "s077000.jpg",
                                   Path(__file__).parents[1] / "data" / "cups-silver" / "images" / "s077005.jpg",
                                   Path(__file__).parents[1] / "data" / "cups-rendered" / "images" / "s000104.jpg"])
def test_the_second_judge_asked_only_where_the_first_doubts_reads_the_photo_alike(
        image: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The second judge is asked only about the places the first doubts (judge.SOLO_SURE, a photo
    about 30 % quicker): every cup, turned cup and ball is read as when both judge every place.
    (On each of these photos the first judge alone reads a cup, a turned cup or a ball otherwise.)"""
    assert main(["cups", str(image), "--json"]) == 0
    solo = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("companion.vision.cups.judge.SOLO_SURE", 2.0)   # both asked everywhere
    assert main(["cups", str(image), "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    for what in ("sides", "upside_down", "balls"):
        assert solo[what] == both[what], what


SILVER = Path(__file__).parents[1] / "data" / "cups-silver"


@pytest.mark.parametrize(("name", "missed"), [("s077005", {("B", "blue"): 1}), ("s077013", {})])
def test_each_side_shows_its_one_silver_cup(name: str, missed: dict, capsys: pytest.CaptureFixture[str]) -> None:
    """s077005: the metal mirrors side B's blue cups, and a ghost beside the silver cup is judged
    silver too; s077013: the metal mirrors a striped cloth and the finder barely sees either
    silver cup. Each side shows its one silver cup and nothing that is not there; s077005's blue
    cup at the near end of its row, behind its neighbours' shine, stays missed."""
    image = SILVER / "images" / f"{name}.jpg"
    truth = scene_truth(SILVER)[str(image)]
    assert main(["cups", str(image), "--json"]) == 0
    got = counts(json.loads(capsys.readouterr().out)["sides"])
    assert got["A", "silver"] == got["B", "silver"] == 1
    assert not got - truth["cups"] and truth["cups"] - got == Counter(missed), dict(truth["cups"] - got)


CLUTTER = Path(__file__).parents[1] / "data" / "cups-clutter"


@pytest.mark.parametrize(("name", "rule", "without", "extra"), [
    ("s091300", "ROW_MIN", 99, ("A", "blue")),          # a glass off the blue row: held to no rows
    ("s120020", "OFF_TABLE_MM", 60.0, ("A", "green")),  # past the markers: the table's edge at 60 mm
])
def test_a_thing_among_the_cups_that_is_no_cup_is_not_counted(
        name: str, rule: str, without: float, extra: tuple[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """s091300: a dark glass behind side A's rows looks like a blue cup to the networks; it stands
    off the blue row. s120020: a green thing whose foot lies 49 mm past the far markers looks like
    side A's fourth green cup; the table ends 30 mm past them. Every count of each photo is right;
    without the rule the thing is one cup more."""
    image = CLUTTER / "images" / f"{name}.jpg"
    truth = scene_truth(CLUTTER)[str(image)]
    assert main(["cups", str(image), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert counts(line["sides"]) == truth["cups"] and counts(line["upside_down"]) == truth["turned"]
    monkeypatch.setattr(f"companion.vision.cups.net.{rule}", without)
    assert main(["cups", str(image), "--json"]) == 0
    got = counts(json.loads(capsys.readouterr().out)["sides"])
    assert got - truth["cups"] == Counter({extra: 1}) and not truth["cups"] - got


SEQUENCES = Path(__file__).parents[1] / "data" / "cups-sequences"


@pytest.mark.parametrize("name, side", [("s080002", "A"), ("s096201", "B")])
def test_the_live_reader_judges_a_silver_cup_again_once_a_ball_lands_in_it(name: str, side: str) -> None:
    """The live reader keeps the judges' answer for a place that looks as it did (judge.JudgeMemo:
    the silver cups are judged at every look), and judges it again once it looks otherwise: the
    ball that lands in this side's silver cup is seen in the frame it lands in, as a reader that
    kept nothing sees it, and once it is taken out it is gone again."""
    frames = [cv2.imread(str(SEQUENCES / "images" / f"{name}_f{i}.jpg")) for i in range(4)]
    reader = NetCupReader(learn(frames[0]))
    reader.balance(frames[0])

    def silver_balls(r: NetCupReader, frame: np.ndarray) -> dict[str, float]:
        return {c.side: c.ball for c in r.read(frame).cups if c.cup == "silver"}

    for i in (0, 0, 1, 2, 3):   # set-up (twice: the second answer kept), flight, landed, taken out
        fresh = NetCupReader(reader.cal)
        fresh.paper_gains = reader.paper_gains
        got = silver_balls(reader, frames[i])
        assert got == silver_balls(fresh, frames[i]), i
        assert got == {"A": float(i == 2 and side == "A"), "B": float(i == 2 and side == "B")}, i
    # the answers kept: the set-up frame's silver cups look as they did; the silver cup with the
    # ball does not (each frame is a render of its own: the other may differ too)
    judge, slots = CupJudge(), [s for s in reader.cal.slots if s.cup == "silver"]
    places, gains, how = [(s.x, s.y) for s in slots], reader.paper_gains, (False, False)
    memo = JudgeMemo()
    judge.judge(frames[0], reader.cal, places, gains, mirror=False, ball_look=False, memo=memo)
    kept = []
    for i in (0, 2):
        patches = judge.patches(frames[i], reader.cal, places, gains)
        kept.append({s.side for s, (x, y), p in zip(slots, places, patches, strict=True)
                     if memo.recall(x, y, p, gains, how) is not None})
    assert kept[0] == {"A", "B"} and side not in kept[1]
