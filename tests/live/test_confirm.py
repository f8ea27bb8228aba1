"""The confirm step's auto-confirm (the demo's delay) on an injected clock, with a real table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.hardware import NullPanel
from companion.live.confirm import Confirmer
from companion.table import Table

NEW_GAME = {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}


class Clock:
    def __init__(self) -> None:
        self.t = 50.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path / "table.sqlite")
    t.start(NEW_GAME)
    yield t
    t.close()


def test_a_proposal_confirms_itself_after_the_configured_delay(table: Table):
    clock = Clock()
    confirmer = Confirmer(table, NullPanel("test"), auto_seconds=2.0, clock=clock)
    table.propose({"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    clock.t += 1.0
    table.propose({"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 6}})
    clock.t += 0.9
    assert confirmer.tick() == [] and len(table.pending()) == 2
    clock.t += 0.1
    (first,) = confirmer.tick()  # A's, two seconds old; B's waits another second
    assert first["action"] == "confirmed" and first["source"] == "auto"
    assert table.state()["detail"]["sides"]["A"]["values"] is not None and len(table.pending()) == 1
    clock.t += 1.0
    assert [o["action"] for o in confirmer.tick()] == ["confirmed"]
    assert table.state()["to_act"] == ["A"]  # both sides set: side A throws first (E4)
    confirmer.close()


def test_without_a_delay_nothing_confirms_itself(table: Table):
    clock = Clock()
    confirmer = Confirmer(table, NullPanel("test"), auto_seconds=0.0, clock=clock)
    table.propose({"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    clock.t += 3600
    assert confirmer.tick() == [] and len(table.pending()) == 1
    confirmer.close()


def test_auto_confirm_of_a_refused_proposal_drops_it_and_buzzes_low(table: Table):
    clock = Clock()
    panel = NullPanel("test")
    confirmer = Confirmer(table, panel, auto_seconds=1.0, clock=clock)
    table.propose({"type": "dice", "side": "A", "values": {"blue": 3, "red": 3, "green": 2, "yellow": 5}})
    clock.t += 1.0
    (outcome,) = confirmer.tick()
    assert outcome["action"] == "refused" and outcome["code"] == "DICE_NOT_DISTINCT"  # E2
    assert panel.last_sound == "refused" and not table.pending()
    assert table.state()["seq"] == 1
    confirmer.close()


FULL_DISK_PRESS = """
import json, resource, signal, sys
from companion.live.confirm import Confirmer
from companion.hardware import NullPanel
from companion.table import Table
table = Table(sys.argv[1])
table.start({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
table.apply({"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
table.apply({"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 6, "yellow": 4}})
sounds = []
panel = NullPanel("test")
panel.sound = sounds.append
confirmer = Confirmer(table, panel)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails, as on a full card
resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
proposal = table.propose({"type": "throw", "side": "A", "cup": "yellow"}, evidence={"frame": 7})
outcome = confirmer.short_press()
print(json.dumps({"outcome": outcome, "sounds": sounds, "seq": table.state()["seq"],
                  "pending": [p.as_dict() for p in table.pending()], "id": proposal.id}))
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))  # room again
print(json.dumps({"outcome": confirmer.short_press(), "state": table.state()["scores"]}))
"""


def test_a_press_the_full_disk_cannot_store_buzzes_low_and_the_proposal_still_waits(tmp_path: Path):
    """The camera proposed a throw; the button confirms it but the card is full. The proposal was
    taken off the queue before the write failed (gone, as if the rules had refused it) and the
    error escaped the button's callback with no sound; now the buzzer says refused, the proposal
    waits, and the next press once there is room stores it."""
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-c", FULL_DISK_PRESS, str(tmp_path / "table.sqlite")], capture_output=True,
                       text=True, timeout=60, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    full, room = (json.loads(line) for line in r.stdout.splitlines())
    assert full["outcome"]["action"] == "refused" and full["outcome"]["code"] == "NOT_STORED"
    assert full["sounds"][-1] == "refused" and full["seq"] == 3
    assert [p["id"] for p in full["pending"]] == [full["id"]] and full["pending"][0]["evidence"] == {"frame": 7}
    assert room["outcome"]["action"] == "confirmed" and room["state"] == {"A": 5, "B": 0}
