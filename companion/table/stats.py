"""What the log says about the people at the table: each game's summary (who played, who won, the
score) for History, and the players page's figures (games played and won, per game, best scores,
streaks, head to head).

A game's *units* are what the engine scores: a 21 Exact side, a Stack 21 team, otherwise a
player. A unit's *members* are the people behind it (a side's players, a team's members, or the
player). People are told apart by their name as typed: "Ann" at two tables is one person, "ann"
another. Only finished games count for the players' figures: an unfinished game has no winner
yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations
from typing import Any


def members(view: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each unit of a game's view and the people behind it, in seat order."""
    detail = view.get("detail") or {}
    teams, sides = detail.get("teams"), detail.get("sides")
    out: dict[str, list[str]] = {}
    for unit in view.get("players") or []:
        if isinstance(teams, Mapping) and unit in teams:
            out[unit] = list(teams[unit])
        elif isinstance(sides, Mapping) and isinstance(sides.get(unit), Mapping):
            out[unit] = list(sides[unit].get("players") or [unit])
        else:
            out[unit] = [unit]
    return out


def summary(view: Mapping[str, Any]) -> dict[str, Any]:
    """A game's line in History: its units in seat order, the people behind each, the winners
    and the scores (every game scores "more is better")."""
    return {"finished": bool(view.get("finished")), "players": list(view.get("players") or []),
            "members": members(view), "winners": list(view.get("winners") or []),
            "scores": dict(view.get("scores") or {})}
