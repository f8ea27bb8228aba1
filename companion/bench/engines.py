"""``companion bench engines``: seeded random play of every engine through its own legal
actions; prints games finished, errors, average length and replay speed."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from companion.bench import machine
from companion.games import ENGINES, get_engine
from companion.games.base import Game


def simulate(name: str, games: int, seed: int, max_events: int = 20000) -> dict:
    engine = get_engine(name)
    rng = random.Random(seed)
    lengths, errors, unfinished = [], [], 0
    extra: dict[str, list[float]] = {}
    logs = []
    t0 = time.perf_counter()
    for i in range(games):
        game = Game(engine, ng := engine.random_new_game(rng), engine.new_game(ng))
        try:
            while not engine.finished(game.state) and len(game.events) < max_events:
                game.push(engine.random_action(game.state, rng))
        except Exception as err:  # noqa: BLE001 - a simulation reports every failure
            errors.append(f"game {i}: {type(err).__name__}: {err}")
            continue
        if not engine.finished(game.state):
            unfinished += 1
        lengths.append(len(game.events) - 1)
        for key, value in getattr(engine, "stats", lambda s: {})(game.state).items():
            extra.setdefault(key, []).append(value)
        if len(logs) < 200:
            logs.append(game.events)
    play_s = time.perf_counter() - t0
    # replay speed: re-run the stored logs from scratch
    t0 = time.perf_counter()
    n = 0
    for events in logs:
        g = Game.start(events[0])
        for e in events[1:]:
            g.push(e)
            n += 1
    replay_s = time.perf_counter() - t0
    return {
        "game": name, "games": games, "seed": seed, "errors": errors[:10], "error_count": len(errors),
        "unfinished": unfinished,
        "events_per_game": round(statistics.fmean(lengths), 1) if lengths else None,
        **{f"avg_{k}": round(statistics.fmean(v), 2) for k, v in extra.items()},
        "play_seconds": round(play_s, 2),
        "replay_events_per_second": round(n / replay_s) if replay_s else None,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", choices=list(ENGINES), action="append", help="default: all")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    results = [simulate(name, args.games, args.seed) for name in (args.game or ENGINES)]
    if args.json:
        print(json.dumps({"machine": machine(), "results": results}))
    else:
        print(f"machine: {machine()}")
        for r in results:
            print(json.dumps(r))
    return 1 if any(r["error_count"] for r in results) else 0
