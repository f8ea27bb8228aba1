"""exactly: roll the coin die, move one token, be the one whose stack holds exactly €1
(RULES.md X1–X11).

Supply: 15 x €1 trophies and 10 each of 50c, 20c, 10c, 5c tokens. The die shows
``0 ? 50 20 10 5``. The active player rolls once and moves one token of the rolled value (any
coin value for ``?``) between two different stacks — their own, another player's or the
centre's; nobody's stack may receive a token while it holds more than 150c. A stack at exactly
100c wins the round and a trophy; three trophies win the game.

Events (EVENTS.md): ``start_roll`` (optional, before the first roll), ``roll`` with ``face``,
``move`` with ``value`` (cents), ``from`` and ``to`` (a player or ``"center"``), ``pass``.
A roll of ``0`` and a roll that leaves no legal move pass the turn by themselves; ``pass`` is
refused with ``MUST_MOVE`` while a legal move exists, so it never succeeds after a roll (every
rolled face either has a move or passed already) and is ``ROLL_FIRST`` before one.

Points the documents leave open, decided here: a ``start_roll`` may name only some players
(after ``START_TIE`` the tied players roll again; the highest of those who rolled starts); a
``move`` of 100c (a €1 trophy) or 0c is ``WRONG_VALUE`` — values of the game that no face lets
anyone move (X3) — while a value that is no token at all (25c) is ``BAD_VALUE``; ``pass`` before
the roll is ``ROLL_FIRST``; with ``simultaneous_exact: "active_first"`` and a move between two
other players, the first of the two clockwise from the active player wins the round.

``detail`` of the view:

- ``options``; ``round`` (1-based); ``active`` (the player on turn, null when finished);
  ``phase``: ``"roll"`` (the active player rolls next), ``"move"`` (a face is waiting for its
  move) or ``"over"``; ``face`` (the rolled face waiting for a move, else null);
- ``stacks.<name|center>``: ``total`` (cents of coin tokens) and ``tokens`` (count per value,
  keys ``"50" "20" "10" "5"``); €1 trophies are never in a stack: they are the ``scores``, and
  ``trophies_left`` is how many are still in the centre;
- ``legal_moves``: every legal ``move`` event for the current roll (the phone UI offers them as
  taps; empty before the roll);
- ``last``: what the last event did: for a roll, ``auto_pass`` is ``"zero"`` or
  ``"no_legal_move"`` when the turn passed by itself, else null; after a move, ``round_won`` names
  the round's winners; ``next`` is who is on turn after it.

>>> engine = Exactly()
>>> s = engine.new_game({"type": "new_game", "game": "exactly", "players": ["P1", "P2"]})
>>> s = engine.apply(s, {"type": "roll", "player": "P1", "face": "5"})
>>> len(engine.view(s)["detail"]["legal_moves"])
6
>>> s = engine.apply(s, {"type": "move", "player": "P1", "value": 5, "from": "P2", "to": "P1"})
>>> engine.view(s)["detail"]["stacks"]["P1"]["total"]
10
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.games.base import (
    BAD_VALUE,
    NOT_YOUR_TURN,
    UNKNOWN_PLAYER,
    Engine,
    Field,
    Option,
    RuleError,
    expect_list_of,
    fields,
    name_list,
    unique_names,
    whole,
)

FACES = ("0", "?", "50", "20", "10", "5")
START_RANK = {"?": 5, "50": 4, "20": 3, "10": 2, "5": 1, "0": 0}  # X2: "?" is the highest
VALUES = (50, 20, 10, 5)  # cents of the coin tokens, largest first
TOKENS_PER_VALUE = 10
TROPHIES = 15
EXACT = 100  # X8
CAP = 150  # X5
CENTER = "center"
NEVER_MOVED = (100, 0)  # X3: "never a €1 trophy, never '0'" — the wrong value for any face

Stack = dict[int, int]  # value in cents -> tokens


def total(stack: Stack) -> int:
    return sum(value * n for value, n in stack.items())


@dataclass
class State:
    players: list[str]
    cap_mode: str
    simultaneous_exact: str
    restart_with_5c: bool
    target: int
    stacks: dict[str, Stack]  # "center" first, then the players in seat order
    trophies: dict[str, int]
    active: int = 0
    face: str | None = None  # the rolled face waiting for its move
    started: bool = False  # a start_roll or a roll has happened (X2)
    round: int = 1
    over: bool = False
    winners: list[str] = field(default_factory=list)
    last: dict[str, Any] | None = None
    auto_passes: int = 0
    moves: int = 0

    def __deepcopy__(self, memo: dict) -> State:
        # The base class copies the state before every event; only these parts change (``last``
        # is replaced by every handler, never changed in place).
        return State(self.players, self.cap_mode, self.simultaneous_exact, self.restart_with_5c, self.target,
                     {k: dict(v) for k, v in self.stacks.items()}, dict(self.trophies), self.active,
                     self.face, self.started, self.round, self.over, self.winners[:], self.last,
                     self.auto_passes, self.moves)


def fresh_stacks(players: list[str], with_5c: bool) -> dict[str, Stack]:
    """Every token in the centre, except one 5c per player when ``with_5c`` (X1, X10)."""
    stacks = {CENTER: dict.fromkeys(VALUES, TOKENS_PER_VALUE)}
    for p in players:
        stacks[p] = dict.fromkeys(VALUES, 0)
        if with_5c:
            stacks[p][5] = 1
            stacks[CENTER][5] -= 1
    return stacks


def capped(state: State, stack: str, value: int) -> bool:
    """X5: may this stack not receive a token of ``value``? The centre has no cap."""
    if stack == CENTER:
        return False
    held = total(state.stacks[stack])
    return held > CAP if state.cap_mode == "before" else held + value > CAP


def face_values(face: str) -> tuple[int, ...]:
    """X3: the token values a face lets the player move."""
    if face == "?":
        return VALUES
    if face == "0":
        return ()
    return (int(face),)


def legal_moves(state: State) -> list[dict[str, Any]]:
    """Every legal move for the rolled face (X3–X5), as complete ``move`` events."""
    if state.over or state.face is None:
        return []
    player = state.players[state.active]
    moves = []
    for value in face_values(state.face):
        open_targets = [t for t in state.stacks if not capped(state, t, value)]
        for source, stack in state.stacks.items():
            if stack[value]:
                moves += [{"type": "move", "player": player, "value": value, "from": source, "to": target}
                          for target in open_targets if target != source]
    return moves


class Exactly(Engine):
    name = "exactly"
    options = {
        "cap_mode": Option("before", ("before", "after")),
        "simultaneous_exact": Option("both", ("both", "active_first")),
        "restart_with_5c": Option(False),
        "target": Option(3, minimum=1),
    }
    new_game_fields = fields(players=list)
    events = {
        "start_roll": fields(faces=Field(dict, items=str)),
        "roll": fields(player=str, face=str),
        "move": fields(player=str, value=int, **{"from": str, "to": str}),
        "pass": fields(player=str),
    }

    # -- set-up (X1)
    def setup(self, event: Mapping[str, Any], options: dict[str, Any]) -> State:
        players = expect_list_of(event["players"], str, "'players'")
        if not 2 <= len(players) <= 6:
            raise RuleError(BAD_VALUE, f"exactly is played by 2 to 6 players, not {len(players)}")
        unique_names(players, "player")
        if CENTER in players:
            raise RuleError(BAD_VALUE, f"'{CENTER}' is the name of the centre stack, not a player's")
        # X11 sets no upper bound: a long game can outlast the box's 15 trophies (a table then
        # counts with anything), so trophies_left stops at 0 and the target is not refused
        return State(list(players), options["cap_mode"], options["simultaneous_exact"],
                     options["restart_with_5c"], options["target"], fresh_stacks(players, True),
                     dict.fromkeys(players, 0))

    # -- events
    def _player(self, state: State, name: str) -> int:
        if name not in state.players:
            raise RuleError(UNKNOWN_PLAYER, f"there is no player called '{name}'", {"player": name})
        return state.players.index(name)

    def _stack(self, state: State, name: str) -> str:
        if name not in state.stacks:
            raise RuleError(UNKNOWN_PLAYER, f"there is no stack '{name}': a player's name or '{CENTER}'")
        return name

    def _on_turn(self, state: State, seat: int) -> None:
        if seat != state.active:
            raise RuleError(NOT_YOUR_TURN, f"it is {state.players[state.active]}'s turn",
                            {"player": state.players[state.active]})

    def on_start_roll(self, state: State, event: Mapping[str, Any]) -> None:
        """X2: the highest face starts; a tie for the highest rolls again."""
        faces = event["faces"]
        for name in faces:
            self._player(state, name)
        for name, face in faces.items():
            if face not in FACES:
                raise RuleError(BAD_VALUE, f"{name}'s face '{face}' is not one of 0 ? 50 20 10 5")
        if not faces:
            raise RuleError(BAD_VALUE, "nobody rolled: give the start roll's faces")
        if state.started:
            raise RuleError("ALREADY_ROLLED", "the start player is decided: the game is under way")
        # Only the players who rolled count: after a START_TIE the table may let just the tied
        # players roll again ("roll again", X2), so a start roll need not name everybody.
        best = max(START_RANK[f] for f in faces.values())
        top = [p for p in state.players if p in faces and START_RANK[faces[p]] == best]
        if len(top) > 1:
            raise RuleError("START_TIE", f"{name_list(top)} tie for the highest roll: roll again", {"players": top})
        state.active = state.players.index(top[0])
        state.started = True
        state.last = {"type": "start_roll", "faces": dict(faces), "next": top[0]}

    def on_roll(self, state: State, event: Mapping[str, Any]) -> None:
        """X3, X6: one roll per turn; 0, or a face without a legal move, passes the turn."""
        seat = self._player(state, event["player"])
        face = event["face"]
        if face not in FACES:
            raise RuleError(BAD_VALUE, f"'{face}' is not a face of the die: 0 ? 50 20 10 5")
        self._on_turn(state, seat)
        if state.face is not None:
            raise RuleError("ALREADY_ROLLED", f"{state.players[seat]} has rolled {state.face}: move a token",
                            {"player": state.players[seat], "face": state.face})
        state.started = True
        state.face = face
        auto_pass = None
        if face == "0":
            auto_pass = "zero"
        elif not legal_moves(state):
            auto_pass = "no_legal_move"
        state.last = {"type": "roll", "player": state.players[seat], "face": face, "auto_pass": auto_pass}
        if auto_pass:
            state.auto_passes += 1
            self._next_turn(state)
        state.last["next"] = state.players[state.active]

    def on_move(self, state: State, event: Mapping[str, Any]) -> None:
        """X3–X5, X7: one token of the rolled value between two different stacks."""
        seat = self._player(state, event["player"])
        source = self._stack(state, event["from"])
        target = self._stack(state, event["to"])
        value = event["value"]
        if not whole(value) or value not in (*VALUES, *NEVER_MOVED):
            raise RuleError(BAD_VALUE, f"{value}c: a token is worth 50, 20, 10 or 5 cents")
        self._on_turn(state, seat)
        if state.face is None:
            raise RuleError("ROLL_FIRST", f"{state.players[seat]} has not rolled yet", {"player": state.players[seat]})
        if value in NEVER_MOVED:  # X3: a value of the game, but never one a face lets you move
            what = "a €1 trophy never moves" if value == EXACT else "'0' moves nothing"
            raise RuleError("WRONG_VALUE", f"the die shows {state.face}: {what}; move a 50, 20, 10 or 5c token",
                            {"face": state.face})
        if value not in face_values(state.face):
            raise RuleError("WRONG_VALUE", f"the die shows {state.face}: move a {state.face}c token, not {value}c",
                            {"face": state.face, "value": value})
        if source == target:
            raise RuleError("SAME_STACK", "a token moves from one stack to a different one")
        if not state.stacks[source][value]:
            owner = "the centre" if source == CENTER else source
            raise RuleError("NO_SUCH_TOKEN", f"{owner} has no {value}c token (no change is ever made)",
                            {"stack": source, "value": value})
        if capped(state, target, value):
            held = total(state.stacks[target])
            if state.cap_mode == "before":
                raise RuleError("CAP_EXCEEDED", f"{target} holds {held}c: no token may go onto a stack over {CAP}c",
                                {"stack": target, "held": held, "cap": CAP})
            raise RuleError("CAP_EXCEEDED", f"{target} holds {held}c: {value}c more would be over {CAP}c",
                            {"stack": target, "held": held, "value": value, "cap": CAP})
        state.stacks[source][value] -= 1
        state.stacks[target][value] += 1
        state.moves += 1
        state.last = {"type": "move", "player": state.players[seat], "value": value, "from": source, "to": target}
        exact = [s for s in state.players if s in (source, target) and total(state.stacks[s]) == EXACT]
        if not exact:
            self._next_turn(state)
        else:
            self._round_won(state, exact)
        state.last["next"] = None if state.over else state.players[state.active]

    def on_pass(self, state: State, event: Mapping[str, Any]) -> None:
        """X6: no pass while a legal move exists."""
        seat = self._player(state, event["player"])
        self._on_turn(state, seat)
        if state.face is None:
            raise RuleError("ROLL_FIRST", f"{state.players[seat]} rolls first", {"player": state.players[seat]})
        # A face without a legal move passed the turn at the roll, so a move exists here.
        raise RuleError("MUST_MOVE", f"the die shows {state.face} and a move exists: moving is compulsory",
                        {"face": state.face})

    def _next_turn(self, state: State) -> None:
        state.active = (state.active + 1) % len(state.players)
        state.face = None

    def _round_won(self, state: State, exact: list[str]) -> None:
        """X8–X11: a trophy for each stack at exactly 100c; stacks back to the centre."""
        if len(exact) > 1 and state.simultaneous_exact == "active_first":
            n = len(state.players)
            exact = [min(exact, key=lambda p: (state.players.index(p) - state.active) % n)]
        for p in exact:
            state.trophies[p] += 1
        assert state.last is not None
        state.last["round_won"] = exact
        champions = [p for p in exact if state.trophies[p] >= state.target]
        if champions:  # X11
            state.over = True
            state.winners = champions
            state.face = None
            return
        state.stacks = fresh_stacks(state.players, state.restart_with_5c)  # X10
        state.round += 1
        self._next_turn(state)

    # -- queries
    def finished(self, state: State) -> bool:
        return state.over

    def view(self, state: State) -> dict[str, Any]:
        return {
            "players": list(state.players),
            "to_act": [] if state.over else [state.players[state.active]],
            "finished": state.over,
            "winners": list(state.winners),
            "scores": dict(state.trophies),
            "detail": {
                "options": {"cap_mode": state.cap_mode, "simultaneous_exact": state.simultaneous_exact,
                            "restart_with_5c": state.restart_with_5c, "target": state.target},
                "round": state.round,
                "active": None if state.over else state.players[state.active],
                "phase": "over" if state.over else "roll" if state.face is None else "move",
                "face": state.face,
                "stacks": {name: {"total": total(stack), "tokens": {str(v): stack[v] for v in VALUES}}
                           for name, stack in state.stacks.items()},
                "trophies_left": max(0, TROPHIES - sum(state.trophies.values())),
                "legal_moves": legal_moves(state),
                "last": copy.deepcopy(state.last),
            },
        }

    def legal_actions(self, state: State) -> list[dict[str, Any]]:
        if state.over:
            return []
        if state.face is not None:
            return legal_moves(state)
        actions: list[dict[str, Any]] = [{"type": "roll", "player": state.players[state.active]}]
        if not state.started:
            actions.append({"type": "start_roll"})
        return actions

    # -- simulation
    def random_new_game(self, rng: random.Random) -> dict[str, Any]:
        n = rng.randint(2, 6)
        return {"type": "new_game", "game": self.name, "players": [f"P{i + 1}" for i in range(n)],
                "options": {"cap_mode": rng.choice(("before", "after")),
                            "simultaneous_exact": rng.choice(("both", "active_first")),
                            "restart_with_5c": rng.random() < 0.5, "target": rng.choice((2, 3, 3))}}

    def random_action(self, state: State, rng: random.Random) -> dict[str, Any]:
        action = dict(rng.choice(self.legal_actions(state)))
        if action["type"] == "roll":
            action["face"] = rng.choice(FACES)
        elif action["type"] == "start_roll":
            while True:  # the table rolls again after a tie for the highest
                faces = {p: rng.choice(FACES) for p in state.players}
                ranks = sorted((START_RANK[f] for f in faces.values()), reverse=True)
                if ranks[0] != ranks[1]:
                    break
            action["faces"] = faces
        return action

    def stats(self, state: State) -> dict[str, float]:
        return {"rounds": state.round, "moves": state.moves, "auto_passes": state.auto_passes,
                "players": len(state.players)}
