"""The rule engines, loaded by name like OpenSpiel's games: ``get_engine("exact21")``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from companion.games.base import Engine, EventError, Game, RuleError

__all__ = ["ENGINES", "Engine", "EventError", "Game", "RuleError", "engine_for", "get_engine"]

# game name -> "module:Class"; modules are imported on first use.
ENGINES = {
    "exact21": "companion.games.exact21:Exact21",
    "exactly": "companion.games.exactly:Exactly",
    "twentyone": "companion.games.twentyone:TwentyOne",
    "stack21": "companion.games.stack21:Stack21",
}


def get_engine(name: str) -> Engine:
    if name not in ENGINES:
        raise EventError(f"unknown game '{name}' (known: {', '.join(ENGINES)})")
    module, cls = ENGINES[name].split(":")
    return getattr(importlib.import_module(module), cls)()


def engine_for(new_game: Mapping[str, Any]) -> Engine:
    """The engine a ``new_game`` event asks for (EventError if it is not a new_game)."""
    if not isinstance(new_game, Mapping):
        raise EventError("an event must be a JSON object")
    if new_game.get("type") != "new_game":
        raise EventError(f"a game starts with a 'new_game' event, not '{new_game.get('type')}'")
    game = new_game.get("game")
    if not isinstance(game, str):
        raise EventError("'new_game' needs a 'game' string")
    return get_engine(game)
