"""Each game's own pages in real Chromium against a real server: the game is set up on the
set-up page, played by taps on its controller, and a second phone's scoreboard follows every
event without a reload. Phone-sized screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import json
import urllib.request

import pytest

from companion.games import get_engine
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
    form.locator("input[name=typed]").fill("451326")  # white black red blue yellow green: the sixth digit sends it
    wait_text(board, '#board .t21-turn [data-die="white"]', "4")
    assert board.locator('#board [data-reroll="yes"]').count() == 1

    # T4: the re-roll keeps the red 1 (its other values cannot be picked).
    ctl.click(".t21-reroll summary")
    reroll = ctl.locator('.t21-dice[data-kind="reroll"]')
    assert reroll.locator('button[data-colour="red"][data-value="3"]').is_disabled()
    reroll.locator("input[name=typed]").fill("441356")  # sent by its sixth digit too
    wait_text(board, '#board .t21-turn [data-die="yellow"]', "5")
    assert board.locator('#board [data-reroll="no"]').count() == 1
    assert ctl.locator(".t21-reroll").count() == 0

    # T6: Ann (sheet C, row 1: green 6 black 5 white 4 blue 3 yellow 2 red 1) may enter all but
    # the yellow 5; white 4 would be exact.
    ann = ctl.locator('.t21-act[data-player="Ann"]')
    ann.wait_for()
    enabled = [c for c in ["white", "black", "red", "blue", "yellow", "green"]
               if ann.locator(f'button[data-colour="{c}"]').is_enabled()]
    assert enabled == get_state(server.port)["detail"]["choices"]["Ann"]["enter"] == ["white", "black", "red", "blue", "green"]
    assert "would-exact" in (ann.locator('button[data-colour="white"]').get_attribute("class") or "")
    ann.locator('button[data-colour="white"]').click()
    ann.locator('button[data-colour="red"]').click()
    ann.locator("button[data-enter]").click()
    ann_row = '#board [data-player="Ann"] tr[data-row="1"]'
    wait_text(board, ann_row + ' td[data-cell="3"]', "4")
    assert board.locator(ann_row + ' td[data-cell="3"].exact .x').inner_text() == "X"
    assert board.locator(ann_row + ' td[data-cell="6"]').inner_text().startswith("1")
    shoot(ctl, "twentyone-controller-enter.png")

    # T7: Bea strikes the leftmost empty cell of her row (sheet A: yellow 6).
    bea = ctl.locator('.t21-act[data-player="Bea"]')
    strike = bea.locator("button[data-strike]")
    assert "1" in strike.inner_text() and "6" in strike.inner_text()
    strike.click()
    # T10: everyone has acted; Bea rolls turn 2.
    # (wait for the roller by name: the turn card's text may hold a "2" before the turn moves on)
    wait_text(board, "#board .t21-turn [data-roller]", "Bea")
    assert "2" in board.inner_text("#board .t21-turn .t21-head b")
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


def _has_engine(name: str) -> bool:
    try:
        get_engine(name)
    except ImportError:
        return False
    return True


needs_stack21 = pytest.mark.skipif(not _has_engine("stack21"), reason="the stack21 engine is not on this branch yet")


@needs_stack21
def test_stack21_S3_S5_S6_S7_S8_S9_played_on_the_controller(browser, server):
    """S3 a deal typed in (a short hand is refused with the engine's sentence), S5/S6 a drawn card
    named on the card pad and kept, S8 the upcard taken to make 21, an unknown new upcard named,
    S7 a card given to an opponent (one refused, then placed), S9 two stacks combined; counts
    read "5 or 15"."""
    errors: list[str] = []
    board, ctl = start(browser, server, errors, "stack21", "Ann\nBea")
    deal = ctl.locator(".s21-deal-hands")  # in the page; the dealer and the virtual deck in the dock
    deal.locator("summary").click()
    assert ctl.locator("#dock .s21-deal select[name=dealer]").input_value() == "Bea"
    deal.locator("input[name=hand_Ann]").fill("a 6 10")
    deal.locator("input[name=hand_Bea]").fill("5 5 8 2")
    deal.locator("input[name=upcard]").fill("A")
    deal.locator(".s21-hands button[type=submit]").click()
    ctl.wait_for_selector("#toast:not([hidden])")
    assert "each player is dealt 4 cards" in ctl.inner_text("#toast")
    deal.locator("input[name=hand_Ann]").fill("a 6 10 9")
    deal.locator(".s21-hands button[type=submit]").click()
    wait_text(board, "#board .s21-round", "Ann")
    assert board.locator('#board [data-player="Ann"] .s21-stack').count() == 4

    def pad_draw(card: str) -> None:
        pad = ctl.locator(".s21-pad").first
        rank = card.rstrip("BK") or card
        pad.locator(f'button[data-rank="{rank}"]').click()
        if card.endswith("B"):
            pad.locator('button[data-mod="bonus"]').click()
        pad.locator("button[type=submit]").click()

    pad_draw("4")  # S5/S6: Ann's first turn: draw and keep
    wait_text(board, "#board .s21-round", "4")
    assert ctl.locator('button[data-action="give"]').count() == 0  # first turn: keep only
    ctl.click('button[data-action="keep"][data-target="Ann:1"]')
    wait_text(board, '#board [data-player="Ann"] [data-count="1"]', "5 or 15")
    pad_draw("10")
    ctl.click('button[data-action="keep"][data-target="Bea:3"]')
    wait_text(board, '#board [data-player="Bea"] [data-count="3"]', "18")

    ctl.click('button[data-action="take_upcard"][data-target="Ann:3"]')  # S8: 10 + A = 21
    board.wait_for_selector('#board [data-player="Ann"] .s21-stack.s21-made[data-stack-id="3"]')
    pad = ctl.locator('.s21-pad[data-pad^="upcard"]')  # the new upcard is unknown to the companion
    pad.locator('button[data-rank="9"]').click()
    pad.locator("button[type=submit]").click()
    wait_text(board, "#board .s21-upcard", "9")
    pad_draw("10B")
    ctl.click('button[data-action="give"][data-target="Ann:4"]')  # S7: 9 + 10 accepted
    wait_text(board, '#board [data-player="Ann"] [data-count="4"]', "19")
    assert board.locator('#board [data-player="Ann"] [data-card="10B"].bonus').count() == 1
    shoot(ctl, "stack21-controller-turn.png")
    ctl.click('button[data-action="combine"][data-target="1+2"]')  # S9: A 4 + 6 = 21
    board.wait_for_selector('#board [data-player="Ann"] .s21-stack.s21-made[data-stack-id="1"]')
    assert board.locator('#board [data-player="Ann"] .s21-stack').count() == 3

    # S7: a card that would bust the opponent's stack is refused; the giver places it.
    pad_draw("5")
    ctl.click('button[data-action="give"][data-target="Ann:4"]')  # 19 + 5
    wait_text(board, "#board .last", "refused")
    assert "Ann" in board.inner_text("#board .s21-round .s21-upcard:has([data-card='5'])")
    assert ctl.locator('button[data-action="give"]').count() == 0
    ctl.click('button[data-action="place"][data-target="Bea:1"]')
    wait_text(board, '#board [data-player="Bea"] [data-count="1"]', "10")
    assert board.evaluate("window.__not_reloaded") is True
    shoot(board, "stack21-scoreboard-live.png")
    assert errors == []


@needs_stack21
def test_stack21_S1_S13_teams_round_result_and_virtual_deal(browser, server):
    """S1 team play set up by the check box, S13 a round recorded from its final stacks scores per
    team with the round history and the stacks at round end, then a seeded virtual deck deals."""
    errors: list[str] = []
    board = phone(browser, server.url + "/", errors)
    board.wait_for_selector(".conn[data-state=on]")
    ctl = phone(browser, server.url + "/setup", errors)
    ctl.select_option("#game", "stack21")
    ctl.fill("textarea[name=players]", "Ann\nBen\nCy\nDi")
    ctl.check("input[name=teams]")
    assert ctl.input_value('[name="opt_target"]') == "42"
    ctl.click("button[type=submit]")
    ctl.wait_for_url("**/controller")
    wait_text(board, "#board .s21-scores", "Ann + Cy")
    assert get_state(server.port)["detail"]["target"] == 42

    result = ctl.locator(".s21-result")
    ctl.click(".s21-more:has(.s21-result) summary")
    final = {"Ann": "10 A / 10 5B 6 / 9 8B 7 / 7B 7B 7", "Ben": "10 10 5 / 10 A / 9 9 9 / 10 10 2",
             "Cy": "I21 / 10 A / 10 10 A / 9 8 4", "Di": "10 9 5 / 10 8 7 / 10 10 10 / 9 9 9"}
    for player, stacks in final.items():
        result.locator(f"input[name=stacks_{player}]").fill(stacks)
    result.locator("button[type=submit]").click()
    board.wait_for_selector("#board .s21-history tr[data-round='1']")
    state = get_state(server.port)
    for team, points in state["scores"].items():
        assert board.inner_text(f'#board [data-score="{team}"]') == str(points)
    assert board.locator("#board .s21-player").count() == 4  # the stacks as the round ended
    assert board.locator("#board [data-points]").count() == 4
    shoot(board, "stack21-scoreboard-round-end.png")

    ctl.click("button[data-virtual-deal]")
    board.wait_for_selector("#board .s21-round .s21-upcard [data-card]")
    assert board.locator("#board .s21-player .s21-stack").count() == 16
    assert board.locator("#board .s21-history tr[data-round]").count() == 1
    shoot(ctl, "stack21-controller-dealt.png")
    assert errors == []


def test_twentyone_setup_T1_T2_sheets_and_own_layout(browser, server):
    """T1: two players on one sheet are refused with the engine's sentence; T2: the table's own
    pad layout pasted on the set-up page replaces the shipped one for that sheet."""
    from companion.games.twentyone import shipped_sheets

    errors: list[str] = []
    ctl = phone(browser, server.url + "/setup", errors)
    ctl.select_option("#game", "twentyone")
    ctl.fill("textarea[name=players]", "Ann = B\nBea = b")
    ctl.click("button[type=submit]")
    ctl.wait_for_selector("#toast:not([hidden])")
    assert "sheet B is Ann's" in ctl.inner_text("#toast")

    ctl.fill("textarea[name=sheets]", "{not json")
    ctl.click("button[type=submit]")
    wait_text(ctl, "#toast", "JSON")

    own = [[list(cell) for cell in reversed(row)] for row in shipped_sheets()["A"]]  # a pad printed mirrored
    ctl.fill("textarea[name=players]", "Ann = B\nBea")
    ctl.fill("textarea[name=sheets]", json.dumps({"B": own}))
    ctl.click("button[type=submit]")
    ctl.wait_for_url("**/controller")
    board = phone(browser, server.url + "/", errors)
    board.wait_for_selector('#board [data-player="Ann"] .sheet')
    assert board.inner_text('#board [data-player="Ann"] .t21-name .dim').strip() == "Sheet B"  # no * : the pad's own
    assert board.inner_text('#board [data-player="Bea"] .t21-name .dim').strip() == "Sheet A*"
    first = board.locator('#board [data-player="Ann"] tr[data-row="1"] td[data-cell="1"]')
    assert first.inner_text().strip() == str(own[0][0][1]) and f"c-{own[0][0][0]}" in first.get_attribute("class")
    shoot(ctl, "twentyone-setup-done.png")
    assert errors == []
