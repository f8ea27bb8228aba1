"""``companion bench cups``: rendered 21 Exact games (hands, balls in flight, knocked cups, leaning
players, silver tallies; varied light, tilt, table, noise, blur) through calibration and the cup
watch. Prints false events, missed events, the delay from the throw to its proposal, and
milliseconds per 1280×720 frame on one core, with the machine. ``--light-colour B,G,R`` and
``--dim F`` play the same games under another light (a warm lamp, a cool window, a dim room)."""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from typing import Any

import cv2
import numpy as np

from companion.bench import at_least_one, bounded, machine, report
from companion.live.watch_cups import CupWatch
from companion.sim.render import Renderer, game_sequence
from companion.vision.calibrate import calibrate


def run_game(seed: int, fps: float = 15.0, colour: tuple[float, float, float] = (1.0, 1.0, 1.0),
             dim: float = 1.0) -> dict[str, Any]:
    seq = game_sequence(seed, fps=fps)
    # the same game under another light: its colour (B, G, R) and level
    seq.look = replace(seq.look, colour=colour, light=seq.look.light * dim)
    renderer = Renderer(seq.look, seq.layout, seed)
    frames = seq.frames(renderer)
    t, first = next(frames)
    t0 = time.perf_counter()
    cal = calibrate(first)
    calib_ms = (time.perf_counter() - t0) * 1000
    watch = CupWatch(cal)
    proposals: list[tuple[float, dict, dict]] = []
    render_ms: list[float] = []
    watch.feed(first, t)
    t1 = time.perf_counter()
    for t, frame in frames:
        render_ms.append((time.perf_counter() - t1) * 1000)
        for p in watch.feed(frame, t):
            proposals.append((t, p.event, p.evidence))
        t1 = time.perf_counter()
    # match: each real throw takes the first proposal for the same side and cup after it
    free = list(proposals)
    delays, left_delays, missed = [], [], []
    for truth in seq.truth:
        hit = next((p for p in free if p[1]["side"] == truth.side and p[1]["cup"] == truth.cup
                    and truth.t - 0.2 <= p[0] <= truth.t + 6.0), None)
        if hit is None:
            missed.append({"t": round(truth.t, 2), "side": truth.side, "cup": truth.cup, "kind": truth.kind})
            continue
        free.remove(hit)
        delays.append(hit[0] - truth.t)
        if truth.left_t is not None:
            left_delays.append(hit[0] - truth.left_t)
    false = [{"t": round(p[0], 2), **p[1], "evidence": p[2]} for p in free]
    return {"seed": seed, "frames": len(seq), "throws_in_cups": len(seq.truth), "false": false, "missed": missed,
            "delays": delays, "left_delays": left_delays, "ms": watch.frame_ms[1:], "render_ms": render_ms,
            "calib_ms": calib_ms, "nasty": seq.nasty, "status": watch.status,
            "look": {"tilt": round(seq.look.tilt_deg, 1), "light": round(seq.look.light, 2),
                     "ball": seq.look.ball, "noise": round(seq.look.noise, 1), "blur": seq.look.blur}}


def summarise(games: list[dict[str, Any]]) -> dict[str, Any]:
    ms = [m for g in games for m in g["ms"]]
    delays = [d for g in games for d in g["delays"]]
    left = [d for g in games for d in g["left_delays"]]
    nasty: dict[str, int] = {}
    for g in games:
        for k, v in g["nasty"].items():
            nasty[k] = nasty.get(k, 0) + v
    return {
        "machine": machine(),
        "games": len(games),
        "frames": sum(g["frames"] for g in games),
        "throws_in_cups": sum(g["throws_in_cups"] for g in games),
        "nasty_moments": nasty,
        "false_events": sum(len(g["false"]) for g in games),
        "missed_events": sum(len(g["missed"]) for g in games),
        "delay_s_median": round(statistics.median(delays), 3) if delays else None,
        "delay_s_max": round(max(delays), 3) if delays else None,
        "delay_from_cup_leaving_s_median": round(statistics.median(left), 3) if left else None,
        "delay_from_cup_leaving_s_max": round(max(left), 3) if left else None,
        "ms_per_frame_median": round(statistics.median(ms), 2) if ms else None,
        "ms_per_frame_p95": round(float(np.percentile(ms, 95)), 2) if ms else None,
        "render_ms_per_frame_median": round(statistics.median([m for g in games for m in g["render_ms"]]), 2),
        "calibration_ms_median": round(statistics.median(g["calib_ms"] for g in games), 1),
        "calibration_ms_max": round(max(g["calib_ms"] for g in games), 1),
        "frame": "1280x720, one core (cv2.setNumThreads(1))",
        "failures": [{"seed": g["seed"], "false": g["false"], "missed": g["missed"], "look": g["look"]}
                     for g in games if g["false"] or g["missed"]],
    }


_gain = bounded(float, 0.1, 3.0, "a factor on the light lies from 0.1 to 3")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=at_least_one("game"), default=20, help="how many rendered games (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="first game's seed; game i uses seed + i")
    parser.add_argument("--fps", type=bounded(float, 1.0, 120.0, "a camera's frames per second lie from 1 to 120"),
                        default=15.0, help="camera frames per second of the rendered games "
                        "(1 to 120, default 15)")
    parser.add_argument("--light-colour", type=_colour, default=(1.0, 1.0, 1.0), metavar="B,G,R",
                        help="the light's colour as blue, green, red gains (a warm lamp: 0.70,0.92,1.12; "
                             "a cool window: 1.15,1.0,0.85); default white")
    parser.add_argument("--dim", type=_gain, default=1.0, metavar="F", help="the light's level times F (default 1)")
    parser.add_argument("--json", action="store_true", help="one JSON object with the same figures")


def _colour(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"'{text}' is not three factors B,G,R (e.g. 0.70,0.92,1.12)")
    b, g, r = (_gain(v) for v in parts)
    return b, g, r


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)
    games = []
    for i in range(args.games):
        games.append(run_game(args.seed + i, args.fps, args.light_colour, args.dim))
        if not args.json:
            g = games[-1]
            print(f"game {g['seed']}: {g['throws_in_cups']} throws in cups, {len(g['false'])} false, "
                  f"{len(g['missed'])} missed, {statistics.median(g['ms']):.1f} ms/frame, look {g['look']}",
                  flush=True)
    summary = summarise(games)
    summary["light"] = {"colour_bgr": list(args.light_colour), "dim": args.dim}
    report(summary, args.json)
    return 0 if summary["false_events"] == 0 and summary["missed_events"] == 0 else 1
