"""Scenario logs under tests/scenarios/<game>/refused/: logs that `companion replay` must refuse
as a whole (EVENTS.md "Log files and replay"): a `new_game` that breaks a rule starts nothing and
exits 2 naming the reason code; a malformed event exits 2 with `line N: …` on stderr.
NAME.expected.json gives the exit status and the strings stderr must contain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REFUSED = sorted((Path(__file__).parents[1] / "scenarios").glob("*/refused/*.jsonl"))


@pytest.mark.parametrize("log", REFUSED, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_refused_log_exits_2_naming_the_line_and_reason(log: Path):
    expected = json.loads(log.with_suffix("").with_suffix(".expected.json").read_text())
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == expected["exit"], out.stdout
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    for words in expected["stderr"]:
        assert words in out.stderr
