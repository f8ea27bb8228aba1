"""Stack 21 cards: notation and the count of a stack (RULES.md S2).

Notation (EVENTS.md): ``"A"``, ``"2"`` … ``"10"``, with suffix ``B`` (Bonus) and/or ``K``
(Keeper) in that order (``"7B"``, ``"5K"``, ``"9BK"``); ``"ZB"`` Zero/Bonus (counts 0, is a
Bonus); ``"I21"`` Instant 21 (the stack holding it is 21).

>>> count_text(["A", "6"])
'7 or 17'
>>> status(["A", "10B"]), status(["10", "9", "5"]), status(["7", "I21"])
('21', 'bust', '21')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

TARGET = 21
ZB = "ZB"
I21 = "I21"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10")
_NOTATION = re.compile(r"^(A|[2-9]|10)(B?)(K?)$")

ACTIVE, TWENTY_ONE, BUST = "active", "21", "bust"


@dataclass(frozen=True)
class Card:
    """One card as the rules see it."""

    text: str
    value: int  # Ace as 1, ZB 0, I21 0 (it makes the stack 21 by itself)
    ace: bool = False
    bonus: bool = False  # B suffix; ZB is a Bonus too (scored per option zero_bonus_points)
    keeper: bool = False
    zero_bonus: bool = False
    instant: bool = False


@lru_cache(maxsize=256)
def parse(text: str) -> Card | None:
    """The card of a notation, or None if ``text`` is not a Stack 21 card."""
    if text == ZB:
        return Card(text, 0, zero_bonus=True)
    if text == I21:
        return Card(text, 0, instant=True)
    m = _NOTATION.match(text)
    if m is None:
        return None
    rank, bonus, keeper = m.groups()
    ace = rank == "A"
    return Card(text, 1 if ace else int(rank), ace=ace, bonus=bool(bonus), keeper=bool(keeper))


def card(text: str) -> Card:
    """Like :func:`parse` for notation already checked."""
    c = parse(text)
    if c is None:
        raise ValueError(f"'{text}' is not a Stack 21 card")
    return c


def is_card(text: str) -> bool:
    return parse(text) is not None


@lru_cache(maxsize=256)
def _facts(text: str) -> tuple[int, bool, bool]:
    c = card(text)
    return c.value, c.ace, c.instant


def _summary(cards: Sequence[str]) -> tuple[int, bool, bool]:
    """(count with Aces as 1, holds an Ace, holds an Instant 21) in one pass."""
    hard, ace, instant = 0, False, False
    for c in cards:
        v, a, i = _facts(c)
        hard += v
        ace = ace or a
        instant = instant or i
    return hard, ace, instant


def hard_count(cards: Sequence[str]) -> int:
    """The count with every Ace as 1 (the count that decides a bust)."""
    return _summary(cards)[0]


def counts(cards: Sequence[str]) -> tuple[int, ...]:
    """The counts a holder may choose (S2): with every Ace as 1, and — if the stack holds an Ace
    and it does not bust — with one Ace as 11 (two Aces as 11 always bust)."""
    hard, ace, _ = _summary(cards)
    if ace and hard + 10 <= TARGET:
        return (hard, hard + 10)
    return (hard,)


def status(cards: Sequence[str]) -> str:
    """``"21"``, ``"bust"`` or ``"active"``; a stack that is 21 or bust is inactive."""
    hard, ace, instant = _summary(cards)
    if instant or hard == TARGET or (ace and hard + 10 == TARGET):
        return TWENTY_ONE
    return BUST if hard > TARGET else ACTIVE


def is_21(cards: Sequence[str]) -> bool:
    """S2: some choice of Ace values gives exactly 21, or the stack holds an Instant 21."""
    return status(cards) == TWENTY_ONE


def is_bust(cards: Sequence[str]) -> bool:
    """S2: over 21 with every Ace as 1 (never a stack holding an Instant 21)."""
    return status(cards) == BUST


def is_active(cards: Sequence[str]) -> bool:
    return status(cards) == ACTIVE


def count_text(cards: Sequence[str]) -> str:
    """The count as a player reads it: ``"7 or 17"`` while an Ace may be 11, ``"21"`` for a
    21 stack (Instant 21 included), the count with Aces as 1 otherwise (a bust shows e.g. "25")."""
    if is_21(cards):
        return "21"
    return " or ".join(str(c) for c in counts(cards))


def would_bust(cards: Sequence[str], new: str) -> bool:
    """S7: would ``new`` bust this stack (a given card is refused then)?"""
    return is_bust([*cards, new])


def stack_points(cards: Sequence[str], zero_bonus_points: int = 1) -> int:
    """S13 for one stack: 1 if it is 21, +1 per Bonus card in it (ZB worth ``zero_bonus_points``);
    nothing for an active or bust stack, Bonus cards included."""
    if not is_21(cards):
        return 0
    points = 1
    for c in cards:
        parsed = card(c)
        if parsed.zero_bonus:
            points += zero_bonus_points
        elif parsed.bonus:
            points += 1
    return points


def round_points(stacks: Sequence[Sequence[str]], combined: bool, zero_bonus_points: int = 1) -> int:
    """S13 for one player's stacks at round end: the stacks' points, +2 for a perfect round
    (four stacks, all 21, none combined)."""
    points = sum(stack_points(s, zero_bonus_points) for s in stacks)
    if len(stacks) == 4 and not combined and all(is_21(s) for s in stacks):
        points += 2
    return points
