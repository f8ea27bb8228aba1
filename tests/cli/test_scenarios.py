"""Scenario logs under tests/scenarios/<game>/: each NAME.jsonl replays, through the real
`companion replay` command, to the keys given in NAME.expected.json (rejected entries are
compared by line and code; `detail` keys, when given, must match the ones given)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.games.replay import read_jsonl, replay

SCENARIOS = sorted((Path(__file__).parents[1] / "scenarios").glob("*/*.jsonl"))


def _subset(expected, actual, where="") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), where
        for key, value in expected.items():
            assert key in actual, f"{where}.{key} missing"
            _subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list) and expected and isinstance(expected[0], dict):
        assert len(actual) == len(expected), f"{where}: {actual}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _subset(e, a, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


@pytest.mark.parametrize("log", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_scenario_replays_through_the_command(log: Path):
    expected = json.loads(log.with_suffix("").with_suffix(".expected.json").read_text())
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == expected.pop("exit", 0), out.stderr
    result = json.loads(out.stdout)
    assert list(result)[:8] == ["game", "players", "to_act", "finished", "winners", "scores", "rejected", "detail"]
    _subset(expected, result)
    with log.open() as f:
        assert replay(read_jsonl(f)) == result, "the library and the command agree"
