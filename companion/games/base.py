"""The engine protocol shared by the four games.

An engine is pure: no I/O, no clock, no randomness unless injected. It turns the `new_game`
event into a state, and each later event into a *new* state (the old one is never touched), or
refuses the event with a :class:`RuleError` carrying a reason code of ``docs/spec/EVENTS.md``.

An event that is not a rule matter at all (not an object, unknown ``type``, a missing required
field, a field of the wrong JSON type) raises :class:`EventError`; ``companion replay`` turns it
into ``line N: ...`` and exit status 2, the API into a 400.

A game in progress is a :class:`Game`: the engine, the stack of states (``push``/``pop`` as in
python-chess), and the events that made them.

>>> from companion.games import get_engine
>>> game = Game.start({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
>>> game.view()["to_act"]
['A', 'B']
>>> game.push({"type": "throw", "side": "A", "cup": "red"})
Traceback (most recent call last):
...
companion.games.base.RuleError: DICE_NOT_SET: no throw before both sides have rolled their four dice
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

# Codes that come before a game's own, in this order (EVENTS.md "Reason codes").
GAME_OVER = "GAME_OVER"
UNKNOWN_PLAYER = "UNKNOWN_PLAYER"
BAD_VALUE = "BAD_VALUE"
NOT_YOUR_TURN = "NOT_YOUR_TURN"
NOTHING_TO_UNDO = "NOTHING_TO_UNDO"  # our extension: undo with only the new_game left

# Keys every engine view has, in the order `companion replay` prints them (plus "game" first
# and "rejected" before "detail", added by the caller).
VIEW_KEYS = ("players", "to_act", "finished", "winners", "scores", "detail")

# Fields any event may carry and every engine ignores.
ENVELOPE_FIELDS = frozenset({"type", "source", "at"})


class RuleError(Exception):
    """The rules refuse an event. ``code`` is a reason code of EVENTS.md; ``message`` is a
    sentence a player understands. A refused event changes nothing."""

    def __init__(self, code: str, message: str, params: dict[str, Any] | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        # the specifics the sentence names (players, values), for a phone that says it in its own
        # language: the API sends them as "args"; a code with the same names says the same thing
        self.params = dict(params or {})

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class EventError(ValueError):
    """An event that is malformed, not refused: not JSON, unknown type or game, a missing required
    field, a field of the wrong JSON type."""


# --- JSON type checks -------------------------------------------------------------------------

_JSON_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
               dict: "an object", list: "an array"}


def is_json_type(value: Any, kind: type) -> bool:
    """True if ``value`` has JSON type ``kind`` (int excludes booleans; float accepts ints)."""
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


class NotJson(ValueError):
    """NaN, Infinity or -Infinity: Python's JSON reader takes them, JSON (RFC 8259) does not."""


def no_json_constant(name: str) -> Any:
    """``json.loads(..., parse_constant=no_json_constant)``: a log line or a request body holding
    NaN or Infinity is not JSON, so no table ever stores one."""
    raise NotJson(f"{name} is not a JSON number")


def not_text(value: Any) -> str | None:
    """The first string anywhere in a decoded JSON value (keys too) that is not Unicode text (a
    lone UTF-16 surrogate such as ``"\\ud800"``: valid JSON, but it can be neither stored nor
    printed as UTF-8), else None. A loop, not recursion: the value may be nested as deep as the
    JSON reader allows."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return None


def expect(value: Any, kind: type, where: str) -> Any:
    """Return ``value`` if it has JSON type ``kind``, else raise EventError naming ``where``."""
    if not is_json_type(value, kind):
        raise EventError(f"{where} must be {_JSON_NAMES[kind]}, not {json_type_name(value)}")
    return value


def expect_list_of(value: Any, kind: type, where: str) -> list:
    expect(value, list, where)
    for i, item in enumerate(value):
        expect(item, kind, f"{where}[{i}]")
    return value


def expect_dict_of(value: Any, kind: type, where: str) -> dict:
    expect(value, dict, where)
    for key, item in value.items():
        expect(item, kind, f"{where}.{key}")
    return value


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    for kind, name in ((str, "a string"), (int, "an integer"), (float, "a number"),
                       (dict, "an object"), (list, "an array")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


@dataclass(frozen=True)
class Field:
    """A field of an event: its JSON type, whether it must be present and, for an array or an
    object, the type of what it holds (a type or a nested Field). Every JSON type is checked
    before any rule: a wrongly typed value is a malformed event (exit 2), never a rule code,
    whatever the state of the game. ``int`` is JSON's number here (see :func:`whole`)."""

    kind: type
    required: bool = True
    items: type | Field | None = None


def whole(value: Any) -> bool:
    """A count, a die or an id as JSON writes a whole number (3, not 3.5, 3.0 or true). An ``int``
    field takes any JSON number (JSON has one number type, so 3.5 is of the right type): the engine
    refuses one that is not whole as ``BAD_VALUE``, in the order EVENTS.md gives the codes."""
    return isinstance(value, int) and not isinstance(value, bool)


def fields(**spec: type | Field) -> dict[str, Field]:
    """``fields(side=str, player=Field(str, required=False))``."""
    return {k: v if isinstance(v, Field) else Field(v) for k, v in spec.items()}


def check_fields(event: Mapping[str, Any], spec: Mapping[str, Field]) -> None:
    for name, f in spec.items():
        if name not in event:
            if f.required:
                raise EventError(f"'{event.get('type')}' event needs the field '{name}'")
            continue
        _check(event[name], f, f"'{name}'")


def _check(value: Any, f: Field, where: str) -> None:
    expect(value, float if f.kind is int else f.kind, where)  # any JSON number: see whole()
    if f.items is None:
        return
    inner = f.items if isinstance(f.items, Field) else Field(f.items)
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in pairs:
        _check(item, inner, f"{where[:-1]}.{key}'" if isinstance(value, dict) else f"{where[:-1]}[{key}]'")


# --- options (house rules) --------------------------------------------------------------------

@dataclass(frozen=True)
class Option:
    """A house rule: its default (first in RULES.md) and, if it is a choice, the allowed values."""

    default: Any
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None


def read_options(event: Mapping[str, Any], spec: Mapping[str, Option]) -> dict[str, Any]:
    """The options of a new_game: defaults filled in; unknown names and values out of range are
    BAD_VALUE (a rule matter: the game does not start)."""
    given = event.get("options", {})
    if given is None:
        given = {}
    expect(given, dict, "'options'")
    out = {name: opt.default for name, opt in spec.items()}
    for name, value in given.items():
        if name not in spec:
            known = ", ".join(sorted(spec)) or "none"
            raise RuleError(BAD_VALUE, f"unknown option '{name}' (this game knows: {known})")
        opt = spec[name]
        kind = type(opt.default)
        if not is_json_type(value, kind):
            raise RuleError(BAD_VALUE, f"option '{name}' must be {_JSON_NAMES[kind]}")
        if opt.choices is not None and value not in opt.choices:
            allowed = ", ".join(repr(c) for c in opt.choices)
            raise RuleError(BAD_VALUE, f"option '{name}' must be one of {allowed}")
        if opt.minimum is not None and value < opt.minimum:
            raise RuleError(BAD_VALUE, f"option '{name}' must be at least {opt.minimum}")
        if opt.maximum is not None and value > opt.maximum:
            raise RuleError(BAD_VALUE, f"option '{name}' must be at most {opt.maximum}")
        out[name] = value
    return out


def unique_names(names: Iterable[str], what: str, where: str = "") -> list[str]:
    """The names, none empty and no two alike; ``where`` ("side A: ") starts the messages."""
    names = list(names)
    for n in names:
        if not n.strip():
            raise RuleError(BAD_VALUE, f"{where}a {what}'s name may not be empty")
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise RuleError(BAD_VALUE, f"{where}two {what}s are called '{n}'")
        seen.add(n)
    return names


# --- the engine protocol ----------------------------------------------------------------------

class Engine:
    """Base of the four rule engines.

    A subclass sets ``name``, ``options`` (house rules), ``events`` (the event types it takes
    after ``new_game`` with their fields), and implements:

    - ``setup(event, options) -> state``: the state after ``new_game`` (RuleError if it breaks a
      rule: player count, duplicate sheet...);
    - ``on_<type>(state, event)``: apply one event by *mutating* ``state`` — the base class hands
      it a private deep copy, so a handler may raise RuleError at any point and nothing changes;
    - ``finished(state) -> bool``;
    - ``view(state) -> dict`` with the keys of ``VIEW_KEYS`` (the replay contract);
    - ``legal_actions(state) -> list[dict]``: "what may happen now". Events that are fully
      determined are complete (``{"type": "throw", "side": "A", "cup": "red"}``); where a value
      comes from the table (dice, a drawn card) the event is a template without that field.
    """

    name: ClassVar[str] = ""
    options: ClassVar[dict[str, Option]] = {}
    events: ClassVar[dict[str, dict[str, Field]]] = {}
    new_game_fields: ClassVar[dict[str, Field]] = {}

    # -- to implement
    def setup(self, event: Mapping[str, Any], options: dict[str, Any]) -> Any:
        raise NotImplementedError

    def finished(self, state: Any) -> bool:
        raise NotImplementedError

    def view(self, state: Any) -> dict[str, Any]:
        raise NotImplementedError

    def legal_actions(self, state: Any) -> list[dict[str, Any]]:
        raise NotImplementedError

    def public_actions(self, state: Any, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What every player may see of the legal actions: all of them, unless the rules hide
        something (a face-down card)."""
        return actions

    def complete(self, state: Any, event: Mapping[str, Any]) -> dict[str, Any]:
        """The event as the table stores it: what the table alone may choose filled in (Stack 21's
        virtual deck's seed, drawn by the server so that no phone knows the stock). A log line is
        never completed: a replay takes its events as written. Unchanged by default."""
        return dict(event)

    def log_hides_cards(self, events: Iterable[Mapping[str, Any]]) -> bool:
        """Whether a game's log names cards the players are not shown while it is played (a
        face-down stock): such a log is not handed out until the game is over. None by default."""
        return False

    # -- for simulations, benchmarks and the demo: randomness is injected, never global
    def random_new_game(self, rng: random.Random) -> dict[str, Any]:
        """A valid ``new_game`` event with a random number of players/sides and options."""
        raise NotImplementedError

    def random_action(self, state: Any, rng: random.Random) -> dict[str, Any]:
        """A random *legal* event for the current state (virtual dice rolled with ``rng``)."""
        raise NotImplementedError

    # -- provided
    def new_game(self, event: Mapping[str, Any]) -> Any:
        check_fields(event, self.new_game_fields)
        options = read_options(event, self.options)
        return self.setup(event, options)

    def check(self, event: Mapping[str, Any]) -> Callable[[Any, Mapping[str, Any]], None]:
        """Validate the shape of an event; return its handler. EventError if malformed."""
        if not isinstance(event, Mapping):
            raise EventError(f"an event must be a JSON object, not {json_type_name(event)}")
        etype = event.get("type")
        if not isinstance(etype, str):
            raise EventError("an event needs a 'type' string")
        if etype not in self.events:
            known = ", ".join(sorted(self.events))
            raise EventError(f"unknown event type '{etype}' for {self.name} (known: {known})")
        check_fields(event, self.events[etype])
        shape = getattr(self, "shape_" + etype, None)  # what check_fields cannot say, e.g. "this or that"
        if shape is not None:
            shape(event)
        return getattr(self, "on_" + etype)

    def apply(self, state: Any, event: Mapping[str, Any]) -> Any:
        """The state after ``event``; ``state`` itself is never changed."""
        handler = self.check(event)
        if self.finished(state):
            raise RuleError(GAME_OVER, "the game has finished")
        new = self.copy_state(state)
        handler(new, event)
        return new

    def copy_state(self, state: Any) -> Any:
        """A private copy for a handler to change. Engines may override with a faster copy
        (deep copying is most of the cost of a replay)."""
        return copy.deepcopy(state)

    def allows(self, state: Any, event: Mapping[str, Any]) -> RuleError | None:
        """None if ``event`` would be accepted now, else the refusal (for UIs and the camera)."""
        try:
            self.apply(state, event)
        except RuleError as err:
            return err
        return None


class Game:
    """A game in progress: the engine, its states and the accepted events (python-chess style)."""

    def __init__(self, engine: Engine, new_game: Mapping[str, Any], state: Any):
        self.engine = engine
        self.events: list[dict[str, Any]] = [dict(new_game)]
        self.states: list[Any] = [state]

    @classmethod
    def start(cls, new_game: Mapping[str, Any]) -> Game:
        from companion.games import engine_for

        engine = engine_for(new_game)
        return cls(engine, new_game, engine.new_game(new_game))

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def state(self) -> Any:
        return self.states[-1]

    def play(self, row: Mapping[str, Any]) -> None:
        """One row of a log: an ``undo`` takes back the last accepted event, a ``resume`` (the
        table's note that play came back to this game) changes nothing, any other is pushed."""
        if row.get("type") == "undo":
            self.pop()
        elif row.get("type") != "resume":
            self.push(row)

    def push(self, event: Mapping[str, Any]) -> None:
        """Apply an event; RuleError (nothing changes) or EventError if refused."""
        new = self.engine.apply(self.state, event)
        self.states.append(new)
        self.events.append(dict(event))

    def pop(self) -> dict[str, Any]:
        """Undo the last event and return it."""
        if len(self.states) == 1:
            raise RuleError(NOTHING_TO_UNDO, "there is nothing to undo since the game started")
        self.states.pop()
        return self.events.pop()

    def view(self) -> dict[str, Any]:
        view = self.engine.view(self.state)
        return {"game": self.engine.name, **{k: view[k] for k in VIEW_KEYS}}

    def legal_actions(self) -> list[dict[str, Any]]:
        if self.engine.finished(self.state):
            return []
        return self.engine.legal_actions(self.state)

    def public_legal_actions(self) -> list[dict[str, Any]]:
        """The legal actions as every phone may see them (no face-down card named)."""
        return self.engine.public_actions(self.state, self.legal_actions())


def name_list(names: Iterable[str]) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]
