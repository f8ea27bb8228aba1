"""``companion bench cups``: rendered 21 Exact games (hands, balls in flight, knocked cups, leaning
players, silver tallies; varied light, tilt, table, noise, blur) through calibration and the cup
watch. Prints false events, missed events, the delay from the throw to its proposal, and
milliseconds per 1280×720 frame on one core, with the machine. ``--light-colour B,G,R`` and
``--dim F`` play the same games under another light (a warm lamp, a cool window, a dim room).

``--sequences DIR [DIR ...]`` plays photo-realistic Blender sequences instead
(``tools/render/cup_scenes.py --sequence``: a set-up frame, the ball in flight, landed, after)
through the service's own processor, :class:`~companion.live.pipeline.TableVision`, on a real
table with a 21 Exact game started and no calibration file: it calibrates from the markers and
learns the cups from the set-up frame as the service does. Each frame is shown as a still camera
at ``--fps`` would show it (set-up 3 s, flight 2 frames, landed 2 s, after 3 s), each frame
stamped with its time (the markers and the cups are retried by the frames' times); ``--noise S``
adds a camera's fresh noise to each (sigma S grey levels; a still render repeated is a camera with
none). Prints whether
the cups were learnt (or the table's alert saying why not), the throws right, missed and false,
overall and per factor (make, tilt, light, cloth, event), and milliseconds per frame."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.bench import at_least_one, bounded, machine, report
from companion.bench.tables import factor_value, value_order
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


# -- photo-realistic sequences (tools/render/cup_scenes.py --sequence) -----------------------

NEW_GAME = {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}
# 21 Exact takes no throw before both sides' dice are set (E6): with them set the table waits for
# throws, as it does during a game, and the dice step stays idle as it then does
DICE = [{"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}},
        {"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 6}}]
# seconds a still camera shows each rendered phase: the players set up, the ball lands and rests
# (the watch wants 0.5 s of a ball resting, of a cup gone), the table afterwards; a flight is brief
SHOWN_S = {"setup": 3.0, "landed": 2.0, "after": 3.0}
FLIGHT_FRAMES = 2
SEQUENCE_FACTORS = ("make", "tilt", "light", "cloth")


def sequence_files(folders: list[str]) -> list[Path]:
    """Every ``DIR/sequences/sNNNNNN.json`` of the folders, in order."""
    return [p for folder in folders for p in sorted((Path(folder) / "sequences").glob("s*.json"))]


def expected_throw(seq: dict[str, Any]) -> dict[str, Any] | None:
    """The one throw a sequence's event is (none for a miss: the camera proposes no misses)."""
    if seq["event"] == "miss":
        return None
    cup = "silver" if seq["event"] == "silver" else seq["target"]["colour"]
    return {"type": "throw", "side": seq["side"], "cup": cup}


def expected_throws(seq: dict[str, Any]) -> list[dict[str, Any]]:
    """Every throw a sequence shows: its one event, or each of a short game's (``--throws``)."""
    return [t for t in (expected_throw(e) for e in seq.get("throws", [seq])) if t is not None]


def shown_frames(seq: dict[str, Any], folder: Path, fps: float) -> list[tuple[str, np.ndarray]]:
    """(phase, image) for each camera frame: each phase's render repeated as long as it is shown."""
    out: list[tuple[str, np.ndarray]] = []
    for f in seq["frames"]:
        image = cv2.imread(str(folder / f["image"]))
        if image is None:
            raise FileNotFoundError(f"{folder / f['image']}: missing or not an image")
        n = FLIGHT_FRAMES if f["phase"] == "flight" else max(1, round(SHOWN_S[f["phase"]] * fps))
        out += [(f["phase"], image)] * n
    return out


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


def camera_noise(image: np.ndarray, sigma: float) -> np.ndarray:
    """The image as a camera's frame: fresh Gaussian noise of ``sigma`` grey levels on every pixel
    and channel (OpenCV's generator: ``cv2.setRNGSeed`` makes it repeatable)."""
    if sigma <= 0:
        return image.copy()
    noise = np.empty(image.shape, np.int16)
    cv2.randn(noise.reshape(image.shape[0], -1), 0.0, sigma)   # (2-D: randn fills one channel of a 3-channel array)
    return cv2.add(image, noise, dtype=cv2.CV_8U)


def run_sequence(path: Path, fps: float = 15.0, noise: float = 0.0) -> dict[str, Any]:
    """One rendered sequence through :class:`TableVision` on a fresh table: what it learnt and proposed."""
    from companion.live.pipeline import TableVision
    from companion.table import Table

    seq = json.loads(path.read_text())
    folder = path.parent.parent
    setup = next(f for f in seq["frames"] if f["phase"] == "setup")
    factors = json.loads((folder / setup["meta"]).read_text()).get("factors", {})
    frames = shown_frames(seq, folder, fps)
    cv2.setRNGSeed(int(seq.get("seed", 0)))
    proposed: list[dict[str, Any]] = []
    ms: list[float] = []
    watching: list[bool | None] = []   # per frame: the cups watched, learnt before it (None: learnt in it)
    learnt_in = None
    setup_status, setup_alert = "", None
    with tempfile.TemporaryDirectory() as tmp:
        table = Table(Path(tmp) / "table.sqlite")
        try:
            table.start(NEW_GAME)
            for event in DICE:
                table.apply(event)
            # no calibration file yet: the markers calibrate it and the set-up frame's cups are
            # learnt, as at a service's first game
            vision = TableVision(table, calibration_file=Path(tmp) / "table-calibration.json")
            for i, (phase, image) in enumerate(frames):
                t = i / fps   # (TableVision retries by the frames' own times: no need to wait)
                watched = vision.cups is not None
                frame = camera_noise(image, noise)   # (a camera gives a fresh array each frame)
                t0 = time.perf_counter()
                got = vision.feed(frame, t)
                ms.append((time.perf_counter() - t0) * 1000)
                watching.append(watched if watched == (vision.cups is not None) else None)
                for p in got:
                    table.propose(p.event, "camera", p.evidence)   # as the live loop hands it on
                    proposed.append({"t": round(t, 2), "phase": phase, **p.event, "evidence": _plain(p.evidence)})
                if learnt_in is None and vision.cups is not None and vision.cal is not None \
                        and vision.cal.view_plane is not None:
                    learnt_in = phase
                if phase == "setup":
                    setup_status, setup_alert = vision.status, vision.health()["alert"]
            watch = vision.cups
            # what the watch decided silently (a cup turned, a cup taken out after its ball)
            watch_log = _plain(getattr(watch, "log", []))
            watch_status = getattr(watch, "status", None)
            read_ms = list(getattr(watch, "frame_ms", []))[1:]   # the frames it read (the first starts it)
            looks = int(getattr(watch, "looks", 0))
        finally:
            table.close()
    wanted = expected_throws(seq)
    expected: Any = wanted if "throws" in seq else (wanted[0] if wanted else None)
    left = list(wanted)   # each throw proposed once is right; a second proposal of it is false
    right = 0
    for p in proposed:
        hit = next((w for w in left if all(p[k] == v for k, v in w.items())), None)
        if hit is not None:
            left.remove(hit)
            right += 1
    return {"sequence": str(path), "event": seq["event"], "side": seq["side"], "target": seq["target"],
            "expected": expected, "learnt": learnt_in == "setup", "learnt_in": learnt_in,
            "not_learnt_why": None if learnt_in == "setup" else
            (setup_alert["message"] if setup_alert else setup_status),
            "proposed": proposed, "watch_status": watch_status, "watch_log": watch_log,
            "right": right, "missed": len(wanted) - right, "false": len(proposed) - right,
            "first_frame_ms": ms[0], "read_ms": read_ms, "looks": looks,
            # a frame that watches the cups costs the network; one that waits for them hardly anything
            "ms": [m for m, w in zip(ms, watching, strict=True) if w],
            "ms_waiting": [m for m, w in zip(ms[1:], watching[1:], strict=True) if w is False],
            "frames": len(frames), "size": [int(frames[0][1].shape[1]), int(frames[0][1].shape[0])],
            "factors": {**{k: factor_value(k, str(factors[k])) for k in SEQUENCE_FACTORS if k in factors},
                        "event": seq["event"]}}


def summarise_sequences(folders: list[str], runs: list[dict[str, Any]], noise: float = 0.0) -> dict[str, Any]:
    tally: Counter = Counter()
    per_factor: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in runs:
        ok = r["learnt"] and not r["missed"] and not r["false"]
        counts = Counter(sequences=1, sequences_right=int(ok), cups_learnt=int(r["learnt"]),
                         throws_expected=r["right"] + r["missed"], throws_right=r["right"],
                         throws_missed=r["missed"], throws_false=r["false"])
        tally.update(counts)   # update, not +=, which would drop the zeros
        for key, value in r["factors"].items():
            per_factor[key][value].update(counts)
    ms = [m for r in runs for m in r["ms"]]
    waiting = [m for r in runs for m in r["ms_waiting"]]
    read = [m for r in runs for m in r["read_ms"]]
    return {
        "machine": machine(), "folders": folders,
        **{k: tally[k] for k in ("sequences", "sequences_right", "cups_learnt", "throws_expected",
                                 "throws_right", "throws_missed", "throws_false")},
        "ms_per_frame_median": round(statistics.median(ms), 1) if ms else None,
        "ms_per_frame_p95": round(float(np.percentile(ms, 95)), 1) if ms else None,
        "ms_per_frame_mean": round(statistics.fmean(ms), 1) if ms else None,   # the CPU a camera's frame takes
        "frames_watching": len(ms),
        # the watch reads a frame now and then (the network's every_s): what one of those costs
        "ms_per_frame_read_median": round(statistics.median(read), 1) if read else None,
        "frames_read": len(read),
        # of those, the ones the network looked at (the others: the table still since its last look)
        "frames_looked": sum(r.get("looks", 0) for r in runs),
        "ms_per_frame_waiting_median": round(statistics.median(waiting), 1) if waiting else None,
        "first_frame_ms_median": round(statistics.median(r["first_frame_ms"] for r in runs), 1) if runs else None,
        "frame": "as rendered ({}){}, one core (cv2.setNumThreads(1)); ms per frame: frames watching learnt cups; "
                 "waiting: frames before any were learnt (a retry every 2 s); the first frame calibrates and "
                 "learns".format(", ".join(sorted({"x".join(map(str, r["size"])) for r in runs})),
                                 f" with a camera's noise (sigma {noise} grey levels)" if noise else ""),
        "per_factor": {k: {v: dict(vals[v]) for v in sorted(vals, key=value_order)} for k, vals in per_factor.items()},
        "failures": [{"sequence": r["sequence"], "event": r["event"], "expected": r["expected"],
                      "learnt": r["learnt"], "learnt_in": r["learnt_in"], "not_learnt_why": r["not_learnt_why"],
                      "proposed": [{k: p[k] for k in ("t", "phase", "side", "cup")} | {"how": p["evidence"].get("how")}
                                   for p in r["proposed"]], "watch_status": r["watch_status"],
                      "watch_log": r["watch_log"], "factors": r["factors"]}
                     for r in runs if not (r["learnt"] and not r["missed"] and not r["false"])],
    }


def sequence_factor_lines(per_factor: dict[str, dict[str, dict[str, int]]]) -> dict[str, str]:
    return {f"factor {k}={v}": f"{c['sequences_right']}/{c['sequences']} right, learnt {c['cups_learnt']}, "
                               f"throws {c['throws_right']}/{c['throws_expected']} missed {c['throws_missed']} "
                               f"false {c['throws_false']}"
            for k, vals in per_factor.items() for v, c in vals.items()}


def run_sequences(args: argparse.Namespace) -> int:
    runs = []
    for path in sequence_files(args.sequences):
        runs.append(run_sequence(path, args.fps, args.noise))
        if not args.json:
            r = runs[-1]
            # the mean: most frames cost next to nothing (skipped, or a still table), a look 10-16 ms
            speed = f"{statistics.fmean(r['ms']):.1f} ms/frame watching (mean)" if r["ms"] else "no frame watched"
            print(f"{Path(r['sequence']).stem}: {r['event']} {r['side']} {r['target'].get('colour')}: "
                  f"{'learnt' if r['learnt'] else 'NOT learnt (' + str(r['not_learnt_why']) + ')'}, "
                  f"proposed {[(p['side'], p['cup'], p['phase']) for p in r['proposed']]}, {speed}", flush=True)
    if not runs:
        print(f"no sequences (DIR/sequences/s*.json) in {' '.join(args.sequences)}", file=sys.stderr)
        return 2
    r = summarise_sequences(args.sequences, runs, args.noise)
    if args.json:
        report(r, True)
    else:   # one line per factor value (report prints the failures last)
        report({**{k: v for k, v in r.items() if k != "per_factor"}, **sequence_factor_lines(r["per_factor"])}, False)
    return 0 if r["sequences_right"] == r["sequences"] else 1


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
    parser.add_argument("--sequences", nargs="+", metavar="DIR",
                        help="play Blender sequences (tools/render/cup_scenes.py --sequence: DIR/sequences/*.json) "
                             "through the service's TableVision instead of rendered games")
    parser.add_argument("--noise", type=bounded(float, 0.0, 20.0, "a camera's noise lies from 0 to 20 grey levels"),
                        default=0.0, help="--sequences: sigma of a camera's fresh noise on each frame, in grey "
                                          "levels (0 to 20; default 0: the renders as they are; 3: a camera in room light)")
    parser.add_argument("--json", action="store_true", help="one JSON object with the same figures")


def _colour(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"'{text}' is not three factors B,G,R (e.g. 0.70,0.92,1.12)")
    b, g, r = (_gain(v) for v in parts)
    return b, g, r


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)
    if args.sequences:
        return run_sequences(args)
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
