"""What a player notices on a phone, in real Chromium against a real server on loopback: the
Camera page fits a phone, History tells the phone's own time, set-up and PIN refusals read as
sentences in the phone's language."""

from __future__ import annotations

import json
import urllib.request

import pytest

from companion.config import load
from companion.live.service import Service
from companion.sim.rendered_table import for_config
from companion.web.server import start
from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PHONE, SHOTS, phone
from tests.web.test_browser import play_random, post
from tests.web.test_game_pages import start as start_on_setup

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (./run test installs it)")


def test_camera_page_fits_a_phone_with_the_rendered_camera(browser, tmp_path):
    """The Camera page of a table with a camera: the 1280x720 frame and the long readings used to
    run off a 390-pixel phone, which cannot scroll sideways (the page hides horizontal overflow),
    so the frame was cut off. Now the frame scales to the card and long readings wrap."""
    config = load(None, {"camera": {"source": "render", "render_seed": 10, "render_speed": 1.0},
                         "data": {"dir": str(tmp_path / "data")}, "server": {"pin": "2468"},
                         "panel": {"enabled": False}, "confirm": {"auto_seconds": 0.3}})
    service = Service(config, rendered=for_config(config))
    service.start()
    running = start(service.app, "127.0.0.1", 0, threads=16)
    try:
        errors: list[str] = []
        page = phone(browser, running.url + "/health", errors)
        page.wait_for_selector("#frame:not([hidden])")
        page.wait_for_function("document.getElementById('frame').naturalWidth > 0", timeout=10000)
        page.wait_for_selector("#health dt")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "health-phone-camera.png"), full_page=True)
        box = page.locator("#frame").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        widest = page.evaluate("Math.max(...[...document.querySelectorAll('#health dd')]"
                               ".map((d) => d.getBoundingClientRect().right))")
        assert widest <= PHONE["width"]
        assert errors == []
    finally:
        running.stop()
        service.stop()


def test_history_shows_when_a_game_was_played_in_the_phones_time(browser, server):
    """The log stores UTC; History printed it as it was, so at a table in Budapest a game started
    at 18:05 was listed at 17:05 (two hours off in summer). It now shows the phone's own time."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    post(server.port, "/api/games", {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea"]})
    with urllib.request.urlopen(server.url + "/api/games", timeout=5) as r:
        game = json.load(r)["games"][0]
    created = datetime.fromisoformat(game["created"].replace("Z", "+00:00"))
    local = created.astimezone(ZoneInfo("Europe/Budapest")).strftime("%Y-%m-%d %H:%M")
    context = browser.new_context(viewport=PHONE, locale="hu-HU", timezone_id="Europe/Budapest")
    page = context.new_page()
    page.goto(server.url + "/history")
    row = page.locator(f'#games [data-game="{game["id"]}"]')
    row.wait_for()
    assert local in row.inner_text()
    assert created.strftime("%Y-%m-%d %H:%M") not in row.inner_text()
    context.close()


def test_setup_stack21_teams_with_three_players_says_why(browser, server):
    """S1: team play is four players. With three names and "teams" ticked, the set-up page sent a
    missing fourth as null and the player read "'teams[1]'[1] must be a string, not null"; now
    the engine's own sentence."""
    errors: list[str] = []
    setup = phone(browser, server.url + "/setup", errors)
    setup.select_option("#game", "stack21")
    setup.fill("textarea[name=players]", "Ann\nBea\nCy")
    setup.check("input[name=teams]")
    setup.click("button[type=submit]")
    setup.wait_for_selector("#toast:not([hidden])")
    assert "team play needs exactly 4 players, not 3" in setup.inner_text("#toast")
    assert "null" not in setup.inner_text("#toast")
    assert errors == []


def test_a_wrong_pin_is_told_in_the_phones_language(browser, server):
    """A phone that scanned the controller's QR code before a restart holds the old PIN (a new one
    is drawn at each start). On a Spanish phone the refusal was the server's English sentence
    although the page has its own words for it; the PIN refusals are now in the phone's language,
    for the login and for a tap alike."""
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    errors: list[str] = []
    ctl = phone(browser, server.url + "/controller#pin=1111", errors, lang="es-ES")
    ctl.wait_for_selector("#toast:not([hidden])")
    assert ctl.inner_text("#toast") == "ese no es el PIN de la mesa"
    assert ctl.locator("#login").is_visible()
    ctl.evaluate("localStorage.setItem('companion.pin', '2222'); document.getElementById('toast').textContent = ''")
    ctl.locator('form.dice-entry[data-side="A"] button[type=submit]').click()
    ctl.wait_for_function("document.getElementById('toast').textContent.includes('PIN de la mesa')")
    assert "not the table PIN" not in ctl.inner_text("#toast")
    assert errors == []


def test_a_new_game_the_rules_refuse_is_told_before_asking_to_leave_the_game(browser, server):
    """During an unfinished game, a set-up with two sides of one name first asked "Start a new game
    anyway?" and only then said the sides were wrong; fixing them asked again. The refusal now
    comes first, with no question, and the game in progress goes on."""
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    errors: list[str] = []
    dialogs: list[str] = []
    setup = phone(browser, server.url + "/setup", errors)
    setup.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    setup.fill("input[name=side1]", "A")
    setup.click("button[type=submit]")
    setup.wait_for_selector("#toast:not([hidden])")
    assert "two sides are called 'A'" in setup.inner_text("#toast")
    assert dialogs == []
    with urllib.request.urlopen(server.url + "/api/state", timeout=5) as r:
        assert json.load(r)["players"] == ["A", "B"]
    assert errors == []


@pytest.mark.parametrize("lang, line", [("en-GB", "Last: Ann → miss"), ("es-ES", "Último: Ann → fallo")])
def test_exact21_a_miss_is_said_once_on_the_scoreboard(browser, server, lang, line):
    """E7: a miss changes nothing. The scoreboard's last line read "Last: Ann → miss (miss)" (the
    cup and its result are the same word); it now says it once."""
    post(server.port, "/api/games", NEW_EXACT21)
    post(server.port, "/api/events", DICE_A)
    post(server.port, "/api/events", DICE_B)
    post(server.port, "/api/events", {"type": "throw", "side": "A", "cup": "miss"})
    errors: list[str] = []
    board = phone(browser, server.url + "/", errors, lang=lang)
    board.wait_for_selector("#board .last")
    assert board.inner_text("#board .last") == line
    post(server.port, "/api/events", {"type": "throw", "side": "A", "cup": "blue"})
    board.wait_for_function("document.querySelector('#board .last').textContent.includes('Ben')")
    assert "(" in board.inner_text("#board .last")  # a cup made still says what it did
    assert errors == []


def test_stack21_first_turn_heading_offers_only_keep(browser, server):
    """S4: the first turn of a round is draw and keep only. With the drawn card in hand the
    controller's heading said "Ann: keep or give the card" while it offered no give; it now says
    "keep the card", and "keep or give" once a give is allowed."""
    errors: list[str] = []
    board, ctl = start_on_setup(browser, server, errors, "stack21", "Ann\nBea")
    deal = ctl.locator(".s21-deal-hands")  # dealing by typed hands: in the page
    deal.locator("summary").click()
    deal.locator("input[name=hand_Ann]").fill("a 6 10 9")
    deal.locator("input[name=hand_Bea]").fill("5 5 8 2")
    deal.locator("input[name=upcard]").fill("A")
    deal.locator(".s21-hands button[type=submit]").click()

    def draw(rank: str) -> None:
        pad = ctl.locator(".s21-pad").first
        pad.locator(f'button[data-rank="{rank}"]').click()
        pad.locator("button[type=submit]").click()

    draw("4")
    ctl.wait_for_selector('button[data-action="keep"]')
    assert ctl.locator('button[data-action="give"]').count() == 0
    assert "Ann: keep the card" in ctl.inner_text("#controls .who")
    ctl.click('button[data-action="keep"][data-target="Ann:1"]')
    draw("3")  # Bea's first turn too
    ctl.wait_for_selector('button[data-action="keep"][data-target="Bea:1"]')
    assert "Bea: keep the card" in ctl.inner_text("#controls .who")
    ctl.click('button[data-action="keep"][data-target="Bea:1"]')
    draw("2")  # Ann's second turn: she may give
    ctl.wait_for_selector('button[data-action="give"]')
    assert "Ann: keep or give the card" in ctl.inner_text("#controls .who")
    assert errors == []


def test_history_says_playing_now_only_of_an_unfinished_game(browser, server):
    """History marked the table's game "playing now" even once it was won; a finished game is
    listed as finished games are (no mark), an unfinished one keeps "playing now"."""
    final = play_random(server.port, "exact21", steps=400)
    assert final["finished"]
    errors: list[str] = []
    page = phone(browser, server.url + "/history", errors)
    row = page.locator(f'#games [data-game="{final["game_id"]}"]')
    row.wait_for()
    assert "playing now" not in row.inner_text() and "unfinished" not in row.inner_text()
    post(server.port, "/api/games", NEW_EXACT21)
    page.reload()
    row = page.locator('#games [data-current]')
    row.wait_for()
    assert "playing now" in row.inner_text()
    assert errors == []
