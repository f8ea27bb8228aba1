"""21 Exact (RULES.md E1–E13), as a player at the table would check it."""

from __future__ import annotations

import pytest

from companion.games import get_engine
from companion.games.base import EventError, Game, RuleError
from tests.games.helpers import refused

A_DICE = {"blue": 3, "red": 4, "green": 2, "yellow": 5}  # the seed's Player A: 5, 4, 3, 2
B_DICE = {"blue": 6, "red": 4, "green": 3, "yellow": 1}  # the seed's Player B: 6, 4, 3, 1


def start(sides=None, **options) -> Game:
    sides = sides or [{"name": "A"}, {"name": "B"}]
    ng = {"type": "new_game", "game": "exact21", "sides": sides}
    if options:
        ng["options"] = options
    return Game.start(ng)


def ready(a=A_DICE, b=B_DICE, **kw) -> Game:
    game = start(**kw)
    game.push({"type": "dice", "side": "A", "values": a})
    game.push({"type": "dice", "side": "B", "values": b})
    return game


def throw(game: Game, side: str, cup: str) -> None:
    game.push({"type": "throw", "side": side, "cup": cup})




def detail(game: Game, side: str) -> dict:
    return game.view()["detail"]["sides"][side]


# --- E1 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3])
def test_E1_exactly_two_sides(n):
    sides = [{"name": f"S{i}"} for i in range(n)]
    with pytest.raises(RuleError) as err:
        start(sides)
    assert err.value.code == "BAD_VALUE"


def test_E1_each_side_owns_its_cups_and_dice():
    game = ready()
    assert detail(game, "A")["values"] == A_DICE
    assert detail(game, "B")["values"] == B_DICE
    throw(game, "A", "yellow")
    assert detail(game, "A")["cups"]["yellow"] == 3
    assert detail(game, "B")["cups"]["yellow"] == 4


def test_E1_unknown_option_and_duplicate_side_names_start_nothing():
    with pytest.raises(RuleError) as err:
        start(silver_rule="sometimes")
    assert err.value.code == "BAD_VALUE"
    with pytest.raises(RuleError):
        start([{"name": "A"}, {"name": "A"}])
    with pytest.raises(RuleError):
        Game.start({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}],
                    "options": {"colour_blind": True}})


# --- E2 / E6 ----------------------------------------------------------------------------------

def test_E2_set_up_dice_must_show_four_different_numbers():
    game = start()
    code = refused(game, {"type": "dice", "side": "A", "values": {"blue": 3, "red": 3, "green": 2, "yellow": 5}})
    assert code == "DICE_NOT_DISTINCT"
    game.push({"type": "dice", "side": "A", "values": A_DICE})  # the re-roll is accepted


def test_E2_dice_are_set_once_per_game():
    game = ready()
    assert refused(game, {"type": "dice", "side": "A", "values": B_DICE}) == "DICE_ALREADY_SET"


@pytest.mark.parametrize("values", [
    {"blue": 0, "red": 4, "green": 2, "yellow": 5},
    {"blue": 7, "red": 4, "green": 2, "yellow": 5},
    {"blue": 1, "red": 4, "green": 2},
    {"blue": 1, "red": 4, "green": 2, "yellow": 5, "purple": 6},
])
def test_E2_die_values_out_of_range_are_bad_values(values):
    assert refused(start(), {"type": "dice", "side": "A", "values": values}) == "BAD_VALUE"


def test_E6_no_throw_until_both_sides_dice_are_set():
    game = start()
    game.push({"type": "dice", "side": "A", "values": A_DICE})
    assert refused(game, {"type": "throw", "side": "A", "cup": "red"}) == "DICE_NOT_SET"
    assert game.view()["to_act"] == ["B"]


@pytest.mark.parametrize("set_up", [[], ["A"], ["B"]], ids=["no-dice", "first-side-set", "second-side-set"])
def test_E6_before_the_dice_the_second_side_is_not_on_turn_and_the_first_side_lacks_dice(set_up):
    """E6: the first side's turn begins with the game (E4), so before both sides' dice are set a
    throw by the other side is NOT_YOUR_TURN (it comes before the game's own codes in EVENTS.md)
    and a throw by the first side is DICE_NOT_SET; the same before either side's dice, before the
    second side's dice and before the first side's dice. A refused throw changes nothing."""
    game = start()
    dice = {"A": A_DICE, "B": B_DICE}
    for side in set_up:
        game.push({"type": "dice", "side": side, "values": dice[side]})
    for cup in ("red", "silver", "miss"):
        assert refused(game, {"type": "throw", "side": "B", "cup": cup}) == "NOT_YOUR_TURN"
        assert refused(game, {"type": "throw", "side": "A", "cup": cup}) == "DICE_NOT_SET"
    # the codes before NOT_YOUR_TURN still come first (EVENTS.md "Reason codes")
    assert refused(game, {"type": "throw", "side": "B", "cup": "purple"}) == "BAD_VALUE"
    assert refused(game, {"type": "throw", "side": "Z", "cup": "red"}) == "UNKNOWN_PLAYER"
    assert len(game.states) == 1 + len(set_up)
    for side in ("A", "B"):
        if side not in set_up:
            game.push({"type": "dice", "side": side, "values": dice[side]})
    assert refused(game, {"type": "throw", "side": "B", "cup": "red"}) == "NOT_YOUR_TURN"
    throw(game, "A", "red")  # both set: the first side's turn goes on as it began
    assert game.view()["scores"] == {"A": 4, "B": 0}


def test_E5_E6_a_team_member_out_of_order_before_the_dice_is_not_on_turn():
    """E6 with E5: the first side's turn, begun with the game, is its first player's throw; a
    throw naming a later player of that side is NOT_YOUR_TURN before the dice as after, and the
    first player's is DICE_NOT_SET."""
    game = start([{"name": "A", "players": ["Ann", "Ben"]}, {"name": "B", "players": ["Cy"]}])
    assert refused(game, {"type": "throw", "side": "A", "cup": "red", "player": "Ben"}) == "NOT_YOUR_TURN"
    assert refused(game, {"type": "throw", "side": "A", "cup": "red", "player": "Ann"}) == "DICE_NOT_SET"
    assert refused(game, {"type": "throw", "side": "B", "cup": "red", "player": "Cy"}) == "NOT_YOUR_TURN"


# --- E3 / E8 ----------------------------------------------------------------------------------

def test_E3_E8_a_cup_is_worth_its_die_and_is_removed_when_made():
    game = ready()
    throw(game, "A", "red")
    assert game.view()["scores"] == {"A": 4, "B": 0}
    assert detail(game, "A")["cups"] == {"blue": 4, "red": 3, "green": 4, "yellow": 4}


def test_seed_example_three_yellow_one_red_one_green_is_21():
    """The seed: player A (5, 4, 3, 2) makes 3 yellow (15) + 1 red (4) + 1 green (2) = 21 and wins."""
    game = ready()
    for cup in ["yellow", "yellow", "yellow", "red"]:
        throw(game, "A", cup)
        throw(game, "B", "miss")
    throw(game, "A", "green")
    view = game.view()
    assert view["scores"]["A"] == 21
    assert view["finished"] is True and view["winners"] == ["A"] and view["to_act"] == []


def test_E8_overshoot_leaves_the_cup_and_adds_nothing():
    game = ready()
    for cup in ["yellow", "yellow", "yellow", "red"]:  # 19
        throw(game, "A", cup)
        throw(game, "B", "miss")
    throw(game, "A", "red")  # 19 + 4 > 21: accepted, nothing happens
    assert game.view()["scores"]["A"] == 19
    assert detail(game, "A")["cups"]["red"] == 3
    assert game.view()["detail"]["last"]["result"] == "overshoot"
    assert game.view()["to_act"] == ["B"], "an overshoot still uses the throw"


# --- E4 / E5 ----------------------------------------------------------------------------------

def test_E4_first_listed_side_throws_first_and_order_never_changes():
    game = ready()
    assert game.view()["to_act"] == ["A"]
    assert refused(game, {"type": "throw", "side": "B", "cup": "red"}) == "NOT_YOUR_TURN"
    for _ in range(3):
        throw(game, "A", "miss")
        assert game.view()["to_act"] == ["B"]
        throw(game, "B", "miss")
        assert game.view()["to_act"] == ["A"]


def test_E5_a_team_throws_once_each_in_set_up_order():
    game = ready(sides=[{"name": "A", "players": ["Ann", "Ben"]}, {"name": "B", "players": ["Cy"]}])
    assert game.view()["detail"]["thrower"] == "Ann"
    throw(game, "A", "miss")
    assert game.view()["to_act"] == ["A"] and game.view()["detail"]["thrower"] == "Ben"
    assert refused(game, {"type": "throw", "side": "A", "cup": "red", "player": "Ann"}) == "NOT_YOUR_TURN"
    game.push({"type": "throw", "side": "A", "cup": "red", "player": "Ben"})
    assert game.view()["to_act"] == ["B"] and game.view()["detail"]["thrower"] == "Cy"
    throw(game, "B", "miss")
    assert game.view()["detail"]["thrower"] == "Ann"


def test_E5_unknown_side_or_player():
    game = ready()
    assert refused(game, {"type": "throw", "side": "C", "cup": "red"}) == "UNKNOWN_PLAYER"
    assert refused(game, {"type": "throw", "side": "A", "cup": "red", "player": "Zed"}) == "UNKNOWN_PLAYER"


# --- E7 / E9 ----------------------------------------------------------------------------------

def test_E7_a_miss_changes_nothing_but_the_turn():
    game = ready()
    throw(game, "A", "miss")
    assert game.view()["scores"] == {"A": 0, "B": 0}
    assert detail(game, "A")["cups"] == {c: 4 for c in ("blue", "red", "green", "yellow")}


def test_E9_a_colour_with_no_cups_left_cannot_be_made():
    game = ready(a={"blue": 1, "red": 2, "green": 3, "yellow": 4})
    for _ in range(4):
        throw(game, "A", "blue")
        throw(game, "B", "miss")
    assert detail(game, "A")["cups"]["blue"] == 0
    assert refused(game, {"type": "throw", "side": "A", "cup": "blue"}) == "NO_CUPS_LEFT"


def test_reason_order_bad_value_before_not_your_turn():
    game = ready()
    assert refused(game, {"type": "throw", "side": "B", "cup": "purple"}) == "BAD_VALUE"


# --- E10 / E11 / E13 --------------------------------------------------------------------------

def reach(game: Game, side: str, cups: list[str], other: str) -> None:
    for cup in cups:
        throw(game, side, cup)
        throw(game, other, "miss")


def test_seed_example_19_points_then_two_silver_cups():
    """The seed: cups worth 3, 4, 5, 6 and 19 points: no cup fits, the Silver Cup Rule applies;
    two silver cups make 21."""
    game = ready(a={"blue": 3, "red": 4, "green": 5, "yellow": 6})
    reach(game, "A", ["yellow", "yellow", "red", "blue"], "B")  # 6 + 6 + 4 + 3 = 19
    assert game.view()["scores"]["A"] == 19
    assert detail(game, "A")["silver_active"] is True
    throw(game, "A", "silver")
    assert game.view()["scores"]["A"] == 20
    throw(game, "B", "miss")
    throw(game, "A", "silver")
    view = game.view()
    assert view["scores"]["A"] == 21 and view["winners"] == ["A"]
    assert detail(game, "A")["silver_points"] == 2
    assert detail(game, "A")["cups"]["blue"] == 3, "the silver cup never removes a cup"


def test_E11_silver_cup_outside_the_rule_does_nothing():
    game = ready()
    throw(game, "A", "silver")
    assert game.view()["scores"]["A"] == 0
    assert game.view()["detail"]["last"]["result"] == "silver_not_in_effect"
    assert game.view()["to_act"] == ["B"]


def test_E10_single_cup_rule_needs_every_remaining_cup_to_overshoot():
    # values 2, 3, 5, 6; after 6+6+5+2 = 19 the green 2 still fits: no silver yet
    game = ready(a={"blue": 3, "red": 5, "green": 2, "yellow": 6})
    reach(game, "A", ["yellow", "yellow", "red", "green"], "B")
    assert game.view()["scores"]["A"] == 19
    assert detail(game, "A")["silver_active"] is False
    throw(game, "A", "silver")
    assert game.view()["scores"]["A"] == 19


def test_E10_option_combination_looks_at_sums_of_remaining_cups():
    """After 4 + 12 = 16 with blue 3, red 4 and green 6 left, 5 is needed: single_cup sees a cup
    that fits (no silver); combination sees that no sum of the cups left is exactly 5 (silver)."""
    dice = {"blue": 3, "red": 4, "green": 6, "yellow": 1}
    plan = ["yellow", "yellow", "yellow", "yellow", "green", "green"]
    single_rule = ready(a=dice)
    combo_rule = ready(a=dice, silver_rule="combination")
    reach(single_rule, "A", plan, "B")
    reach(combo_rule, "A", plan, "B")
    assert single_rule.view()["scores"]["A"] == 16 == combo_rule.view()["scores"]["A"]
    assert detail(single_rule, "A")["silver_active"] is False
    assert detail(combo_rule, "A")["silver_active"] is True
    throw(single_rule, "A", "silver")
    throw(combo_rule, "A", "silver")
    assert single_rule.view()["scores"]["A"] == 16
    assert combo_rule.view()["scores"]["A"] == 17
    # need 4 now: the red cup makes it exactly, so the rule is off again
    assert detail(combo_rule, "A")["silver_active"] is False


def test_E10_combination_ways_pass_through_silver_and_back_to_cups():
    dice = {"blue": 3, "red": 4, "green": 6, "yellow": 1}
    game = ready(a=dice, silver_rule="combination")
    reach(game, "A", ["yellow", "yellow", "yellow", "yellow", "green", "green"], "B")
    ways = detail(game, "A")["ways"]
    assert {"cups": {"red": 1}, "silver": 1, "throws": 2} in ways


def test_E12_reaching_21_ends_the_game_and_anything_after_is_game_over():
    game = ready()
    reach(game, "A", ["yellow", "yellow", "yellow", "red"], "B")
    throw(game, "A", "green")
    assert refused(game, {"type": "throw", "side": "B", "cup": "red"}) == "GAME_OVER"
    assert refused(game, {"type": "throw", "side": "B", "cup": "purple"}) == "GAME_OVER"


def test_E13_total_never_exceeds_21():
    game = ready(a={"blue": 6, "red": 5, "green": 4, "yellow": 3})
    reach(game, "A", ["blue", "blue", "blue"], "B")  # 18
    throw(game, "A", "blue")  # 24 > 21: overshoot
    assert game.view()["scores"]["A"] == 18


# --- what may happen now ---------------------------------------------------------------------

def test_ways_to_21_lists_the_open_combinations():
    game = ready()
    reach(game, "A", ["yellow", "yellow", "yellow"], "B")  # 15, need 6 with 3, 4, 2, 5
    ways = detail(game, "A")["ways"]
    assert ways[0]["throws"] == 2
    for way in ways:
        total = sum(n * A_DICE[c] for c, n in way["cups"].items()) + way["silver"]
        assert total == 6
    combos = {tuple(sorted(w["cups"].items())) for w in ways}
    assert (("blue", 2),) in combos and (("green", 1), ("red", 1)) in combos
    assert (("green", 3),) in combos


def test_ways_include_silver_cups_when_nothing_else_fits():
    game = ready(a={"blue": 3, "red": 4, "green": 5, "yellow": 6})
    reach(game, "A", ["yellow", "yellow", "red", "blue"], "B")
    assert detail(game, "A")["ways"] == [{"cups": {}, "silver": 2, "throws": 2}]


def test_legal_actions_offer_the_cups_left_silver_and_miss():
    game = start()
    assert game.legal_actions() == [{"type": "dice", "side": "A"}, {"type": "dice", "side": "B"}]
    game = ready(a={"blue": 1, "red": 2, "green": 3, "yellow": 4})
    reach(game, "A", ["blue"] * 4, "B")
    cups = [a["cup"] for a in game.legal_actions()]
    assert cups == ["red", "green", "yellow", "silver", "miss"]
    for action in game.legal_actions():
        assert game.engine.allows(game.state, action) is None


# --- malformed events ------------------------------------------------------------------------

@pytest.mark.parametrize("event", [
    {"type": "throw", "side": "A"},
    {"type": "throw", "side": 1, "cup": "red"},
    {"type": "dice", "side": "A", "values": [3, 4, 2, 5]},
    {"type": "dice", "side": "A", "values": {"blue": "3", "red": 4, "green": 2, "yellow": 5}},
    {"type": "shoot", "side": "A", "cup": "red"},
])
def test_malformed_events_are_not_rule_matters(event):
    with pytest.raises(EventError):
        ready().push(event)


def test_undo_restores_the_previous_state_exactly():
    game = ready()
    before = game.view()
    throw(game, "A", "yellow")
    game.pop()
    assert game.view() == before


def test_undo_is_accepted_after_GAME_OVER_and_NOTHING_TO_UNDO_with_only_new_game_before_it():
    """EVENTS.md, "Reason codes": ``{"type": "undo"}`` takes back the last accepted event, also
    after GAME_OVER (undoing the winning throw reopens the game, E12); with nothing but the
    new_game before it, it is NOTHING_TO_UNDO (refused events do not count)."""
    game = start()
    with pytest.raises(RuleError) as err:
        game.play({"type": "undo"})
    assert err.value.code == "NOTHING_TO_UNDO"
    assert refused(game, {"type": "throw", "side": "B", "cup": "red"}) == "NOT_YOUR_TURN"
    with pytest.raises(RuleError) as err:
        game.play({"type": "undo"})
    assert err.value.code == "NOTHING_TO_UNDO"
    game = ready()
    for cup in ["yellow", "yellow", "yellow", "red"]:  # 19
        throw(game, "A", cup)
        throw(game, "B", "miss")
    throw(game, "A", "green")  # 21: A wins (E12)
    assert game.view()["finished"] is True
    assert refused(game, {"type": "throw", "side": "B", "cup": "miss"}) == "GAME_OVER"
    game.play({"type": "undo"})
    view = game.view()
    assert view["finished"] is False and view["winners"] == [] and view["scores"]["A"] == 19
    assert view["to_act"] == ["A"] and detail(game, "A")["cups"]["green"] == 4
    game.play({"type": "resume"})  # the table's note that play came back: it changes nothing
    assert game.view() == view


def test_engine_is_loaded_by_name():
    assert get_engine("exact21").name == "exact21"
