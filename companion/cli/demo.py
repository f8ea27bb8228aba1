"""``companion demo``: a rendered 21 Exact table plays a whole game by itself through the real
pipeline — rendered frames → vision (calibration, dice, cups) → watch → proposals → confirm
(after a short delay) → table → scoreboard — in about a minute, then keeps serving the finished
game. "New demo game" on the controller (or ``POST /api/demo/new``) starts another one.

It is ``companion serve`` with ``[camera] source = "render"``, an auto-confirm delay, no GPIO,
the scoreboard on http://127.0.0.1:8000 and its data in ``./data/demo``."""

from __future__ import annotations

import argparse

from companion.cli import serve
from companion.config import option


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=option("server.port"), default=8000, help="port (default 8000)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address (default 127.0.0.1; 0.0.0.0 lets phones on the Wi-Fi join)")
    parser.add_argument("--data-dir", default="data/demo", help="where the demo's event log lives (default data/demo)")
    parser.add_argument("--seed", type=int, default=10,
                        help="which scripted game to play (default 10: a 56-second game)")
    parser.add_argument("--speed", type=float, default=1.0, help="play faster (2 = twice as fast)")
    parser.add_argument("--config", help="a companion.toml to start from")
    parser.add_argument("--threads", type=option("server.threads"), help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    extra = {"camera": {"source": "render", "render_seed": args.seed, "render_speed": args.speed},
             "confirm": {"auto_seconds": 0.6},
             "panel": {"enabled": False}}
    return serve.run(args, extra)
