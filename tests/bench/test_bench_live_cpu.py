"""`companion bench live`'s CPU figures: the live loop's CPU per frame by phase, the camera's read
left out, with the share of a core at the configured fps and the Pi 4 estimate beside it. The
loop runs for real (``Live.step``) over a stand-in vision; a counting clock stands in for the
thread's CPU clock, so the figures are exact and no test depends on this machine's speed."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from companion.bench.live import PI4_RATIO, LoopCpu, print_cpu
from companion.live.camera import CallableSource, ResilientCamera
from companion.live.loop import Live


class CpuClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Dice:
    def __init__(self) -> None:
        self.waiting = False

    def wanted(self, state) -> bool:
        return self.waiting


class Vision:
    """The one processor, as TableVision looks to the bench: ``cal``, ``dice.wanted``,
    ``state()``; its feed costs 10 ms of "CPU" while dice are read, 2 ms otherwise, and the first
    frame calibrates (40 ms)."""

    name = "vision"

    def __init__(self, clock: CpuClock):
        self.clock = clock
        self.cal = None
        self.dice = Dice()

    def state(self):
        return {"game": "exact21"}

    def feed(self, frame, t):
        if self.cal is None:
            self.cal = "calibrated"
            self.clock.t += 0.040
        else:
            self.clock.t += 0.010 if self.dice.waiting else 0.002
        return []


def test_the_loops_cpu_is_split_by_phase_with_the_cameras_read_left_out():
    clock = CpuClock()

    def frame():
        clock.t += 0.050  # drawing the rendered table: not the loop's on a Pi
        return np.zeros((48, 64, 3), np.uint8)

    vision = Vision(clock)
    live = Live(ResilientCamera(lambda: CallableSource(frame)), None, [vision])  # type: ignore[arg-type]
    cpu = LoopCpu(live, clock=clock)
    live.step()                    # calibrates
    vision.dice.waiting = True
    for _ in range(5):
        live.step()
    vision.dice.waiting = False
    for _ in range(20):
        live.step()
    phases = cpu.summary(fps=15.0)
    assert phases["calibrating"]["frames"] == 1 and phases["calibrating"]["median_ms"] == pytest.approx(40.0)
    dice, throws = phases["dice"], phases["throws"]
    assert (dice["frames"], throws["frames"]) == (5, 20)
    assert dice["median_ms"] == pytest.approx(10.0) and throws["median_ms"] == pytest.approx(2.0)
    assert throws["core_pct_at_fps"] == pytest.approx(3.0)  # 2 ms x 15 fps = 30 ms of every second
    assert dice["core_pct_at_fps"] == pytest.approx(15.0)
    assert throws["pi4_core_pct"] == pytest.approx([3.0 * r for r in PI4_RATIO])
    assert throws["p95_ms"] >= throws["median_ms"]


def test_the_cpu_lines_say_the_phases_the_targets_and_that_the_pi_figure_is_an_estimate(capsys):
    phases = {"throws": {"frames": 800, "median_ms": 3.0, "p95_ms": 7.0, "core_pct_at_fps": 4.5,
                         "measured_core_pct": 5.0, "pi4_core_pct": [18.0, 45.0]},
              "dice": {"frames": 0}, "calibrating": {"frames": 1, "median_ms": 60.0}}
    print_cpu({"fps": 15.0, "phases": phases, "process_core_pct": 10.0, "opencv_threads": 1,
               "pi4_ratio": list(PI4_RATIO), "targets_pct": {"throws": 10.0, "dice": 25.0}})
    out = capsys.readouterr().out
    assert "throws (cup watch only): 800 frames, median 3.0 ms/frame" in out
    assert "4.5 % of one core here at 15 fps; target <= 10 %: met" in out
    assert "Pi 4 estimate 18.0-45.0 % of one core" in out and "dice read: no frames" in out
    assert "an estimate: 4-10x" in out and "not measured on a Pi" in out
    assert "calibrating (once, at the start): 1 frame(s)" in out


@pytest.mark.slow  # a whole rendered game through the service, ~1 min
def test_bench_live_reports_the_loops_cpu_in_both_phases():
    out = subprocess.run([sys.executable, "-m", "companion", "bench", "live", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    cpu = json.loads(out.stdout)["cpu"]
    assert cpu["fps"] == 15.0 and cpu["opencv_threads"] == 1 and cpu["pi4_ratio"] == list(PI4_RATIO)
    for phase in ("throws", "dice"):
        p = cpu["phases"][phase]
        assert p["frames"] > 0 and 0 < p["median_ms"] <= p["p95_ms"]
        assert p["core_pct_at_fps"] == pytest.approx(p["median_ms"] * 15 / 10, abs=0.1)
        assert p["pi4_core_pct"][0] < p["pi4_core_pct"][1]
    assert cpu["phases"]["throws"]["frames"] > cpu["phases"]["dice"]["frames"]  # the throws are most of a game
    assert cpu["process_core_pct"] > 0
