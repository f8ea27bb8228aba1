"""exactly (RULES.md X1–X11), as a player at the table would check it."""

from __future__ import annotations

import random

import pytest

from companion.bench.engines import simulate
from companion.games import get_engine
from companion.games.base import EventError, Game, RuleError
from tests.games.helpers import refused


def start(players=("P1", "P2", "P3"), **options) -> Game:
    ng: dict = {"type": "new_game", "game": "exactly", "players": list(players)}
    if options:
        ng["options"] = options
    return Game.start(ng)


def roll(game: Game, player: str, face: str) -> None:
    game.push({"type": "roll", "player": player, "face": face})


def move(game: Game, player: str, value: int, source: str, target: str) -> None:
    game.push({"type": "move", "player": player, "value": value, "from": source, "to": target})


def turn(game: Game, player: str, face: str, value: int | None = None, source: str = "", target: str = "") -> None:
    roll(game, player, face)
    if value is not None:
        move(game, player, value, source, target)




def detail(game: Game) -> dict:
    return game.view()["detail"]


def totals(game: Game) -> dict[str, int]:
    return {name: s["total"] for name, s in detail(game)["stacks"].items()}


def mv(player: str, value: int, source: str, target: str) -> dict:
    return {"type": "move", "player": player, "value": value, "from": source, "to": target}


# --- X1 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7])
def test_X1_two_to_six_players(n):
    with pytest.raises(RuleError) as err:
        start([f"P{i}" for i in range(n)])
    assert err.value.code == "BAD_VALUE"


@pytest.mark.parametrize("n", [2, 6])
def test_X1_each_player_starts_with_a_5c_from_the_centre(n):
    game = start([f"P{i}" for i in range(n)])
    stacks = detail(game)["stacks"]
    assert all(stacks[f"P{i}"]["tokens"] == {"50": 0, "20": 0, "10": 0, "5": 1} for i in range(n))
    assert stacks["center"]["tokens"] == {"50": 10, "20": 10, "10": 10, "5": 10 - n}
    assert detail(game)["trophies_left"] == 15
    assert game.view()["scores"] == {f"P{i}": 0 for i in range(n)}


@pytest.mark.parametrize("players, options", [
    (["P1", "P1"], {}),
    (["P1", "center"], {}),
    (["P1", "P2"], {"target": 0}),
    (["P1", "P2"], {"cap_mode": "never"}),
    (["P1", "P2"], {"jackpot": True}),
])
def test_X1_bad_new_game_starts_nothing(players, options):
    with pytest.raises(RuleError) as err:
        start(players, **options)
    assert err.value.code == "BAD_VALUE"


def test_X11_a_long_game_is_not_refused_for_the_box_s_15_trophies():
    game = start([f"P{i}" for i in range(6)], target=5)
    assert detail(game)["options"]["target"] == 5
    assert detail(game)["trophies_left"] == 15


def test_X1_players_of_the_wrong_json_type_are_malformed():
    with pytest.raises(EventError):
        Game.start({"type": "new_game", "game": "exactly", "players": ["P1", 2]})


# --- X2 ---------------------------------------------------------------------------------------

def test_X2_first_listed_starts_without_a_start_roll():
    game = start()
    assert game.view()["to_act"] == ["P1"]
    assert {"type": "start_roll"} in game.legal_actions()


def test_X2_highest_start_roll_starts_question_mark_highest():
    game = start()
    game.push({"type": "start_roll", "faces": {"P1": "50", "P2": "?", "P3": "20"}})
    assert game.view()["to_act"] == ["P2"]
    assert refused(game, {"type": "roll", "player": "P1", "face": "5"}) == "NOT_YOUR_TURN"


def test_X2_a_tie_for_the_highest_rolls_again():
    game = start()
    assert refused(game, {"type": "start_roll", "faces": {"P1": "50", "P2": "50", "P3": "20"}}) == "START_TIE"
    game.push({"type": "start_roll", "faces": {"P1": "0", "P2": "0", "P3": "10"}})
    assert game.view()["to_act"] == ["P3"], "a tie below the highest does not matter"


def test_X2_start_roll_only_before_the_first_roll():
    game = start()
    roll(game, "P1", "0")
    assert refused(game, {"type": "start_roll", "faces": {"P1": "?", "P2": "0", "P3": "0"}}) == "ALREADY_ROLLED"
    assert all(a["type"] != "start_roll" for a in game.legal_actions())


@pytest.mark.parametrize("faces, code", [
    ({}, "BAD_VALUE"),  # nobody rolled
    ({"P1": "50", "P2": "20", "P3": "100"}, "BAD_VALUE"),
    ({"P1": "50", "P2": "20", "P3": "5", "Zoe": "?"}, "UNKNOWN_PLAYER"),
])
def test_X2_start_roll_values(faces, code):
    assert refused(start(), {"type": "start_roll", "faces": faces}) == code


def test_X2_after_a_tie_only_the_tied_players_roll_again():
    game = start()
    assert refused(game, {"type": "start_roll", "faces": {"P1": "0", "P2": "?", "P3": "?"}}) == "START_TIE"
    game.push({"type": "start_roll", "faces": {"P2": "5", "P3": "10"}})
    assert game.view()["to_act"] == ["P3"]


# --- X3 ---------------------------------------------------------------------------------------

def test_X3_zero_passes_the_turn():
    game = start()
    roll(game, "P1", "0")
    assert game.view()["to_act"] == ["P2"]
    assert detail(game)["last"]["auto_pass"] == "zero"
    assert detail(game)["phase"] == "roll"


def test_X3_one_roll_then_a_token_of_that_value():
    game = start()
    assert refused(game, {"type": "roll", "player": "P2", "face": "5"}) == "NOT_YOUR_TURN"
    assert refused(game, mv("P1", 5, "center", "P1")) == "ROLL_FIRST"
    roll(game, "P1", "10")
    assert detail(game)["phase"] == "move" and detail(game)["face"] == "10"
    assert refused(game, {"type": "roll", "player": "P1", "face": "5"}) == "ALREADY_ROLLED"
    assert refused(game, mv("P1", 5, "center", "P1")) == "WRONG_VALUE"
    move(game, "P1", 10, "center", "P1")
    assert totals(game)["P1"] == 15
    assert game.view()["to_act"] == ["P2"], "one move per turn"


def test_X3_question_mark_lets_the_player_choose_any_coin_value():
    game = start()
    roll(game, "P1", "?")
    values = {m["value"] for m in detail(game)["legal_moves"]}
    assert values == {50, 20, 10, 5}
    assert refused(game, mv("P1", 100, "center", "P1")) == "WRONG_VALUE", "never a €1 trophy"
    assert refused(game, mv("P1", 0, "center", "P1")) == "WRONG_VALUE", "never '0'"
    assert refused(game, mv("P1", 25, "center", "P1")) == "BAD_VALUE", "no 25c token in the game"
    move(game, "P1", 50, "center", "P3")
    assert totals(game)["P3"] == 55


@pytest.mark.parametrize("event", [
    {"type": "roll", "player": "P1", "face": "25"},
    {"type": "roll", "player": "P2", "face": "25"},  # BAD_VALUE before NOT_YOUR_TURN
    mv("P2", 15, "center", "P2"),
])
def test_X3_faces_and_values_outside_the_game_are_BAD_VALUE(event):
    game = start()
    if event["type"] == "move":
        roll(game, "P1", "?")
    assert refused(game, event) == "BAD_VALUE"


def test_X3_malformed_events():
    game = start()
    with pytest.raises(EventError):
        game.push({"type": "roll", "player": "P1", "face": 20})
    with pytest.raises(EventError):
        game.push({"type": "move", "player": "P1", "value": "20", "from": "center", "to": "P1"})
    with pytest.raises(EventError):
        game.push({"type": "move", "player": "P1", "value": 20, "to": "P1"})


# --- X4, X7 -----------------------------------------------------------------------------------

def seed_example_1() -> Game:
    """The seed's Example 1: three players, each owns a 20c token; Player 1 rolls 20c."""
    game = start()
    for p in ("P1", "P2", "P3"):
        turn(game, p, "20", 20, "center", p)
    roll(game, "P1", "20")
    return game


def test_X4_seed_example_every_possible_move():
    game = seed_example_1()
    moves = {(m["from"], m["to"]) for m in detail(game)["legal_moves"]}
    stacks = ["center", "P1", "P2", "P3"]
    assert moves == {(a, b) for a in stacks for b in stacks if a != b}, "any two different stacks"
    assert all(m["value"] == 20 and m["player"] == "P1" for m in detail(game)["legal_moves"])
    assert game.legal_actions() == detail(game)["legal_moves"]
    move(game, "P1", 20, "P2", "P3")  # other <-> other
    assert totals(game)["P2"] == 5 and totals(game)["P3"] == 45


def test_X4_illegal_moves():
    game = seed_example_1()
    assert refused(game, mv("P1", 20, "P2", "P2")) == "SAME_STACK"
    assert refused(game, mv("P1", 20, "Zoe", "P2")) == "UNKNOWN_PLAYER"
    assert refused(game, mv("P2", 20, "P2", "P1")) == "NOT_YOUR_TURN"
    move(game, "P1", 20, "P2", "P1")
    roll(game, "P2", "20")
    assert refused(game, mv("P2", 20, "P2", "center")) == "NO_SUCH_TOKEN"


def test_X7_no_change_is_ever_made():
    game = seed_example_1()
    move(game, "P1", 20, "P1", "center")
    roll(game, "P2", "10")
    assert refused(game, mv("P2", 10, "P1", "P2")) == "NO_SUCH_TOKEN", "P1's 5c is not change for a 10c"
    assert refused(game, mv("P2", 20, "P2", "center")) == "WRONG_VALUE"


# --- X5, X6 -----------------------------------------------------------------------------------

def both_over_the_cap(**options) -> Game:
    """Two players take three 50c tokens each: 5, 55, 105, 155c (never exactly 100)."""
    game = start(("P1", "P2"), **options)
    for _ in range(3):
        for p in ("P1", "P2"):
            turn(game, p, "50", 50, "center", p)
    return game


def test_X5_no_token_onto_a_stack_over_150c():
    game = both_over_the_cap()
    assert totals(game) == {"center": 540, "P1": 155, "P2": 155}
    roll(game, "P1", "5")
    assert refused(game, mv("P1", 5, "center", "P2")) == "CAP_EXCEEDED"
    assert refused(game, mv("P1", 5, "center", "P1")) == "CAP_EXCEEDED"
    assert {(m["from"], m["to"]) for m in detail(game)["legal_moves"]} == {("P1", "center"), ("P2", "center")}
    move(game, "P1", 5, "P2", "center")
    assert totals(game)["P2"] == 150


def test_X5_option_cap_mode_after_counts_the_token_too():
    before = start(("P1", "P2"))
    after = start(("P1", "P2"), cap_mode="after")
    for game in (before, after):
        for _ in range(2):
            turn(game, "P1", "50", 50, "center", "P1")
            turn(game, "P2", "0")
        roll(game, "P1", "50")
    assert totals(before)["P1"] == 105
    move(before, "P1", 50, "center", "P1")  # 105 is not over 150: allowed
    assert totals(before)["P1"] == 155
    assert refused(after, mv("P1", 50, "center", "P1")) == "CAP_EXCEEDED"  # would be 155


def test_X6_no_legal_move_passes_by_itself_and_pass_is_refused_while_one_exists():
    game = both_over_the_cap()
    roll(game, "P1", "20")  # every 20c is in the centre and both stacks are over the cap
    assert detail(game)["last"]["auto_pass"] == "no_legal_move"
    assert game.view()["to_act"] == ["P2"] and detail(game)["phase"] == "roll"
    assert refused(game, {"type": "pass", "player": "P2"}) == "ROLL_FIRST"
    roll(game, "P2", "50")
    assert detail(game)["last"]["auto_pass"] is None
    assert refused(game, {"type": "pass", "player": "P2"}) == "MUST_MOVE"
    assert refused(game, {"type": "pass", "player": "P1"}) == "NOT_YOUR_TURN"


# --- X8, X9, X10, X11 -------------------------------------------------------------------------

def test_X8_exactly_100c_wins_even_when_another_player_moved_the_token():
    game = start(("P1", "P2"))
    turn(game, "P1", "50", 50, "center", "P2")
    turn(game, "P2", "20", 20, "center", "P2")
    turn(game, "P1", "20", 20, "center", "P2")
    assert totals(game)["P2"] == 95
    turn(game, "P2", "0")
    turn(game, "P1", "5", 5, "center", "P2")
    view = game.view()
    assert view["scores"] == {"P1": 0, "P2": 1}
    assert view["detail"]["last"]["round_won"] == ["P2"]
    assert view["detail"]["trophies_left"] == 14
    # X10: every stack back in the centre, nobody gets a new 5c, the player after P1 starts
    assert totals(game) == {"center": 850, "P1": 0, "P2": 0}
    assert view["to_act"] == ["P2"] and view["detail"]["round"] == 2


def test_X9_over_100c_is_not_a_win():
    game = start(("P1", "P2"))
    turn(game, "P1", "50", 50, "center", "P1")
    turn(game, "P2", "0")
    turn(game, "P1", "50", 50, "center", "P1")
    assert totals(game)["P1"] == 105 and game.view()["scores"]["P1"] == 0
    turn(game, "P2", "5", 5, "P1", "P2")
    assert game.view()["scores"] == {"P1": 1, "P2": 0}, "back to exactly 100c"


def test_X10_option_restart_with_5c():
    game = start(("P1", "P2"), restart_with_5c=True)
    turn(game, "P1", "50", 50, "center", "P1")
    turn(game, "P2", "20", 20, "center", "P1")
    turn(game, "P1", "20", 20, "center", "P1")
    turn(game, "P2", "5", 5, "center", "P1")
    assert game.view()["scores"]["P1"] == 1
    assert totals(game) == {"center": 840, "P1": 5, "P2": 5}


def shared_round(**options) -> Game:
    """P2 holds 105c, P3 95c; P3 rolls 5 and takes P2's 5c: both stacks are exactly 100c."""
    game = start(**options)
    turn(game, "P1", "50", 50, "center", "P2")
    turn(game, "P2", "50", 50, "center", "P2")
    turn(game, "P3", "50", 50, "center", "P3")
    turn(game, "P1", "20", 20, "center", "P3")
    turn(game, "P2", "20", 20, "center", "P3")
    assert totals(game)["P2"] == 105 and totals(game)["P3"] == 95
    turn(game, "P3", "5", 5, "P2", "P3")
    return game


def test_X8_both_stacks_at_100c_both_win():
    game = shared_round()
    assert game.view()["scores"] == {"P1": 0, "P2": 1, "P3": 1}
    assert game.view()["to_act"] == ["P1"], "X10: the player after the active player starts"


def test_X8_option_simultaneous_exact_active_first():
    game = shared_round(simultaneous_exact="active_first")
    assert game.view()["scores"] == {"P1": 0, "P2": 0, "P3": 1}


def test_X11_target_trophies_win_and_a_simultaneous_finish_shares():
    game = shared_round(target=1)
    view = game.view()
    assert view["finished"] is True and view["winners"] == ["P2", "P3"] and view["to_act"] == []
    assert view["detail"]["phase"] == "over" and view["detail"]["legal_moves"] == []
    assert refused(game, {"type": "roll", "player": "P1", "face": "5"}) == "GAME_OVER"


def test_X11_three_trophies_by_default():
    game = start(("P1", "P2"))
    turn(game, "P1", "50", 50, "center", "P1")  # round 1: 5 + 50 + 20 + 20 + 5 for P1
    turn(game, "P2", "20", 20, "center", "P1")
    turn(game, "P1", "20", 20, "center", "P1")
    turn(game, "P2", "5", 5, "center", "P1")
    for winner in ("P1", "P2"):  # rounds 2 and 3 start from empty stacks, P1 first each time
        turn(game, "P1", "50", 50, "center", winner)
        turn(game, "P2", "50", 50, "center", winner)
    view = game.view()
    assert view["scores"] == {"P1": 2, "P2": 1} and view["detail"]["round"] == 4
    assert not view["finished"]
    turn(game, "P1", "?", 50, "center", "P1")
    turn(game, "P2", "?", 50, "center", "P1")
    view = game.view()
    assert view["finished"] and view["winners"] == ["P1"] and view["scores"]["P1"] == 3
    assert view["detail"]["trophies_left"] == 11


# --- legal actions and random play --------------------------------------------------------------

def test_every_legal_move_is_accepted():
    engine = get_engine("exactly")
    rng = random.Random(5)
    for _ in range(10):
        ng = engine.random_new_game(rng)
        game = Game(engine, ng, engine.new_game(ng))
        while not game.view()["finished"]:
            for action in game.legal_actions():
                if action["type"] == "move":
                    assert engine.allows(game.state, action) is None, action
            game.push(engine.random_action(game.state, rng))


@pytest.mark.slow
def test_random_play_finishes_every_game():
    result = simulate("exactly", games=100, seed=3)
    assert result["error_count"] == 0, result["errors"]
    assert result["unfinished"] == 0
