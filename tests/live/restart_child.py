"""A companion process for tests/live/test_restart.py: the live path (camera → watch → proposals →
auto-confirm → SQLite table) on the synthetic 21 Exact table, whose camera shows the game as it
stands at wall-clock time (the table goes on while the service is down).

    python tests/live/restart_child.py DATA_DIR T0 GAP
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from synthetic_table import SlotWatch, synthetic_game

from companion.hardware import NullPanel
from companion.live.camera import ResilientCamera, TimedSource
from companion.live.confirm import Confirmer
from companion.live.loop import Live
from companion.table import Table


def main() -> int:
    data_dir, t0, gap = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    game = synthetic_game(width=320, height=180, fps=30, gap=gap)
    table = Table(data_dir / "table.sqlite")  # after a crash: the last game, replayed from the log
    if table.game is None:
        table.start(game.setup[0], source="cli")
        for event in game.setup[1:]:
            table.apply(event, source="cli")

    def wall_clock_frames():
        i = 0
        while (t := time.time() - t0) <= game.duration:
            yield t, game.render(max(t, 0.0), i)
            i += 1
            time.sleep(1 / game.fps)

    camera = ResilientCamera(lambda: TimedSource(wall_clock_frames, speed=None, name="table"))
    confirmer = Confirmer(table, NullPanel("restart test"), auto_seconds=0.05)
    live = Live(camera, table, [SlotWatch(game.slots, table.state, settle=3)], confirmer=confirmer)
    live.start()
    print("started", flush=True)
    deadline = time.time() + game.duration + 20
    while not table.state()["finished"] and time.time() < deadline:
        time.sleep(0.05)
    live.stop()
    print(json.dumps({"winners": table.state()["winners"], "seq": table.state()["seq"]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
