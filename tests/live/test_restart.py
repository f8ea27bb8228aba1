"""SIGKILL in the middle of a game, start again: same game, same state, nothing lost, nothing
counted twice — even the cups taken while the service was down (RULES.md E8, E12)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.games.base import Game
from companion.table import EventLog
from tests.live.synthetic_table import synthetic_game

pytestmark = pytest.mark.slow  # a service killed and restarted in subprocesses, ~12 s

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).resolve().parent / "restart_child.py"
GAP = 0.6


def start(data_dir: Path, t0: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(CHILD), str(data_dir), str(t0), str(GAP)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def stored(data_dir: Path) -> list[dict]:
    path = data_dir / "table.sqlite"
    if not path.exists():
        return []
    log = EventLog(path)
    try:
        game_id = log.latest_game()
        return log.events(game_id) if game_id is not None else []
    finally:
        log.close()


def test_E12_sigkill_mid_game_then_restart_finishes_the_same_game_with_nothing_lost(tmp_path: Path):
    game = synthetic_game(width=320, height=180, fps=30, gap=GAP)
    t0 = time.time() + 2.0  # the first cup leaves GAP seconds after t0
    first = start(tmp_path, t0)
    deadline = time.time() + 30
    while len(stored(tmp_path)) < 3 + 5 and time.time() < deadline:  # set-up + five throws
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
        time.sleep(0.05)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert first.returncode == -signal.SIGKILL
    before = stored(tmp_path)
    assert len(before) >= 8
    time.sleep(GAP * 1.5)  # the table goes on while the service is down: a cup or two leave

    second = start(tmp_path, t0)
    left_while_down = sum(1 for left in game.truth if left.t <= time.time() - t0)
    assert left_while_down > len(before) - 3  # more cups gone than the log knew at the kill
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    rows = stored(tmp_path)
    assert rows[:len(before)] == before  # what was stored before the kill is untouched
    assert not any(r["type"] == "undo" for r in rows)
    made = [(r["side"], r["cup"]) for r in rows if r["type"] == "throw"]
    expected = [(left.event["side"], left.event["cup"]) for left in game.truth]
    assert sorted(made) == sorted(expected)  # every cup once: none lost, none twice
    final = Game.start(rows[0])
    for row in rows[1:]:
        final.push(row)
    view = final.view()
    assert view["winners"] == ["A"] and view["scores"] == {"A": 21, "B": 15}
    assert '"winners": ["A"]' in out
