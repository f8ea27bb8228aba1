"""Stack 21 rules S1–S14, played event by event and round by round through the real engine."""

from __future__ import annotations

from typing import Any

import pytest

from companion.games.base import EventError, Game, RuleError
from tests.games.helpers import refused

FILLER = ["5"] * 40


def start(players=("P1", "P2"), teams=None, **options: Any) -> Game:
    event: dict[str, Any] = {"type": "new_game", "game": "stack21", "players": list(players),
                             "options": options}
    if teams is not None:
        event["teams"] = teams
    return Game.start(event)


def dealt(hands: dict[str, list[str]], upcard: str, stock: list[str] | None = None, dealer: str | None = None,
          **kw: Any) -> Game:
    game = start(players=list(hands), **kw)
    event: dict[str, Any] = {"type": "deal", "hands": hands, "upcard": upcard}
    if stock is not None:
        event["stock"] = stock
    if dealer is not None:
        event["dealer"] = dealer
    game.push(event)
    return game


def play(game: Game, *events: dict[str, Any]) -> None:
    for e in events:
        game.push(e)




def draw(p: str, **kw: Any) -> dict[str, Any]:
    return {"type": "draw", "player": p, **kw}


def keep(p: str, stack: int) -> dict[str, Any]:
    return {"type": "keep", "player": p, "stack": stack}


def give(p: str, to: str, stack: int) -> dict[str, Any]:
    return {"type": "give", "player": p, "to": to, "stack": stack}


def stacks(game: Game, player: str) -> dict[int, list[str]]:
    return {s["id"]: s["cards"] for s in game.view()["detail"]["stacks"][player]}


def detail(game: Game) -> dict[str, Any]:
    return game.view()["detail"]


# a two-player round where P2 deals and P1 starts
HANDS = {"P1": ["10", "A", "5", "9"], "P2": ["8", "7", "6", "2"]}


def first_turns(stock_after: list[str], upcard: str = "6") -> Game:
    """P1 keeps 9 on stack 1 (19), P2 keeps 5 on stack 1 (13); both first turns done."""
    game = dealt(HANDS, upcard, ["9", "5", *stock_after])
    play(game, draw("P1"), keep("P1", 1), draw("P2"), keep("P2", 1))
    return game


# --- S1 set-up ----------------------------------------------------------------------------------

@pytest.mark.parametrize("players", [["P1"], ["P1", "P2", "P3", "P4", "P5"]])
def test_S1_two_to_four_players(players):
    with pytest.raises(RuleError) as err:
        start(players=players)
    assert err.value.code == "BAD_VALUE"


@pytest.mark.parametrize("teams", [
    [["P1", "P2"], ["P3", "P4"]],          # neighbours, not opposite
    [["P1", "P3"], ["P2"]],
    [["P1", "P3"], ["P2", "P5"]],
    [["P1", "P3"], ["P1", "P3"]],
])
def test_S1_teams_are_two_pairs_sitting_opposite(teams):
    with pytest.raises(RuleError) as err:
        start(players=["P1", "P2", "P3", "P4"], teams=teams)
    assert err.value.code == "BAD_VALUE"


def test_S1_teams_need_four_players_and_unknown_option_is_refused():
    with pytest.raises(RuleError):
        start(players=["P1", "P2", "P3"], teams=[["P1", "P3"], ["P2"]])
    with pytest.raises(RuleError) as err:
        start(jokers=4)
    assert err.value.code == "BAD_VALUE"
    with pytest.raises(RuleError):
        start(stock_exhausted="reshuffle")


def test_S1_S14_team_play_lists_teams_and_targets_42():
    game = start(players=["P1", "P2", "P3", "P4"], teams=[["P4", "P2"], ["P3", "P1"]])
    view = game.view()
    assert view["players"] == ["P1+P3", "P2+P4"]
    assert view["scores"] == {"P1+P3": 0, "P2+P4": 0}
    assert view["detail"]["target"] == 42
    assert start(players=["P1", "P2", "P3", "P4"], teams=[["P1", "P3"], ["P2", "P4"]],
                 target=30).view()["detail"]["target"] == 30
    assert start().view()["detail"]["target"] == 21


# --- S3 dealing -----------------------------------------------------------------------------------

def test_S3_deal_starts_four_stacks_and_the_player_left_of_the_dealer_starts():
    game = dealt({"P1": ["2", "3", "4", "5"], "P2": ["6", "7", "8", "9"], "P3": ["A", "2", "3", "4"]},
                 "10", FILLER, dealer="P1")
    d = detail(game)
    assert game.view()["to_act"] == ["P2"]
    assert d["dealer"] == "P1" and d["upcard"] == "10" and d["stock_size"] == 40
    assert stacks(game, "P3") == {1: ["A"], 2: ["2"], 3: ["3"], 4: ["4"]}
    assert d["stacks"]["P3"][0]["count"] == "1 or 11"


def test_S3_the_deal_passes_left_each_round_and_never_over_a_live_round():
    game = start(players=["P1", "P2", "P3"])
    deal = {"type": "deal", "dealer": "P1", "hands": {p: ["10"] * 4 for p in ("P1", "P2", "P3")},
            "upcard": "5", "stock": ["A"] * 12 + FILLER}
    game.push(deal)
    assert refused(game, {**deal, "dealer": "P2"}) == "ROUND_NOT_OVER"
    assert refused(game, deal) == "ROUND_NOT_OVER", "dealing again over a live round: nobody is due to deal"
    assert refused(game, {"type": "round_result", "dealer": "P3", "stacks": {p: [["I21"]] for p in ("P1", "P2", "P3")}}
                   ) == "ROUND_NOT_OVER"
    for _ in range(4):  # every player makes four 21s: the round ends
        for p in ("P2", "P3", "P1"):
            if game.view()["to_act"] == [p]:
                game.push(draw(p))
                first_active = next(s["id"] for s in detail(game)["stacks"][p] if s["state"] == "active")
                game.push(keep(p, first_active))
    assert detail(game)["phase"] == "deal"
    assert detail(game)["next_dealer"] == "P2"
    assert refused(game, {**deal, "dealer": "P3"}) == "NOT_YOUR_TURN"
    game.push({**deal, "dealer": "P2"})
    assert game.view()["to_act"] == ["P3"]


# --- S4, S5 turns -----------------------------------------------------------------------------

def test_S4_first_turn_is_draw_and_keep_only():
    game = dealt(HANDS, "10", ["9", "5", *FILLER])
    take = {"type": "take_upcard", "player": "P1", "stack": 2}  # A + 10 would be 21
    assert refused(game, take) == "FIRST_TURN_KEEP_ONLY"
    assert refused(game, {"type": "combine", "player": "P1", "stacks": [3, 4]}) == "FIRST_TURN_KEEP_ONLY"
    game.push(draw("P1"))
    assert refused(game, give("P1", "P2", 1)) == "FIRST_TURN_KEEP_ONLY"
    assert [a["type"] for a in game.legal_actions()] == ["keep"] * 4
    game.push(keep("P1", 1))
    assert detail(game)["first_turn"] is True  # P2's first turn now
    game.push(draw("P2"))
    assert refused(game, give("P2", "P1", 2)) == "FIRST_TURN_KEEP_ONLY"


def test_S5_keep_or_give_needs_a_drawn_card_and_one_card_at_a_time():
    game = first_turns(FILLER)
    assert refused(game, keep("P1", 2)) == "DRAW_FIRST"
    assert refused(game, give("P1", "P2", 2)) == "DRAW_FIRST"
    game.push(draw("P1"))
    assert refused(game, draw("P1")) == "MUST_PLACE"
    assert refused(game, {"type": "combine", "player": "P1", "stacks": [3, 4]}) == "MUST_PLACE"
    assert refused(game, draw("P2")) == "NOT_YOUR_TURN"


def test_S5_a_named_card_must_agree_with_a_known_stock():
    game = first_turns(["4", *FILLER])
    assert refused(game, draw("P1", card="7")) == "CARD_MISMATCH"
    game.push(draw("P1", card="4"))
    assert detail(game)["hand"] == {"player": "P1", "card": "4", "refused_by": None}


# --- S6 keep ----------------------------------------------------------------------------------------

def test_S6_keep_onto_own_active_stack_and_it_may_bust():
    game = first_turns(["10", "A", *FILLER])
    play(game, draw("P1"), keep("P1", 1))  # 10+9+10 = 29
    assert stacks(game, "P1")[1] == ["10", "9", "10"]
    assert detail(game)["stacks"]["P1"][0]["state"] == "bust"
    game.push(draw("P2"))
    play(game, keep("P2", 2))  # 7 + A
    assert detail(game)["stacks"]["P2"][1]["count"] == "8 or 18"
    game.push(draw("P1"))
    assert refused(game, keep("P1", 1)) == "STACK_INACTIVE"
    assert refused(game, keep("P1", 5)) == "BAD_VALUE"


# --- S7 give ----------------------------------------------------------------------------------------

def test_S7_a_card_that_fits_is_accepted_by_the_opponent():
    game = first_turns(["3", *FILLER])
    play(game, draw("P1"), give("P1", "P2", 1))
    assert stacks(game, "P2")[1] == ["8", "5", "3"]
    assert game.view()["to_act"] == ["P2"]


def test_S7_refusal_then_forced_placement_even_when_it_busts():
    game = first_turns(["10", *FILLER])
    game.push(draw("P1"))
    game.push(give("P1", "P2", 1))  # 8+5+10 = 23 would bust P2's stack: refused
    d = detail(game)
    assert d["hand"] == {"player": "P1", "card": "10", "refused_by": "P2"}
    assert d["phase"] == "must_place" and stacks(game, "P2")[1] == ["8", "5"]
    assert refused(game, give("P1", "P2", 2)) == "MUST_PLACE", "a refused card cannot be given again"
    assert refused(game, keep("P1", 1)) == "MUST_PLACE"
    assert refused(game, draw("P1")) == "MUST_PLACE"
    assert {a["type"] for a in game.legal_actions()} == {"place"}
    game.push({"type": "place", "player": "P1", "stack": 1})  # 10+9+10: busts, still placed
    assert stacks(game, "P1")[1] == ["10", "9", "10"]
    assert detail(game)["stacks"]["P1"][0]["state"] == "bust"
    assert game.view()["to_act"] == ["P2"]


def test_S7_keeper_is_never_given():
    game = first_turns(["3K", *FILLER])
    game.push(draw("P1"))
    assert refused(game, give("P1", "P2", 1)) == "KEEPER_NOT_GIVEABLE"
    assert all(a["type"] == "keep" for a in game.legal_actions())
    game.push(keep("P1", 3))


def test_S7_give_only_to_an_opponent_active_stack_never_a_teammate():
    hands = {"P1": ["10", "2", "2", "2"], "P2": ["2", "2", "2", "2"], "P3": ["3", "3", "3", "3"],
             "P4": ["4", "4", "4", "4"]}
    game = start(players=list(hands), teams=[["P1", "P3"], ["P2", "P4"]])
    game.push({"type": "deal", "dealer": "P4", "hands": hands, "upcard": "5",
               "stock": ["A", "4", "4", "4", *FILLER]})
    play(game, draw("P1"), keep("P1", 1), draw("P2"), keep("P2", 1), draw("P3"), keep("P3", 1),
         draw("P4"), keep("P4", 1))
    assert stacks(game, "P1")[1] == ["10", "A"]
    game.push(draw("P1"))
    assert refused(game, give("P1", "P3", 2)) == "TEAMMATE"
    assert refused(game, give("P1", "P1", 2)) == "TEAMMATE"
    assert refused(game, give("P1", "P9", 2)) == "UNKNOWN_PLAYER"
    gives = [a for a in game.legal_actions() if a["type"] == "give"]
    assert {a["to"] for a in gives} == {"P2", "P4"}
    game.push(give("P1", "P4", 2))
    assert game.view()["to_act"] == ["P2+P4"] and detail(game)["to_act_player"] == "P2"


def test_S7_give_onto_an_inactive_stack_is_refused():
    game = first_turns(["2", "A", *FILLER])
    play(game, draw("P1"), keep("P1", 1))  # 21
    game.push(draw("P2"))
    assert refused(game, give("P2", "P1", 1)) == "STACK_INACTIVE"


# --- S8 upcard ------------------------------------------------------------------------------------

def test_S8_upcard_only_when_it_makes_21_at_once_and_is_replaced():
    game = first_turns(["4", *FILLER], upcard="10")
    assert refused(game, {"type": "take_upcard", "player": "P1", "stack": 3}) == "UPCARD_NOT_21"  # 5+10
    takes = [a for a in game.legal_actions() if a["type"] == "take_upcard"]
    assert takes == [{"type": "take_upcard", "player": "P1", "stack": 2}]  # A as 11 + 10
    game.push(takes[0])
    assert stacks(game, "P1")[2] == ["A", "10"]
    assert detail(game)["stacks"]["P1"][1]["state"] == "21"
    assert detail(game)["upcard"] == "4", "replaced from the top of the stock"
    assert game.view()["to_act"] == ["P2"]


def test_S8_a_zero_bonus_upcard_may_go_on_any_active_stack():
    game = first_turns(FILLER, upcard="ZB")
    takes = [a for a in game.legal_actions() if a["type"] == "take_upcard"]
    assert [a["stack"] for a in takes] == [1, 2, 3, 4]
    game.push({"type": "take_upcard", "player": "P1", "stack": 3})
    assert stacks(game, "P1")[3] == ["5", "ZB"]
    assert detail(game)["stacks"]["P1"][2]["count"] == "5"


# --- S9 combine ------------------------------------------------------------------------------------

def test_S9_combine_two_active_stacks_the_first_keeps_its_number():
    game = first_turns(FILLER)
    assert refused(game, {"type": "combine", "player": "P1", "stacks": [3, 3]}) == "BAD_VALUE"
    assert refused(game, {"type": "combine", "player": "P1", "stacks": [2, 3, 4]}) == "BAD_VALUE"
    pairs = [a["stacks"] for a in game.legal_actions() if a["type"] == "combine"]
    assert pairs == [[1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4]]
    game.push({"type": "combine", "player": "P1", "stacks": [4, 2]})  # 9 + A
    assert stacks(game, "P1") == {1: ["10", "9"], 3: ["5"], 4: ["9", "A"]}
    assert detail(game)["combined"] == ["P1"]
    play(game, draw("P2"), keep("P2", 2), draw("P1"))
    assert refused(game, keep("P1", 2)) == "STACK_INACTIVE"
    game.push(keep("P1", 4))
    assert stacks(game, "P1")[4] == ["9", "A", "5"]


def test_S9_combining_may_bust_and_inactive_stacks_cannot_combine():
    game = first_turns(["3", *FILLER])
    game.push({"type": "combine", "player": "P1", "stacks": [1, 3]})  # 19 + 5
    assert detail(game)["stacks"]["P1"][0]["state"] == "bust"
    play(game, draw("P2"), keep("P2", 2))
    assert refused(game, {"type": "combine", "player": "P1", "stacks": [1, 2]}) == "STACK_INACTIVE"


# --- S10, S11 sitting out and playing out; S13 perfect round ---------------------------------------

def perfect_round() -> Game:
    """P1 turns four 10s into four 21s with four Aces; P2 (2s and 3s) plays out on tens."""
    stock = ["A", "3"] * 3 + ["A"] + ["10"] * 8 + FILLER
    game = dealt({"P1": ["10", "10B", "10", "10"], "P2": ["2", "2", "2", "2"]}, "7", stock)
    for i in (1, 2, 3):
        play(game, draw("P1"), keep("P1", i), draw("P2"), keep("P2", i))
    play(game, draw("P1"), keep("P1", 4))
    return game


def test_S10_a_player_without_active_stacks_sits_out_the_round():
    hands = {"P1": ["2", "3", "4", "5"], "P2": ["I21", "I21", "I21", "I21"], "P3": ["6", "7", "8", "9"]}
    game = dealt(hands, "5", FILLER, dealer="P3")
    assert game.view()["to_act"] == ["P1"]
    play(game, draw("P1"), keep("P1", 1))
    assert game.view()["to_act"] == ["P3"], "P2 is skipped"
    assert refused(game, draw("P2")) == "NOT_YOUR_TURN"
    assert detail(game)["playing_out"] is None


def test_S11_the_last_player_with_active_stacks_plays_out():
    game = perfect_round()
    assert detail(game)["playing_out"] == "P2"
    assert game.view()["to_act"] == ["P2"]
    assert {a["type"] for a in game.legal_actions()} == {"draw"}, "no upcard, no combine"
    assert refused(game, {"type": "combine", "player": "P2", "stacks": [1, 2]}) == "PLAYING_OUT"
    assert refused(game, {"type": "take_upcard", "player": "P2", "stack": 4}) == "PLAYING_OUT"
    game.push(draw("P2"))
    assert refused(game, give("P2", "P1", 1)) == "PLAYING_OUT"
    game.push(keep("P2", 1))
    assert game.view()["to_act"] == ["P2"], "S10: P1 has no active stack and sits out"


def test_S13_perfect_round_scores_two_more_and_bonus_cards_count():
    game = perfect_round()
    for i in (1, 1, 2, 2, 3, 3, 4, 4):
        play(game, draw("P2"), keep("P2", i))
    view = game.view()
    assert detail(game)["phase"] == "deal"
    last = detail(game)["history"][-1]
    assert last["ended"] == "all_inactive"
    assert last["points"] == {"P1": 4 + 1 + 2, "P2": 0}  # four 21s, one Bonus, perfect round
    assert view["scores"] == {"P1": 7, "P2": 0}
    assert [s["state"] for s in last["stacks"]["P2"]] == ["bust"] * 4
    assert detail(game)["next_dealer"] == "P1"


def test_S13_no_perfect_round_after_combining():
    game = start()
    p1 = [["10", "A"], ["10", "A"], ["10", "6", "5"]]
    p2 = [["10", "6", "5"], ["A", "10"], ["I21"], ["7", "7", "7"]]
    game.push({"type": "round_result", "stacks": {"P1": p1, "P2": p2}})
    assert game.view()["scores"] == {"P1": 3, "P2": 4 + 2}


def test_S13_bonus_in_a_bust_stack_scores_nothing_and_zero_bonus_is_an_option():
    stacks_ = {"P1": [["9B", "8B", "7"], ["10B", "A"], ["ZB", "10", "A"], ["2", "10", "10"]],
               "P2": [["10", "10", "10"]]}
    game = start()
    game.push({"type": "round_result", "stacks": stacks_})
    assert game.view()["scores"]["P1"] == 2 + 2
    game = start(zero_bonus_points=0)
    game.push({"type": "round_result", "stacks": stacks_})
    assert game.view()["scores"]["P1"] == 2 + 1


# --- S12 stock exhausted -----------------------------------------------------------------------------

EXHAUST = {"P1": ["10", "2", "2", "2"], "P2": ["3", "3", "3", "3"]}


def test_S12_the_upcard_is_drawn_as_the_last_card_then_the_round_ends():
    game = dealt(EXHAUST, "4", ["A", "6"])
    play(game, draw("P1"), keep("P1", 1), draw("P2"), keep("P2", 1))
    assert detail(game)["stock_size"] == 0
    assert game.legal_actions()[0] == {"type": "draw", "player": "P1", "card": "4"}
    game.push(draw("P1"))
    assert detail(game)["upcard"] is None
    game.push(keep("P1", 2))
    last = detail(game)["history"][-1]
    assert last["ended"] == "stock_exhausted"
    assert last["points"] == {"P1": 1, "P2": 0}, "the 21 scores; active stacks score nothing"
    assert [s["state"] for s in last["stacks"]["P1"]] == ["21", "active", "active", "active"]


def test_S12_option_void_round_scores_nothing_for_an_exhausted_round():
    game = dealt(EXHAUST, "4", ["A", "6"], stock_exhausted="void_round")
    play(game, draw("P1"), keep("P1", 1), draw("P2"), keep("P2", 1), draw("P1"), keep("P1", 2))
    assert game.view()["scores"] == {"P1": 0, "P2": 0}
    assert detail(game)["history"][-1]["void"] is True


def test_S12_taking_the_last_upcard_leaves_nothing_to_draw():
    game = dealt({"P1": ["10", "10", "2", "2"], "P2": ["3", "3", "3", "3"]}, "A", ["A", "6"])
    play(game, draw("P1"), keep("P1", 1), draw("P2"), keep("P2", 1))
    game.push({"type": "take_upcard", "player": "P1", "stack": 2})
    assert detail(game)["phase"] == "deal"
    assert game.view()["scores"] == {"P1": 2, "P2": 0}


def test_S12_unknown_stock_draws_name_their_card_and_the_table_reports_exhaustion():
    game = dealt(EXHAUST, "A")
    assert detail(game)["stock_size"] is None
    assert refused(game, draw("P1")) == "BAD_VALUE"
    play(game, draw("P1", card="A"), keep("P1", 1), draw("P2", card="6"), keep("P2", 1))
    assert refused(game, {"type": "take_upcard", "player": "P1", "stack": 2}) == "UPCARD_NOT_21"
    play(game, draw("P1", card="8"), keep("P1", 2), draw("P2", card="5"), keep("P2", 2))
    game.push(draw("P1", **{"from": "upcard"}))
    assert detail(game)["hand"]["card"] == "A"
    game.push(keep("P1", 3))
    assert detail(game)["history"][-1]["ended"] == "stock_exhausted"


def test_unknown_upcard_after_take_upcard_is_named_by_the_table():
    game = dealt({"P1": ["10", "10", "2", "2"], "P2": ["3", "3", "3", "3"]}, "A")
    play(game, draw("P1", card="5"), keep("P1", 3), draw("P2", card="5"), keep("P2", 1))
    game.push({"type": "take_upcard", "player": "P1", "stack": 1})
    assert detail(game)["upcard"] == "?"
    play(game, draw("P2", card="2"), keep("P2", 2))
    assert {"type": "upcard"} in game.legal_actions()
    assert refused(game, {"type": "take_upcard", "player": "P1", "stack": 2}) == "BAD_VALUE"
    game.push({"type": "upcard", "card": "9"})
    assert refused(game, {"type": "upcard", "card": "8"}) == "CARD_MISMATCH"
    assert refused(game, {"type": "take_upcard", "player": "P1", "stack": 2}) == "UPCARD_NOT_21"


# --- S14 winning --------------------------------------------------------------------------------------

def result(p1: list[list[str]], p2: list[list[str]]) -> dict[str, Any]:
    return {"type": "round_result", "stacks": {"P1": p1, "P2": p2}}


SEVEN = [["10B", "A"], ["10B", "A"], ["10B", "A"], ["10", "A"]]     # 4 + 3 bonus + 2 perfect = 9
NONE = [["10", "10", "5"]]


def test_S14_sole_highest_at_or_over_the_target_wins():
    game = start()
    play(game, result(SEVEN, NONE), result(SEVEN, NONE))
    assert not game.view()["finished"] and game.view()["scores"]["P1"] == 18
    game.push(result(SEVEN, SEVEN))
    view = game.view()
    assert view["finished"] and view["winners"] == ["P1"] and view["scores"] == {"P1": 27, "P2": 9}
    assert view["to_act"] == []
    assert refused(game, result(NONE, NONE)) == "GAME_OVER"


def test_S14_a_tied_lead_means_another_complete_round():
    game = start(target=9)
    game.push(result(SEVEN, SEVEN))
    view = game.view()
    assert view["scores"] == {"P1": 9, "P2": 9}
    assert not view["finished"] and view["detail"]["lead_tied"] is True
    game.push(result(NONE, [["10", "A"], NONE[0]]))
    assert game.view()["winners"] == ["P2"]


def test_S14_team_target_42_counts_both_partners():
    players = ["P1", "P2", "P3", "P4"]
    game = start(players=players, teams=[["P1", "P3"], ["P2", "P4"]])
    res = {"type": "round_result", "stacks": {"P1": SEVEN, "P2": NONE, "P3": SEVEN, "P4": [["I21"]]}}
    play(game, res, res)
    assert game.view()["scores"] == {"P1+P3": 36, "P2+P4": 2}
    assert not game.view()["finished"], "36 is under the team target"
    game.push(res)
    assert game.view()["winners"] == ["P1+P3"]
    assert detail(game)["history"][0]["team_points"] == {"P1+P3": 18, "P2+P4": 1}


# --- round_result -------------------------------------------------------------------------------------

def test_round_result_only_between_rounds_and_only_with_inactive_stacks():
    game = start()
    assert refused(game, result([["10", "5"]], NONE)) == "ROUND_NOT_OVER"
    game.push({**result([["10", "5"]], NONE), "stock_exhausted": True})
    assert detail(game)["history"][-1]["ended"] == "stock_exhausted"
    game.push({"type": "deal", "hands": EXHAUST, "upcard": "4", "stock": FILLER})
    assert refused(game, result(SEVEN, NONE)) == "ROUND_NOT_OVER"
    assert refused(game, result([["10", "X"]], NONE)) == "BAD_VALUE"
    assert refused(game, {"type": "round_result", "stacks": {"P1": SEVEN}}) == "BAD_VALUE"
    assert refused(game, {"type": "round_result", "stacks": {"P1": SEVEN, "P2": NONE, "P7": NONE}}) \
        == "UNKNOWN_PLAYER"


# --- reason code order and malformed events -----------------------------------------------------------

def test_reason_codes_come_in_the_order_of_EVENTS():
    game = first_turns(FILLER)
    assert refused(game, {"type": "keep", "player": "P9", "stack": 9}) == "UNKNOWN_PLAYER"
    assert refused(game, {"type": "keep", "player": "P2", "stack": 9}) == "BAD_VALUE"
    assert refused(game, {"type": "keep", "player": "P2", "stack": 1}) == "NOT_YOUR_TURN"
    assert refused(game, {"type": "draw", "player": "P2", "card": "11"}) == "BAD_VALUE"


@pytest.mark.parametrize("event", [
    {"type": "draw", "player": "P1", "card": 7},
    {"type": "combine", "player": "P1", "stacks": "1,2"},
    {"type": "combine", "player": "P1", "stacks": [1, "2"]},
    {"type": "keep", "player": "P1"},
    {"type": "give", "player": "P1", "stack": 1},
    {"type": "shuffle"},
])
def test_malformed_events_are_event_errors(event):
    game = first_turns(FILLER)
    with pytest.raises(EventError):
        game.push(event)


def test_malformed_deals_are_event_errors():
    game = start()
    for event in ({"type": "deal"}, {"type": "deal", "hands": EXHAUST},
                  {"type": "deal", "seed": 3, "hands": EXHAUST, "upcard": "4"},
                  {"type": "deal", "hands": {"P1": "10 2 2 2", "P2": []}, "upcard": "4"}):
        with pytest.raises(EventError):
            game.push(event)
    short = {"type": "deal", "hands": {"P1": ["2"], "P2": EXHAUST["P2"]}, "upcard": "4"}
    assert refused(game, short) == "BAD_VALUE"


# --- the virtual deck through the engine ----------------------------------------------------------------

def test_a_seeded_deal_deals_the_configured_virtual_deck_reproducibly():
    a, b = start(), start()
    a.push({"type": "deal", "seed": 99})
    b.push({"type": "deal", "seed": 99})
    assert a.view() == b.view()
    assert detail(a)["stock_size"] == 108 - 8 - 1
    c = start(decks=1, face_cards="remove")
    c.push({"type": "deal", "seed": 99})
    assert detail(c)["stock_size"] == 44 - 8 - 1
    assert a.legal_actions()[0]["card"], "with a known stock the draw is a complete event"
