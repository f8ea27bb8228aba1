"""The table: a real SQLite log, apply/undo, proposals, subscribers, export."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from companion.games.base import EventError, RuleError
from companion.table import Table

NEW = {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}
DICE_A = {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}}
DICE_B = {"type": "dice", "side": "B", "values": {"blue": 6, "red": 4, "green": 3, "yellow": 1}}


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path / "table.sqlite")
    t.start(NEW, source="phone")
    t.apply(DICE_A, source="camera")
    t.apply(DICE_B, source="camera")
    yield t
    t.close()


def test_a_refused_event_stores_nothing_and_says_why(table):
    rows = len(table.log.events(table.game_id))
    with pytest.raises(RuleError) as err:
        table.apply({"type": "throw", "side": "B", "cup": "red"})
    assert err.value.code == "NOT_YOUR_TURN"
    with pytest.raises(EventError):
        table.apply({"type": "throw", "side": "A"})
    assert len(table.log.events(table.game_id)) == rows


def test_rows_carry_sequence_source_and_time(table):
    table.apply({"type": "throw", "side": "A", "cup": "red"}, source="button")
    rows = table.log.events(table.game_id)
    assert [r["type"] for r in rows] == ["new_game", "dice", "dice", "throw"]
    assert rows[-1]["source"] == "button" and rows[1]["source"] == "camera"
    assert all(r["at"].endswith("Z") for r in rows)


def test_state_survives_a_restart(tmp_path, table):
    table.apply({"type": "throw", "side": "A", "cup": "yellow"})
    table.apply({"type": "throw", "side": "B", "cup": "blue"})
    table.undo()
    before = table.state()
    table.close()
    again = Table(tmp_path / "table.sqlite")
    after = again.state()
    assert after["scores"] == {"A": 5, "B": 0} == before["scores"]
    assert after["to_act"] == ["B"] and after["game_id"] == before["game_id"]


def test_undo_takes_back_one_event_and_is_itself_logged(table):
    table.apply({"type": "throw", "side": "A", "cup": "yellow"})
    state = table.undo()
    assert state["scores"]["A"] == 0 and state["to_act"] == ["A"]
    assert table.log.events(table.game_id)[-1]["type"] == "undo"
    table.undo()
    table.undo()
    with pytest.raises(RuleError) as err:
        table.undo()
    assert err.value.code == "NOTHING_TO_UNDO"


def test_subscribers_see_every_change(table):
    seen = []
    unsubscribe = table.subscribe(lambda s: seen.append(s["scores"]["A"]))
    table.apply({"type": "throw", "side": "A", "cup": "yellow"})
    table.undo()
    unsubscribe()
    table.apply({"type": "throw", "side": "A", "cup": "red"})
    assert seen == [5, 0]


def test_proposals_wait_for_confirmation_and_the_rules_still_decide(table):
    p = table.propose({"type": "throw", "side": "A", "cup": "red"}, evidence={"slot": "A/red/2", "frames": 12})
    assert table.state()["scores"]["A"] == 0
    assert table.state()["pending"][0]["evidence"]["frames"] == 12
    state = table.confirm(p.id, source="button")
    assert state["scores"]["A"] == 4 and state["pending"] == []
    stored = table.log.events(table.game_id)[-1]
    assert stored["source"] == "button" and stored["proposed_by"] == "camera", "the log says who did what"
    bad = table.propose({"type": "throw", "side": "A", "cup": "red"})  # B is on turn now
    with pytest.raises(RuleError) as err:
        table.confirm(bad.id)
    assert err.value.code == "NOT_YOUR_TURN"
    assert table.pending() == []
    rejected = table.propose({"type": "throw", "side": "B", "cup": "red"})
    table.reject(rejected.id)
    assert table.state()["scores"]["B"] == 0
    with pytest.raises(RuleError):
        table.confirm(rejected.id)


def test_queued_proposals_wait_for_their_turn(table):
    """The camera may see A's, B's and A's next throw before anyone confirms: A's second throw is
    refused right now but becomes legal in turn, so it must not be dropped."""
    a1 = table.propose({"type": "throw", "side": "A", "cup": "red"})
    b1 = table.propose({"type": "throw", "side": "B", "cup": "blue"})
    a2 = table.propose({"type": "throw", "side": "A", "cup": "green"})
    for p in (a1, b1, a2):
        table.confirm(p.id)
    assert table.state()["scores"] == {"A": 6, "B": 6}


def test_proposals_are_dropped_when_the_game_ends(table):
    for cup in ["yellow", "yellow", "yellow", "red"]:
        table.apply({"type": "throw", "side": "A", "cup": cup})
        table.apply({"type": "throw", "side": "B", "cup": "miss"})
    table.propose({"type": "throw", "side": "B", "cup": "red"})
    table.apply({"type": "throw", "side": "A", "cup": "green"})  # 21: A wins
    assert table.pending() == []


def test_export_replays_to_the_same_state(tmp_path, table):
    table.apply({"type": "throw", "side": "A", "cup": "yellow"})
    table.apply({"type": "throw", "side": "B", "cup": "green"})
    table.undo()
    log = tmp_path / "export.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in table.export(table.game_id)))
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log)], capture_output=True,
                         text=True, timeout=60)
    replayed = json.loads(out.stdout)
    state = table.state()
    assert replayed["scores"] == state["scores"] and replayed["to_act"] == state["to_act"]
    assert [e["type"] for e in table.export(table.game_id, raw=True)][-1] == "undo"


def test_a_new_game_keeps_the_old_one_in_the_log(table):
    first = table.game_id
    table.start({**NEW, "sides": [{"name": "X"}, {"name": "Y"}]})
    assert table.game_id != first
    assert [g["id"] for g in table.games()] == [table.game_id, first]
    assert table.state()["players"] == ["X", "Y"]


def test_a_refused_new_game_keeps_the_current_game(table):
    with pytest.raises(RuleError):
        table.start({**NEW, "sides": [{"name": "X"}]})
    assert table.state()["players"] == ["A", "B"]
    assert len(table.games()) == 1


# -- restoring never stops the table from starting ------------------------------------------------

def append_raw(path, game_id: int, body: str) -> None:
    """Write a row behind the table's back, as an older version, a hand edit or a bad disk might."""
    import sqlite3

    db = sqlite3.connect(str(path))
    with db:
        (seq,) = db.execute("SELECT MAX(seq) FROM events WHERE game_id = ?", (game_id,)).fetchone()
        db.execute("INSERT INTO events (game_id, seq, type, source, at, body) VALUES (?, ?, 'throw', NULL, ?, ?)",
                   (game_id, seq + 1, "2024-05-01T20:00:00Z", body))
    db.close()


def test_a_stored_row_the_rules_refuse_is_skipped_and_reported_at_restart(tmp_path, table, caplog):
    table.apply({"type": "throw", "side": "A", "cup": "yellow"})
    path = tmp_path / "table.sqlite"
    table.close()
    append_raw(path, 1, '{"type":"throw","side":"A","cup":"purple"}')  # line 5
    append_raw(path, 1, "not json at all")  # line 6
    append_raw(path, 1, json.dumps(DICE_A))  # line 7: A's dice are set already
    with caplog.at_level("WARNING"):
        again = Table(path)
    state = again.state()
    assert state["game_id"] == 1 and state["scores"]["A"] == 5
    assert [(r["line"], r["code"]) for r in state["rejected"]] == [(5, "BAD_VALUE"), (6, "BAD_EVENT"),
                                                                    (7, "DICE_ALREADY_SET")]
    assert "stored row 5 skipped" in caplog.text
    # the game goes on; an undo takes back the last event the players see, as `companion replay` does
    again.undo()
    assert again.state()["scores"]["A"] == 0
    again.apply({"type": "throw", "side": "A", "cup": "blue"})
    again.close()
    restarted = Table(path)
    assert restarted.state()["scores"]["A"] == 3 and len(restarted.state()["rejected"]) == 3
    restarted.close()


def test_a_game_whose_new_game_row_is_refused_leaves_the_table_empty_but_running(tmp_path):
    import sqlite3

    path = tmp_path / "table.sqlite"
    Table(path).close()
    db = sqlite3.connect(str(path))
    with db:
        db.execute("INSERT INTO games (id, game, created) VALUES (1, 'chess', '2024-05-01T20:00:00Z')")
        db.execute("INSERT INTO events VALUES (1, 1, 'new_game', NULL, '2024-05-01T20:00:00Z', "
                   "'{\"type\":\"new_game\",\"game\":\"chess\"}')")
    db.close()
    table = Table(path)
    assert table.state()["game"] is None and "cannot be restored" in table.notices[0]
    table.start(NEW)
    assert table.state()["game_id"] == 2
    table.close()


def test_a_file_that_is_not_a_database_is_kept_aside_and_a_new_log_started(tmp_path):
    path = tmp_path / "table.sqlite"
    path.write_bytes(b"this was a shopping list, not a database\n" * 100)
    table = Table(path)
    assert table.state()["game"] is None
    kept = list(tmp_path.glob("table.sqlite.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this was a shopping list")
    assert kept[0].name in table.notices[0]
    table.start(NEW)
    table.close()
    assert Table(path).state()["game"] == "exact21"


# -- resuming an unfinished game ------------------------------------------------------------------

def left_behind(table) -> dict:
    """Game 1 half played (A 5 points, B to throw) and left for game 2 with a camera proposal
    pending; returns game 1's state as it was left."""
    table.apply({"type": "throw", "side": "A", "cup": "yellow"})
    table.apply({"type": "throw", "side": "B", "cup": "miss"})
    table.apply({"type": "throw", "side": "A", "cup": "miss"})
    left = table.state()
    assert left["scores"] == {"A": 5, "B": 0} and left["to_act"] == ["B"]
    table.start({**NEW, "sides": [{"name": "X"}, {"name": "Y"}]}, replace=True)
    table.propose({"type": "dice", "side": "X", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 4}})
    return left


def test_a_resumed_game_is_the_current_one_exactly_as_it_was_left(table):
    left = left_behind(table)
    seen = {left["rev"], table.rev}
    told: list[dict] = []
    table.subscribe(told.append)
    state = table.resume(1, source="phone")
    assert state["game_id"] == 1 and table.game_id == 1
    for key in ("players", "scores", "to_act", "detail", "legal", "seq", "finished"):
        assert state[key] == left[key], key
    assert state["pending"] == [] and table.pending() == [], "the camera's proposal was for game 2"
    assert state["rev"] not in seen, "a rev a phone saw before must never come back"
    assert told and told[-1]["game_id"] == 1 and told[-1]["rev"] == state["rev"]
    assert table.log.events(1)[-1]["type"] == "resume"
    # play goes on in game 1's log; an undo takes back its last event, not the resume
    table.apply({"type": "throw", "side": "B", "cup": "red"})
    assert table.state()["scores"] == {"A": 5, "B": 4}
    table.undo()
    assert table.state()["scores"] == {"A": 5, "B": 0} and table.state()["to_act"] == ["B"]
    assert [r["type"] for r in table.log.events(2)] == ["new_game"], "the game that was left is untouched"


def test_the_resumed_game_stays_current_after_a_restart_and_its_export_is_complete(tmp_path, table):
    left_behind(table)
    table.resume(1)
    table.apply({"type": "throw", "side": "B", "cup": "blue"})
    before = table.state()
    table.close()

    again = Table(tmp_path / "table.sqlite")
    after = again.state()
    assert after["game_id"] == 1, "a restart comes back to the resumed game, not to the newest one"
    assert after["scores"] == before["scores"] == {"A": 5, "B": 6} and after["to_act"] == ["A"]
    assert after["rev"] == before["rev"]
    assert [e["type"] for e in again.export(1)] == ["new_game", "dice", "dice"] + ["throw"] * 4
    log = tmp_path / "game-1.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in again.export(1, raw=True)))
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["scores"] == {"A": 5, "B": 6}, "the raw log with its resume row replays"

    # a game started after the resume is the current one after the next restart
    again.start({**NEW, "sides": [{"name": "P"}, {"name": "Q"}]}, replace=True)
    again.close()
    third = Table(tmp_path / "table.sqlite")
    assert third.game_id == 3 and third.state()["players"] == ["P", "Q"]
    third.close()


def test_resume_refuses_an_unknown_game_a_finished_one_and_leaving_an_unfinished_one(table):
    left_behind(table)  # game 2 (X/Y) is current, unfinished
    table.start(NEW, replace=True)  # game 3: played to the end below
    table.apply(DICE_A)
    table.apply(DICE_B)
    for _ in range(4):  # A: four yellows (20), B misses; then the silver cup wins (E10, E11)
        table.apply({"type": "throw", "side": "A", "cup": "yellow"})
        table.apply({"type": "throw", "side": "B", "cup": "miss"})
    table.apply({"type": "throw", "side": "A", "cup": "silver"})
    assert table.state()["finished"]
    assert [(g["id"], g["finished"]) for g in table.games()] == [(3, True), (2, False), (1, False)]

    table.resume(2)  # leaving a finished game needs no confirmation
    rows = {g: len(table.log.events(g)) for g in (1, 2, 3)}
    for game_id, replace, code in [(99, True, "NO_SUCH_GAME"), (-1, True, "NO_SUCH_GAME"),
                                   (2**70, True, "NO_SUCH_GAME"), (3, True, "GAME_OVER"),
                                   (1, False, "GAME_IN_PROGRESS")]:
        with pytest.raises(RuleError) as err:
            table.resume(game_id, replace=replace)
        assert err.value.code == code, game_id
        assert table.game_id == 2
    with pytest.raises(RuleError) as err:
        table.resume(1, replace=True, expect="2-1")  # made on game 2 before its resume row
    assert err.value.code == "STALE"
    assert {g: len(table.log.events(g)) for g in (1, 2, 3)} == rows, "a refused resume stores nothing"
    state = table.resume(2, expect=table.rev)  # the current game: nothing to do, nothing stored
    assert state["game_id"] == 2 and len(table.log.events(2)) == rows[2]
    assert table.resume(1, replace=True)["scores"] == {"A": 5, "B": 0}


def test_a_damaged_log_is_never_put_aside_over_one_put_aside_before(tmp_path):
    """The name put aside has the time to the second. A Pi with no clock battery starts again at
    the same saved time after a power cut, so the name can repeat: rename() then replaced the
    earlier file, and every game in it was gone. Now the new one gets a name of its own."""
    from datetime import datetime, timedelta

    path = tmp_path / "table.sqlite"
    now = datetime.now()
    earlier = {}
    for t in (now, now + timedelta(seconds=1)):  # whichever second the rename falls in
        name = f"table.sqlite.corrupt-{t.strftime('%Y%m%d-%H%M%S')}"
        earlier[name] = f"games of the first power cut ({name})\n".encode() * 100
        (tmp_path / name).write_bytes(earlier[name])
    path.write_bytes(b"damaged again\n" * 100)
    table = Table(path)
    assert table.state()["game"] is None
    table.close()
    for name, data in earlier.items():
        assert (tmp_path / name).read_bytes() == data
    kept = [p for p in tmp_path.glob("table.sqlite.corrupt-*") if p.name not in earlier]
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"damaged again")
    assert kept[0].name in table.notices[0]


def test_the_next_stock_card_never_reaches_the_phones(table):
    """Stack 21 with a known stock: the state every phone is sent offers the draw without naming
    the face-down card (anyone could read it in the browser); the draw, sent as offered, takes
    the stock's top card."""
    table.start({"type": "new_game", "game": "stack21", "players": ["P1", "P2"]})
    table.apply({"type": "deal", "dealer": "P2", "hands": {"P1": ["A", "6", "10", "9"], "P2": ["5", "5", "8", "2"]},
                 "upcard": "7", "stock": ["4", "10", "3"]})
    state = table.state()
    draws = [a for a in state["legal"] if a["type"] == "draw"]
    assert draws and all("card" not in a for a in draws)
    assert '"4"' not in json.dumps(state["legal"]) and '"4", "10", "3"' not in json.dumps(state)
    table.apply(draws[0])
    assert table.state()["detail"]["hand"]["card"] == "4"  # drawn: now everyone sees it
