"""A scoreboard renderer in real Chromium, fed a state shaped as EVENTS.md documents its
``detail``, for a game whose engine is not on this branch yet (Twenty One and exactly are tested
against their real engines in ``test_game_pages.py``). Screenshots: ``*-contract.png``."""

from __future__ import annotations

import json

import pytest

from tests.web.conftest import CHROMIUM, SHOTS, phone

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

STATES = {
    "stack21": {
        "game": "stack21", "players": ["P1", "P2", "P3"], "to_act": ["P3"], "finished": False, "winners": [],
        "scores": {"P1": 3, "P2": 5, "P3": 1}, "rejected": [], "version": 30, "legal": [], "pending": [],
        "detail": {"upcard": "9", "stacks": {"P1": [["10", "A"], ["7B", "4"]], "P2": [["9", "8B", "4"], ["5K"]],
                                             "P3": [["I21"], ["6", "ZB"], ["10", "10"]]},
                   "rounds": [{"P1": 2, "P2": 3, "P3": 0}, {"P1": 1, "P2": 2, "P3": 1}]},
    },
}


@pytest.mark.parametrize("name", list(STATES))
def test_scoreboard_renderer_follows_the_documented_detail(browser, server, name):
    errors: list[str] = []
    page = phone(browser, server.url + "/", errors)
    page.wait_for_selector(".conn[data-state=on]")
    state = STATES[name]
    page.evaluate(f"C.render({json.dumps(state)})")
    text = page.inner_text("#board")
    for player in state["players"]:
        assert player in text
    if name == "stack21":
        assert "I21" in text and "ZB" in text
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-scoreboard-contract.png"), full_page=True)
    assert errors == []
