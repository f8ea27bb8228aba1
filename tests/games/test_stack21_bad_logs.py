"""Stack 21 logs that are not a rule matter: `companion replay` exits 2 naming the line (or the
reason code of a new_game that starts nothing). Its scenario logs run in tests/cli/test_scenarios.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
NEW2 = '{"type": "new_game", "game": "stack21", "players": ["A", "B"]}'


def run_replay(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion", "replay", str(path)], capture_output=True,
                          text=True, timeout=60, env=ENV, cwd=ROOT)


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
