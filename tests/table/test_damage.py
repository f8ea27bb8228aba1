"""The damage matrix: a writer process acknowledges events and is killed with SIGKILL at a random
moment; then its files are damaged as a card, a person or a bug might damage them (a flipped byte
in the WAL, the WAL cut short or deleted, ``table.sqlite`` cut to nothing, the data directory
deleted while it runs). After each, every acknowledged event is back, or a notice names the game
and how many of its events were lost: nothing vanishes silently. Real SQLite files, a real
process, a real SIGKILL."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from companion.table import Table

WRITER = textwrap.dedent("""
    import sys
    from companion.table import Table
    NEW = {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}
    table = Table(sys.argv[1])
    print("ready", flush=True)
    while True:
        if table.game is None or not 3 <= len(table.log.events(table.game_id)) < 45:
            table.start(NEW, replace=True)
            table.apply({"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
            table.apply({"type": "dice", "side": "B", "values": {"blue": 6, "red": 4, "green": 3, "yellow": 1}})
        side = table.state()["to_act"][0]
        table.apply({"type": "throw", "side": side, "cup": "miss", "note": "x" * 300}, source="test")
        # the append has returned: this event is acknowledged
        print(table.game_id, len(table.log.events(table.game_id)), flush=True)
""")


def flip_wal_byte(d: Path, rng: random.Random) -> None:
    wal = d / "table.sqlite-wal"
    data = bytearray(wal.read_bytes())
    at = len(data) // 2 + rng.randrange(-1000, 1000)
    data[at] ^= 0x5A
    wal.write_bytes(bytes(data))


def cut_wal(d: Path, rng: random.Random) -> None:
    wal = d / "table.sqlite-wal"
    os.truncate(wal, wal.stat().st_size // 2)


def delete_wal(d: Path, rng: random.Random) -> None:
    for name in ("table.sqlite-wal", "table.sqlite-shm"):
        (d / name).unlink(missing_ok=True)


def cut_log_to_nothing(d: Path, rng: random.Random) -> None:
    os.truncate(d / "table.sqlite", 0)


DAMAGE = {"flip a WAL byte": flip_wal_byte, "cut the WAL": cut_wal, "delete the WAL": delete_wal,
          "cut table.sqlite to 0": cut_log_to_nothing}


def acknowledged(out: str) -> dict[int, int]:
    """Per game, the most rows the writer was told were stored."""
    acked: dict[int, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            acked[int(parts[0])] = max(acked.get(int(parts[0]), 0), int(parts[1]))
    return acked


def run_and_kill(path: Path, seconds: float, during=None) -> dict[int, int]:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    if during is not None:
        time.sleep(seconds / 2)
        during()
        time.sleep(seconds / 2)
    else:
        time.sleep(seconds)
    os.kill(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate()
    return acknowledged(out)


def silent_losses(table: Table, acked: dict[int, int]) -> list[str]:
    """Games whose acknowledged events are missing with no alert naming the game and the count."""
    alerts = {a["game_id"]: a["events"] for a in table.alerts if a["code"] == "EVENTS_LOST"}
    silent = []
    for game_id, rows in acked.items():
        stored = len(table.log.events(game_id))
        if stored < rows and alerts.get(game_id, 0) < rows - stored:
            silent.append(f"game {game_id}: {rows} acknowledged, {stored} stored, alert {alerts.get(game_id)}")
    return silent


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_after_sigkill_loses_no_acknowledged_event_silently(tmp_path, damage):
    rng = random.Random(sum(map(ord, damage)))
    d = tmp_path / "d"
    path = d / "table.sqlite"
    acked: dict[int, int] = {}
    for _ in range(2):
        for _ in range(5):  # killed just after a game's end, the WAL is empty: nothing to damage yet
            for game_id, rows in run_and_kill(path, rng.uniform(0.8, 2.0)).items():
                acked[game_id] = max(acked.get(game_id, 0), rows)
            if (d / "table.sqlite-wal").stat().st_size > 0:
                break
        assert (d / "table.sqlite-wal").stat().st_size > 0, "the WAL holds the latest events"
        DAMAGE[damage](d, rng)
        table = Table(path)
        try:
            assert silent_losses(table, acked) == []
            # every acknowledged event is back here: the journal beside the copy holds them all (and
            # perhaps the one being written when the writer was killed)
            assert all(len(table.log.events(g)) >= rows for g, rows in acked.items())
            assert table.game_id >= max(acked), "the table is not silently back to an older game"
            assert table.state()["seq"] > 0
        finally:
            table.close()
    assert sum(acked.values()) > 60


@pytest.mark.slow
def test_a_data_directory_deleted_while_serving_loses_nothing(tmp_path):
    """The writer goes on acknowledging events after its data directory is deleted; it is killed
    a moment later. Before, every event of every game was gone at the next start, with no word."""
    d = tmp_path / "d"
    path = d / "table.sqlite"
    acked = run_and_kill(path, 3.0, during=lambda: shutil.rmtree(d))
    assert len(acked) >= 2
    table = Table(path)
    try:
        assert silent_losses(table, acked) == []
        assert all(len(table.log.events(g)) >= rows for g, rows in acked.items())
    finally:
        table.close()


def test_the_deleted_log_is_written_again_before_the_next_event_is_acknowledged(tmp_path):
    d = tmp_path / "d"
    table = Table(d / "table.sqlite")
    table.start({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    shutil.rmtree(d)
    table.apply({"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    assert (d / "table.sqlite").exists() and (d / "table.copy.sqlite").exists()
    assert [a["code"] for a in table.state()["alerts"]] == ["LOG_REWRITTEN"]
    assert "nothing was lost" in table.alerts[0]["message"]
    table.close()
    again = Table(d / "table.sqlite")
    assert again.state()["seq"] == 2 and again.alerts == []
    again.close()


def test_events_the_copies_cannot_give_back_are_named_with_their_game(tmp_path):
    """The log and its journal both damaged: the rows no file holds any more are a gap in the
    game, and the alert says which game and how many."""
    import sqlite3

    d = tmp_path / "d"
    table = Table(d / "table.sqlite")
    table.start({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    table.apply({"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    table.apply({"type": "dice", "side": "B", "values": {"blue": 6, "red": 4, "green": 3, "yellow": 1}})
    for _ in range(6):
        table.apply({"type": "throw", "side": table.state()["to_act"][0], "cup": "miss"})
    table.close()
    db = sqlite3.connect(str(d / "table.sqlite"))
    with db:
        db.execute("DELETE FROM events WHERE game_id = 1 AND seq IN (4, 5)")
    db.close()
    (d / "table.copy.sqlite").unlink()
    table = Table(d / "table.sqlite")
    try:
        assert [(a["code"], a["game_id"], a["events"]) for a in table.alerts] == [("EVENTS_LOST", 1, 2)]
        assert "game 1: 2 recorded events were lost" in table.notices[0]
        assert table.state()["alerts"][0]["code"] == "EVENTS_LOST"
    finally:
        table.close()
