"""Property tests for Twenty One (T5, T8, T9, T11): random sequences of legal and illegal events,
checked against what must always hold: a row's score is its values plus the bonus table, nobody
writes in two rows in one turn, a written cell never changes, a refused event changes nothing."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games import get_engine
from companion.games.base import Game, RuleError

COLOURS = ["white", "black", "red", "blue", "yellow", "green"]
BONUS_TABLE = {0: 0, 1: 1, 2: 3, 3: 6, 4: 10, 5: 15, 6: 21}  # the sheet's "Bonus" line

die = st.integers(1, 6)
dice = st.fixed_dictionaries({c: die for c in COLOURS})
junk_dice = st.fixed_dictionaries({c: st.integers(0, 7) for c in COLOURS})


def marks(view: dict) -> dict[str, list[list[tuple]]]:
    return {name: [[(c["value"], c["struck"]) for c in row["cells"]] for row in sheet["rows"]]
            for name, sheet in view["detail"]["sheets"].items()}


def check_scores(view: dict) -> None:
    with_bonus = view["detail"]["options"]["incomplete_row_bonus"]
    for name, sheet in view["detail"]["sheets"].items():
        for row in sheet["rows"]:
            if row["score"] is None:
                assert not row["complete"], "T8: a full row is scored at once"
                continue
            values = sum(c["value"] or 0 for c in row["cells"])
            hits = sum(1 for c in row["cells"] if c["exact"])
            assert all(c["value"] == c["printed"] for c in row["cells"] if c["exact"])
            if row["complete"] or with_bonus:
                assert row["score"] == values + BONUS_TABLE[hits], "T9: values plus the bonus table"
            else:
                assert row["score"] == values, "T11: without the bonus for an unfinished row"
        assert view["scores"][name] == sum(r["score"] or 0 for r in sheet["rows"])
        assert sheet["total"] == view["scores"][name]


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_T9_T8_rows_score_by_the_table_and_one_row_per_turn(seed, data):
    engine = get_engine("twentyone")
    game = Game.start(engine.random_new_game(random.Random(seed)))
    names = game.view()["players"]
    view = game.view()
    turn_rows: dict[str, set[int]] = {n: set() for n in names}
    for _ in range(data.draw(st.integers(20, 160), label="events")):
        if view["finished"]:
            break
        legal = game.legal_actions()
        if data.draw(st.integers(0, 9), label="junk?") < 7:
            event = dict(data.draw(st.sampled_from(legal), label="legal"))
            if event["type"] in ("roll", "reroll"):
                event["dice"] = data.draw(dice, label="dice")
        else:
            event = {"type": data.draw(st.sampled_from(["roll", "reroll", "enter", "strike"])),
                     "player": data.draw(st.sampled_from([*names, "Zoe"]))}
            event["dice"] = data.draw(junk_dice)
            event["colors"] = data.draw(st.lists(st.sampled_from([*COLOURS, "purple"]), max_size=4))
        before = view
        try:
            game.push(event)
        except RuleError:
            assert game.view() == before, "a refused event changes nothing"
            continue
        view = game.view()
        check_scores(view)
        old, new = marks(before), marks(view)
        for name in names:
            for r, (row_old, row_new) in enumerate(zip(old[name], new[name], strict=True)):
                for cell_old, cell_new in zip(row_old, row_new, strict=True):
                    if cell_old != cell_new:
                        assert cell_old == (None, False), "a written or struck cell never changes"
                        turn_rows[name].add(r)
                        assert event.get("player") == name, "only the acting player's sheet changes"
            assert len(turn_rows[name]) <= 1, "T8: nobody writes in two rows in one turn"
        if view["detail"]["turn"] != before["detail"]["turn"]:
            turn_rows = {n: set() for n in names}
    if view["finished"]:
        best = max(view["scores"].values())
        assert view["winners"] == [n for n in names if view["scores"][n] == best], "T12"
