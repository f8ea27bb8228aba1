"""axe-core for the accessibility tests: a test-time asset from npm, never part of the service.

It is installed with npm into ``.cache/axe-core/<version>/`` beside this repository (git-ignored)
the first time a test or ``./run test`` asks for it, and read from there afterwards; the pages
never load it: a test injects it into the page it checks. ``python -m tests.web.axe`` installs it
(``./run test`` does, after making sure npm is there).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE_VERSION = "4.14.1"  # pinned: a new rule in a later axe must not turn a green run red by itself
AXE_DIR = ROOT / ".cache" / "axe-core" / AXE_VERSION
AXE_JS = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"


def ensure_axe() -> tuple[Path | None, str]:
    """The path of ``axe.min.js``, installing it from npm if it is not there yet; or ``None`` and
    why not (npm missing, or its install failed with npm's own last lines)."""
    if AXE_JS.is_file():
        return AXE_JS, ""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed, so axe-core cannot be fetched (./run test installs npm and axe-core)"
    AXE_DIR.mkdir(parents=True, exist_ok=True)
    cmd = [npm, "install", "--prefix", str(AXE_DIR), "--no-save", "--no-audit", "--no-fund", "--ignore-scripts",
           "--loglevel=error", f"axe-core@{AXE_VERSION}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"npm install axe-core@{AXE_VERSION} failed: {e}"
    if done.returncode != 0 or not AXE_JS.is_file():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        return None, f"npm install axe-core@{AXE_VERSION} failed ({done.returncode}): {tail}"
    return AXE_JS, ""


if __name__ == "__main__":
    path, why = ensure_axe()
    print(f"axe-core {AXE_VERSION}: {path}" if path else why)
    sys.exit(0 if path else 1)
