"""The virtual Stack 21 deck: its make-up is configuration, its shuffle comes from an injected
random generator, so a table without the printed cards can be dealt by the companion and every
test or simulation is reproducible.

The printed deck's make-up is not published (RULES.md S). The default models what a table can
hold in its hands: **two 52-card decks** mapped to A–10, plus their four jokers as **2 Zero/Bonus
and 2 Instant 21**:

- ``face_cards``: ``"ten"`` (default) — J, Q and K count 10, as in every blackjack-style game and
  as players of a borrowed deck will read them (a face card prints no number); ``"remove"`` — the
  faces are taken out, leaving every rank A–10 equally often (40 cards per deck).
- ``bonus_suits`` (default ``["hearts"]``) and ``keeper_suits`` (default ``["spades"]``): the
  cards of these suits carry B / K (a suit in both lists gives ``"9BK"``).
- ``decks`` (2), ``zero_bonus_cards`` (2), ``instant_21_cards`` (2).

Default: 104 ranked cards (32 tens, 8 of each other rank; 26 Bonus, 26 Keeper) + 2 ZB + 2 I21.

>>> len(compose(DEFAULTS))
108
>>> deal(["P1", "P2"], "P2", DEFAULTS, random.Random(7))["hands"]["P1"]
['2K', '6', 'A', '3']
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from companion.games.base import BAD_VALUE, Option, RuleError

SUITS = ("clubs", "diamonds", "hearts", "spades")
FACES = ("J", "Q", "K")
RANKS_52 = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", *FACES)
HAND_SIZE = 4

# the deck's options, part of the game's new_game options
OPTIONS: dict[str, Option] = {
    "decks": Option(2, minimum=1, maximum=8),
    "face_cards": Option("ten", ("ten", "remove")),
    "bonus_suits": Option(["hearts"]),
    "keeper_suits": Option(["spades"]),
    "zero_bonus_cards": Option(2, minimum=0, maximum=16),
    "instant_21_cards": Option(2, minimum=0, maximum=16),
}
DEFAULTS: dict[str, Any] = {name: opt.default for name, opt in OPTIONS.items()}


def check_options(options: Mapping[str, Any], players: int) -> None:
    """BAD_VALUE for suit lists that name no suit, or a deck too small to deal from."""
    for name in ("bonus_suits", "keeper_suits"):
        for suit in options[name]:
            if suit not in SUITS:
                raise RuleError(BAD_VALUE, f"option '{name}': '{suit}' is not a suit ({', '.join(SUITS)})")
    need = players * HAND_SIZE + 1
    if len(compose(options)) < need:
        raise RuleError(BAD_VALUE, f"the deck must hold at least {need} cards for {players} players")


def compose(options: Mapping[str, Any]) -> list[str]:
    """Every card of the configured deck, in a fixed (unshuffled) order."""
    cards = []
    for _ in range(options["decks"]):
        for suit in SUITS:
            bonus = "B" if suit in options["bonus_suits"] else ""
            mark = bonus + ("K" if suit in options["keeper_suits"] else "")
            for rank in RANKS_52:
                if rank in FACES:
                    if options["face_cards"] == "remove":
                        continue
                    rank = "10"
                cards.append(rank + mark)
    cards += ["ZB"] * options["zero_bonus_cards"] + ["I21"] * options["instant_21_cards"]
    return cards


def shuffled(options: Mapping[str, Any], rng: random.Random) -> list[str]:
    cards = compose(options)
    rng.shuffle(cards)
    return cards


def deal(players: Sequence[str], dealer: str, options: Mapping[str, Any],
         rng: random.Random) -> dict[str, Any]:
    """S3 with a virtual deck: shuffled from ``rng``, dealt one card at a time clockwise from the
    dealer's left, four each; the next card is the upcard, the rest the stock (top first). The
    result holds the fields of a ``deal`` event."""
    cards = shuffled(options, rng)
    start = (list(players).index(dealer) + 1) % len(players)
    order = [players[(start + i) % len(players)] for i in range(len(players))]
    hands: dict[str, list[str]] = {p: [] for p in players}
    pos = 0
    for _ in range(HAND_SIZE):
        for p in order:
            hands[p].append(cards[pos])
            pos += 1
    return {"dealer": dealer, "hands": hands, "upcard": cards[pos], "stock": cards[pos + 1:]}
