"""A whole Stack 21 game dealt by the companion's virtual deck at a real table (SQLite log): the
stored log, once reopened, gives the same cards and state, undo included."""

from __future__ import annotations

import random
from pathlib import Path

from companion.games import get_engine
from companion.table import Table

ENGINE = get_engine("stack21")


def test_a_virtual_deck_game_survives_a_restart_with_the_same_cards(tmp_path: Path):
    path = tmp_path / "table.sqlite"
    table = Table(path)
    table.start({"type": "new_game", "game": "stack21", "players": ["Ann", "Bob", "Cy"]})
    state = table.apply({"type": "deal", "dealer": "Cy", "seed": 2024})
    assert state["detail"]["stock_size"] == 108 - 12 - 1
    draw = state["legal"][0]
    assert draw["type"] == "draw" and draw["player"] == "Ann"
    assert "card" not in draw, "the phones are not told the face-down card"
    assert "card" in table.game.legal_actions()[0], "the companion knows it"
    rng = random.Random(1)
    for _ in range(60):  # bots play on through the table, with an undo now and then
        if table.state()["finished"]:
            break
        table.apply(ENGINE.random_action(table.game.state, rng))
        if rng.random() < 0.1:
            table.undo()
    before = table.state()
    table.close()

    again = Table(path)
    after = again.state()
    for key in ("players", "to_act", "scores", "detail", "legal"):
        assert after[key] == before[key], key
    assert after["seq"] == before["seq"] > 2
    again.close()
