"""Stack 21 properties: every card of the deck is always in exactly one place (stock, upcard, a
stack, the hand in flight) whatever legal, illegal or undone events arrive, and every complete
event legal_actions offers is accepted; seeded random bots finish their games by the winning rule
(S14)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games import deck, get_engine
from companion.games.base import EventError, Game, RuleError
from companion.games.stack21 import UNKNOWN, State

ENGINE = get_engine("stack21")


def cards_in_play(state: State) -> Counter:
    rnd = state.round
    assert rnd is not None and rnd.stock is not None
    where = list(rnd.stock) + [c for s in rnd.stacks.values() for stack in s.values() for c in stack]
    if rnd.upcard is not None:
        assert rnd.upcard != UNKNOWN, "a known stock never leaves the upcard unknown"
        where.append(rnd.upcard)
    if rnd.hand is not None:
        where.append(rnd.hand)
    return Counter(where)


def check_cards(state: State) -> None:
    full = Counter(deck.compose(state.options))
    if state.round is not None:
        assert cards_in_play(state) == full, "every card of the deck is in exactly one place"
    if state.history and state.history[-1]["ended"] != "recorded":  # a played round
        at_end = state.history[-1]["stacks"].values()
        ended = Counter(c for stacks in at_end for s in stacks for c in s["cards"])
        assert not ended - full, "the stacks at round end hold cards of the deck only"


def complete(action: dict[str, Any]) -> bool:
    """Not a template waiting for a value from the table."""
    if action["type"] in ("deal", "round_result", "upcard"):
        return False
    return action["type"] != "draw" or "card" in action


def check_legal_actions(game: Game, rng: random.Random) -> None:
    """Every complete event legal_actions offers is accepted (a sample of them per state)."""
    actions = [a for a in game.legal_actions() if complete(a)]
    for action in rng.sample(actions, min(3, len(actions))):
        assert ENGINE.allows(game.state, action) is None, action
    rnd = game.state.round
    if rnd is not None and rnd.upcard not in (None, UNKNOWN):  # S8: where the upcard may go, exactly
        player = game.state.players[rnd.turn]
        listed = {a["stack"] for a in actions if a["type"] == "take_upcard"}
        for stack in (1, 2, 3, 4):
            event = {"type": "take_upcard", "player": player, "stack": stack}
            assert (ENGINE.allows(game.state, event) is None) == (stack in listed), (event, rnd.upcard)


PLAYERS = ["P1", "P2", "P3", "P4", "P9"]
CARDS = ["A", "5", "10", "10B", "3K", "ZB", "I21", "11", "J"]


def noise(rng: random.Random) -> dict[str, Any]:
    """An event that may well be illegal: wrong player, stack, card or moment."""
    p = rng.choice(PLAYERS)
    return rng.choice([
        {"type": "draw", "player": p},
        {"type": "draw", "player": p, "card": rng.choice(CARDS)},
        {"type": "draw", "player": p, "from": "upcard"},
        {"type": "keep", "player": p, "stack": rng.randint(0, 5)},
        {"type": "give", "player": p, "to": rng.choice(PLAYERS), "stack": rng.randint(0, 5)},
        {"type": "place", "player": p, "stack": rng.randint(0, 5)},
        {"type": "take_upcard", "player": p, "stack": rng.randint(0, 5)},
        {"type": "combine", "player": p, "stacks": [rng.randint(0, 5), rng.randint(0, 5)]},
        {"type": "upcard", "card": rng.choice(CARDS)},
        {"type": "stock_empty"},
        {"type": "deal", "seed": rng.randint(0, 9)},
        {"type": "round_result", "stacks": {q: [["10", "A"]] for q in PLAYERS[:4]}},
    ])


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 4), teams=st.booleans(), small=st.booleans(),
       steps=st.integers(1, 600), noisy=st.floats(0, 0.5), undo=st.floats(0, 0.2))
def test_every_card_is_always_in_exactly_one_place(seed, n, teams, small, steps, noisy, undo):
    rng = random.Random(seed)
    players = PLAYERS[:n]
    new: dict[str, Any] = {"type": "new_game", "game": "stack21", "players": players,
                           "options": {"decks": 1, "face_cards": "remove"} if small else {}}
    if teams and n == 4:
        new["teams"] = [["P1", "P3"], ["P2", "P4"]]
    game = Game.start(new)
    for _ in range(steps):
        if ENGINE.finished(game.state):
            break
        roll = rng.random()
        if roll < undo and len(game.states) > 1:
            game.pop()
        elif roll < undo + noisy:
            before = game.state
            try:
                game.push(noise(rng))
            except (RuleError, EventError):
                assert game.state is before
        else:
            action = ENGINE.random_action(game.state, rng)
            if action["type"] == "deal" and "hands" in action and "stock" not in action:
                action = {"type": "deal", "dealer": action["dealer"], "seed": seed}  # keep the stock known
            game.push(action)
        check_cards(game.state)
        check_legal_actions(game, rng)


@pytest.mark.slow
def test_seeded_random_bots_finish_their_games_by_the_winning_rule():
    """S14 over 60 random games of every shape (players, teams, options, known or unknown stock)."""
    rng = random.Random(2024)
    rounds = []
    for _ in range(60):
        new = ENGINE.random_new_game(rng)
        game = Game.start(new)
        while not ENGINE.finished(game.state):
            assert len(game.events) < 20000
            game.push(ENGINE.random_action(game.state, rng))
        view = game.view()
        best = max(view["scores"].values())
        assert best >= view["detail"]["target"]
        assert view["winners"] == [u for u, s in view["scores"].items() if s == best]
        history = view["detail"]["history"]
        for unit in view["players"]:
            assert view["scores"][unit] == sum(h.get("team_points", h["points"])[unit] for h in history)
        for h in history[:-1]:  # no earlier round ended with a sole leader at the target
            top = max(h["scores"].values())
            assert top < view["detail"]["target"] or list(h["scores"].values()).count(top) > 1
        rounds.append(len(history))
    assert min(rounds) >= 1


def test_same_seed_same_game():
    def play(seed: int) -> list[dict[str, Any]]:
        rng = random.Random(seed)
        game = Game.start(ENGINE.random_new_game(rng))
        while not ENGINE.finished(game.state):
            game.push(ENGINE.random_action(game.state, rng))
        return game.events

    assert play(5) == play(5)
    assert play(5) != play(6)
