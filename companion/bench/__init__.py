"""``companion bench …``: benchmarks that print their figures and the machine they ran on."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path


def machine() -> str:
    """The machine a figure was measured on: architecture, CPU model, cores, Python, OpenCV."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    text = f"{platform.machine()} {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    cv2 = sys.modules.get("cv2")  # named only when the benchmark uses it
    return text + (f", OpenCV {cv2.__version__}" if cv2 is not None else "")


def memory_mb(pid: int | str = "self") -> tuple[float, float]:
    """(resident, peak resident) memory of a process in MB, from Linux's /proc; NaN elsewhere."""
    now = peak = float("nan")
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return now, peak


def bounded(cast: Callable[[str], float], low: float, high: float, sentence: str) -> Callable[[str], float]:
    """An argparse ``type`` for a benchmark's number from ``low`` to ``high``: anything else (0 games,
    a nan frame rate) is a usage error with ``sentence``, not a traceback deep in the run."""
    def parse(text: str) -> float:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a {'whole ' if cast is int else ''}number: {text!r}") from None
        if not low <= value <= high:   # also refuses nan
            raise argparse.ArgumentTypeError(f"{text}: {sentence}")
        return value
    return parse


def at_least_one(what: str) -> Callable[[str], float]:
    return bounded(int, 1, math.inf, f"at least one {what}")


def report(figures: dict, as_json: bool) -> None:
    """A benchmark's figures: one JSON object, or ``key: value`` lines with each failure last."""
    if as_json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        if key != "failures":
            print(f"{key}: {value}")
    for f in figures.get("failures", []):
        print(f"failure: {json.dumps(f)}")
