"""21 Exact: throw ping-pong balls into your side's cups to reach exactly 21 (RULES.md E1–E13).

Each side has 4 cups of each colour (blue, red, green, yellow) worth the number its own die of
that colour showed at set-up, and one silver cup worth 1 point while the Silver Cup Rule is in
effect for the side.

``detail`` of the view (EVENTS.md asks each game to document its own):

- ``silver_rule`` (the option); ``turn`` (the side on turn); ``thrower`` (the player whose throw
  is next, null until both sides' dice are set and when finished);
- ``sides.<name>``: ``players``, ``values`` (die value per colour, null until set), ``cups``
  (colour cups left per colour), ``silver_active`` (E10), ``silver_points`` (the silver tally),
  ``total``, ``need`` (21 - total), ``next_player`` (the side's next thrower) and ``ways``: the
  ways still open to exactly 21, fewest throws first (at most 12), each ``cups`` (count per
  colour to make), ``silver`` and ``throws``;
- ``last``: what the last event did: ``{"type": "dice", "side"}``, or for a throw ``side``,
  ``player``, ``cup``, ``total`` and ``result``: ``"made"`` or ``"overshoot"`` (with ``points``),
  ``"silver"`` (``points`` 1), ``"silver_not_in_effect"`` or ``"miss"``; null before any.

>>> engine = Exact21()
>>> s = engine.new_game({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
>>> s = engine.apply(s, {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
>>> s = engine.apply(s, {"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 4}})
>>> s = engine.apply(s, {"type": "throw", "side": "A", "cup": "yellow"})
>>> engine.view(s)["scores"]
{'A': 5, 'B': 0}
>>> detail = engine.view(s)["detail"]
>>> sorted(detail), sorted(detail["sides"]["A"])
(['last', 'sides', 'silver_rule', 'thrower', 'turn'], ['cups', 'need', 'next_player', 'players', 'silver_active', 'silver_points', 'total', 'values', 'ways'])
>>> detail["last"]
{'type': 'throw', 'side': 'A', 'player': 'A', 'cup': 'yellow', 'result': 'made', 'points': 5, 'total': 5}
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from companion.games.base import (
    BAD_VALUE,
    NOT_YOUR_TURN,
    UNKNOWN_PLAYER,
    Engine,
    Field,
    Option,
    RuleError,
    expect,
    expect_list_of,
    fields,
    unique_names,
    whole,
)

COLOURS = ("blue", "red", "green", "yellow")
CUPS = (*COLOURS, "silver", "miss")
CUPS_PER_COLOUR = 4
TARGET = 21


@dataclass
class Side:
    name: str
    players: list[str]
    values: dict[str, int] | None = None  # die value per colour, once set
    cups: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COLOURS, CUPS_PER_COLOUR))
    total: int = 0
    silver_points: int = 0
    next_player: int = 0  # index into players of the side's next thrower


@dataclass
class State:
    sides: list[Side]
    silver_rule: str
    turn: int = 0  # index of the side on turn
    winner: str | None = None
    last: dict[str, Any] | None = None  # what the last throw did, for the scoreboard and buzzer


def _remaining(side: Side) -> tuple[tuple[int, int], ...]:
    """(value, cups left) per colour that still has cups."""
    assert side.values is not None
    return tuple((side.values[c], side.cups[c]) for c in COLOURS if side.cups[c] > 0)


@lru_cache(maxsize=4096)
def _reachable(cups: tuple[tuple[int, int], ...], need: int) -> bool:
    """Can some multiset of the cups (value, count) sum to exactly ``need``?"""
    sums = {0}
    for value, count in cups:
        sums = {s + k * value for s in sums for k in range(count + 1) if s + k * value <= need}
    return need in sums


def silver_active(side: Side, rule: str) -> bool:
    """E10: is the Silver Cup Rule in effect for this side?"""
    if side.values is None:
        return False
    need = TARGET - side.total
    if need <= 0:
        return False
    cups = _remaining(side)
    if rule == "combination":
        return not _reachable(cups, need)
    return not any(value <= need for value, _ in cups)


def ways_to_21(side: Side, rule: str, limit: int = 50) -> list[dict[str, Any]]:
    """Every way still open to reach exactly 21: the colour cups to make (count per colour) and
    the number of silver cups, fewest throws first. The search follows the silver rule as it
    switches on and off along the way (with ``combination`` a silver point can bring a cup back
    into reach). What has been made is determined by the cups left, so (cups left, points still
    needed) is the whole search state: at most 5^4 x 21 of them."""
    if side.values is None or side.total >= TARGET:
        return []
    start = tuple(side.cups[c] for c in COLOURS)
    found: set[tuple[tuple[int, ...], int]] = set()
    seen: set[tuple[tuple[int, ...], int]] = set()
    probe = Side(side.name, side.players, side.values)

    def search(cups: tuple[int, ...], need: int) -> None:
        if (cups, need) in seen:
            return
        seen.add((cups, need))
        made = tuple(a - b for a, b in zip(start, cups, strict=True))
        if need == 0:
            silvers = (TARGET - side.total) - sum(n * side.values[c] for c, n in zip(COLOURS, made, strict=True))
            found.add((made, silvers))
            return
        probe.cups = dict(zip(COLOURS, cups, strict=True))
        probe.total = TARGET - need
        if silver_active(probe, rule):
            search(cups, need - 1)
        for i, c in enumerate(COLOURS):
            if cups[i] and side.values[c] <= need:
                search(cups[:i] + (cups[i] - 1,) + cups[i + 1:], need - side.values[c])

    search(start, TARGET - side.total)
    ways = sorted(found, key=lambda w: (sum(w[0]) + w[1], w[1], [-n for n in w[0]]))
    return [
        {"cups": {c: n for c, n in zip(COLOURS, made, strict=True) if n}, "silver": silvers,
         "throws": sum(made) + silvers}
        for made, silvers in ways[:limit]
    ]


class Exact21(Engine):
    name = "exact21"
    options = {"silver_rule": Option("single_cup", ("single_cup", "combination"))}
    new_game_fields = fields(sides=list)
    events = {
        "dice": fields(side=str, values=Field(dict, items=int)),
        "throw": fields(side=str, cup=str, player=Field(str, required=False)),
    }

    def copy_state(self, state: State) -> State:
        sides = [Side(s.name, s.players, s.values, dict(s.cups), s.total, s.silver_points, s.next_player)
                 for s in state.sides]  # players and values are never changed in place
        return State(sides, state.silver_rule, state.turn, state.winner, state.last)

    # -- set-up (E1)
    def setup(self, event: Mapping[str, Any], options: dict[str, Any]) -> State:
        sides_in = event["sides"]
        if len(sides_in) != 2:
            raise RuleError(BAD_VALUE, f"21 Exact is played by exactly two sides, not {len(sides_in)}")
        sides = []
        for i, s in enumerate(sides_in):
            expect(s, dict, f"'sides[{i}]'")
            name = expect(s.get("name"), str, f"'sides[{i}].name'")
            if not name.strip():  # before its players, who are named like it by default
                raise RuleError(BAD_VALUE, "a side's name may not be empty")
            players = s.get("players")
            if players is None:
                players = [name]
            expect_list_of(players, str, f"'sides[{i}].players'")
            if not players:
                raise RuleError(BAD_VALUE, f"side {name} needs at least one player")
            unique_names(players, "player", f"side {name}: ")
            sides.append(Side(name, list(players)))
        unique_names([s.name for s in sides], "side")
        return State(sides, options["silver_rule"])

    # -- events
    def _side(self, state: State, name: str) -> Side:
        for side in state.sides:
            if side.name == name:
                return side
        raise RuleError(UNKNOWN_PLAYER, f"there is no side called '{name}'", {"side": name})

    def on_dice(self, state: State, event: Mapping[str, Any]) -> None:
        """E2: four different numbers 1–6, once per side."""
        side = self._side(state, event["side"])
        values = event["values"]
        unknown = [c for c in values if c not in COLOURS]
        if unknown:
            raise RuleError(BAD_VALUE, f"'{unknown[0]}' is not a die colour of 21 Exact (blue, red, green, yellow)")
        missing = [c for c in COLOURS if c not in values]
        if missing:
            raise RuleError(BAD_VALUE, f"the {missing[0]} die's value is missing")
        for colour, value in values.items():
            if not whole(value) or not 1 <= value <= 6:
                raise RuleError(BAD_VALUE, f"the {colour} die shows {value}: a die shows 1 to 6")
        if side.values is not None:
            raise RuleError("DICE_ALREADY_SET", f"side {side.name}'s dice are already set for this game",
                            {"side": side.name})
        if len(set(values.values())) != 4:
            raise RuleError("DICE_NOT_DISTINCT",
                            f"side {side.name}'s four dice must show four different numbers: roll all four again",
                            {"side": side.name})
        side.values = {c: values[c] for c in COLOURS}
        state.last = {"type": "dice", "side": side.name}

    def on_throw(self, state: State, event: Mapping[str, Any]) -> None:
        side = self._side(state, event["side"])
        cup = event["cup"]
        player = event.get("player")
        if player is not None and player not in side.players:
            raise RuleError(UNKNOWN_PLAYER, f"side {side.name} has no player called '{player}'",
                            {"side": side.name, "player": player})
        if cup not in CUPS:
            raise RuleError(BAD_VALUE, f"'{cup}' is not a cup: blue, red, green, yellow, silver or miss")
        # E6: the first side's turn begins with the game (E4), so the turn is checked before the
        # dice, in the code order of EVENTS.md: before both sides' dice are set a throw by the
        # other side (or by a player of the first side out of order, E5) is NOT_YOUR_TURN, and
        # only the first side's own next throw is DICE_NOT_SET
        on_turn = state.sides[state.turn]
        if side is not on_turn:  # E4, E5
            raise RuleError(NOT_YOUR_TURN, f"it is side {on_turn.name}'s turn", {"side": on_turn.name})
        thrower = side.players[side.next_player]
        if player is not None and player != thrower:
            raise RuleError(NOT_YOUR_TURN, f"it is {thrower}'s throw for side {side.name}",
                            {"player": thrower, "side": side.name})
        if any(s.values is None for s in state.sides):  # E6
            raise RuleError("DICE_NOT_SET", "no throw before both sides have rolled their four dice")
        if cup in COLOURS and side.cups[cup] == 0:  # E9
            raise RuleError("NO_CUPS_LEFT", f"side {side.name} has no {cup} cups left", {"side": side.name, "cup": cup})

        assert side.values is not None
        outcome: dict[str, Any] = {"type": "throw", "side": side.name, "player": thrower, "cup": cup}
        if cup == "miss":  # E7
            outcome["result"] = "miss"
        elif cup == "silver":  # E11
            if silver_active(side, state.silver_rule):
                side.silver_points += 1
                side.total += 1
                outcome.update(result="silver", points=1)
            else:
                outcome["result"] = "silver_not_in_effect"
        else:  # E8: made only if it does not overshoot 21
            value = side.values[cup]
            if side.total + value <= TARGET:
                side.cups[cup] -= 1
                side.total += value
                outcome.update(result="made", points=value)
            else:
                outcome.update(result="overshoot", points=0)
        outcome["total"] = side.total
        state.last = outcome
        if side.total == TARGET:  # E12
            state.winner = side.name
            return
        side.next_player += 1  # E5: one throw per player of the side, then the other side
        if side.next_player == len(side.players):
            side.next_player = 0
            state.turn = 1 - state.turn

    # -- queries
    def finished(self, state: State) -> bool:
        return state.winner is not None

    def to_act(self, state: State) -> list[str]:
        if state.winner is not None:
            return []
        unset = [s.name for s in state.sides if s.values is None]
        return unset or [state.sides[state.turn].name]

    def thrower(self, state: State) -> str | None:
        if state.winner is not None or any(s.values is None for s in state.sides):
            return None
        side = state.sides[state.turn]
        return side.players[side.next_player]

    def view(self, state: State) -> dict[str, Any]:
        sides = {}
        for s in state.sides:
            active = silver_active(s, state.silver_rule)
            sides[s.name] = {
                "players": s.players,
                "values": s.values,
                "cups": dict(s.cups),
                "silver_active": active,
                "silver_points": s.silver_points,
                "total": s.total,
                "need": TARGET - s.total,
                "next_player": s.players[s.next_player],
                "ways": ways_to_21(s, state.silver_rule, limit=12),
            }
        return {
            "players": [s.name for s in state.sides],
            "to_act": self.to_act(state),
            "finished": state.winner is not None,
            "winners": [state.winner] if state.winner else [],
            "scores": {s.name: s.total for s in state.sides},
            "detail": {
                "silver_rule": state.silver_rule,
                "turn": state.sides[state.turn].name,
                "thrower": self.thrower(state),
                "sides": sides,
                "last": state.last,
            },
        }

    def legal_actions(self, state: State) -> list[dict[str, Any]]:
        unset = [s for s in state.sides if s.values is None]
        if unset:
            return [{"type": "dice", "side": s.name} for s in unset]
        side = state.sides[state.turn]
        cups = [c for c in COLOURS if side.cups[c] > 0] + ["silver", "miss"]
        return [{"type": "throw", "side": side.name, "cup": c} for c in cups]

    # -- simulation
    def random_new_game(self, rng: random.Random) -> dict[str, Any]:
        sides = []
        for name in ("A", "B"):
            n = rng.choice((1, 1, 2, 3))
            sides.append({"name": name, "players": [f"{name}{i + 1}" for i in range(n)]})
        return {"type": "new_game", "game": self.name, "sides": sides,
                "options": {"silver_rule": rng.choice(("single_cup", "combination"))}}

    def random_action(self, state: State, rng: random.Random) -> dict[str, Any]:
        actions = self.legal_actions(state)
        action = dict(rng.choice(actions))
        if action["type"] == "dice":
            action["values"] = dict(zip(COLOURS, rng.sample(range(1, 7), 4), strict=True))
        return action
