"""``companion bench web``: many phones streaming the scoreboard on loopback.

Starts the real server (``companion serve`` in its own process, waitress on 127.0.0.1), opens
``--clients`` Server-Sent-Events streams, then posts ``--events`` 21 Exact events one at a time
(a seeded game through the engine's legal actions, a new game when one ends). For every event it
measures, from the moment the POST is sent, how long until each stream has the new state:
per delivery (median, p95, max) and until the *last* stream has it (median, p95). It reports the
server's memory (RSS) before the streams, with them, and after the events, and the machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from companion.bench import machine, memory_mb
from companion.games import get_engine
from companion.games.base import Game

PIN = "2121"
VERSION = re.compile(rb'"version":(\d+)')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", type=int, default=100, help="open streams (phones), default 100")
    parser.add_argument("--events", type=int, default=40, help="events to post, default 40")
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between events, default 0.05")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])




class Streams:
    """``n`` SSE clients read by one selector thread; records when each saw each version."""

    def __init__(self, port: int, n: int):
        self.sel = selectors.DefaultSelector()
        self.seen: list[dict[int, float]] = [{} for _ in range(n)]
        self.bufs = [b""] * n
        self.cond = threading.Condition()
        self.stop = False
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /api/stream HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ, i)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while not self.stop:
            for key, _ in self.sel.select(timeout=0.2):
                now = time.perf_counter()
                i = key.data
                try:
                    chunk = key.fileobj.recv(262144)
                except BlockingIOError:
                    continue
                if not chunk:
                    self.sel.unregister(key.fileobj)
                    continue
                buf = self.bufs[i] + chunk
                *blocks, rest = buf.split(b"\n\n")
                self.bufs[i] = rest
                got = [int(m.group(1)) for b in blocks if b"data: " in b for m in [VERSION.search(b)] if m]
                if got:
                    with self.cond:
                        for v in got:
                            self.seen[i].setdefault(v, now)
                        self.cond.notify_all()

    def wait_all(self, version: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not all(any(v >= version for v in s) for s in self.seen):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=2)
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()


def post(conn: http.client.HTTPConnection, path: str, body: dict[str, Any]) -> dict[str, Any]:
    conn.request("POST", path, body=json.dumps(body),
                 headers={"Content-Type": "application/json", "X-Table-Pin": PIN})
    response = conn.getresponse()
    data = json.loads(response.read())
    if response.status >= 400:
        raise RuntimeError(f"{path}: {response.status} {data}")
    return data


def start_server(data_dir: str, port: int, threads: int) -> subprocess.Popen:
    env = {**os.environ, "COMPANION_PIN": PIN}
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--data-dir", data_dir, "--threads", str(threads)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=data_dir)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not start within 20 s")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench(clients: int, events: int, gap: float, seed: int) -> dict[str, Any]:
    engine = get_engine("exact21")
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="companion-bench-web-") as data_dir:
        port = free_port()
        proc = start_server(data_dir, port, threads=clients + 16)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            new_game = engine.random_new_game(rng)
            post(conn, "/api/games", new_game)
            game = Game(engine, new_game, engine.new_game(new_game))
            rss_idle = round(memory_mb(proc.pid)[0], 1)
            streams = Streams(port, clients)
            conn.request("GET", "/api/state")
            first = json.loads(conn.getresponse().read())["version"]
            if not streams.wait_all(first, 20):
                raise RuntimeError("not every stream got the first state")
            rss_streams = round(memory_mb(proc.pid)[0], 1)
            delivery, to_all, post_ms, missed = [], [], [], 0
            for _ in range(events):
                if engine.finished(game.state):
                    new_game = engine.random_new_game(rng)
                    game = Game(engine, new_game, engine.new_game(new_game))
                    event = new_game
                else:
                    event = engine.random_action(game.state, rng)
                    game.push(event)
                t0 = time.perf_counter()
                state = post(conn, "/api/games" if event["type"] == "new_game" else "/api/events", event)
                post_ms.append((time.perf_counter() - t0) * 1000)
                version = state["version"]
                if not streams.wait_all(version, 5):
                    missed += sum(1 for s in streams.seen if version not in s)
                times = [s[version] - t0 for s in streams.seen if version in s]
                delivery.extend(t * 1000 for t in times)
                if times:
                    to_all.append(max(times) * 1000)
                time.sleep(gap)
            rss_after = round(memory_mb(proc.pid)[0], 1)
            streams.close()
            conn.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
    r2 = lambda x: round(x, 2)  # noqa: E731
    return {
        "clients": clients, "events": events, "deliveries": len(delivery), "missed": missed,
        "latency_ms": {"median": r2(statistics.median(delivery)), "p95": r2(pct(delivery, 0.95)),
                       "max": r2(max(delivery))},
        "to_every_client_ms": {"median": r2(statistics.median(to_all)), "p95": r2(pct(to_all, 0.95))},
        "post_ms": {"median": r2(statistics.median(post_ms)), "p95": r2(pct(post_ms, 0.95))},
        "server_rss_mb": {"idle": rss_idle, "with_streams": rss_streams, "after_events": rss_after},
        "target_p95_ms": 50, "machine": machine(),
    }


def run(args: argparse.Namespace) -> int:
    result = bench(args.clients, args.events, args.gap, args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    lat, all_, mem = result["latency_ms"], result["to_every_client_ms"], result["server_rss_mb"]
    print(f"{result['clients']} streams, {result['events']} events, {result['deliveries']} deliveries, "
          f"{result['missed']} missed")
    print(f"event sent -> a stream has it: median {lat['median']} ms, p95 {lat['p95']} ms, max {lat['max']} ms")
    print(f"event sent -> every stream has it: median {all_['median']} ms, p95 {all_['p95']} ms (target p95 <= 50 ms)")
    print(f"POST round trip: median {result['post_ms']['median']} ms, p95 {result['post_ms']['p95']} ms")
    print(f"server RSS: {mem['idle']} MB idle, {mem['with_streams']} MB with streams, {mem['after_events']} MB after")
    print(f"machine: {result['machine']}")
    return 0
