"""``companion bench tables``: still photos of tables of random sizes and arrangements, read as
``companion cups IMAGE`` reads them; the figures and the machine in one JSON object. ``--scenes``:
the same on Blender scenes, scored against their labels, overall and per factor."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from companion.bench.tables import scene_truth
from companion.cli import main


@pytest.mark.slow
def test_bench_tables_reads_random_tables_and_prints_its_figures(capsys) -> None:
    status = main(["bench", "tables", "--tables", "2", "--seed", "7000", "--json"])
    r = json.loads(capsys.readouterr().out)
    assert status == (0 if r["tables_right"] == r["tables"] else 1)
    # every cup right; of the 3 balls the cup judge misses one in a red cup (on 40 such drawn
    # tables it misses 10 of 44 balls: models/cup-judge.md), so one table is not entirely right
    assert r["tables"] == 2 and r["tables_right"] >= 1
    assert r["cups_true"] > 20 and r["cups_missed"] == 0 and r["cups_extra"] == 0
    assert r["balls_true"] == 3 and r["balls_missed"] <= 1 and r["balls_extra"] == 0
    assert r["ms_per_photo_median"] > 0 and "cores" in r["machine"]


@pytest.mark.parametrize("seed", [5011, 5028])
def test_a_small_cup_turned_over_that_the_finder_is_sure_of_is_counted(seed: int, capsys) -> None:
    """Drawn tables of small cups (60-66 mm rims) with a green cup turned over on side B: the judge
    doubts it (its cup-ness under 0.9), the finder, which sees the table round it, is sure; a place
    the finder is sure of and the judge does not rule out counts (``net.JUDGE_ALSO``)."""
    main(["bench", "tables", "--tables", "1", "--seed", str(seed), "--json"])
    r = json.loads(capsys.readouterr().out)
    assert r["turned_true"] >= 1 and r["turned_missed"] == 0 and r["turned_extra"] == 0
    assert r["tables_right"] == 1, r["failures"]


SCENES = Path(__file__).resolve().parents[1] / "data" / "cups-rendered"


@pytest.mark.slow
def test_bench_tables_scores_blender_scenes_against_their_labels(capsys) -> None:
    status = main(["bench", "tables", "--scenes", str(SCENES), "--json"])
    r = json.loads(capsys.readouterr().out)
    assert status == (0 if r["photos_right"] == r["photos"] else 1)
    assert r["photos"] == 2 and r["ms_per_photo_median"] > 0
    # the labels, counted by hand: s000104 has 25 standing cups, 2 tally cups, a floating ball;
    # s000105 33 standing, 1 turned where it stood, a ball on a cup's bottom
    assert (r["cups_true"], r["turned_true"], r["balls_true"]) == (58, 3, 2)
    truth = scene_truth(SCENES)
    assert {w: sum(sum(t[w].values()) for t in truth.values()) for w in ("cups", "turned", "balls")} == \
        {"cups": 58, "turned": 3, "balls": 2}
    assert truth[str(SCENES / "images/s000104.jpg")]["turned"] == Counter({("A", "green"): 1, ("B", "blue"): 1})
    # every photo counts once under each factor, binned or grouped where the values are many
    factors = r["per_factor"]
    assert set(factors["make"]) == {"mixed", "party"} and set(factors["tilt"]) == {"0–10", "20–35"}
    assert set(factors["cloth"]) == {"felt"} and set(factors["yaw"]) == {"front", "behind"}
    for values in factors.values():
        assert sum(v["photos"] for v in values.values()) == 2
        assert sum(v["cups_missed"] for v in values.values()) == r["cups_missed"]
    assert len(r["failures"]) == r["photos"] - r["photos_right"]
    found = r["cups_true"] - r["cups_missed"]
    assert r["cups_recall"] == round(found / 58, 3)

    main(["bench", "tables", "--scenes", str(SCENES)])
    text = capsys.readouterr().out
    assert "photos: 2\n" in text and f"factor make=party: {factors['make']['party']['right']}/1 right" in text


HIDDEN = Path(__file__).resolve().parents[1] / "data" / "cups-hidden"


@pytest.mark.slow
def test_balls_the_cup_walls_hide_are_missed_and_said_to_be_hidden(capsys) -> None:
    # s077007: four balls in cups, three of them out of the camera's sight behind their cup's wall
    status = main(["bench", "tables", "--scenes", str(HIDDEN), "--json"])
    r = json.loads(capsys.readouterr().out)
    assert status == 1 and r["photos_right"] == 0
    assert (r["balls_true"], r["balls_hidden"]) == (4, 3)
    assert r["balls_hidden_missed"] <= r["balls_missed"] and r["balls_extra"] == 0
    # every other count of the photo is right and the one ball in sight is found
    assert r["balls_missed"] == r["balls_hidden_missed"] == 3
    assert r["photos_right_but_hidden_balls"] == 1, r["failures"]
