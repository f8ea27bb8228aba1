"""Helpers the engine tests share."""

from __future__ import annotations

from typing import Any

import pytest

from companion.games.base import Game, RuleError


def refused(game: Game, event: dict[str, Any]) -> str:
    """Push an event the rules must refuse; check that nothing changed; return the reason code."""
    before = game.view()
    with pytest.raises(RuleError) as err:
        game.push(event)
    assert game.view() == before, "a refused event changes nothing"
    return err.value.code
