"""Stack 21 card notation, counts as a player reads them, and scoring of stacks (S2, S13), and
the virtual deck (RULES.md S, deck make-up as configuration)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from companion.games import cards as C
from companion.games import deck


@pytest.mark.parametrize("text", ["A", "2", "10", "7B", "5K", "9BK", "AB", "10BK", "ZB", "I21"])
def test_S2_notation_of_EVENTS_is_accepted(text):
    assert C.is_card(text)


@pytest.mark.parametrize("text", ["1", "11", "J", "K", "9KB", "ZBK", "I21B", "a", "7 ", "", "0", "B"])
def test_S2_anything_else_is_not_a_card(text):
    assert not C.is_card(text)


@pytest.mark.parametrize(("stack", "shown", "state"), [
    (["A", "6"], "7 or 17", "active"),
    (["A", "A"], "2 or 12", "active"),
    (["A", "10"], "21", "21"),
    (["10", "A", "10"], "21", "21"),          # Ace as 1
    (["A", "A", "9"], "21", "21"),            # one Ace as 11, the other as 1
    (["A", "5", "10"], "16", "active"),       # Ace as 11 would bust: only 16 is shown
    (["10", "9", "A", "A", "5"], "26", "bust"),
    (["7", "ZB", "ZB"], "7", "active"),       # Zero/Bonus counts 0
    (["3", "I21"], "21", "21"),               # Instant 21
    (["10B", "6K", "5BK"], "21", "21"),       # B and K do not change the value
])
def test_S2_count_as_a_player_reads_it(stack, shown, state):
    assert C.count_text(stack) == shown
    assert C.status(stack) == state


def test_S2_bust_counts_every_ace_as_one():
    assert C.is_bust(["10", "10", "A", "A"]), "10+10+1+1 = 22 even though an Ace could be 11"
    assert not C.is_bust(["10", "10", "A"])
    assert C.status(["10", "9", "A", "A"]) == "21"  # 10+9+1+1
    assert C.would_bust(["10", "5"], "7") and not C.would_bust(["10", "5"], "6")


def test_S13_stack_points_count_bonus_cards_only_in_a_21():
    assert C.stack_points(["10B", "A"]) == 2
    assert C.stack_points(["5B", "6B", "ZB", "10"]) == 4  # 21, two B, one ZB
    assert C.stack_points(["5B", "6B", "ZB", "10"], zero_bonus_points=0) == 3
    assert C.stack_points(["9B", "8B", "7"]) == 0, "a Bonus card in a bust stack scores nothing"
    assert C.stack_points(["9B", "ZB"]) == 0, "nor in an active one"
    assert C.stack_points(["I21", "7B"]) == 2


def test_S13_perfect_round_needs_four_uncombined_stacks_all_21():
    four = [["10", "A"], ["I21"], ["7", "7", "7"], ["10", "5", "6"]]
    assert C.round_points(four, combined=False) == 4 + 2
    assert C.round_points(four[:3], combined=True) == 3
    assert C.round_points(four, combined=True) == 4
    assert C.round_points([*four[:3], ["10", "5"]], combined=False) == 3


def test_default_deck_is_two_decks_with_faces_as_ten_and_four_jokers():
    cards = deck.compose(deck.DEFAULTS)
    n = Counter(cards)
    assert len(cards) == 108
    assert n["ZB"] == 2 and n["I21"] == 2
    tens = sum(v for k, v in n.items() if k.startswith("10"))
    assert tens == 2 * 4 * 4, "J, Q, K and 10 all count ten"
    assert sum(v for k, v in n.items() if "B" in k and k != "ZB") == 26, "hearts are Bonus"
    assert sum(v for k, v in n.items() if k.endswith("K")) == 26, "spades are Keepers"
    assert all(C.is_card(c) for c in cards)


def test_deck_composition_is_configuration():
    opts = {**deck.DEFAULTS, "decks": 1, "face_cards": "remove", "bonus_suits": ["hearts", "spades"],
            "keeper_suits": ["spades"], "zero_bonus_cards": 0, "instant_21_cards": 3}
    n = Counter(deck.compose(opts))
    assert sum(n.values()) == 40 + 3
    assert n["7BK"] == 1 and n["7B"] == 1 and n["7"] == 2 and n["10"] == 2
    assert "ZB" not in n


def test_virtual_deal_is_reproducible_from_the_seed_and_uses_every_card_once():
    players = ["P1", "P2", "P3"]
    a = deck.deal(players, "P3", deck.DEFAULTS, random.Random(42))
    b = deck.deal(players, "P3", deck.DEFAULTS, random.Random(42))
    c = deck.deal(players, "P3", deck.DEFAULTS, random.Random(43))
    assert a == b and a != c
    dealt = [x for p in players for x in a["hands"][p]] + [a["upcard"]] + a["stock"]
    assert Counter(dealt) == Counter(deck.compose(deck.DEFAULTS))
    assert all(len(h) == 4 for h in a["hands"].values())


def test_the_examples_in_the_module_docstrings_hold():
    import doctest

    from companion.games import stack21

    for module in (C, deck, stack21):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
