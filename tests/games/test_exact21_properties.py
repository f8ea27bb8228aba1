"""Property tests for 21 Exact (E8, E9, E13) and the table's log: random sequences of legal and
illegal events, checked against what must always hold."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games.base import RuleError
from companion.table import Table

COLOURS = ["blue", "red", "green", "yellow"]

dice_event = st.builds(
    lambda side, values: {"type": "dice", "side": side, "values": dict(zip(COLOURS, values, strict=True))},
    st.sampled_from(["A", "B", "C"]),
    st.lists(st.integers(0, 7), min_size=4, max_size=4),
)
throw_event = st.builds(
    lambda side, cup: {"type": "throw", "side": side, "cup": cup},
    st.sampled_from(["A", "A", "B", "B", "C"]),
    st.sampled_from(COLOURS * 3 + ["silver", "silver", "miss", "purple"]),
)
# mostly throws, some dice, some undos (None)
events = st.lists(st.one_of(throw_event, throw_event, throw_event, dice_event, st.none()), max_size=120)
options = st.sampled_from(["single_cup", "combination"])
teams = st.sampled_from([["A1"], ["A1", "A2"], ["A1", "A2", "A3"]])

NEW = {"type": "new_game", "game": "exact21"}


def check_invariants(state: dict) -> None:
    for side in state["detail"]["sides"].values():
        assert 0 <= side["total"] <= 21, "E13: a total never exceeds 21"
        for n in side["cups"].values():
            assert 0 <= n <= 4, "cups per colour stay in 0-4"
        if side["values"]:
            made = sum((4 - side["cups"][c]) * side["values"][c] for c in COLOURS)
            assert side["total"] == made + side["silver_points"], "E3/E11: total is cups made plus silver points"
    if state["finished"]:
        assert [s for s, v in state["scores"].items() if v == 21] == state["winners"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seq=events, rule=options, players=teams)
def test_random_sequences_keep_the_invariants_and_the_log_replays(seq, rule, players):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.sqlite"
        table = Table(path)
        table.start({**NEW, "sides": [{"name": "A", "players": players}, {"name": "B"}],
                     "options": {"silver_rule": rule}})
        for event in seq:
            before = table.state()
            try:
                after = table.undo() if event is None else table.apply(event)
            except RuleError:
                assert table.state()["seq"] == before["seq"], "a refused event stores nothing"
                after = table.state()
                assert {k: after[k] for k in ("scores", "detail")} == {k: before[k] for k in ("scores", "detail")}
                continue
            check_invariants(after)
            if event is not None:
                # apply-then-undo restores the previous state exactly
                undone = table.undo()
                assert {k: undone[k] for k in ("scores", "detail", "to_act")} == \
                       {k: before[k] for k in ("scores", "detail", "to_act")}
                table.apply(event)
        live = table.state()
        table.close()
        reopened = Table(path)  # incremental state equals the replay of the stored log
        again = reopened.state()
        reopened.close()
        for key in ("scores", "detail", "to_act", "finished", "winners", "seq"):
            assert again[key] == live[key]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), rule=options)
def test_random_legal_play_always_ends_with_a_winner_at_exactly_21(seed, rule):
    import random

    from companion.games import get_engine
    from companion.games.base import Game

    engine = get_engine("exact21")
    rng = random.Random(seed)
    ng = engine.random_new_game(rng)
    ng["options"] = {"silver_rule": rule}
    game = Game(engine, ng, engine.new_game(ng))
    for _ in range(5000):
        if engine.finished(game.state):
            break
        action = engine.random_action(game.state, rng)
        game.push(action)  # a legal action is never refused
        check_invariants(game.view())
    assert game.view()["finished"]
