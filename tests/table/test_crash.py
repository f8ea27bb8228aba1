"""Crash safety: a separate process appends events and is killed with SIGKILL at random moments;
every event whose append returned is in the log afterwards, and the log replays cleanly."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from companion.table import Table

WRITER = textwrap.dedent("""
    import sys
    from companion.table import Table
    table = Table(sys.argv[1])
    if table.game is None:
        table.start({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
        table.apply({"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
        table.apply({"type": "dice", "side": "B", "values": {"blue": 6, "red": 4, "green": 3, "yellow": 1}})
    print("ready", flush=True)
    while True:
        side = table.state()["to_act"][0]
        table.apply({"type": "throw", "side": side, "cup": "miss"}, source="test")
        print(len(table.log.events(table.game_id)), flush=True)  # the append has returned
""")


@pytest.mark.slow
def test_sigkill_never_loses_an_appended_event(tmp_path):
    path = tmp_path / "table.sqlite"
    rng = random.Random(7)
    confirmed = 0
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        counts = [int(x) for x in out.split()]
        if counts:
            confirmed = max(confirmed, counts[-1])
        table = Table(path)  # the log replays cleanly after every kill
        stored = len(table.log.events(table.game_id))
        assert stored >= confirmed, f"{confirmed} rows were confirmed, {stored} are stored"
        assert table.state()["seq"] == stored
        table.close()
    assert confirmed > 10, "the writer appended events before being killed"
