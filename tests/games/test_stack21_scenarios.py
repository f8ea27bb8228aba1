"""Stack 21 scenario logs (tests/scenarios/stack21/NAME.jsonl) replayed through the real
`companion replay` command and through `companion.replay.replay`, checked against the keys of
NAME.expected.json (same convention as tests/test_scenarios.py on main: `rejected` compared by
line and code, lists of objects element by element, objects by the keys given). Also the
command's exit status 2 for logs that are not a rule matter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.replay import read_jsonl, replay

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios" / "stack21").glob("*.jsonl"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
NEW2 = '{"type": "new_game", "game": "stack21", "players": ["A", "B"]}'


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


def run_replay(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion", "replay", str(path)], capture_output=True,
                          text=True, timeout=60, env=ENV, cwd=ROOT)


def test_there_are_stack21_scenarios():
    assert len(SCENARIOS) >= 3


@pytest.mark.parametrize("log", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_replays_through_the_command_and_the_library(log: Path):
    expected = json.loads(log.with_suffix(".expected.json").read_text())
    out = run_replay(log)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert list(result)[:8] == ["game", "players", "to_act", "finished", "winners", "scores", "rejected",
                                "detail"]
    subset(expected, result)
    with log.open() as f:
        assert replay(read_jsonl(f)) == result, "the library and the command agree"


@pytest.mark.parametrize(("lines", "needle"), [
    ([NEW2, '{"type": "draw", "player": "A", "card": 4}'], "line 2:"),
    ([NEW2, '{"type": "deal", "dealer": "B"'], "line 2: not valid JSON"),
    ([NEW2, '{"type": "shuffle"}'], "line 2:"),
    (['{"type": "new_game", "game": "stack21", "players": ["A", "B", "C", "D", "E"]}'], "BAD_VALUE"),
    (['{"type": "new_game", "game": "stack21", "players": ["A", "B", "C", "D"], '
      '"teams": [["A", "B"], ["C", "D"]]}'], "BAD_VALUE"),
])
def test_logs_that_are_not_a_rule_matter_exit_2(tmp_path: Path, lines: list[str], needle: str):
    log = tmp_path / "bad.jsonl"
    log.write_text("\n".join(lines) + "\n")
    out = run_replay(log)
    assert out.returncode == 2
    assert needle in out.stderr and out.stdout == ""
    assert "Traceback" not in out.stderr
