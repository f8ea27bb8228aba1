"""Twenty One scenario logs (tests/scenarios/twentyone/NAME.jsonl) replay through the real
`companion replay` command, and through companion.replay.replay, to the keys of
NAME.expected.json (rejected entries by line and code; list entries that are objects are
compared key by key, lists of other values exactly)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.replay import read_jsonl, replay

ROOT = Path(__file__).resolve().parent.parent.parent
SCENARIOS = sorted((ROOT / "tests" / "scenarios" / "twentyone").glob("*.jsonl"))


def subset(expected: Any, actual: Any, where: str = "") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), where
        for key, value in expected.items():
            assert key in actual, f"{where}.{key} missing"
            subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list) and expected and isinstance(expected[0], dict):
        assert len(actual) == len(expected), f"{where}: {actual}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            subset(e, a, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


def test_there_are_scenarios():
    assert len(SCENARIOS) >= 2


@pytest.mark.parametrize("log", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_replays_through_the_command(log: Path):
    expected = json.loads(log.with_suffix("").with_suffix(".expected.json").read_text())
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert list(result) == ["game", "players", "to_act", "finished", "winners", "scores", "rejected", "detail"]
    subset(expected, result)
    with log.open() as f:
        assert replay(read_jsonl(f)) == result, "the library and the command agree"
