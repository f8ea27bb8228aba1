"""Stack 21: build four stacks of cards to count exactly 21, and spoil your opponents' (RULES.md
S1–S14, seed ``stack-21.txt``).

A table uses the engine in one of two ways, round by round as it likes (EVENTS.md "stack21"):

- **event by event**: ``deal``, then per turn ``draw`` + ``keep`` / ``give`` (accepted or refused
  automatically; a refused card is then ``place``d on the giver's own stack), ``take_upcard``, or
  ``combine``; playing out, the round's end and its scoring follow by themselves;
- **round by round**: one ``round_result`` with every player's final stacks.

>>> engine = Stack21()
>>> s = engine.new_game({"type": "new_game", "game": "stack21", "players": ["P1", "P2"]})
>>> s = engine.apply(s, {"type": "deal", "dealer": "P2", "hands": {"P1": ["A", "6", "10", "9"],
...     "P2": ["5", "5", "8", "2"]}, "upcard": "7", "stock": ["4", "10", "3"]})
>>> s = engine.apply(s, {"type": "draw", "player": "P1"})
>>> s = engine.apply(s, {"type": "keep", "player": "P1", "stack": 1})
>>> engine.view(s)["detail"]["stacks"]["P1"][0]
{'id': 1, 'cards': ['A', '4'], 'count': '5 or 15', 'state': 'active'}

Points the rules leave open, decided here
-----------------------------------------
- **Seats and turns.** ``players`` are listed clockwise; "left of" a player is the next one in
  the list. The first dealer is whoever the ``deal`` names (the seed's high-card draw happens at
  the table; without ``dealer`` it is the last listed player, so the first listed starts). After
  that the deal passes left (S3): each later ``deal`` or ``round_result`` that names a dealer must
  name the expected one (``NOT_YOUR_TURN``).
- **``deal`` while a round runs** is refused (``ROUND_NOT_OVER``, whoever it names: while a
  round runs nobody is due to deal, so the dealer is not checked): a misdeal is taken back with
  undo, never by dealing over a live round. A ``deal`` gives ``hands`` (four cards per player)
  and ``upcard``, optionally the ``stock`` (top first); or, for a table without the printed
  cards, only a ``seed``: the engine then deals the virtual deck of :mod:`companion.games.deck`
  (configured by the game's options) shuffled by ``random.Random(seed)``, so the log replays to
  the same cards. A deal sent to the table with neither cards nor a seed has its seed drawn by
  the table (:meth:`Stack21.complete`), so that no phone knows it.
- **Unknown stock.** Without ``stock`` every ``draw`` names its ``card``; after ``take_upcard``
  the new upcard is unknown (``"?"``) until an ``upcard`` event names it, and ``take_upcard`` of
  an unknown upcard must name it (``card``). With a known stock a named card must agree
  (``CARD_MISMATCH``).
- **``round_result``** is accepted only between rounds (before a deal, or after a round ended);
  during a round it is ``ROUND_NOT_OVER``. It needs the final stacks of every player (1–4 each;
  fewer than four means stacks were combined), all inactive unless ``"stock_exhausted": true``.
  It may name the ``dealer`` (checked like a deal's) and passes the deal left like a played round.
- **Stock exhausted (S12).** When a draw is needed and the stock is empty, the draw takes the
  upcard (a table that does not know the stock says so with ``"from": "upcard"``). The round ends
  as soon as no card is left to draw — stock empty, no upcard, no card in hand — also when the
  last upcard was taken with ``take_upcard`` (then no new upcard can be turned; a table without a
  known stock reports it with a ``stock_empty`` event). Option ``stock_exhausted``:
  ``"end_round"`` (default) scores the round as it stands (active stacks are not 21, so they score
  nothing); ``"void_round"`` scores nothing at all for that round.
- **Playing out (S11)** starts whenever exactly one player has active stacks; they draw and keep
  (``give``, ``take_upcard`` and ``combine`` are ``PLAYING_OUT``).
- **A card in hand** (drawn, or refused and awaiting ``place``) must be settled before anything
  else: ``MUST_PLACE``. ``place`` of a drawn card that was never refused is the same as ``keep``.
  Giving to yourself or a teammate is ``TEAMMATE``.
- **Teams (S1).** Exactly four players, two pairs sitting opposite (seats 1+3 and 2+4), named
  ``"P1+P3"`` in seat order. ``players``, ``scores``, ``to_act`` and ``winners`` speak of teams
  (``detail.to_act_player`` is the seat to act). The target defaults to 42 with teams, 21
  otherwise; an explicit ``target`` is the team's target as given.
- **Winning (S14).** At each round's end: if the highest score is at or over the target and held
  by one player/team alone, they win; a tie for the lead means another complete round for
  everyone (including those under the target).

Extensions of EVENTS.md (optional fields and two event types, nothing changed): ``deal.seed``;
``draw.from`` (``"stock"`` or ``"upcard"``); ``take_upcard.card``; ``round_result.dealer`` and
``round_result.stock_exhausted``; ``{"type": "upcard", "card": "9"}`` names the upcard turned
from an unknown stock; ``{"type": "stock_empty"}`` says no card is left in an unknown stock.

Options: ``target`` (21; 42 with teams), ``stock_exhausted`` (``"end_round"``,
``"void_round"``), ``zero_bonus_points`` (1), and the virtual deck's ``decks``, ``face_cards``,
``bonus_suits``, ``keeper_suits``, ``zero_bonus_cards``, ``instant_21_cards`` (see
:mod:`companion.games.deck`).

Reason codes, first that applies: ``GAME_OVER``, ``UNKNOWN_PLAYER``, ``BAD_VALUE`` (card notation,
stack id outside 1–4, field values), ``NOT_YOUR_TURN`` (also: no round running; a dealer other
than the next one between rounds), then ``ROUND_NOT_OVER`` (a ``deal`` or ``round_result``
during a round), ``DRAW_FIRST`` / ``MUST_PLACE`` (the card in hand), ``FIRST_TURN_KEEP_ONLY``,
``PLAYING_OUT``, ``TEAMMATE``, ``KEEPER_NOT_GIVEABLE``, ``STACK_INACTIVE``, ``UPCARD_NOT_21``,
``CARD_MISMATCH``.

``view()["detail"]``
--------------------
``round`` (number of the current or last round), ``dealer``, ``next_dealer``, ``phase``
(``"deal"`` between rounds, ``"turn"``, ``"drawn"``, ``"must_place"``, ``"over"``),
``to_act_player``, ``first_turn`` (the player to act is on their keep-only first turn),
``playing_out`` (player or null), ``upcard`` (card, ``"?"`` unknown, null none), ``stock_size``
(null if unknown), ``hand`` (``{"player", "card", "refused_by"}`` or null), ``stacks``
(per player, a list of ``{"id", "cards", "count", "state"}`` with ``count`` as a player reads it,
``"7 or 17"``, and ``state`` ``"active"``/``"21"``/``"bust"``), ``combined`` (players who
combined this round), ``target``, ``teams`` (null or the team names with their players),
``history`` (per round: ``round``, ``dealer``, ``ended`` — ``"all_inactive"``,
``"stock_exhausted"`` or ``"recorded"`` —, ``points`` per player, ``team_points`` with teams,
``scores`` after it, ``stacks`` at round end like ``stacks``; ``void`` for a voided round),
``lead_tied`` (the last round ended with a tie for the lead at or over the target), ``options``,
``last`` (what the last event did; ``round_end`` inside it when that event ended a round).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.games import cards as C
from companion.games import deck
from companion.games.base import (
    BAD_VALUE,
    NOT_YOUR_TURN,
    UNKNOWN_PLAYER,
    Engine,
    EventError,
    Field,
    Option,
    RuleError,
    expect_list_of,
    fields,
    unique_names,
    whole,
)

UNKNOWN = "?"  # an upcard that is there but not known (unknown stock, after take_upcard)
STACK_IDS = (1, 2, 3, 4)

FIRST_TURN_KEEP_ONLY = "FIRST_TURN_KEEP_ONLY"
STACK_INACTIVE = "STACK_INACTIVE"
TEAMMATE = "TEAMMATE"
KEEPER_NOT_GIVEABLE = "KEEPER_NOT_GIVEABLE"
MUST_PLACE = "MUST_PLACE"
UPCARD_NOT_21 = "UPCARD_NOT_21"
PLAYING_OUT = "PLAYING_OUT"
CARD_MISMATCH = "CARD_MISMATCH"
ROUND_NOT_OVER = "ROUND_NOT_OVER"
DRAW_FIRST = "DRAW_FIRST"


@dataclass
class Round:
    number: int
    dealer: str
    stacks: dict[str, dict[int, list[str]]]  # player -> stack id -> cards (bottom first)
    upcard: str | None  # a card, UNKNOWN, or None when there is none
    stock: list[str] | None  # top first; None when the table does not tell the engine
    turn: int  # seat index of the player to act
    played: set[str] = field(default_factory=set)  # players past their keep-only first turn
    combined: set[str] = field(default_factory=set)
    stock_empty: bool = False  # an unknown stock reported empty
    hand: str | None = None  # the card in flight
    refused_by: str | None = None  # set when the card in hand was refused by this player
    playing_out: str | None = None

    def __deepcopy__(self, memo: dict) -> Round:
        stacks = {p: {i: list(s) for i, s in st.items()} for p, st in self.stacks.items()}
        stock = None if self.stock is None else list(self.stock)
        return Round(self.number, self.dealer, stacks, self.upcard, stock, self.turn, set(self.played),
                     set(self.combined), self.stock_empty, self.hand, self.refused_by, self.playing_out)


@dataclass
class State:
    players: list[str]
    teams: list[list[str]] | None  # pairs in seat order
    options: dict[str, Any]
    target: int
    scores: dict[str, int]  # per player, or per team name with teams
    next_dealer: int | None = None  # seat index; None before the first round
    round: Round | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  # entries are never changed
    winners: list[str] = field(default_factory=list)
    lead_tied: bool = False
    last: dict[str, Any] | None = None  # replaced, never changed

    def __deepcopy__(self, memo: dict) -> State:
        return State(self.players, self.teams, self.options, self.target, dict(self.scores), self.next_dealer,
                     None if self.round is None else self.round.__deepcopy__(memo), list(self.history),
                     list(self.winners), self.lead_tied, self.last)

    def unit(self, player: str) -> str:
        """The scoring unit of a player: the player, or their team's name."""
        if self.teams is None:
            return player
        for team in self.teams:
            if player in team:
                return "+".join(team)
        raise KeyError(player)

    def units(self) -> list[str]:
        return list(self.players) if self.teams is None else ["+".join(t) for t in self.teams]


def _check_card(text: str, where: str) -> str:
    if not C.is_card(text):
        raise RuleError(BAD_VALUE, f"{where} '{text}' is not a Stack 21 card (A, 2–10 with B/K, ZB, I21)")
    return text


def _check_stack_id(value: int) -> int:
    if not whole(value) or value not in STACK_IDS:
        raise RuleError(BAD_VALUE, f"stack {value} does not exist: stacks are numbered 1 to 4")
    return value


class Stack21(Engine):
    name = "stack21"
    options = {
        "target": Option(21, minimum=1),
        "stock_exhausted": Option("end_round", ("end_round", "void_round")),
        "zero_bonus_points": Option(1, minimum=0, maximum=10),
        **deck.OPTIONS,
    }
    new_game_fields = fields(players=list, teams=Field(list, required=False))
    events = {
        "deal": fields(dealer=Field(str, False), hands=Field(dict, False, Field(list, items=str)),
                       upcard=Field(str, False), stock=Field(list, False, str), seed=Field(int, False)),
        "draw": fields(player=str, card=Field(str, False), **{"from": Field(str, False)}),
        "keep": fields(player=str, stack=int),
        "give": fields(player=str, to=str, stack=int),
        "place": fields(player=str, stack=int),
        "take_upcard": fields(player=str, stack=int, card=Field(str, False)),
        "combine": fields(player=str, stacks=Field(list, items=int)),
        "upcard": fields(card=str),
        "stock_empty": fields(),
        "round_result": fields(stacks=Field(dict, items=Field(list, items=Field(list, items=str))),
                               dealer=Field(str, False), stock_exhausted=Field(bool, False)),
    }

    # -- set-up (S1)
    def setup(self, event: Mapping[str, Any], options: dict[str, Any]) -> State:
        players = expect_list_of(event["players"], str, "'players'")
        if not 2 <= len(players) <= 4:
            raise RuleError(BAD_VALUE, f"Stack 21 is played by 2 to 4 players, not {len(players)}")
        unique_names(players, "player")
        for p in players:
            if "+" in p:
                raise RuleError(BAD_VALUE, f"a player name may not contain '+' ('{p}'): it joins team names")
        teams = None
        if event.get("teams") is not None:
            raw = event["teams"]
            for i, t in enumerate(raw):
                expect_list_of(t, str, f"'teams[{i}]'")
            teams = self._teams(players, raw)
        target = options["target"]
        if teams is not None and "target" not in (event.get("options") or {}):
            target = 42
        deck.check_options(options, len(players))
        state = State(list(players), teams, options, target, {})
        state.scores = dict.fromkeys(state.units(), 0)
        return state

    @staticmethod
    def _teams(players: list[str], raw: list[list[str]]) -> list[list[str]]:
        """S1: exactly four players as two pairs sitting opposite; pairs returned in seat order."""
        if len(players) != 4:
            raise RuleError(BAD_VALUE, f"team play needs exactly 4 players, not {len(players)}")
        if len(raw) != 2 or any(len(t) != 2 for t in raw):
            raise RuleError(BAD_VALUE, "team play is two teams of two players")
        for t in raw:
            for p in t:
                if p not in players:
                    raise RuleError(BAD_VALUE, f"team member '{p}' is not one of the players")
        if sorted(p for t in raw for p in t) != sorted(players):
            raise RuleError(BAD_VALUE, "each player is in exactly one team")
        seat = {p: i for i, p in enumerate(players)}
        pairs = sorted((sorted(t, key=seat.__getitem__) for t in raw), key=lambda t: seat[t[0]])
        for a, b in pairs:
            if (seat[b] - seat[a]) != 2:
                raise RuleError(BAD_VALUE, f"teammates sit opposite: {players[0]} pairs with {players[2]}, "
                                           f"{players[1]} with {players[3]}")
        return pairs

    # -- helpers
    def _player(self, state: State, name: str) -> str:
        if name not in state.players:
            raise RuleError(UNKNOWN_PLAYER, f"there is no player called '{name}'", {"player": name})
        return name

    def _round(self, state: State) -> Round:
        if state.round is None:
            raise RuleError(NOT_YOUR_TURN, f"no round is running: {self._dealer_name(state)} deals first")
        return state.round

    def _dealer_name(self, state: State) -> str:
        return state.players[state.next_dealer] if state.next_dealer is not None else "the dealer"

    def _on_turn(self, state: State, player: str) -> Round:
        rnd = self._round(state)
        expected = state.players[rnd.turn]
        if player != expected:
            raise RuleError(NOT_YOUR_TURN, f"it is {expected}'s turn", {"player": expected})
        return rnd

    @staticmethod
    def _own_active(rnd: Round, player: str, stack: int, whose: str = "your") -> list[str]:
        stacks = rnd.stacks[player]
        if stack not in stacks:
            raise RuleError(STACK_INACTIVE, f"{whose} stack {stack} is gone: it was combined into another")
        cards = stacks[stack]
        if not C.is_active(cards):
            state = "is 21" if C.is_21(cards) else "is bust"
            raise RuleError(STACK_INACTIVE, f"{whose} stack {stack} {state}: no card can be added")
        return cards

    @staticmethod
    def _hand_free(rnd: Round) -> None:
        if rnd.hand is not None:
            if rnd.refused_by is not None:
                raise RuleError(MUST_PLACE, f"{rnd.refused_by} refused the {rnd.hand}: place it on one of "
                                            "your own active stacks first", {"player": rnd.refused_by, "card": rnd.hand})
            raise RuleError(MUST_PLACE, f"keep or give the {rnd.hand} you drew first", {"card": rnd.hand})

    @staticmethod
    def _active_players(rnd: Round, players: list[str]) -> list[str]:
        return [p for p in players if any(C.is_active(s) for s in rnd.stacks[p].values())]

    def _teammates(self, state: State, a: str, b: str) -> bool:
        return a == b or (state.teams is not None and state.unit(a) == state.unit(b))

    def _draw_card(self, rnd: Round) -> str | None:
        """The card a draw takes when the stock is known (the upcard once the stock is empty)."""
        if rnd.stock is None:
            return None
        if rnd.stock:
            return rnd.stock[0]
        return rnd.upcard

    # -- deal (S3)
    @staticmethod
    def shape_deal(event: Mapping[str, Any]) -> None:
        """Which fields a deal needs depends on how it deals (checked before any rule)."""
        hands, seed = event.get("hands"), event.get("seed")
        if hands is None and seed is None:
            raise EventError("a 'deal' needs the 'hands' and 'upcard' (or a 'seed' for the virtual deck)")
        if hands is not None and seed is not None:
            raise EventError("a 'deal' gives either the 'hands' or a 'seed', not both")
        if hands is not None and "upcard" not in event:
            raise EventError("a 'deal' with 'hands' needs the 'upcard'")
        if hands is None and ("upcard" in event or "stock" in event):
            raise EventError("a 'deal' with a 'seed' names no cards: the virtual deck deals them")

    def on_deal(self, state: State, event: Mapping[str, Any]) -> None:
        dealer = event.get("dealer")
        if dealer is not None:
            self._player(state, dealer)
        hands = event.get("hands")
        seed = event.get("seed")
        if hands is not None:
            for name in hands:
                self._player(state, name)
            for name in state.players:
                if name not in hands:
                    raise RuleError(BAD_VALUE, f"the deal gives {name} no cards")
                if len(hands[name]) != deck.HAND_SIZE:
                    raise RuleError(BAD_VALUE, f"each player is dealt 4 cards, {name} {len(hands[name])}")
                for c in hands[name]:
                    _check_card(c, f"{name}'s card")
            _check_card(event["upcard"], "the upcard")
            for c in event.get("stock", []):
                _check_card(c, "stock card")
        elif not whole(seed):
            raise RuleError(BAD_VALUE, f"the deal's seed is {seed}: a seed is a whole number")
        # While a round runs nobody is due to deal: the round, not the dealer, is what refuses it.
        if state.round is not None:
            raise RuleError(ROUND_NOT_OVER, f"round {state.round.number} is still being played: finish it "
                                            "(or undo the deal) before dealing again", {"round": state.round.number})
        dealer = self._expected_dealer(state, dealer)
        if seed is not None:
            dealt = deck.deal(state.players, dealer, state.options, random.Random(seed))
            hands, upcard, stock = dealt["hands"], dealt["upcard"], dealt["stock"]
        else:
            upcard = event["upcard"]
            stock = list(event["stock"]) if "stock" in event else None
        seat = state.players.index(dealer)
        state.next_dealer = (seat + 1) % len(state.players)
        rnd = Round(len(state.history) + 1, dealer,
                    {p: {i + 1: [c] for i, c in enumerate(hands[p])} for p in state.players},
                    upcard, stock, turn=seat)
        state.round = rnd
        state.lead_tied = False
        state.last = {"type": "deal", "round": rnd.number, "dealer": dealer}
        self._next_turn(state, rnd, from_seat=seat)

    def _expected_dealer(self, state: State, named: str | None) -> str:
        """S3: the deal passes left each round; the first dealer is free (last listed by default)."""
        if state.next_dealer is None:
            return named if named is not None else state.players[-1]
        expected = state.players[state.next_dealer]
        if named is not None and named != expected:
            raise RuleError(NOT_YOUR_TURN, f"the deal passes left: {expected} deals this round", {"dealer": expected})
        return expected

    # -- a turn (S4–S9)
    def on_draw(self, state: State, event: Mapping[str, Any]) -> None:
        """S4/S5/S11: draw the top card of the stock (S12: the upcard once the stock is empty)."""
        player = self._player(state, event["player"])
        named = event.get("card")
        if named is not None:
            _check_card(named, "the drawn card")
        source = event.get("from", "stock")
        if source not in ("stock", "upcard"):
            raise RuleError(BAD_VALUE, f"a card is drawn from the stock or the upcard, not '{source}'")
        rnd = self._on_turn(state, player)
        self._hand_free(rnd)
        known = rnd.stock is not None
        if known:
            assert rnd.stock is not None
            if source == "upcard" and rnd.stock:
                raise RuleError(CARD_MISMATCH, f"the stock still holds {len(rnd.stock)} cards: draw from it",
                                {"stock": len(rnd.stock)})
            card = self._draw_card(rnd)
            if card is None:  # cannot happen: the round ends when no card is left
                raise RuleError(CARD_MISMATCH, "there is no card left to draw")
            if named is not None and named != card:
                raise RuleError(CARD_MISMATCH, f"the card on top is the {card}, not the {named}",
                                {"card": card, "named": named})
            from_upcard = not rnd.stock
        else:
            from_upcard = source == "upcard" or rnd.stock_empty
            if from_upcard and rnd.upcard is None:
                raise RuleError(CARD_MISMATCH, "there is no upcard left to draw")
            if from_upcard and rnd.upcard != UNKNOWN:
                if named is not None and named != rnd.upcard:
                    raise RuleError(CARD_MISMATCH, f"the upcard is the {rnd.upcard}, not the {named}",
                                    {"upcard": rnd.upcard, "named": named})
                named = rnd.upcard
            if named is None:
                raise RuleError(BAD_VALUE, "the companion does not know the stock here: name the drawn card")
            card = named
        if from_upcard:  # S12: the upcard is drawn as the last card
            rnd.upcard = None
            rnd.stock_empty = True
        else:
            assert card is not None
            if known:
                assert rnd.stock is not None
                rnd.stock.pop(0)
        rnd.hand = card
        rnd.refused_by = None
        state.last = {"type": "draw", "player": player, "card": card, "last_card": from_upcard}

    def on_keep(self, state: State, event: Mapping[str, Any]) -> None:
        """S6: onto one of your own active stacks; it may bust."""
        player = self._player(state, event["player"])
        stack = _check_stack_id(event["stack"])
        rnd = self._on_turn(state, player)
        if rnd.hand is None:
            raise RuleError(DRAW_FIRST, "draw a card before keeping one")
        if rnd.refused_by is not None:
            raise RuleError(MUST_PLACE, f"{rnd.refused_by} refused the {rnd.hand}: place it on one of your "
                                        "own active stacks", {"player": rnd.refused_by, "card": rnd.hand})
        cards = self._own_active(rnd, player, stack)
        card = rnd.hand
        cards.append(card)
        rnd.hand = None
        state.last = {"type": "keep", "player": player, "card": card, "stack": stack,
                      "state": C.status(cards)}
        self._end_turn(state, rnd, player)

    def on_give(self, state: State, event: Mapping[str, Any]) -> None:
        """S7: onto an opponent's active stack; accepted unless it busts it, then refused."""
        player = self._player(state, event["player"])
        to = event["to"]
        if to not in state.players:
            raise RuleError(UNKNOWN_PLAYER, f"there is no player called '{to}'", {"player": to})
        stack = _check_stack_id(event["stack"])
        rnd = self._on_turn(state, player)
        if rnd.hand is None:
            raise RuleError(DRAW_FIRST, "draw a card before giving one away")
        if rnd.refused_by is not None:
            raise RuleError(MUST_PLACE, f"{rnd.refused_by} refused the {rnd.hand}: it cannot be given again, "
                                        "place it on one of your own active stacks", {"player": rnd.refused_by, "card": rnd.hand})
        if player not in rnd.played:
            raise RuleError(FIRST_TURN_KEEP_ONLY, "on your first turn of a round you draw and keep")
        if rnd.playing_out == player:
            raise RuleError(PLAYING_OUT, "you are playing out: draw and keep until all your stacks are done")
        if self._teammates(state, player, to):
            who = "yourself" if player == to else f"your teammate {to}"
            raise RuleError(TEAMMATE, f"a card is given to an opponent, never to {who}")
        card = rnd.hand
        if C.card(card).keeper:
            raise RuleError(KEEPER_NOT_GIVEABLE, f"the {card} is a Keeper card: it cannot be given away", {"card": card})
        cards = self._own_active(rnd, to, stack, whose=f"{to}'s")
        if C.would_bust(cards, card):
            rnd.refused_by = to
            state.last = {"type": "give", "player": player, "to": to, "stack": stack, "card": card,
                          "result": "refused"}
            return
        cards.append(card)
        rnd.hand = None
        state.last = {"type": "give", "player": player, "to": to, "stack": stack, "card": card,
                      "result": "accepted", "state": C.status(cards)}
        self._end_turn(state, rnd, player)

    def on_place(self, state: State, event: Mapping[str, Any]) -> None:
        """S7: a refused card goes onto one of the giver's own active stacks, even if it busts."""
        player = self._player(state, event["player"])
        stack = _check_stack_id(event["stack"])
        rnd = self._on_turn(state, player)
        if rnd.hand is None:
            raise RuleError(DRAW_FIRST, "there is no card to place: draw first")
        cards = self._own_active(rnd, player, stack)
        card = rnd.hand
        refused = rnd.refused_by
        cards.append(card)
        rnd.hand = None
        rnd.refused_by = None
        state.last = {"type": "place" if refused else "keep", "player": player, "card": card, "stack": stack,
                      "state": C.status(cards)}
        self._end_turn(state, rnd, player)

    def on_take_upcard(self, state: State, event: Mapping[str, Any]) -> None:
        """S8: only to make an active stack exactly 21 at once (a ZB upcard: any active stack)."""
        player = self._player(state, event["player"])
        stack = _check_stack_id(event["stack"])
        named = event.get("card")
        if named is not None:
            _check_card(named, "the upcard")
        rnd = self._on_turn(state, player)
        self._hand_free(rnd)
        if player not in rnd.played:
            raise RuleError(FIRST_TURN_KEEP_ONLY, "on your first turn of a round you draw and keep")
        if rnd.playing_out == player:
            raise RuleError(PLAYING_OUT, "you are playing out: the upcard cannot be taken")
        cards = self._own_active(rnd, player, stack)
        upcard = rnd.upcard
        if upcard is None:
            raise RuleError(UPCARD_NOT_21, "there is no upcard to take")
        if upcard == UNKNOWN:
            if named is None:
                raise RuleError(BAD_VALUE, "the companion does not know the upcard: name it ('card')")
            upcard = named
        elif named is not None and named != upcard:
            raise RuleError(CARD_MISMATCH, f"the upcard is the {upcard}, not the {named}",
                            {"upcard": upcard, "named": named})
        if upcard != C.ZB and not C.is_21([*cards, upcard]):
            raise RuleError(UPCARD_NOT_21, f"the {upcard} does not make your stack {stack} "
                                           f"({C.count_text(cards)}) exactly 21", {"upcard": upcard, "stack": stack})
        cards.append(upcard)
        # S8: replaced from the stock at once
        if rnd.stock is None:
            rnd.upcard = None if rnd.stock_empty else UNKNOWN
        else:
            rnd.upcard = rnd.stock.pop(0) if rnd.stock else None
        state.last = {"type": "take_upcard", "player": player, "card": upcard, "stack": stack,
                      "state": C.status(cards)}
        self._end_turn(state, rnd, player)

    def on_combine(self, state: State, event: Mapping[str, Any]) -> None:
        """S9: exactly two of your own active stacks; the first named keeps the cards."""
        player = self._player(state, event["player"])
        ids = event["stacks"]
        if len(ids) != 2:
            raise RuleError(BAD_VALUE, f"combine names exactly two stacks, not {len(ids)}")
        for i in ids:
            _check_stack_id(i)
        if ids[0] == ids[1]:
            raise RuleError(BAD_VALUE, "combine names two different stacks")
        rnd = self._on_turn(state, player)
        self._hand_free(rnd)
        if player not in rnd.played:
            raise RuleError(FIRST_TURN_KEEP_ONLY, "on your first turn of a round you draw and keep")
        if rnd.playing_out == player:
            raise RuleError(PLAYING_OUT, "you are playing out: stacks cannot be combined")
        first = self._own_active(rnd, player, ids[0])
        second = self._own_active(rnd, player, ids[1])
        first.extend(second)
        del rnd.stacks[player][ids[1]]
        rnd.combined.add(player)
        state.last = {"type": "combine", "player": player, "stacks": ids, "state": C.status(first)}
        self._end_turn(state, rnd, player)

    # -- what the table reports about the stock when the engine does not know it
    def on_upcard(self, state: State, event: Mapping[str, Any]) -> None:
        """The upcard turned from an unknown stock after take_upcard."""
        card = _check_card(event["card"], "the upcard")
        rnd = self._round(state)
        if rnd.upcard != UNKNOWN:
            if rnd.upcard == card:
                return
            shown = f"the {rnd.upcard}" if rnd.upcard else "no upcard"
            raise RuleError(CARD_MISMATCH, f"the upcard is known: {shown}")
        rnd.upcard = card
        state.last = {"type": "upcard", "card": card}

    def on_stock_empty(self, state: State, event: Mapping[str, Any]) -> None:
        """S12 for an unknown stock: no card is left in it."""
        rnd = self._round(state)
        if rnd.stock:
            raise RuleError(CARD_MISMATCH, f"the stock still holds {len(rnd.stock)} cards", {"stock": len(rnd.stock)})
        rnd.stock_empty = True
        if rnd.upcard == UNKNOWN:  # no card could be turned to replace the upcard taken
            rnd.upcard = None
        state.last = {"type": "stock_empty"}
        self._check_exhausted(state, rnd)

    # -- turn order, playing out, round end (S4, S10–S12)
    def _end_turn(self, state: State, rnd: Round, player: str) -> None:
        rnd.played.add(player)
        self._next_turn(state, rnd, from_seat=state.players.index(player))

    def _next_turn(self, state: State, rnd: Round, from_seat: int) -> None:
        """The next player clockwise with active stacks (S10); playing out (S11); round end."""
        active = self._active_players(rnd, state.players)
        if not active:
            self._end_round(state, "all_inactive")
            return
        rnd.playing_out = active[0] if len(active) == 1 else None
        n = len(state.players)
        for step in range(1, n + 1):
            seat = (from_seat + step) % n
            if state.players[seat] in active:
                rnd.turn = seat
                break
        self._check_exhausted(state, rnd)

    def _check_exhausted(self, state: State, rnd: Round) -> None:
        """S12: the round ends once no card is left to draw."""
        empty = rnd.stock == [] or (rnd.stock is None and rnd.stock_empty)
        if empty and rnd.upcard is None and rnd.hand is None:
            self._end_round(state, "stock_exhausted")

    def _end_round(self, state: State, ended: str) -> None:
        rnd = state.round
        assert rnd is not None
        stacks = {p: {i: list(s) for i, s in rnd.stacks[p].items()} for p in state.players}
        self._score_round(state, rnd.number, rnd.dealer, stacks, rnd.combined, ended)
        state.round = None

    def _score_round(self, state: State, number: int, dealer: str, stacks: dict[str, dict[int, list[str]]],
                     combined: set[str], ended: str) -> None:
        """S13 and S14."""
        void = ended == "stock_exhausted" and state.options["stock_exhausted"] == "void_round"
        zb = state.options["zero_bonus_points"]
        points = {p: 0 if void else C.round_points(list(stacks[p].values()), p in combined, zb)
                  for p in state.players}
        unit_points = dict.fromkeys(state.units(), 0)
        for p, n in points.items():
            unit_points[state.unit(p)] += n
        for u, n in unit_points.items():
            state.scores[u] += n
        entry: dict[str, Any] = {"round": number, "dealer": dealer, "ended": ended, "points": points}
        if state.teams is not None:
            entry["team_points"] = unit_points
        entry["scores"] = dict(state.scores)
        entry["stacks"] = {p: [{"id": i, "cards": s, "count": C.count_text(s), "state": C.status(s)}
                               for i, s in sorted(stacks[p].items())] for p in state.players}
        if void:
            entry["void"] = True
        state.history.append(entry)
        best = max(state.scores.values())
        leaders = [u for u, n in state.scores.items() if n == best]
        state.lead_tied = best >= state.target and len(leaders) > 1
        if best >= state.target and len(leaders) == 1:
            state.winners = leaders
        summary = {"round": number, "ended": ended, "points": unit_points}
        state.last = {**(state.last or {}), "round_end": summary}

    # -- round by round
    def on_round_result(self, state: State, event: Mapping[str, Any]) -> None:
        """S13 from the final stacks alone."""
        given = event["stacks"]
        dealer = event.get("dealer")
        if dealer is not None:
            self._player(state, dealer)
        for name in given:
            self._player(state, name)
        exhausted = event.get("stock_exhausted", False)
        for p in state.players:
            if p not in given:
                raise RuleError(BAD_VALUE, f"the round's result needs {p}'s stacks")
            if not 1 <= len(given[p]) <= 4:
                raise RuleError(BAD_VALUE, f"a player ends a round with 1 to 4 stacks, {p} with "
                                           f"{len(given[p])}")
            for s in given[p]:
                if not s:
                    raise RuleError(BAD_VALUE, f"{p} has an empty stack")
                for c in s:
                    _check_card(c, f"{p}'s card")
        if state.round is not None:
            raise RuleError(ROUND_NOT_OVER, f"round {state.round.number} is being played event by event: it "
                                            "ends by itself")
        dealer = self._expected_dealer(state, dealer)
        if not exhausted:
            for p in state.players:
                for i, s in enumerate(given[p]):
                    if C.is_active(s):
                        raise RuleError(ROUND_NOT_OVER, f"{p}'s stack {i + 1} ({C.count_text(s)}) is still "
                                                        "active (add \"stock_exhausted\": true if the stock "
                                                        "ran out)")
        state.next_dealer = (state.players.index(dealer) + 1) % len(state.players)
        stacks = {p: {i + 1: list(s) for i, s in enumerate(given[p])} for p in state.players}
        combined = {p for p in state.players if len(given[p]) < 4}
        state.last = {"type": "round_result"}
        self._score_round(state, len(state.history) + 1, dealer, stacks, combined,
                          "stock_exhausted" if exhausted else "recorded")

    # -- queries
    def finished(self, state: State) -> bool:
        return bool(state.winners)

    def to_act_player(self, state: State) -> str | None:
        if state.winners:
            return None
        if state.round is None:
            return state.players[state.next_dealer] if state.next_dealer is not None else None
        return state.players[state.round.turn]

    def phase(self, state: State) -> str:
        if state.winners:
            return "over"
        rnd = state.round
        if rnd is None:
            return "deal"
        if rnd.hand is None:
            return "turn"
        return "drawn" if rnd.refused_by is None else "must_place"

    def view(self, state: State) -> dict[str, Any]:
        rnd = state.round
        actor = self.to_act_player(state)
        if state.winners:
            to_act: list[str] = []
        elif actor is None:  # before the first deal: whoever deals
            to_act = state.units()
        else:
            to_act = [state.unit(actor)]
        stacks: dict[str, list[dict[str, Any]]] = {}
        if rnd is not None:
            for p in state.players:
                stacks[p] = [{"id": i, "cards": list(s), "count": C.count_text(s), "state": C.status(s)}
                             for i, s in sorted(rnd.stacks[p].items())]
        last_round = state.history[-1] if state.history else None
        detail = {
            "round": rnd.number if rnd else (last_round["round"] if last_round else 0),
            "dealer": rnd.dealer if rnd else (last_round["dealer"] if last_round else None),
            "next_dealer": state.players[state.next_dealer] if state.next_dealer is not None else None,
            "phase": self.phase(state),
            "to_act_player": actor,
            "first_turn": bool(rnd and actor and actor not in rnd.played),
            "playing_out": rnd.playing_out if rnd else None,
            "upcard": rnd.upcard if rnd else None,
            "stock_size": (len(rnd.stock) if rnd.stock is not None else (0 if rnd.stock_empty else None))
            if rnd else None,
            "hand": ({"player": actor, "card": rnd.hand, "refused_by": rnd.refused_by}
                     if rnd and rnd.hand is not None else None),
            "stacks": stacks,
            "combined": sorted(rnd.combined, key=state.players.index) if rnd else [],
            "target": state.target,
            "teams": {"+".join(t): list(t) for t in state.teams} if state.teams else None,
            "history": list(state.history),
            "lead_tied": state.lead_tied,
            "options": dict(state.options),
            "last": state.last,
        }
        return {
            "players": state.units(),
            "to_act": to_act,
            "finished": bool(state.winners),
            "winners": list(state.winners),
            "scores": dict(state.scores),
            "detail": detail,
        }

    def legal_actions(self, state: State) -> list[dict[str, Any]]:
        """What may happen now. Complete events where the engine knows the cards; templates (no
        ``card``) where a card comes from the table; ``deal`` and ``round_result`` are templates.
        ``combine`` lists each pair once (first id lower; the other order is legal too and keeps
        the other id)."""
        if state.winners:
            return []
        rnd = state.round
        if rnd is None:
            dealer = self.to_act_player(state)
            deal: dict[str, Any] = {"type": "deal"}
            if dealer is not None:
                deal["dealer"] = dealer
            return [deal, {"type": "round_result"}]
        player = state.players[rnd.turn]
        own_active = [i for i, s in sorted(rnd.stacks[player].items()) if C.is_active(s)]
        if rnd.hand is not None:
            actions: list[dict[str, Any]] = []
            verb = "place" if rnd.refused_by else "keep"
            actions += [{"type": verb, "player": player, "stack": i} for i in own_active]
            if (rnd.refused_by is None and player in rnd.played and rnd.playing_out != player
                    and not C.card(rnd.hand).keeper):
                for other in state.players:
                    if self._teammates(state, player, other):
                        continue
                    for i, s in sorted(rnd.stacks[other].items()):
                        if C.is_active(s):
                            actions.append({"type": "give", "player": player, "to": other, "stack": i})
            return actions
        actions = [self._draw_action(rnd, player)]
        if rnd.stock is None and not rnd.stock_empty and rnd.upcard is not None:
            actions.append({"type": "draw", "player": player, "from": "upcard",
                            **({"card": rnd.upcard} if rnd.upcard != UNKNOWN else {})})
        if player in rnd.played and rnd.playing_out != player:
            if rnd.upcard == UNKNOWN:
                actions.append({"type": "upcard"})
            elif rnd.upcard is not None:
                for i in own_active:
                    if rnd.upcard == C.ZB or C.is_21([*rnd.stacks[player][i], rnd.upcard]):
                        actions.append({"type": "take_upcard", "player": player, "stack": i})
            for a, i in enumerate(own_active):
                for j in own_active[a + 1:]:
                    actions.append({"type": "combine", "player": player, "stacks": [i, j]})
        return actions

    def public_actions(self, state: State, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A draw from a known stock takes its face-down top card: the engine knows it, the
        players must not (every phone is sent the legal actions). The draw is sent without
        it; the engine takes the stock's top when a draw names no card."""
        rnd = state.round
        if rnd is None or not rnd.stock:
            return actions
        return [{k: v for k, v in a.items() if k != "card"} if a.get("type") == "draw" and a.get("from") != "upcard"
                else a for a in actions]

    def complete(self, state: State, event: Mapping[str, Any]) -> dict[str, Any]:
        """A ``deal`` sent to the table with neither cards nor a ``seed`` asks for the virtual deck:
        the table draws its seed here (``secrets``, below 2**53 so that any JSON reader keeps it
        exact; far too many to try from the cards a player sees). It is stored in the log, which
        is not handed out before the game is over, and sent to no phone: a seed chosen by a
        phone's browser, or shown to one, would name every card of the stock."""
        if event.get("type") == "deal" and not any(k in event for k in ("hands", "upcard", "stock", "seed")):
            return {**event, "seed": secrets.randbelow(2**53)}
        return dict(event)

    def log_hides_cards(self, events: Iterable[Mapping[str, Any]]) -> bool:
        """A deal that gives the companion the stock (a virtual deck's seed, replayed to the
        whole shuffled deck, or the stock typed in) puts its face-down cards in the log."""
        return any(e.get("type") == "deal" and (e.get("seed") is not None or e.get("stock")) for e in events)

    def _draw_action(self, rnd: Round, player: str) -> dict[str, Any]:
        action: dict[str, Any] = {"type": "draw", "player": player}
        if rnd.stock is not None:
            action["card"] = self._draw_card(rnd)
        elif rnd.stock_empty and rnd.upcard not in (None, UNKNOWN):
            action["card"] = rnd.upcard
        return action

    def stats(self, state: State) -> dict[str, float]:
        return {"rounds": len(state.history)}

    # -- simulation
    def random_new_game(self, rng: random.Random) -> dict[str, Any]:
        n = rng.choice((2, 3, 4, 4))
        players = [f"P{i + 1}" for i in range(n)]
        event: dict[str, Any] = {"type": "new_game", "game": self.name, "players": players, "options": {}}
        if n == 4 and rng.random() < 0.4:
            event["teams"] = [["P1", "P3"], ["P2", "P4"]]
        if rng.random() < 0.3:
            event["options"]["stock_exhausted"] = "void_round"
        if rng.random() < 0.2:
            event["options"]["face_cards"] = "remove"
            event["options"]["decks"] = 1
        return event

    def random_action(self, state: State, rng: random.Random) -> dict[str, Any]:
        """A random legal event: a deal of the virtual deck shuffled from ``rng`` (sometimes a
        table-style deal with an unknown stock, whose draws name random cards of the deck); then
        an action type chosen uniformly, then one of its events."""
        actions = self.legal_actions(state)
        if state.round is None:
            deal = {"type": "deal", "dealer": actions[0].get("dealer") or rng.choice(state.players)}
            kind = rng.random()
            if kind < 0.5:
                deal["seed"] = rng.randrange(2**32)
            else:
                dealt = deck.deal(state.players, deal["dealer"], state.options, rng)
                deal.update(hands=dealt["hands"], upcard=dealt["upcard"])
                if kind < 0.9:
                    deal["stock"] = dealt["stock"]
            return deal
        by_type: dict[str, list[dict[str, Any]]] = {}
        for a in actions:
            by_type.setdefault(a["type"], []).append(a)
        kind = rng.choice(sorted(by_type))
        if kind == "draw" and state.round.stock is None and len(by_type["draw"]) > 1 and rng.random() > 0.02:
            action = dict(by_type["draw"][0])  # an unknown stock runs out now and then
        else:
            action = dict(rng.choice(by_type[kind]))
        if action["type"] in ("draw", "upcard") and "card" not in action:
            action["card"] = rng.choice(deck.compose(state.options))
        return action
