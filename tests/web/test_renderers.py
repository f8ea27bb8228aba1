"""Each game's scoreboard renderer in real Chromium, fed a state shaped as EVENTS.md documents
its ``detail`` (the engines of twentyone, exactly and stack21 are written in parallel; these
states are the contract they write to). Screenshots: ``test-output/screenshots/*-contract.png``."""

from __future__ import annotations

import json

import pytest

from tests.web.conftest import CHROMIUM, SHOTS, phone

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

COLOURS = ["yellow", "red", "green", "blue", "white", "black"]
PRINTED = [[6, 5, 4, 3, 2, 1], [5, 4, 4, 4, 3, 1], [5, 5, 4, 3, 2, 2], [5, 5, 5, 2, 2, 1], [4, 4, 4, 4, 3, 2]]


def sheet(name: str, filled_rows: int, shift: int) -> dict:
    rows = []
    for r, printed in enumerate(PRINTED):
        cells = []
        for c, p in enumerate(printed):
            colour = COLOURS[(c + shift + r) % 6]
            if r < filled_rows:
                struck = (c == 5 and r == 0)
                value = None if struck else (p if c % 2 == 0 else max(1, p - 1))
                cells.append({"color": colour, "printed": p, "value": value, "exact": value == p, "struck": struck})
            elif r == filled_rows and c < 2:
                cells.append({"color": colour, "printed": p, "value": p, "exact": True, "struck": False})
            else:
                cells.append({"color": colour, "printed": p, "value": None, "exact": False, "struck": False})
        score = sum(x["value"] or 0 for x in cells) + [0, 1, 3, 6, 10, 15, 21][sum(x["exact"] for x in cells)]
        rows.append({"cells": cells, "score": score if r < filled_rows else None})
    return {"sheet": name, "rows": rows}


STATES = {
    "twentyone": {
        "game": "twentyone", "players": ["Ann", "Bea", "Cy"], "to_act": ["Bea", "Cy"], "finished": False,
        "winners": [], "scores": {"Ann": 41, "Bea": 23, "Cy": 30}, "rejected": [], "version": 9, "legal": [],
        "pending": [],
        "detail": {"sheets": {"Ann": sheet("A", 2, 0), "Bea": sheet("C", 1, 2), "Cy": sheet("E", 2, 4)},
                   "dice": {"white": 6, "black": 4, "red": 3, "blue": 3, "yellow": 1, "green": 1}},
    },
    "exactly": {
        "game": "exactly", "players": ["P1", "P2", "P3"], "to_act": ["P2"], "finished": False, "winners": [],
        "scores": {"P1": 1, "P2": 0, "P3": 2}, "rejected": [], "version": 4, "legal": [], "pending": [],
        "detail": {"stacks": {"P1": {"total": 85}, "P2": {"total": 100}, "P3": {"total": 25},
                              "center": {"total": 640}}, "roll": "20"},
    },
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
    if name == "twentyone":
        assert page.locator("#board .sheet td.exact").count() > 0
        assert page.locator("#board .sheet td.struck").count() == 3
        assert "41" in page.inner_text('#board [data-player="Ann"] .score')
    if name == "exactly":
        assert page.inner_text('#board [data-stack="P2"] .cents') == "100c"
        assert page.inner_text('#board [data-stack="P3"] .trophies') == "★★"
        assert "640c" in text
    if name == "stack21":
        assert "I21" in text and "ZB" in text
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-scoreboard-contract.png"), full_page=True)
    assert errors == []
