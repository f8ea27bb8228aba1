"""``companion bench replay``: how fast `companion replay` gets through long logs.

For each game a seeded random player writes a log of N events (default 10,000) from the engine's
own legal actions; when a game ends, an ``undo`` takes the last event back so the log can go on.
The log is then replayed the way ``companion replay`` does it (parse JSON Lines, apply every
event), several times; the median is reported, plus one run of the real command."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from companion.bench import machine
from companion.games import ENGINES, get_engine
from companion.games.base import Game
from companion.games.replay import read_jsonl, replay


def write_log(name: str, events: int, seed: int, path: Path) -> None:
    engine = get_engine(name)
    rng = random.Random(seed)
    new = engine.random_new_game(rng)
    game = Game(engine, new, engine.new_game(new))
    with path.open("w") as f:
        f.write(json.dumps(new) + "\n")
        for _ in range(events - 1):
            if engine.finished(game.state):
                game.pop()
                event = {"type": "undo"}
            else:
                event = engine.random_action(game.state, rng)
                game.push(event)
            f.write(json.dumps(event) + "\n")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=10_000, help="events per log (default 10,000)")
    parser.add_argument("--runs", type=int, default=5, help="replays per log; the median is reported")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", choices=list(ENGINES), action="append", help="default: every game")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.game or ENGINES:
            try:
                get_engine(name)
            except ImportError:
                continue
            log = Path(tmp) / f"{name}.jsonl"
            write_log(name, args.events, args.seed, log)
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                with log.open() as f:
                    replay(read_jsonl(f))
                times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "companion", "replay", "--compact", str(log)],
                                 capture_output=True, text=True)
            command_s = time.perf_counter() - t0
            median = statistics.median(times)
            results.append({"game": name, "events": args.events, "median_seconds": round(median, 3),
                            "events_per_second": round(args.events / median),
                            "command_seconds": round(command_s, 3), "command_exit": out.returncode})
    report = {"machine": machine(), "runs": args.runs, "results": results}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"machine: {report['machine']}")
        for r in results:
            print(f"{r['game']:>10}: {r['events']} events, median {r['median_seconds']} s "
                  f"= {r['events_per_second']} events/s; `companion replay` {r['command_seconds']} s "
                  f"(exit {r['command_exit']})")
    return 0
