"""From a settled dice roll the camera read to the game's event (or a reason why there is none).

The vision knows no rules and the rules see no pixels; this module sits between them and asks
the game only what it publishes in ``Table.state()``: the sides or players, and ``legal`` — the
engine's "what may happen now" (``{"type": "dice", "side": "A"}``, ``{"type": "roll", "player":
"Ann"}`` templates waiting for the dice from the table).

- **21 Exact** set-up dice (RULES.md E1, E2): each side rolls its own four dice (blue, red, green,
  yellow) in its own half of the table: side A's half is x below the middle (EVENTS.md, "Reading
  cups from an image"), the first side listed is A's half, the second the other. Four dice of the
  four colours in a half whose side still has to roll make ``{"type": "dice", ...}``. Dice that
  do not show four different numbers are proposed all the same: the rules refuse them
  (``DICE_NOT_DISTINCT``) and the buzzer tells the players to roll again.
- **Twenty One** (T3, T4): all six dice (white, black, red, blue, yellow, green), one of each.
  Whether it is the roll or the re-roll comes from the game: a ``roll`` template in ``legal`` makes
  a roll, a ``reroll`` template a re-roll — unless the dice are the roll already on the table
  (the same dice seen again), which is nothing new.

The answer is a :class:`Suggestion`: the event, or None with the reason a player (or the health
page) can read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.live.watch import Proposed

log = logging.getLogger(__name__)

EXACT21_COLOURS = ("blue", "red", "green", "yellow")
TWENTYONE_COLOURS = ("white", "black", "red", "blue", "yellow", "green")


@dataclass(frozen=True)
class DieReading:
    """One die the camera read: face-up value, colour name (``"unknown"`` if not confident) and
    its centre in table millimetres (origin at marker 0, x towards marker 1)."""

    value: int
    color: str
    center: tuple[float, float]
    confidence: float = 1.0

    @classmethod
    def of(cls, die: DieReading | Mapping[str, Any] | Any) -> DieReading:
        """A reading from a dict (EVENTS.md's dice JSON, with ``center`` in table mm) or any
        object with ``value``, ``color`` and ``center``."""
        if isinstance(die, DieReading):
            return die
        get = die.get if isinstance(die, Mapping) else lambda k, d=None: getattr(die, k, d)
        x, y = get("center")
        return cls(int(get("value")), str(get("color")), (float(x), float(y)),
                   float(get("confidence", 1.0) or 1.0))

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "color": self.color,
                "center": [round(self.center[0], 1), round(self.center[1], 1)]}


@dataclass
class Suggestion:
    event: dict[str, Any] | None
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.event is not None


def dice_event(dice: Iterable[DieReading | Mapping[str, Any]], state: Mapping[str, Any],
               middle_x: float) -> Suggestion:
    """The event a settled roll means in the current game, or None and why."""
    readings = [DieReading.of(d) for d in dice]
    game = state.get("game")
    if game is None:
        return Suggestion(None, "no game has been started")
    if state.get("finished"):
        return Suggestion(None, "the game has finished")
    if not readings:
        return Suggestion(None, "no dice seen")
    if game == "exact21":
        suggestion = _exact21(readings, state, middle_x)
    elif game == "twentyone":
        suggestion = _twentyone(readings, state)
    else:
        return Suggestion(None, f"the camera proposes no dice events in {game}")
    if suggestion.event is not None and _already_pending(suggestion.event, state):
        return Suggestion(None, "already proposed, waiting for confirmation", suggestion.evidence)
    return suggestion


def _already_pending(event: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
    return any(p.get("event") == event for p in state.get("pending", []))


def _legal(state: Mapping[str, Any], etype: str) -> list[Mapping[str, Any]]:
    return [a for a in state.get("legal", []) if a.get("type") == etype]


def _one_of_each(dice: list[DieReading], colours: tuple[str, ...]) -> tuple[dict[str, int] | None, str]:
    """{colour: value} if the dice are exactly one of each colour, else None and what is wrong."""
    unknown = [d for d in dice if d.color not in colours]
    if unknown:
        d = unknown[0]
        what = "of unknown colour" if d.color == "unknown" else f"coloured {d.color}"
        return None, (f"a die {what} at x={d.center[0]:.0f} y={d.center[1]:.0f} mm "
                      "(calibrate the dice colours?)")
    seen: dict[str, int] = {}
    for d in dice:
        if d.color in seen:
            return None, f"two {d.color} dice"
        seen[d.color] = d.value
    missing = [c for c in colours if c not in seen]
    if missing:
        return None, f"{len(seen)} of {len(colours)} dice seen (no {', '.join(missing)})"
    return {c: seen[c] for c in colours}, ""


def _exact21(dice: list[DieReading], state: Mapping[str, Any], middle_x: float) -> Suggestion:
    """E1/E2: a side's four set-up dice, told apart by the half of the table they lie in."""
    sides = list(state.get("players", []))
    waiting = [a.get("side") for a in _legal(state, "dice")]
    if not waiting:
        return Suggestion(None, "both sides' dice are set (E2: once per game)")
    halves: dict[str, list[DieReading]] = {name: [] for name in sides}
    for d in dice:
        halves[sides[0] if d.center[0] < middle_x else sides[1]].append(d)
    problems = []
    for name in sides:
        mine = halves[name]
        if not mine:
            continue
        if name not in waiting:
            problems.append(f"side {name}'s dice are already set")
            continue
        values, problem = _one_of_each(mine, EXACT21_COLOURS)
        if values is None:
            problems.append(f"side {name}: {problem}")
            continue
        evidence = {"dice": [d.as_dict() for d in mine], "half": "low x" if name == sides[0] else "high x",
                    "middle_x": middle_x}
        return Suggestion({"type": "dice", "side": name, "values": values}, f"side {name}'s set-up roll",
                          evidence)
    return Suggestion(None, "; ".join(problems) or "no dice seen")


def _twentyone(dice: list[DieReading], state: Mapping[str, Any]) -> Suggestion:
    """T3/T4: the roller's roll, or their one re-roll, from all six dice."""
    values, problem = _one_of_each(dice, TWENTYONE_COLOURS)
    if values is None:
        return Suggestion(None, problem)
    evidence = {"dice": [d.as_dict() for d in dice]}
    roll, reroll = _legal(state, "roll"), _legal(state, "reroll")
    if roll:
        player = roll[0].get("player")
        return Suggestion({"type": "roll", "player": player, "dice": values}, f"{player}'s roll", evidence)
    if reroll:
        player = reroll[0].get("player")
        current = (state.get("detail") or {}).get("roll")
        if isinstance(current, Mapping) and {c: current.get(c) for c in TWENTYONE_COLOURS} == values:
            return Suggestion(None, f"the same dice as {player}'s roll on the table", evidence)
        return Suggestion({"type": "reroll", "player": player, "dice": values}, f"{player}'s re-roll (T4)",
                          evidence)
    return Suggestion(None, "the roll is final: waiting for every player to enter or strike (T5)", evidence)


Settled = Callable[[Any, float], "Iterable[DieReading | Mapping[str, Any]] | None"]


class DiceProposals:
    """A frame processor for :class:`companion.live.loop.Live`: ``settled(frame, t)`` (the dice
    watch + reader + calibration, giving dice in table mm once a roll has settled, else None)
    turned into proposed events with :func:`dice_event` against the table's current state."""

    name = "dice"

    def __init__(self, settled: Settled, state: Callable[[], Mapping[str, Any]], middle_x: float):
        self.settled = settled
        self.state = state
        self.middle_x = middle_x
        self.last: Suggestion | None = None

    def feed(self, frame: Any, t: float) -> list[Proposed]:
        dice = self.settled(frame, t)
        if dice is None:
            return []
        suggestion = dice_event(dice, self.state(), self.middle_x)
        self.last = suggestion
        if suggestion.event is None:
            log.info("settled dice, no event: %s", suggestion.reason)
            return []
        return [Proposed(suggestion.event, {**suggestion.evidence, "why": suggestion.reason, "t": t})]

    def health(self) -> dict[str, Any]:
        if self.last is None:
            return {"last": None}
        return {"last": self.last.event, "reason": self.last.reason}
