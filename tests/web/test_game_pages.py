"""Each game's own pages in real Chromium against a real server: the game is set up on the
set-up page, played by taps on its controller, and a second phone's scoreboard follows every
event without a reload. Phone-sized screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.web.conftest import CHROMIUM, SHOTS, phone
from tests.web.test_browser import play_random

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")


def get_state(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
        return json.load(r)


def wait_text(page, selector: str, text: str, timeout: int = 4000) -> None:
    page.wait_for_function("([s, t]) => { const n = document.querySelector(s); return n && n.textContent.includes(t); }",
                           arg=[selector, text], timeout=timeout)


def start(browser, server, errors: list[str], game: str, players: str):
    """A scoreboard phone, then a controller phone that sets ``game`` up on the set-up page."""
    board = phone(browser, server.url + "/", errors)
    board.evaluate("window.__not_reloaded = true")
    board.wait_for_selector(".conn[data-state=on]")
    ctl = phone(browser, server.url + "/setup", errors)
    ctl.select_option("#game", game)
    ctl.fill("textarea[name=players]", players)
    ctl.click("button[type=submit]")
    ctl.wait_for_url("**/controller")
    return board, ctl


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def test_twentyone_T1_T3_T4_T5_T7_played_on_the_controller(browser, server):
    """T1 sheets from the set-up page, T3 the roll by typed digits, T4 a re-roll with the one
    locked, T5/T6 entering the colours the engine offers (an exact hit is marked X), T7 a strike
    of the leftmost cell, T10 the next roller; the scoreboard follows without a reload."""
    errors: list[str] = []
    board, ctl = start(browser, server, errors, "twentyone", "Ann = C\nBea")
    wait_text(board, '#board [data-player="Ann"]', "C")
    assert "A" in board.inner_text('#board [data-player="Bea"] .t21-name')
    assert board.locator('#board [data-player="Ann"] .sheet tr[data-row]').count() == 5
    assert board.locator('#board [data-player="Ann"] .sheet td[data-cell]').count() == 30

    # T3: five digits are refused with the engine's own sentence; six are a roll.
    form = ctl.locator('.t21-dice[data-kind="roll"]')
    form.locator("input[name=typed]").fill("45132")
    form.locator("button[type=submit]").click()
    ctl.wait_for_selector("#toast:not([hidden])")
    assert "green die's value is missing" in ctl.inner_text("#toast")
    form.locator("input[name=typed]").fill("451326")  # white black red blue yellow green
    form.locator("button[type=submit]").click()
    wait_text(board, '#board .t21-turn [data-die="white"]', "4")
    assert board.locator('#board [data-reroll="yes"]').count() == 1

    # T4: the re-roll keeps the red 1 (its other values cannot be picked).
    ctl.click(".t21-reroll summary")
    reroll = ctl.locator('.t21-dice[data-kind="reroll"]')
    assert reroll.locator('button[data-colour="red"][data-value="3"]').is_disabled()
    reroll.locator("input[name=typed]").fill("441356")
    reroll.locator("button[type=submit]").click()
    wait_text(board, '#board .t21-turn [data-die="yellow"]', "5")
    assert board.locator('#board [data-reroll="no"]').count() == 1
    assert ctl.locator(".t21-reroll").count() == 0

    # T6: Ann (sheet C, row 1: blue 6 green 5 white 4 yellow 3 red 2 black 1) may enter white,
    # red and blue; white 4 would be exact.
    ann = ctl.locator('.t21-act[data-player="Ann"]')
    ann.wait_for()
    enabled = [c for c in ["white", "black", "red", "blue", "yellow", "green"]
               if ann.locator(f'button[data-colour="{c}"]').is_enabled()]
    assert enabled == get_state(server.port)["detail"]["choices"]["Ann"]["enter"] == ["white", "red", "blue"]
    assert "would-exact" in (ann.locator('button[data-colour="white"]').get_attribute("class") or "")
    ann.locator('button[data-colour="white"]').click()
    ann.locator('button[data-colour="red"]').click()
    ann.locator("button[data-enter]").click()
    ann_row = '#board [data-player="Ann"] tr[data-row="1"]'
    wait_text(board, ann_row + ' td[data-cell="3"]', "4")
    assert board.locator(ann_row + ' td[data-cell="3"].exact .x').inner_text() == "X"
    assert board.locator(ann_row + ' td[data-cell="5"]').inner_text().startswith("1")
    shoot(ctl, "twentyone-controller-enter.png")

    # T7: Bea strikes the leftmost empty cell of her row (sheet A: red 6).
    bea = ctl.locator('.t21-act[data-player="Bea"]')
    strike = bea.locator("button[data-strike]")
    assert "1" in strike.inner_text() and "6" in strike.inner_text()
    strike.click()
    # T10: everyone has acted; Bea rolls turn 2.
    wait_text(board, "#board .t21-turn", "2")
    assert "Bea" in board.inner_text("#board .t21-turn [data-roller]")
    assert board.locator('#board [data-player="Bea"] tr[data-row="1"] td[data-cell="1"].struck').count() == 1
    assert board.evaluate("window.__not_reloaded") is True
    shoot(board, "twentyone-scoreboard-live.png")
    shoot(ctl, "twentyone-controller-roll.png")
    assert errors == []


def test_exactly_X2_X3_X6_X8_played_on_the_controller(browser, server):
    """X2 the start roll (a tie is refused with the engine's sentence), X6 a 0 passes the turn,
    X3 moves offered as taps from the legal moves (``?`` by value tabs), X8 a stack at exactly
    100c wins a trophy; the scoreboard follows each event without a reload."""
    errors: list[str] = []
    board, ctl = start(browser, server, errors, "exactly", "Ann\nBea")
    wait_text(board, '#board [data-stack="Bea"] .cents', "5c")  # X1: everyone starts with a 5c token
    assert "€1" not in board.inner_text('#board [data-stack="center"]')

    def start_faces(faces: dict[str, str]) -> None:
        box = ctl.locator(".x-start-box")
        if box.get_attribute("open") is None:
            box.locator("summary").click()
        for player, face in faces.items():
            box.locator(f'button[data-player="{player}"][data-face="{face}"]').click()
        box.locator("button[type=submit]").click()

    start_faces({"Ann": "?", "Bea": "?"})
    ctl.wait_for_selector("#toast:not([hidden])")
    assert "tie for the highest roll" in ctl.inner_text("#toast")
    start_faces({"Bea": "5"})
    wait_text(board, "#board .last", "Ann")
    assert ctl.locator(".x-start-box").count() == 0

    def roll(face: str) -> None:
        ctl.locator(f'.faces button[data-face="{face}"]').click()

    roll("0")  # X6: the turn passes by itself
    wait_text(board, "#board .last", "0")
    wait_text(board, "#board .x-now", "Bea")
    roll("50")
    ctl.click('button[data-move="50:center:Bea"]')
    wait_text(board, '#board [data-stack="Bea"] .cents', "55c")
    assert board.locator('#board [data-stack="Bea"] [data-coin="50"]').count() == 1
    roll("20")
    ctl.click('button[data-move="20:center:Bea"]')
    wait_text(board, '#board [data-stack="Bea"] .cents', "75c")
    roll("20")
    ctl.click('button[data-move="20:center:Bea"]')
    wait_text(board, '#board [data-stack="Bea"] .cents', "95c")

    roll("?")  # any value: one tab per value, the exact move is marked and hinted
    ctl.click('.tabs button[data-tab="5"]')
    exact = ctl.locator('button[data-move="5:center:Bea"]')
    assert "exact" in (exact.get_attribute("class") or "")
    wait_text(board, "#board .x-hints", "5c")
    assert board.locator('#board [data-hint="exact"]').count() >= 1
    shoot(ctl, "exactly-controller-moves.png")
    shoot(board, "exactly-scoreboard-exact.png")
    exact.click()
    board.wait_for_selector('#board [data-stack="Bea"] [data-trophies="1"]')
    assert "Bea" in board.inner_text("#board .last")
    wait_text(board, "#board .x-turn", "2")  # X10: round 2, stacks back to the centre
    assert board.inner_text('#board [data-stack="Bea"] .cents') != "100c"
    assert board.evaluate("window.__not_reloaded") is True
    shoot(board, "exactly-scoreboard-live.png")
    assert errors == []


@pytest.mark.parametrize("name", ["twentyone", "exactly"])
def test_finished_game_shows_winners_and_final_scores(browser, server, name):
    """T11/T12 and X11: a seeded game played to its end through the API; the scoreboard names the
    winners, shows every player's final score, and the controller offers nothing more to do."""
    final = play_random(server.port, name, steps=2000, seed=2)
    assert final["finished"]
    errors: list[str] = []
    board = phone(browser, server.url + "/", errors)
    board.wait_for_function(f"document.body.dataset.version === '{final['version']}'", timeout=5000)
    assert all(w in board.inner_text("#status .win") for w in final["winners"])
    for player, points in final["scores"].items():
        if name == "twentyone":
            assert board.inner_text(f'#board [data-score="{player}"]') == str(points)
        else:
            assert board.get_attribute(f'#board [data-stack="{player}"] .trophies', "data-trophies") == str(points)
    shoot(board, f"{name}-scoreboard-finished.png")
    ctl = phone(browser, server.url + "/controller", errors)
    ctl.wait_for_function(f"document.body.dataset.version === '{final['version']}'", timeout=5000)
    assert ctl.locator("#controls button").count() == 0
    assert errors == []
