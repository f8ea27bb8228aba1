"""The live benchmark's machinery on a small, fast run: every scripted cup reaches the table
through camera → Live → proposal → auto-confirm, in order, and the scripted side wins (E12)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from companion.bench.live import SlotWatch, measure_live, synthetic_game

ROOT = Path(__file__).resolve().parents[2]


def test_E12_every_cup_of_the_scripted_game_is_scored_and_side_a_wins():
    game = synthetic_game(width=320, height=180, fps=30, gap=0.5)
    result = measure_live(game.setup, game.frames, lambda table: [SlotWatch(game.slots, table.state, 3)],
                          game.truth, speed=2.0)
    assert (result["cups"], result["scored"], result["missed"], result["extra_events"]) == (17, 17, 0, 0)
    assert result["winners"] == ["A"]
    assert result["scored_ms"]["n"] == 17 and result["proposed_ms"]["n"] == 17
    assert result["scored_ms"]["median"] >= result["proposed_ms"]["median"]
    assert result["memory_mb"]["rss"] > 0


def test_bench_live_command_prints_its_figures_and_the_machine():
    out = subprocess.run([sys.executable, "-m", "companion", "bench", "live", "--width", "320", "--height", "180",
                          "--gap", "0.6", "--speed", "2", "--settle", "3"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "machine: " in out.stdout and "scored: 17  missed: 0" in out.stdout
    assert "frame -> scored" in out.stdout and "memory: RSS" in out.stdout
