"""``companion bench …``: benchmarks that print their figures and the machine they ran on."""

from __future__ import annotations

import os
import platform
import sys
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
