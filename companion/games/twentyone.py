"""Twenty One: six coloured dice, five rows on your own sheet, exact hits for the bonus
(RULES.md T1–T12).

The roller rolls all six dice and may re-roll once every die that does not show 1; then every
player, the roller included, enters one or more dice into their current row (a die goes into
the cell of its colour, only if it is not above the printed number; equal is an exact hit) or
strikes the leftmost empty cell. A full row scores its values plus the bonus for its exact hits.

Sheets are data: ``twentyone_sheets.json`` beside this module holds the shipped layout of sheets
A–F (provisional beyond row 1's printed numbers, see the file); a ``new_game`` may load the layout
of the table's own pad with ``sheets``.

Events (EVENTS.md): ``roll`` and ``reroll`` carry all six ``dice``; ``reroll`` may name the dice
that stayed on the table in ``kept`` (our extension: with ``selective_reroll`` false only dice
showing 1 may stay, else ``REROLL_ALL``); ``enter`` has ``colors``; ``strike``. Before a roll
an ``enter``, ``strike`` or ``reroll`` is ``ROLL_FIRST``; a second ``roll`` is
``ALREADY_ROLLED``.

``detail`` of the view:

- ``options``; ``turn`` (1-based); ``roller``; ``roll`` (the dice now on the table, or null
  before the roll); ``first_roll`` (the dice before a re-roll, else null); ``rerolled``;
  ``roll_final`` (no re-roll possible any more: someone has acted, or it was used);
  ``acted`` and ``waiting`` (players who have / have not acted on this roll, seat order);
- ``sheets.<name>``: ``sheet`` (A–F), ``provisional`` (true when it is the shipped layout),
  ``row`` (the current row, 1-based; null when all are scored), ``total``, and ``rows``: per row
  ``cells`` (``color``, ``printed``, ``value`` or null, ``exact``, ``struck``), ``score`` (null
  until scored) and ``complete``;
- ``choices.<name>``: the phone UI's query for the current roll: ``enter`` (colours that may be
  entered now), ``exact`` (those that would be exact hits), ``strike`` (the cell a strike would
  hit: ``row``, ``cell`` (1-based), ``color``, ``printed``; null when the player may not act)
  and ``reroll`` (true when this player may re-roll now);
- ``last``: what the last event did (for the scoreboard and the buzzer).

>>> engine = TwentyOne()
>>> s = engine.new_game({"type": "new_game", "game": "twentyone",
...                      "players": [{"name": "Ann", "sheet": "A"}, {"name": "Bea", "sheet": "B"}]})
>>> s = engine.apply(s, {"type": "roll", "player": "Ann",
...     "dice": {"white": 4, "black": 1, "red": 1, "blue": 3, "yellow": 4, "green": 2}})
>>> engine.view(s)["detail"]["choices"]["Ann"]["exact"]
['black', 'blue']
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from itertools import combinations
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
    fields,
    unique_names,
    whole,
)

COLOURS = ("white", "black", "red", "blue", "yellow", "green")
SHEET_NAMES = ("A", "B", "C", "D", "E", "F")
ROWS, CELLS = 5, 6
BONUS = (0, 1, 3, 6, 10, 15, 21)  # T9: bonus for 0–6 exact hits in a row
STRUCK = 0  # a cell's mark: None empty, 0 struck, 1–6 the value entered

Layout = tuple[tuple[tuple[str, int], ...], ...]  # 5 rows x 6 cells of (colour, printed)


@lru_cache(maxsize=1)
def shipped_sheets() -> dict[str, Layout]:
    """The shipped layout of sheets A–F (T2; provisional, see twentyone_sheets.json)."""
    text = resources.files("companion.games").joinpath("twentyone_sheets.json").read_text("utf-8")
    return {name: read_layout(rows, name) for name, rows in json.loads(text)["sheets"].items()}


def read_layout(rows: Any, sheet: str) -> Layout:
    """T2: 5 rows x 6 cells of [colour, printed], each colour once per row, printed 1–6."""
    where = f"'sheets.{sheet}'"
    expect(rows, list, where)
    if len(rows) != ROWS:
        raise RuleError(BAD_VALUE, f"sheet {sheet} needs {ROWS} rows, not {len(rows)}")
    layout = []
    for r, row in enumerate(rows, start=1):
        expect(row, list, f"{where}[{r - 1}]")
        if len(row) != CELLS:
            raise RuleError(BAD_VALUE, f"row {r} of sheet {sheet} needs {CELLS} cells, not {len(row)}")
        cells = []
        for c, cell in enumerate(row, start=1):
            expect(cell, list, f"{where}[{r - 1}][{c - 1}]")
            if len(cell) != 2:
                raise RuleError(BAD_VALUE, f"cell {c} of row {r} of sheet {sheet} must be [colour, printed number]")
            colour = expect(cell[0], str, f"{where}[{r - 1}][{c - 1}][0]")
            printed = expect(cell[1], int, f"{where}[{r - 1}][{c - 1}][1]")
            if colour not in COLOURS:
                raise RuleError(BAD_VALUE, f"'{colour}' in row {r} of sheet {sheet} is not a die colour")
            if not 1 <= printed <= 6:
                raise RuleError(BAD_VALUE, f"cell {c} of row {r} of sheet {sheet} prints {printed}: 1 to 6 only")
            cells.append((colour, printed))
        colours = [colour for colour, _ in cells]
        if len(set(colours)) != CELLS:
            twice = next(col for col in colours if colours.count(col) > 1)
            raise RuleError(BAD_VALUE, f"row {r} of sheet {sheet} has {twice} twice: each colour once per row")
        layout.append(tuple(cells))
    return tuple(layout)


@dataclass
class Player:
    name: str
    sheet: str
    layout: Layout  # immutable, shared between copies
    provisional: bool  # the shipped layout, not the table's own pad
    marks: list[list[int | None]] = field(default_factory=lambda: [[None] * CELLS for _ in range(ROWS)])
    scores: list[int | None] = field(default_factory=lambda: [None] * ROWS)

    @property
    def row(self) -> int | None:
        """T8: index of the current row (the first not scored); None when all are."""
        for i, score in enumerate(self.scores):
            if score is None:
                return i
        return None

    @property
    def total(self) -> int:
        return sum(s for s in self.scores if s is not None)

    def copy(self) -> Player:
        return Player(self.name, self.sheet, self.layout, self.provisional,
                      [m[:] for m in self.marks], self.scores[:])


def row_score(layout_row: tuple[tuple[str, int], ...], marks: list[int | None], bonus: bool = True) -> int:
    """T9: sum of the entered values (struck cells 0) plus the bonus for its exact hits."""
    values = sum(m for m in marks if m is not None)
    hits = sum(1 for (_, printed), m in zip(layout_row, marks, strict=True) if m == printed)
    return values + (BONUS[hits] if bonus else 0)


@dataclass
class State:
    players: list[Player]
    selective_reroll: bool
    incomplete_row_bonus: bool
    roller: int = 0  # index of the player who rolls this turn
    turn: int = 1
    roll: dict[str, int] | None = None  # the dice now on the table
    first_roll: dict[str, int] | None = None  # before the re-roll
    acted: list[str] = field(default_factory=list)
    over: bool = False
    winners: list[str] = field(default_factory=list)
    last: dict[str, Any] | None = None

    def __deepcopy__(self, memo: dict) -> State:
        # The base class copies the state before every event. Layouts are immutable and shared;
        # so are the dice and ``last``: every handler makes new ones, never changes the old.
        return State([p.copy() for p in self.players], self.selective_reroll, self.incomplete_row_bonus,
                     self.roller, self.turn, self.roll, self.first_roll, self.acted[:], self.over,
                     self.winners[:], self.last)


def read_dice(dice: Mapping[str, Any]) -> dict[str, int]:
    """All six dice, each 1–6 (BAD_VALUE otherwise; their JSON types are checked with the event's)."""
    unknown = [c for c in dice if c not in COLOURS]
    if unknown:
        raise RuleError(BAD_VALUE, f"'{unknown[0]}' is not a die colour (white, black, red, blue, yellow, green)")
    missing = [c for c in COLOURS if c not in dice]
    if missing:
        raise RuleError(BAD_VALUE, f"the {missing[0]} die's value is missing: a roll names all six dice")
    for colour in COLOURS:
        if not whole(dice[colour]) or not 1 <= dice[colour] <= 6:
            raise RuleError(BAD_VALUE, f"the {colour} die shows {dice[colour]}: a die shows 1 to 6")
    return {c: dice[c] for c in COLOURS}


class TwentyOne(Engine):
    name = "twentyone"
    options = {
        "selective_reroll": Option(False),
        "incomplete_row_bonus": Option(True),
    }
    new_game_fields = fields(players=list, sheets=Field(dict, required=False))
    events = {
        "roll": fields(player=str, dice=Field(dict, items=int)),
        "reroll": fields(player=str, dice=Field(dict, items=int), kept=Field(list, required=False, items=str)),
        "enter": fields(player=str, colors=Field(list, items=str)),
        "strike": fields(player=str),
    }

    # -- set-up (T1, T2)
    def setup(self, event: Mapping[str, Any], options: dict[str, Any]) -> State:
        given = event.get("sheets") or {}
        own: dict[str, Layout] = {}
        for sheet, rows in given.items():
            if sheet not in SHEET_NAMES:
                raise RuleError(BAD_VALUE, f"'{sheet}' is not a sheet: A to F")
            own[sheet] = read_layout(rows, sheet)
        seats = []
        for i, p in enumerate(event["players"]):
            expect(p, dict, f"'players[{i}]'")
            name = expect(p.get("name"), str, f"'players[{i}].name'")
            sheet = expect(p.get("sheet"), str, f"'players[{i}].sheet'")
            seats.append((name, sheet))
        if not 2 <= len(seats) <= 6:
            raise RuleError(BAD_VALUE, f"Twenty One is played by 2 to 6 players, not {len(seats)}")
        unique_names([name for name, _ in seats], "player")
        for name, sheet in seats:
            if sheet not in SHEET_NAMES:
                raise RuleError(BAD_VALUE, f"{name}'s sheet '{sheet}' is not one of A to F")
        taken: dict[str, str] = {}
        for name, sheet in seats:  # T1
            if sheet in taken:
                raise RuleError("SHEET_TAKEN", f"sheet {sheet} is {taken[sheet]}'s: every player needs a different sheet",
                                {"sheet": sheet, "player": taken[sheet]})
            taken[sheet] = name
        players = [Player(name, sheet, own.get(sheet) or shipped_sheets()[sheet], sheet not in own)
                   for name, sheet in seats]
        return State(players, options["selective_reroll"], options["incomplete_row_bonus"])

    # -- events
    def _player(self, state: State, name: str) -> Player:
        for p in state.players:
            if p.name == name:
                return p
        raise RuleError(UNKNOWN_PLAYER, f"there is no player called '{name}'", {"player": name})

    def on_roll(self, state: State, event: Mapping[str, Any]) -> None:
        """T3: the roller rolls all six dice, once per turn."""
        player = self._player(state, event["player"])
        dice = read_dice(event["dice"])
        roller = state.players[state.roller]
        if player is not roller:
            raise RuleError(NOT_YOUR_TURN, f"it is {roller.name}'s roll", {"roller": roller.name})
        if state.roll is not None:
            raise RuleError("ALREADY_ROLLED", f"{roller.name} has rolled this turn: a re-roll is a 'reroll'",
                            {"roller": roller.name})
        state.roll = dice
        state.last = {"type": "roll", "player": player.name, "dice": dice}

    def on_reroll(self, state: State, event: Mapping[str, Any]) -> None:
        """T4: one re-roll before anyone acts; ones stay locked."""
        player = self._player(state, event["player"])
        dice = read_dice(event["dice"])
        kept = event.get("kept", [])
        for colour in kept:
            if colour not in COLOURS:
                raise RuleError(BAD_VALUE, f"'{colour}' is not a die colour")
        roller = state.players[state.roller]
        if player is not roller:
            raise RuleError(NOT_YOUR_TURN, f"only {roller.name}, who rolled, may re-roll", {"roller": roller.name})
        if state.roll is None:
            raise RuleError("ROLL_FIRST", f"{roller.name} has not rolled yet", {"player": roller.name})
        if state.acted:
            raise RuleError("ROLL_FINAL", f"{state.acted[0]} has already used this roll: it is final",
                            {"player": state.acted[0]})
        if state.first_roll is not None:
            raise RuleError("NO_MORE_REROLLS", "the one re-roll of this turn has been used")
        before = state.roll
        if all(v == 1 for v in before.values()):
            raise RuleError("NO_DICE_TO_REROLL", "all six dice show 1: there is nothing to re-roll")
        for colour in COLOURS:
            if before[colour] == 1 and dice[colour] != 1:
                raise RuleError("ONE_LOCKED", f"the {colour} die showed 1: ones stay locked and are not re-rolled",
                                {"colour": colour})
        for colour in kept:
            if dice[colour] != before[colour]:
                raise RuleError(BAD_VALUE, f"the {colour} die stayed but shows {dice[colour]}, not {before[colour]}")
            if before[colour] != 1 and not state.selective_reroll:
                raise RuleError("REROLL_ALL", f"the {colour} die must be re-rolled too: only ones stay "
                                              "(house rule selective_reroll is off)")
        state.first_roll = before
        state.roll = dice
        state.last = {"type": "reroll", "player": player.name, "dice": dice, "first_roll": before}

    def _may_act(self, state: State, player: Player) -> None:
        if state.roll is None:
            raise RuleError("ROLL_FIRST", f"{state.players[state.roller].name} has not rolled yet",
                            {"player": state.players[state.roller].name})
        if player.name in state.acted:  # T5
            raise RuleError("ALREADY_ACTED", f"{player.name} has already entered or struck on this roll",
                            {"player": player.name})

    def on_enter(self, state: State, event: Mapping[str, Any]) -> None:
        """T5, T6, T8: one or more dice into the current row."""
        player = self._player(state, event["player"])
        colours = event["colors"]
        for colour in colours:
            if colour not in COLOURS:
                raise RuleError(BAD_VALUE, f"'{colour}' is not a die colour (white, black, red, blue, yellow, green)")
        self._may_act(state, player)
        if not colours:
            raise RuleError("NOTHING_ENTERED", "name at least one die to enter, or strike a cell")
        assert state.roll is not None
        r = player.row
        assert r is not None
        cells = player.layout[r]
        marks = player.marks[r]
        entered = []
        for colour in colours:
            i = next(i for i, (c, _) in enumerate(cells) if c == colour)
            printed = cells[i][1]
            if colour in (e["color"] for e in entered):  # T6: its cell has just taken this die
                raise RuleError("CELL_FILLED", f"the {colour} die is named twice: its cell takes one die",
                                {"colour": colour})
            if marks[i] is not None:
                what = "struck" if marks[i] == STRUCK else f"filled with {marks[i]}"
                raise RuleError("CELL_FILLED", f"{player.name}'s {colour} cell in row {r + 1} is already {what}")
            value = state.roll[colour]
            if value > printed:
                raise RuleError("VALUE_TOO_HIGH",
                                f"the {colour} die shows {value}, above the {printed} printed in row {r + 1}",
                                {"colour": colour, "value": value, "printed": printed, "row": r + 1})
            marks[i] = value
            entered.append({"color": colour, "cell": i + 1, "value": value, "exact": value == printed})
        state.last = {"type": "enter", "player": player.name, "row": r + 1, "entered": entered}
        self._after_act(state, player, r)

    def on_strike(self, state: State, event: Mapping[str, Any]) -> None:
        """T7: the leftmost empty cell of the current row."""
        player = self._player(state, event["player"])
        self._may_act(state, player)
        r = player.row
        assert r is not None
        i = player.marks[r].index(None)
        player.marks[r][i] = STRUCK
        colour, printed = player.layout[r][i]
        state.last = {"type": "strike", "player": player.name, "row": r + 1, "cell": i + 1,
                      "color": colour, "printed": printed}
        self._after_act(state, player, r)

    def _after_act(self, state: State, player: Player, r: int) -> None:
        state.acted.append(player.name)
        if None not in player.marks[r]:  # T8, T9: a full row is scored at once
            player.scores[r] = row_score(player.layout[r], player.marks[r])
            assert state.last is not None
            state.last["scored"] = {"row": r + 1, "score": player.scores[r]}
        if len(state.acted) == len(state.players):
            self._end_turn(state)

    def _end_turn(self, state: State) -> None:
        """T10: the next player rolls; T11: unless someone has finished row 5."""
        if any(p.row is None for p in state.players):
            for p in state.players:
                r = p.row
                if r is None:
                    continue
                p.scores[r] = row_score(p.layout[r], p.marks[r], state.incomplete_row_bonus)
                for later in range(r + 1, ROWS):  # rows never started score 0
                    p.scores[later] = 0
            best = max(p.total for p in state.players)  # T12
            state.winners = [p.name for p in state.players if p.total == best]
            state.over = True
            assert state.last is not None
            state.last["game_over"] = True
            return
        state.roller = (state.roller + 1) % len(state.players)
        state.turn += 1
        state.roll = state.first_roll = None
        state.acted = []

    # -- queries
    def finished(self, state: State) -> bool:
        return state.over

    def to_act(self, state: State) -> list[str]:
        if state.over:
            return []
        if state.roll is None:
            return [state.players[state.roller].name]
        return [p.name for p in state.players if p.name not in state.acted]

    def may_reroll(self, state: State) -> bool:
        return (not state.over and state.roll is not None and not state.acted and state.first_roll is None
                and any(v != 1 for v in state.roll.values()))

    def enterable(self, state: State, player: Player) -> list[str]:
        """The colours of the current roll this player may enter now (T6), in die order."""
        r = player.row
        if state.over or state.roll is None or player.name in state.acted or r is None:
            return []
        roll = state.roll
        printed_of = dict(player.layout[r])
        open_colours = {c for (c, _), m in zip(player.layout[r], player.marks[r], strict=True) if m is None}
        return [c for c in COLOURS if c in open_colours and roll[c] <= printed_of[c]]

    def choices(self, state: State, player: Player) -> dict[str, Any]:
        """What this player may do with the current roll: the phone UI's buttons."""
        colours = self.enterable(state, player)
        strike = None
        exact: list[str] = []
        r = player.row
        if state.roll is not None and not state.over and player.name not in state.acted and r is not None:
            i = player.marks[r].index(None)  # T7: the leftmost empty cell
            colour, printed = player.layout[r][i]
            strike = {"row": r + 1, "cell": i + 1, "color": colour, "printed": printed}
            printed_of = dict(player.layout[r])
            exact = [c for c in colours if state.roll[c] == printed_of[c]]
        return {"enter": colours, "exact": exact, "strike": strike,
                "reroll": player is state.players[state.roller] and self.may_reroll(state)}

    def sheet_view(self, player: Player) -> dict[str, Any]:
        rows = []
        for cells, marks, score in zip(player.layout, player.marks, player.scores, strict=True):
            rows.append({
                "cells": [{"color": c, "printed": p, "value": m if m else None, "exact": m == p,
                           "struck": m == STRUCK} for (c, p), m in zip(cells, marks, strict=True)],
                "score": score,
                "complete": None not in marks,
            })
        row = player.row
        return {"sheet": player.sheet, "provisional": player.provisional,
                "row": None if row is None else row + 1, "total": player.total, "rows": rows}

    def view(self, state: State) -> dict[str, Any]:
        return {
            "players": [p.name for p in state.players],
            "to_act": self.to_act(state),
            "finished": state.over,
            "winners": list(state.winners),
            "scores": {p.name: p.total for p in state.players},
            "detail": {
                "options": {"selective_reroll": state.selective_reroll,
                            "incomplete_row_bonus": state.incomplete_row_bonus},
                "turn": state.turn,
                "roller": state.players[state.roller].name,
                "roll": dict(state.roll) if state.roll else None,
                "first_roll": dict(state.first_roll) if state.first_roll else None,
                "rerolled": state.first_roll is not None,
                "roll_final": state.roll is not None and not self.may_reroll(state),
                "acted": [p.name for p in state.players if p.name in state.acted],
                "waiting": [p.name for p in state.players if p.name not in state.acted] if state.roll else [],
                "sheets": {p.name: self.sheet_view(p) for p in state.players},
                "choices": {p.name: self.choices(state, p) for p in state.players},
                "last": copy.deepcopy(state.last),
            },
        }

    def legal_actions(self, state: State) -> list[dict[str, Any]]:
        if state.over:
            return []
        roller = state.players[state.roller].name
        if state.roll is None:
            return [{"type": "roll", "player": roller}]
        actions: list[dict[str, Any]] = []
        if self.may_reroll(state):
            actions.append({"type": "reroll", "player": roller})
        for p in state.players:
            if p.name in state.acted:
                continue
            colours = self.enterable(state, p)
            for k in range(1, len(colours) + 1):
                for chosen in combinations(colours, k):
                    actions.append({"type": "enter", "player": p.name, "colors": list(chosen)})
            actions.append({"type": "strike", "player": p.name})
        return actions

    # -- simulation
    def random_new_game(self, rng: random.Random) -> dict[str, Any]:
        n = rng.randint(2, 6)
        sheets = rng.sample(SHEET_NAMES, n)
        return {"type": "new_game", "game": self.name,
                "players": [{"name": f"P{i + 1}", "sheet": s} for i, s in enumerate(sheets)],
                "options": {"selective_reroll": rng.random() < 0.5, "incomplete_row_bonus": rng.random() < 0.5}}

    def random_action(self, state: State, rng: random.Random) -> dict[str, Any]:
        action = dict(rng.choice(self.legal_actions(state)))
        if action["type"] == "roll":
            action["dice"] = {c: rng.randint(1, 6) for c in COLOURS}
        elif action["type"] == "reroll":
            assert state.roll is not None
            kept = [c for c in COLOURS if state.roll[c] == 1
                    or (state.selective_reroll and rng.random() < 0.3)]
            action["dice"] = {c: state.roll[c] if c in kept else rng.randint(1, 6) for c in COLOURS}
            action["kept"] = kept
        return action

    def stats(self, state: State) -> dict[str, float]:
        best = max(p.total for p in state.players)
        return {"turns": state.turn, "winning_score": best, "players": len(state.players)}

