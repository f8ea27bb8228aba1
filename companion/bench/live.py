"""``companion bench live``: end-to-end delay from the camera frame in which a cup left the table
(or a ball came to rest in a cup that stays) to the scoreboard update on a phone, and the
memory of the service doing it.

Everything runs for real, in real time: the demo's rendered table as the camera
(:class:`~companion.sim.rendered_table.RenderedTable`) → :class:`~companion.live.loop.Live` with
the real vision (calibration, dice, cup watch) → proposals → the confirm step (auto-confirm
after ``--auto-seconds``, as in the demo) → the SQLite table → the scoreboard server (waitress on
loopback) → one phone's Server-Sent Events stream, read by this process. The delay of a throw is
the time its state arrived on that stream minus the wall time of the frame in which the cup
left (made cups) or the ball landed (a ball resting in a cup that stays: overshoot, silver).
Memory is this whole process's resident set (peak and at the end): camera loop, vision, table
and web server together.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
import urllib.request
from typing import Any

from companion.bench import machine, memory_mb


def _stream(url: str, arrivals: dict[int, float], stop: threading.Event) -> None:
    """Read the scoreboard's SSE stream; note when each event count (``seq``) first arrives."""
    with urllib.request.urlopen(url, timeout=120) as resp:
        data = []
        for raw in resp:
            if stop.is_set():
                return
            line = raw.decode().rstrip("\n")
            if line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                try:
                    state = json.loads("\n".join(data))
                except ValueError:
                    state = {}
                data = []
                seq = state.get("seq")
                if isinstance(seq, int):
                    arrivals.setdefault(seq, time.monotonic())


def measure(seed: int, speed: float, auto_seconds: float, data_dir: str) -> dict[str, Any]:
    from companion.config import load
    from companion.live.service import Service
    from companion.sim.rendered_table import for_config
    from companion.web.server import start

    config = load(None, {"camera": {"source": "render", "render_seed": seed, "render_speed": speed},
                         "confirm": {"auto_seconds": auto_seconds}, "panel": {"enabled": False},
                         "data": {"dir": data_dir}, "server": {"pin": "0000"}})
    service = Service(config, rendered=for_config(config))
    server = start(service.app, "127.0.0.1", 0, threads=16)
    arrivals: dict[int, float] = {}
    applied: list[tuple[int, dict[str, Any]]] = []
    stop = threading.Event()

    def on_change(state: dict[str, Any]) -> None:
        if state.get("seq") and service.table.game is not None:
            event = service.table.game.events[-1]
            if not applied or applied[-1][0] != state["seq"]:
                applied.append((state["seq"], event))

    service.table.subscribe(on_change)
    reader = threading.Thread(target=_stream, args=(server.url + "/api/stream", arrivals, stop), daemon=True)
    reader.start()
    time.sleep(0.5)  # the phone is connected before the game starts
    service.start()
    rendered = service.rendered
    assert rendered is not None
    limit = time.monotonic() + (rendered.duration + rendered.intro) / speed + 30
    while time.monotonic() < limit and not service.table.state().get("finished"):
        time.sleep(0.2)
    time.sleep(0.5)
    health = service.live.health()
    now_mb, peak_mb = memory_mb()
    stop.set()
    service.stop()
    server.stop()
    state = service.table.state()

    assert rendered.started is not None
    def wall(game_t: float) -> float:
        return rendered.started + (game_t + rendered.intro) / speed

    camera_throws = [(seq, e) for seq, e in applied if e.get("type") == "throw" and e.get("cup") != "miss"]
    truth = rendered.seq.truth
    delays, from_landing, missed = [], [], []
    for i, t in enumerate(truth):
        if i >= len(camera_throws):
            missed.append({"t": round(t.t, 2), "side": t.side, "cup": t.cup})
            continue
        seq, event = camera_throws[i]
        if (event.get("side"), event.get("cup")) != (t.side, t.cup) or seq not in arrivals:
            missed.append({"t": round(t.t, 2), "side": t.side, "cup": t.cup, "got": event})
            continue
        moment = t.left_t if t.kind == "made" and t.left_t is not None else t.t
        delays.append((arrivals[seq] - wall(moment)) * 1000)
        from_landing.append((arrivals[seq] - wall(t.t)) * 1000)
    extra = len(camera_throws) - len(truth)

    def summary(ms: list[float]) -> dict[str, float | None]:
        if not ms:
            return {"median_ms": None, "p95_ms": None, "max_ms": None}
        ordered = sorted(ms)
        return {"median_ms": round(statistics.median(ordered), 1),
                "p95_ms": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1),
                "max_ms": round(ordered[-1], 1)}

    return {
        "machine": machine(), "seed": rendered.seq.seed, "speed": speed, "auto_confirm_s": auto_seconds,
        "throws_in_cups": len(truth), "scored_from_camera": len(delays), "missed": missed,
        "extra_camera_events": max(0, extra), "winner_scripted": rendered.winner, "winners": state.get("winners"),
        "cup_left_to_scoreboard": summary(delays), "ball_landed_to_scoreboard": summary(from_landing),
        "fps": health.get("fps"), "stages": health.get("stages"),
        "rss_mb": round(now_mb, 1), "peak_rss_mb": round(peak_mb, 1),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=10, help="the rendered game (default 10, the demo's)")
    parser.add_argument("--speed", type=float, default=1.0, help="1 = real time, as the demo plays")
    parser.add_argument("--auto-seconds", type=float, default=0.6, help="auto-confirm delay (the demo's 0.6 s)")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    import cv2

    cv2.setNumThreads(1)
    with tempfile.TemporaryDirectory() as tmp:
        report = measure(args.seed, args.speed, args.auto_seconds, os.path.join(tmp, "data"))
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"machine: {report['machine']}")
    print(f"rendered game seed {report['seed']} at speed {report['speed']}, auto-confirm {report['auto_confirm_s']} s")
    print(f"throws into cups: {report['throws_in_cups']}  scored from the camera: {report['scored_from_camera']}  "
          f"missed: {len(report['missed'])}  extra: {report['extra_camera_events']}  "
          f"winner: {report['winners']} (scripted {report['winner_scripted']})")
    for key, label in (("cup_left_to_scoreboard", "frame the cup left -> phone's scoreboard"),
                       ("ball_landed_to_scoreboard", "frame the ball landed -> phone's scoreboard")):
        s = report[key]
        print(f"{label}: median {s['median_ms']} ms, p95 {s['p95_ms']} ms, max {s['max_ms']} ms")
    stages = report["stages"] or {}
    print("loop: {} fps; per stage median/p95 ms: {}".format(report["fps"], ", ".join(
        f"{k} {v.get('median_ms')}/{v.get('p95_ms')}" for k, v in stages.items())))
    print(f"memory of the whole service (camera loop, vision, table, web): RSS {report['rss_mb']} MB, "
          f"peak {report['peak_rss_mb']} MB")
    for m in report["missed"]:
        print(f"  missed: {m}")
    return 0
