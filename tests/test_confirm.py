"""The confirm step's auto-confirm (the demo's delay) on an injected clock, with a real table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.confirm import Confirmer
from companion.hardware import NullPanel
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
