"""Twenty One (RULES.md T1–T12), as a player at the table would check it. Every layout a test
depends on beyond row 1's printed numbers comes in through ``sheets`` (T2)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from companion.bench.engines import simulate
from companion.games import get_engine
from companion.games.base import EventError, Game, RuleError
from tests.games.helpers import refused

COLOURS = ["white", "black", "red", "blue", "yellow", "green"]
PRINTED = [[6, 5, 4, 3, 2, 1], [5, 4, 4, 4, 3, 1], [5, 5, 4, 3, 2, 2], [5, 5, 5, 2, 2, 1], [4, 4, 4, 4, 3, 2]]
SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios" / "twentyone"


def layout(*row1: str) -> list:
    """A sheet whose row 1 has the given colour order; later rows rotate it (the printed numbers
    are the appendix's, supplied as the table's own pad)."""
    order = list(row1) or COLOURS
    return [[[c, p] for c, p in zip(order[r:] + order[:r], PRINTED[r], strict=True)] for r in range(5)]


# Row 1 of the seeds' examples: Marta (black 1, blue 3, white 2, yellow above 4) and María
# (white 5 second from the left, green below 5).
MARTA = layout("red", "yellow", "green", "blue", "white", "black")
MARIA = layout("yellow", "white", "green", "red", "black", "blue")


def start(players=(("Ann", "A"), ("Bea", "B")), sheets=None, **options) -> Game:
    ng: dict = {"type": "new_game", "game": "twentyone",
                "players": [{"name": n, "sheet": s} for n, s in players]}
    if sheets is not None:
        ng["sheets"] = sheets
    if options:
        ng["options"] = options
    return Game.start(ng)


def dice(white=6, black=6, red=6, blue=6, yellow=6, green=6) -> dict:
    return {"white": white, "black": black, "red": red, "blue": blue, "yellow": yellow, "green": green}


def roll(game: Game, player: str, **values: int) -> None:
    game.push({"type": "roll", "player": player, "dice": dice(**values)})


def enter(game: Game, player: str, *colours: str) -> None:
    game.push({"type": "enter", "player": player, "colors": list(colours)})


def strike(game: Game, player: str) -> None:
    game.push({"type": "strike", "player": player})




def detail(game: Game) -> dict:
    return game.view()["detail"]


def row(game: Game, player: str, r: int) -> dict:
    return detail(game)["sheets"][player]["rows"][r - 1]


# --- T1 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7])
def test_T1_two_to_six_players(n):
    with pytest.raises(RuleError) as err:
        start([(f"P{i}", "ABCDEFG"[i]) for i in range(n)])
    assert err.value.code == "BAD_VALUE"


def test_T1_every_player_on_a_different_sheet():
    with pytest.raises(RuleError) as err:
        start([("Ann", "C"), ("Bea", "C")])
    assert err.value.code == "SHEET_TAKEN"
    assert "Ann" in err.value.message


@pytest.mark.parametrize("players, code", [
    ([("Ann", "G"), ("Bea", "A")], "BAD_VALUE"),  # no sheet G
    ([("Ann", "A"), ("Ann", "B")], "BAD_VALUE"),  # one name twice
    ([("Ann", "G"), ("Bea", "G")], "BAD_VALUE"),  # BAD_VALUE comes before SHEET_TAKEN
])
def test_T1_bad_seats_start_nothing(players, code):
    with pytest.raises(RuleError) as err:
        start(players)
    assert err.value.code == code


def test_T1_unknown_option_starts_nothing():
    with pytest.raises(RuleError) as err:
        start(reroll_twice=True)
    assert err.value.code == "BAD_VALUE"


def test_T1_replay_exits_2_naming_SHEET_TAKEN(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "taken.jsonl"
    log.write_text(json.dumps({"type": "new_game", "game": "twentyone",
                               "players": [{"name": "Ann", "sheet": "C"}, {"name": "Bea", "sheet": "C"}]}) + "\n")
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "line 1" in out.stderr and "SHEET_TAKEN" in out.stderr
    assert out.stdout == ""


# --- T2 ---------------------------------------------------------------------------------------

def test_T2_shipped_sheets_are_data_marked_provisional():
    import companion.games.twentyone as module

    data = json.loads((Path(module.__file__).parent / "twentyone_sheets.json").read_text())
    assert "PROVISIONAL" in data["about"]
    assert data["provisional"]["printed_numbers_rows"] == [2, 3, 4, 5]
    assert sorted(data["sheets"]) == list("ABCDEF")
    for rows in data["sheets"].values():
        assert len(rows) == 5
        assert [p for _, p in rows[0]] == [6, 5, 4, 3, 2, 1], "T2: row 1 is printed 6 5 4 3 2 1"
        for cells in rows:
            assert sorted(c for c, _ in cells) == sorted(COLOURS), "each colour once per row"


def test_T2_the_view_says_which_sheets_are_the_shipped_guess():
    game = start(sheets={"B": MARTA})
    sheets = detail(game)["sheets"]
    assert sheets["Ann"]["provisional"] is True
    assert sheets["Bea"]["provisional"] is False
    assert [[c["color"], c["printed"]] for c in sheets["Bea"]["rows"][2]["cells"]] == MARTA[2]


def test_T2_a_table_loads_its_own_pad():
    """The override decides where a die may go: red is printed 6 on Marta's pad's row 1."""
    own = start(sheets={"A": MARTA})
    roll(own, "Ann", red=6)
    assert "red" in detail(own)["choices"]["Ann"]["exact"]


@pytest.mark.parametrize("mutate, words", [
    (lambda s: s.pop(), "5 rows"),
    (lambda s: s[1].pop(), "6 cells"),
    (lambda s: s[2].__setitem__(0, ["white", 7]), "1 to 6"),
    (lambda s: s[2].__setitem__(0, ["purple", 3]), "not a die colour"),
    (lambda s: s[3].__setitem__(0, list(s[3][1])), "twice"),
    (lambda s: s[0].__setitem__(0, ["white"]), "[colour, printed number]"),
])
def test_T2_a_broken_layout_is_BAD_VALUE(mutate, words):
    sheet = json.loads(json.dumps(MARTA))
    mutate(sheet)
    with pytest.raises(RuleError) as err:
        start(sheets={"A": sheet})
    assert err.value.code == "BAD_VALUE"
    assert words in err.value.message


def test_T2_an_unknown_sheet_in_the_override_is_BAD_VALUE():
    with pytest.raises(RuleError) as err:
        start(sheets={"G": MARTA})
    assert err.value.code == "BAD_VALUE"


def test_T2_a_layout_of_the_wrong_json_type_is_malformed():
    with pytest.raises(EventError):
        start(sheets={"A": "red 6, yellow 5"})
    with pytest.raises(EventError):
        start(sheets={"A": [[["red", "6"]] * 6] * 5})


# --- T3 ---------------------------------------------------------------------------------------

def test_T3_the_first_listed_rolls_first():
    game = start()
    assert game.view()["to_act"] == ["Ann"]
    assert game.legal_actions() == [{"type": "roll", "player": "Ann"}]
    assert refused(game, {"type": "roll", "player": "Bea", "dice": dice()}) == "NOT_YOUR_TURN"
    roll(game, "Ann")
    assert refused(game, {"type": "roll", "player": "Ann", "dice": dice()}) == "ALREADY_ROLLED"
    detail(game)["roll"]["red"] = 1  # a scoreboard changing its copy changes nothing
    assert detail(game)["roll"]["red"] == 6


@pytest.mark.parametrize("bad, code", [
    ({**dice(), "white": 7}, "BAD_VALUE"),
    ({**dice(), "white": 0}, "BAD_VALUE"),
    ({k: v for k, v in dice().items() if k != "green"}, "BAD_VALUE"),
    ({**dice(), "purple": 3}, "BAD_VALUE"),
])
def test_T3_dice_outside_the_game_are_BAD_VALUE(bad, code):
    game = start()
    assert refused(game, {"type": "roll", "player": "Ann", "dice": bad}) == code


def test_T3_BAD_VALUE_comes_before_NOT_YOUR_TURN_and_UNKNOWN_PLAYER_before_both():
    game = start()
    assert refused(game, {"type": "roll", "player": "Bea", "dice": {**dice(), "red": 9}}) == "BAD_VALUE"
    assert refused(game, {"type": "roll", "player": "Zoe", "dice": {**dice(), "red": 9}}) == "UNKNOWN_PLAYER"


def test_T3_malformed_events_are_not_rule_matters():
    game = start()
    with pytest.raises(EventError):
        game.push({"type": "roll", "player": "Ann"})
    with pytest.raises(EventError):
        game.push({"type": "roll", "player": "Ann", "dice": {**dice(), "red": "6"}})
    with pytest.raises(EventError):
        game.push({"type": "enter", "player": "Ann", "colors": "red"})
    with pytest.raises(EventError):
        game.push({"type": "cheer", "player": "Ann"})


def test_T3_ROLL_FIRST_before_the_roll():
    game = start()
    assert refused(game, {"type": "enter", "player": "Bea", "colors": ["red"]}) == "ROLL_FIRST"
    assert refused(game, {"type": "strike", "player": "Bea"}) == "ROLL_FIRST"
    assert refused(game, {"type": "reroll", "player": "Ann", "dice": dice()}) == "ROLL_FIRST"


# --- T4 ---------------------------------------------------------------------------------------

def seed_roll(**options) -> Game:
    """The seeds' re-roll example: 6, 4, 3, 3, 1, 1."""
    game = start(**options)
    roll(game, "Ann", white=6, black=4, red=3, blue=3, yellow=1, green=1)
    return game


def test_T4_seed_example_the_two_ones_stay():
    game = seed_roll()
    assert detail(game)["choices"]["Ann"]["reroll"] is True
    assert game.legal_actions()[0] == {"type": "reroll", "player": "Ann"}
    for colour in ("yellow", "green"):
        assert refused(game, {"type": "reroll", "player": "Ann",
                              "dice": {**dice(yellow=1, green=1), colour: 2}}) == "ONE_LOCKED"
    game.push({"type": "reroll", "player": "Ann", "dice": dice(white=2, black=5, red=6, blue=1, yellow=1, green=1)})
    d = detail(game)
    assert d["rerolled"] and d["roll_final"]
    assert d["first_roll"] == dice(white=6, black=4, red=3, blue=3, yellow=1, green=1)
    assert d["roll"]["blue"] == 1, "a die re-rolled to 1 is simply a 1"
    assert refused(game, {"type": "reroll", "player": "Ann", "dice": dice(yellow=1, green=1, blue=1)}) \
        == "NO_MORE_REROLLS"


def test_T4_only_the_roller_rerolls():
    game = seed_roll()
    assert refused(game, {"type": "reroll", "player": "Bea", "dice": dice(yellow=1, green=1)}) == "NOT_YOUR_TURN"


def test_T4_no_reroll_once_anyone_has_acted():
    game = seed_roll()
    strike(game, "Bea")
    assert detail(game)["roll_final"] is True
    assert detail(game)["choices"]["Ann"]["reroll"] is False
    assert refused(game, {"type": "reroll", "player": "Ann", "dice": dice(yellow=1, green=1)}) == "ROLL_FINAL"
    assert {"type": "reroll", "player": "Ann"} not in game.legal_actions()


def test_T4_six_ones_leave_nothing_to_reroll():
    game = start()
    ones = dice(1, 1, 1, 1, 1, 1)
    game.push({"type": "roll", "player": "Ann", "dice": ones})
    assert refused(game, {"type": "reroll", "player": "Ann", "dice": ones}) == "NO_DICE_TO_REROLL"
    assert all(a["type"] != "reroll" for a in game.legal_actions())


def test_T4_option_selective_reroll_lets_other_dice_stay():
    keep_four = {"type": "reroll", "player": "Ann", "kept": ["black", "yellow", "green"],
                 "dice": dice(white=2, black=4, red=5, blue=6, yellow=1, green=1)}
    assert refused(seed_roll(), keep_four) == "REROLL_ALL"
    game = seed_roll(selective_reroll=True)
    game.push(keep_four)
    assert detail(game)["roll"]["black"] == 4
    changed = {**keep_four, "dice": {**keep_four["dice"], "black": 2}}
    assert refused(seed_roll(selective_reroll=True), changed) == "BAD_VALUE", "a die that stayed keeps its value"


# --- T5, T6 -----------------------------------------------------------------------------------

def marta_roll() -> Game:
    """The seeds' entry example: white 4, black 1, red 1, blue 3, yellow 4, green 2."""
    game = start(sheets={"A": MARTA})
    roll(game, "Ann", white=4, black=1, red=1, blue=3, yellow=4, green=2)
    return game


def test_T5_everyone_acts_once_after_the_roll():
    game = marta_roll()
    assert game.view()["to_act"] == ["Ann", "Bea"]
    strike(game, "Bea")
    assert game.view()["to_act"] == ["Ann"]
    assert detail(game)["acted"] == ["Bea"] and detail(game)["waiting"] == ["Ann"]
    assert refused(game, {"type": "strike", "player": "Bea"}) == "ALREADY_ACTED"
    assert refused(game, {"type": "enter", "player": "Bea", "colors": ["red"]}) == "ALREADY_ACTED"
    assert detail(game)["choices"]["Bea"] == {"enter": [], "exact": [], "strike": None, "reroll": False}


def test_T6_seed_example_what_may_be_entered_and_what_is_exact():
    game = marta_roll()
    choice = detail(game)["choices"]["Ann"]
    assert choice["enter"] == ["black", "red", "blue", "yellow", "green"], "the white 4 is above the white 2"
    assert choice["exact"] == ["black", "blue"]
    assert refused(game, {"type": "enter", "player": "Ann", "colors": ["black", "white"]}) == "VALUE_TOO_HIGH"
    enter(game, "Ann", "black", "blue", "yellow")
    cells = {c["color"]: c for c in row(game, "Ann", 1)["cells"]}
    assert (cells["black"]["value"], cells["black"]["exact"]) == (1, True)
    assert (cells["blue"]["value"], cells["blue"]["exact"]) == (3, True)
    assert (cells["yellow"]["value"], cells["yellow"]["exact"]) == (4, False)
    assert cells["red"]["value"] is None and cells["green"]["value"] is None


def test_T6_a_filled_cell_takes_no_second_die():
    game = marta_roll()
    enter(game, "Ann", "black")
    strike(game, "Bea")
    roll(game, "Bea", black=1)
    assert refused(game, {"type": "enter", "player": "Ann", "colors": ["black"]}) == "CELL_FILLED"
    assert "black" not in detail(game)["choices"]["Ann"]["enter"]


def test_T6_entering_nothing_is_refused():
    game = marta_roll()
    assert refused(game, {"type": "enter", "player": "Ann", "colors": []}) == "NOTHING_ENTERED"


def test_T6_unknown_colours_are_BAD_VALUE():
    game = marta_roll()
    assert refused(game, {"type": "enter", "player": "Ann", "colors": ["purple"]}) == "BAD_VALUE"


def test_T6_a_colour_named_twice_is_CELL_FILLED_and_enters_nothing():
    """A known colour is no BAD_VALUE (that is a value out of range); the second die would go
    into the cell the first has just filled (T6: only into the empty cell of its colour)."""
    game = marta_roll()
    assert refused(game, {"type": "enter", "player": "Ann", "colors": ["red", "red"]}) == "CELL_FILLED"
    assert all(c["value"] is None for c in detail(game)["sheets"]["Ann"]["rows"][0]["cells"])
    enter(game, "Ann", "red")
    assert [c["value"] for c in detail(game)["sheets"]["Ann"]["rows"][0]["cells"]].count(1) == 1


# --- T7 ---------------------------------------------------------------------------------------

def test_T7_seed_example_strike_hits_the_leftmost_empty_cell():
    """María has filled four cells; green 5 and white 6 fit nowhere: she strikes the white 5."""
    game = start([("Ann", "A"), ("Maria", "B")], sheets={"B": MARIA})
    roll(game, "Ann", yellow=6, red=3, black=2, blue=1)
    enter(game, "Maria", "yellow", "red", "black", "blue")
    strike(game, "Ann")
    roll(game, "Maria", white=6, green=5)
    choice = detail(game)["choices"]["Maria"]
    assert choice["enter"] == []
    assert choice["strike"] == {"row": 1, "cell": 2, "color": "white", "printed": 5}
    strike(game, "Maria")
    cells = row(game, "Maria", 1)["cells"]
    assert [c["struck"] for c in cells] == [False, True, False, False, False, False]
    assert cells[2]["value"] is None, "the green cell is still empty"


def test_T7_strike_is_allowed_when_an_entry_was_possible():
    game = marta_roll()
    assert detail(game)["choices"]["Ann"]["strike"]["cell"] == 1
    strike(game, "Ann")
    assert row(game, "Ann", 1)["cells"][0]["struck"] is True
    assert "strike" in {a["type"] for a in game.legal_actions() if a["player"] == "Bea"}


# --- T8, T9 -----------------------------------------------------------------------------------

def test_T9_seed_worked_row_14_plus_6_is_20():
    """Saray's row 1: 5 / 4x 2 2x 1x = 14 + bonus 6 for three exact hits."""
    game = start([("Ann", "D"), ("Saray", "B")], sheets={"B": layout("green", "white", "black", "yellow", "blue", "red")})
    roll(game, "Ann", green=5)
    enter(game, "Saray", "green")
    strike(game, "Ann")
    roll(game, "Saray")
    strike(game, "Saray")
    strike(game, "Ann")
    roll(game, "Ann", black=4, yellow=2, blue=2, red=1)
    enter(game, "Saray", "black", "yellow", "blue")
    assert row(game, "Saray", 1)["score"] is None, "not scored until full"
    strike(game, "Ann")
    roll(game, "Saray", red=1)
    enter(game, "Saray", "red")
    assert row(game, "Saray", 1)["score"] == 20
    assert game.view()["scores"]["Saray"] == 20
    assert detail(game)["last"]["scored"] == {"row": 1, "score": 20}


def test_T8_a_row_finished_this_turn_is_scored_at_once_and_the_next_waits():
    game = start(sheets={"A": MARTA})
    for turn in range(5):  # Ann strikes five cells of row 1
        roll(game, ["Ann", "Bea"][turn % 2])
        strike(game, "Ann")
        strike(game, "Bea")
    roll(game, "Bea", black=1, red=6)
    enter(game, "Ann", "black")
    assert row(game, "Ann", 1)["score"] == 1 + 1, "one exact hit: 1 + bonus 1"
    assert detail(game)["sheets"]["Ann"]["row"] == 2
    assert refused(game, {"type": "enter", "player": "Ann", "colors": ["red"]}) == "ALREADY_ACTED"
    strike(game, "Bea")
    roll(game, "Ann", yellow=4)
    assert detail(game)["choices"]["Ann"]["enter"] == ["yellow"], "row 2 is current from the next turn on"
    enter(game, "Ann", "yellow")
    assert row(game, "Ann", 2)["cells"][0] == {"color": "yellow", "printed": 5, "value": 4, "exact": False,
                                               "struck": False}


@pytest.mark.parametrize("hits, bonus", [(0, 0), (1, 1), (2, 3), (3, 6), (4, 10), (5, 15), (6, 21)])
def test_T9_bonus_table(hits, bonus):
    """A row of exact hits and struck cells: its score is the hit values plus the bonus."""
    from companion.games.twentyone import row_score

    cells = [("white", 6), ("black", 5), ("red", 4), ("blue", 3), ("yellow", 2), ("green", 1)]
    marks = [p if i < hits else 0 for i, (_, p) in enumerate(cells)]
    assert row_score(tuple(cells), marks) == sum(marks) + bonus


# --- T10, T11, T12 ----------------------------------------------------------------------------

def test_T10_the_next_player_clockwise_rolls_when_all_have_acted():
    game = start([("Ann", "A"), ("Bea", "B"), ("Cy", "C")])
    for roller in ["Ann", "Bea", "Cy", "Ann"]:
        assert game.view()["to_act"] == [roller]
        assert detail(game)["roller"] == roller
        roll(game, roller)
        for p in ["Cy", "Ann", "Bea"]:
            strike(game, p)
    assert detail(game)["turn"] == 5


ONES = dict.fromkeys(COLOURS, 1)


def race_game(incomplete_row_bonus: bool = True) -> Game:
    """Ann rolls all ones five turns running and fills a whole row each time; Bea strikes until
    her last turn, then enters the black 1 (exact on her row 1); Cy enters the white 1 at once."""
    options = {} if incomplete_row_bonus else {"incomplete_row_bonus": False}
    game = start([("Ann", "A"), ("Bea", "B"), ("Cy", "C")], sheets={"A": MARTA, "B": MARTA, "C": MARTA}, **options)
    names = ["Ann", "Bea", "Cy"]
    for turn in range(5):
        roll(game, names[turn % 3], **ONES)
        enter(game, "Ann", *COLOURS)
        if turn == 4:
            assert not game.view()["finished"], "T11: the game ends at the end of the turn"
            assert game.view()["to_act"] == ["Bea", "Cy"]
            enter(game, "Bea", "black")
        else:
            strike(game, "Bea")
        if turn == 0:
            enter(game, "Cy", "white")
        else:
            strike(game, "Cy")
    return game


def test_T11_the_game_ends_at_the_end_of_the_turn_row_5_is_finished():
    game = race_game()
    view = game.view()
    assert view["finished"] is True and view["to_act"] == []
    ann, bea, cy = (view["detail"]["sheets"][p] for p in ("Ann", "Bea", "Cy"))
    # all ones: six values plus the bonus for each row's cells printed 1
    assert [r["score"] for r in ann["rows"]] == [6 + 1, 6 + 1, 6, 6 + 1, 6]
    assert [r["score"] for r in bea["rows"]] == [1 + 1, 0, 0, 0, 0], "current row as it stands, bonus included"
    assert [r["score"] for r in cy["rows"]] == [1, 0, 0, 0, 0]
    assert bea["rows"][0]["complete"] is False
    assert refused(game, {"type": "roll", "player": "Bea", "dice": dice()}) == "GAME_OVER"
    assert game.legal_actions() == []


def test_T11_option_incomplete_row_bonus_false():
    view = race_game(incomplete_row_bonus=False).view()
    assert view["detail"]["sheets"]["Bea"]["rows"][0]["score"] == 1
    assert view["scores"]["Ann"] == 33, "full rows keep their bonus"


def test_T12_highest_total_wins_and_a_tie_shares():
    view = race_game().view()
    assert view["scores"] == {"Ann": 33, "Bea": 2, "Cy": 1}
    assert view["winners"] == ["Ann"]
    game = start(sheets={"A": MARTA, "B": MARTA})
    for turn in range(30):
        roll(game, ["Ann", "Bea"][turn % 2])
        strike(game, "Ann")
        strike(game, "Bea")
    assert game.view()["winners"] == ["Ann", "Bea"]


# --- the seed's filled sheet, through `companion replay` ---------------------------------------

def seed_filled_sheet(seeds_dir: Path) -> list[list[tuple[int | None, bool]]]:
    """The Hungarian seed's finished sheet C: per row, per cell (value or None if struck, exact)."""
    text = (seeds_dir / "twenty-one.hu.txt").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if re.search(r"= \d+\s", line + " ") and "\t" in line and not line.startswith("Bonus"):
            cells = line.split("=")[0].split("\t")[:6]
            rows.append([(None, False) if c.strip() == "/" else (int(c.split()[0]), "×" in c) for c in cells])
    return rows


def test_T9_T11_seed_sheet_c_replays_to_88(seeds_dir):
    from companion.games.replay import read_jsonl, replay

    with (SCENARIOS / "seed-sheet-c-88.jsonl").open() as f:
        result = replay(read_jsonl(f))
    seed = seed_filled_sheet(seeds_dir)
    assert len(seed) == 5
    ann = result["detail"]["sheets"]["Ann"]
    for r, (cells, seed_row) in enumerate(zip(ann["rows"], seed, strict=True), start=1):
        got = [(c["value"], c["exact"]) for c in cells["cells"]]
        assert got == seed_row, f"row {r} as the seed filled it"
    assert [r["score"] for r in ann["rows"]] == [18, 22, 10, 26, 12]
    assert result["scores"]["Ann"] == 88


# --- legal actions and random play --------------------------------------------------------------

def test_legal_actions_are_all_accepted():
    engine = get_engine("twentyone")
    rng = random.Random(7)
    for _ in range(8):
        ng = engine.random_new_game(rng)
        game = Game(engine, ng, engine.new_game(ng))
        while not game.view()["finished"]:
            actions = game.legal_actions()
            for action in actions:
                if action["type"] in ("enter", "strike"):
                    assert engine.allows(game.state, action) is None, action
            game.push(engine.random_action(game.state, rng))


def test_legal_enter_actions_match_the_choices_query():
    game = marta_roll()
    singles = sorted(a["colors"][0] for a in game.legal_actions()
                     if a["type"] == "enter" and a["player"] == "Ann" and len(a["colors"]) == 1)
    assert singles == sorted(detail(game)["choices"]["Ann"]["enter"])
    assert sum(1 for a in game.legal_actions() if a["type"] == "enter" and a["player"] == "Ann") == 2 ** 5 - 1


@pytest.mark.slow
def test_random_play_finishes_every_game():
    result = simulate("twentyone", games=100, seed=3)
    assert result["error_count"] == 0, result["errors"]
    assert result["unfinished"] == 0
