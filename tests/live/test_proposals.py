"""Settled dice → the game's event, against real engines and real table states (RULES.md E1, E2
for 21 Exact set-up dice; T3, T4 for Twenty One's roll and re-roll)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.games.base import RuleError
from companion.live.proposals import DiceProposals, DieReading, dice_event
from companion.table import Table

MIDDLE = 600.0  # mm: a 1200 mm table between marker centres
EXACT = {"type": "new_game", "game": "exact21", "sides": [{"name": "Reds"}, {"name": "Blues"}]}


def four(values: dict[str, int], x0: float, y: float = 80.0) -> list[dict]:
    """Four dice lying in a row from x0 (table mm), as the dice reader + calibration give them."""
    return [{"value": v, "color": c, "center": [x0 + 40 * i, y], "confidence": 0.97}
            for i, (c, v) in enumerate(values.items())]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path / "table.sqlite")
    yield t
    t.close()


def test_E1_dice_in_the_low_x_half_belong_to_the_first_side(table: Table):
    table.start(EXACT)
    dice = four({"yellow": 5, "blue": 3, "red": 4, "green": 2}, x0=150)
    s = dice_event(dice, table.state(), MIDDLE)
    assert s.event == {"type": "dice", "side": "Reds",
                       "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}}
    assert s.evidence["half"] == "low x" and len(s.evidence["dice"]) == 4
    table.apply(s.event)  # the rules accept what was proposed
    assert table.state()["detail"]["sides"]["Reds"]["values"]["yellow"] == 5


def test_E1_dice_in_the_high_x_half_belong_to_the_second_side(table: Table):
    table.start(EXACT)
    s = dice_event(four({"blue": 6, "red": 1, "green": 2, "yellow": 3}, x0=800), table.state(), MIDDLE)
    assert s.event is not None and s.event["side"] == "Blues"


def test_E2_a_side_whose_dice_are_set_gets_no_second_dice_event(table: Table):
    table.start(EXACT)
    table.apply({"type": "dice", "side": "Reds", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    s = dice_event(four({"blue": 1, "red": 2, "green": 3, "yellow": 4}, x0=100), table.state(), MIDDLE)
    assert s.event is None and "Reds's dice are already set" in s.reason
    # ... while the other side's dice, still lying there too, are proposed.
    both = four({"blue": 1, "red": 2, "green": 3, "yellow": 4}, x0=100) + \
        four({"blue": 6, "red": 5, "green": 4, "yellow": 3}, x0=700)
    s = dice_event(both, table.state(), MIDDLE)
    assert s.event is not None and s.event["side"] == "Blues"
    table.apply(s.event)
    s = dice_event(both, table.state(), MIDDLE)
    assert s.event is None and "both sides' dice are set" in s.reason


def test_E2_dice_not_distinct_are_proposed_and_the_rules_refuse_them(table: Table):
    table.start(EXACT)
    s = dice_event(four({"blue": 3, "red": 3, "green": 2, "yellow": 5}, x0=100), table.state(), MIDDLE)
    assert s.event is not None
    proposal = table.propose(s.event, evidence=s.evidence)
    with pytest.raises(RuleError) as err:
        table.confirm(proposal.id)
    assert err.value.code == "DICE_NOT_DISTINCT"


@pytest.mark.parametrize(("dice", "reason"), [
    (four({"blue": 1, "red": 2, "green": 3}, x0=100), "3 of 4 dice seen (no yellow)"),
    (four({"blue": 1, "red": 2, "green": 3, "yellow": 4}, x0=100)
     + [{"value": 6, "color": "red", "center": [300, 50]}], "two red dice"),
    (four({"blue": 1, "red": 2, "green": 3, "unknown": 4}, x0=100), "a die of unknown colour at x=220"),
    ([], "no dice seen"),
])
def test_an_incomplete_or_doubtful_roll_proposes_nothing_and_says_why(table: Table, dice, reason):
    table.start(EXACT)
    s = dice_event(dice, table.state(), MIDDLE)
    assert s.event is None and reason in s.reason


def test_a_roll_already_pending_is_not_proposed_twice(table: Table):
    table.start(EXACT)
    dice = four({"blue": 1, "red": 2, "green": 3, "yellow": 4}, x0=100)
    table.propose(dice_event(dice, table.state(), MIDDLE).event)
    s = dice_event(dice, table.state(), MIDDLE)
    assert s.event is None and "already proposed" in s.reason


def test_no_game_a_finished_game_or_a_game_without_camera_dice(table: Table):
    assert "no game" in dice_event([], table.state(), MIDDLE).reason
    state = {"game": "stack21", "finished": False, "players": ["P1", "P2"], "legal": []}
    assert "no dice events in stack21" in dice_event(four({"blue": 1}, 0), state, MIDDLE).reason


def test_dice_proposals_processor_feeds_the_live_loop(table: Table):
    table.start(EXACT)
    readings = iter([None, [DieReading(v, c, (100 + 40 * i, 60)) for i, (c, v) in
                            enumerate({"blue": 2, "red": 6, "green": 1, "yellow": 4}.items())]])
    proc = DiceProposals(lambda frame, t: next(readings), table.state, MIDDLE)
    assert proc.feed(None, 1.0) == []
    (proposed,) = proc.feed(None, 2.0)
    assert proposed.event["side"] == "Reds" and proposed.evidence["t"] == 2.0
    assert proc.health()["reason"] == "side Reds's set-up roll"


# -- Twenty One (its engine lands in parallel: these run once it is on the branch) ------------

SIX = ("white", "black", "red", "blue", "yellow", "green")


def six(values: list[int]) -> list[DieReading]:
    return [DieReading(v, c, (100.0 * i, 200.0)) for i, (c, v) in enumerate(zip(SIX, values, strict=True))]


@pytest.fixture
def twentyone(table: Table) -> Table:
    pytest.importorskip("companion.games.twentyone")
    table.start({"type": "new_game", "game": "twentyone",
                 "players": [{"name": "Ann", "sheet": "A"}, {"name": "Bea", "sheet": "C"}]})
    return table


def test_T3_the_first_settled_roll_is_the_rollers_roll(twentyone: Table):
    s = dice_event(six([6, 4, 3, 3, 1, 1]), twentyone.state(), MIDDLE)
    assert s.event == {"type": "roll", "player": "Ann",
                       "dice": {"white": 6, "black": 4, "red": 3, "blue": 3, "yellow": 1, "green": 1}}
    twentyone.apply(s.event)


def test_T4_after_the_roll_new_dice_are_the_reroll_and_the_same_dice_are_nothing(twentyone: Table):
    twentyone.apply(dice_event(six([6, 4, 3, 3, 1, 1]), twentyone.state(), MIDDLE).event)
    same = dice_event(six([6, 4, 3, 3, 1, 1]), twentyone.state(), MIDDLE)
    assert same.event is None and "same dice" in same.reason
    s = dice_event(six([2, 5, 6, 3, 1, 1]), twentyone.state(), MIDDLE)
    assert s.event is not None and s.event["type"] == "reroll" and s.event["player"] == "Ann"
    twentyone.apply(s.event)
    final = dice_event(six([2, 5, 6, 3, 4, 1]), twentyone.state(), MIDDLE)
    assert final.event is None and "final" in final.reason


def test_T4_a_reroll_that_moved_a_one_is_refused_by_the_rules(twentyone: Table):
    twentyone.apply(dice_event(six([6, 4, 3, 3, 1, 1]), twentyone.state(), MIDDLE).event)
    s = dice_event(six([2, 5, 6, 3, 4, 1]), twentyone.state(), MIDDLE)  # the yellow 1 was rolled
    proposal = twentyone.propose(s.event)
    with pytest.raises(RuleError) as err:
        twentyone.confirm(proposal.id)
    assert err.value.code == "ONE_LOCKED"


def test_twentyone_needs_all_six_colours(twentyone: Table):
    dice = six([6, 4, 3, 3, 1, 1])[:5]
    s = dice_event(dice, twentyone.state(), MIDDLE)
    assert s.event is None and "no green" in s.reason
