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
