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


def _person() -> dict[str, Any]:
    return {"played": 0, "won": 0, "streak": 0, "best_streak": 0, "games": {}}


def players(games: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The players page from the games' summaries (``Table.games()``: ``id``, ``game``,
    ``finished`` and the fields of :func:`summary`).

    ``players``: each person with ``played``, ``won``, ``streak`` (wins in a row up to their last
    finished game), ``best_streak``, and per game ``played``, ``won`` and ``best`` (their unit's
    highest final score); most wins first. ``head_to_head``: every two people who played each
    other (on different units of one finished game) with how often each won; a shared win counts
    for neither. ``counted``: finished games; ``unfinished``: games left out."""
    people: dict[str, dict[str, Any]] = {}
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    counted = unfinished = 0
    for g in sorted(games, key=lambda g: g["id"]):  # oldest first: streaks run in playing order
        if not g.get("finished") or not g.get("members"):
            unfinished += g.get("finished") is False
            continue
        counted += 1
        winners, scores = set(g.get("winners") or []), g.get("scores") or {}
        unit_of = {p: u for u, ps in g["members"].items() for p in ps}
        for name, unit in unit_of.items():
            p = people.setdefault(name, _person())
            won = unit in winners
            p["played"] += 1
            p["won"] += won
            p["streak"] = p["streak"] + 1 if won else 0
            p["best_streak"] = max(p["best_streak"], p["streak"])
            per = p["games"].setdefault(g["game"], {"played": 0, "won": 0, "best": None})
            per["played"] += 1
            per["won"] += won
            score = scores.get(unit)
            if isinstance(score, int | float) and (per["best"] is None or score > per["best"]):
                per["best"] = score
        for a, b in combinations(sorted(unit_of), 2):
            if unit_of[a] == unit_of[b]:
                continue  # partners, not opponents
            pair = pairs.setdefault((a, b), {"a": a, "b": b, "played": 0, "a_won": 0, "b_won": 0})
            pair["played"] += 1
            a_won, b_won = unit_of[a] in winners, unit_of[b] in winners
            pair["a_won"] += a_won and not b_won
            pair["b_won"] += b_won and not a_won
    listed = [{"name": name, **p} for name, p in people.items()]
    listed.sort(key=lambda p: (-p["won"], -p["played"], p["name"].casefold(), p["name"]))
    h2h = sorted(pairs.values(), key=lambda h: (-h["played"], h["a"].casefold(), h["b"].casefold()))
    return {"players": listed, "head_to_head": h2h, "counted": counted, "unfinished": unfinished}
