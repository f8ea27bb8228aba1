"""Real Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright) against a real waitress
server on loopback: two scoreboards follow a third page's taps on the controller without a
reload; phone-sized screenshots of each game's pages go to ``test-output/screenshots/``."""

from __future__ import annotations

import json
import random
import urllib.request

import pytest

from companion.games import ENGINES, get_engine
from companion.games.base import Game
from tests.web.conftest import CHROMIUM, PIN, SHOTS, phone

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (./run test installs it)")


def post(port: int, path: str, body: dict) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"X-Table-Pin": PIN, "Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


def score(page, side: str) -> str:
    return page.locator(f'#board [data-score="{side}"]').inner_text()


def test_two_scoreboards_follow_the_controller_without_reload(browser, server):
    errors: list[str] = []
    boards = [phone(browser, server.url + "/", errors), phone(browser, server.url + "/?lang=hu", errors, "hu-HU")]
    for b in boards:
        b.evaluate("window.__not_reloaded = true")
        b.wait_for_selector(".conn[data-state=on]")

    # The third phone sets the game up by taps and lands on the controller.
    ctl = phone(browser, server.url + "/setup", errors)
    ctl.select_option("#game", "exact21")
    ctl.fill("input[name=side0]", "Reds")
    ctl.fill("textarea[name=players0]", "Ann\nBen")
    ctl.fill("input[name=side1]", "Blues")
    ctl.click("button[type=submit]")
    ctl.wait_for_url("**/controller")

    for b in boards:
        b.wait_for_selector('#board [data-side="Reds"]')
    ctl.wait_for_selector('.dice-entry[data-side="Reds"]')
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctl.screenshot(path=str(SHOTS / "exact21-controller-dice.png"))

    # Dice by number pickers: a refused roll is explained, then the right ones are accepted.
    def roll(side: str, values: dict[str, int]) -> None:
        form = ctl.locator(f'.dice-entry[data-side="{side}"]')
        for colour, v in values.items():
            form.locator(f'button[data-colour="{colour}"][data-value="{v}"]').click()
        form.locator("button[type=submit]").click()

    roll("Reds", {"blue": 3, "red": 3, "green": 2, "yellow": 5})
    ctl.wait_for_selector("#toast:not([hidden])")
    assert "four different numbers" in ctl.inner_text("#toast")
    roll("Reds", {"red": 4})
    roll("Blues", {"blue": 1, "red": 2, "green": 6, "yellow": 4})

    ctl.wait_for_selector('button[data-cup="yellow"]')
    ctl.click('button[data-cup="yellow"]')
    for b in boards:
        b.wait_for_function("document.querySelector('#board [data-score=\"Reds\"]').textContent === '5'",
                            timeout=3000)
        assert score(b, "Blues") == "0"
    ctl.click('button[data-cup="blue"]')  # Ben: 5 + 3
    for b in boards:
        b.wait_for_function("document.querySelector('#board [data-score=\"Reds\"]').textContent === '8'",
                            timeout=3000)
        assert "Bea" not in b.inner_text("#board .on-turn h2")
        assert b.locator("#board .on-turn").get_attribute("data-side") == "Blues"
    assert "Eredményjelző" in boards[1].inner_text("nav")

    # What the camera proposed: confirm on the controller, the scoreboards follow.
    table = server.app.extensions["companion"].table
    table.propose({"type": "throw", "side": "Blues", "cup": "green"})
    ctl.wait_for_selector(".pending [data-proposal] .okb")
    for b in boards:
        b.wait_for_selector("#pending:not([hidden])")
    ctl.click(".pending .okb")
    for b in boards:
        b.wait_for_function("document.querySelector('#board [data-score=\"Blues\"]').textContent === '6'",
                            timeout=3000)
        b.wait_for_selector("#pending", state="hidden")

    # Undo takes the last throw back everywhere.
    ctl.click("#undo")
    for b in boards:
        b.wait_for_function("document.querySelector('#board [data-score=\"Blues\"]').textContent === '0'",
                            timeout=3000)
        assert b.evaluate("window.__not_reloaded") is True

    SHOTS.mkdir(parents=True, exist_ok=True)
    ctl.screenshot(path=str(SHOTS / "exact21-controller.png"), full_page=True)
    boards[0].screenshot(path=str(SHOTS / "exact21-scoreboard-live.png"), full_page=True)
    assert errors == []


def play_random(port: int, name: str, steps: int, seed: int = 7) -> dict:
    """A seeded game of ``name`` played through the API by the engine's own legal actions."""
    engine = get_engine(name)
    rng = random.Random(seed)
    new_game = engine.random_new_game(rng)
    state = post(port, "/api/games", new_game)
    game = Game(engine, new_game, engine.new_game(new_game))
    for _ in range(steps):
        if engine.finished(game.state):
            break
        event = engine.random_action(game.state, rng)
        game.push(event)
        state = post(port, "/api/events", event)
    return state


def _available(name: str) -> bool:
    try:
        get_engine(name)
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("name", list(ENGINES))
def test_each_game_scoreboard_on_a_phone(browser, server, name):
    if not _available(name):
        pytest.skip(f"the {name} engine is not on this branch yet")
    state = play_random(server.port, name, steps=14)
    errors: list[str] = []
    board = phone(browser, server.url + "/", errors)
    board.wait_for_function(f"document.body.dataset.version === '{state['version']}'", timeout=5000)
    text = board.inner_text("#board")
    for player in state["players"]:
        assert player in text
    SHOTS.mkdir(parents=True, exist_ok=True)
    board.screenshot(path=str(SHOTS / f"{name}-scoreboard.png"), full_page=True)
    board.set_viewport_size({"width": 1280, "height": 720})  # the Pi's own screen
    board.screenshot(path=str(SHOTS / f"{name}-scoreboard-tv.png"))
    ctl = phone(browser, server.url + "/controller", errors)
    ctl.wait_for_function(f"document.body.dataset.version === '{state['version']}'", timeout=5000)
    if state["legal"]:
        assert ctl.locator("#controls button").count() >= 1
    ctl.screenshot(path=str(SHOTS / f"{name}-controller.png"), full_page=True)
    assert errors == []


def test_history_chart_export_setup_and_health_pages(browser, server):
    final = play_random(server.port, "exact21", steps=60)
    errors: list[str] = []
    page = phone(browser, server.url + "/history", errors)
    page.wait_for_selector("#chart svg path[data-player]")
    assert page.locator("#chart svg path[data-player]").count() == len(final["players"])
    link = page.locator(f'#games [data-game="{final["game_id"]}"] a').get_attribute("href")
    assert link == f"/api/games/{final['game_id']}/log.jsonl"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "history.png"), full_page=True)

    setup = phone(browser, server.url + "/setup?lang=es", errors)
    for game, option in [("exact21", "silver_rule"), ("twentyone", "incomplete_row_bonus"),
                         ("exactly", "cap_mode"), ("stack21", "zero_bonus_points")]:
        setup.select_option("#game", game)
        assert setup.locator(f'[name="opt_{option}"]').count() >= 1  # a choice: one radio button each
    setup.select_option("#game", "exact21")
    setup.screenshot(path=str(SHOTS / "setup.png"), full_page=True)

    health = phone(browser, server.url + "/health", errors)
    health.wait_for_selector("#health dd")
    assert "no camera configured" in health.inner_text("#health")
    assert errors == []


def test_generic_controller_plays_any_game_from_its_legal_actions(browser, server):
    """The fallback every game gets before its own controller: legal actions as buttons, and a
    small form for the fields a template leaves to the table (here 21 Exact's dice values)."""
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    errors: list[str] = []
    ctl = phone(browser, server.url + "/controller", errors)
    ctl.wait_for_selector(".dice-entry")
    ctl.evaluate("delete C.controllers.exact21")  # as if 21 Exact had no controller of its own
    post(server.port, "/api/events", {"type": "dice", "side": "A",
                                      "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    form = ctl.locator(".actions form").first
    form.wait_for()
    assert form.locator("b").inner_text() == "Dice: B"  # the catalogue's words (test_controller_words)
    form.locator("textarea[name=values]").fill('{"blue": 1, "red": 2, "green": 6, "yellow": 4}')
    form.locator("button[type=submit]").click()
    ctl.wait_for_selector('.actions button:has-text("Throw: A · yellow")')
    ctl.click('.actions button:has-text("Throw: A · yellow")')
    ctl.wait_for_function("document.querySelector('#mini [data-score=\"A\"]').textContent === '5'", timeout=3000)
    assert errors == []


def get_state(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
        return json.load(r)


def double_tap(page, selector: str) -> list[int]:
    """Two taps before the first one's answer is back (both in one task of the page); the
    statuses of the two answers, once both have come."""
    return sorted(page.evaluate("""async (s) => {
        const b = document.querySelector(s), real = window.fetch, sent = [];
        window.fetch = (...args) => { const p = real(...args); sent.push(p); return p; };
        b.click(); b.click();
        window.fetch = real;
        return (await Promise.all(sent)).map((r) => r.status);
    }""", selector))


def test_a_double_tap_on_a_cup_or_on_undo_counts_once(browser, server):
    """The page sends the rev of the state it shows; the second tap of a double tap was made on
    a state the table has left, so it is refused (409), not applied twice."""
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    post(server.port, "/api/events", {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    post(server.port, "/api/events", {"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 6, "yellow": 4}})
    errors: list[str] = []
    ctl = phone(browser, server.url + f"/controller#pin={PIN}", errors)
    ctl.wait_for_selector('button[data-cup="yellow"]')
    ctl.wait_for_function("localStorage.getItem('companion.pin') !== null")  # logged in from the QR link
    assert double_tap(ctl, 'button[data-cup="yellow"]') == [200, 409]
    ctl.wait_for_function("document.querySelector('#mini [data-score=\"A\"]').textContent === '5'", timeout=3000)
    state = get_state(server.port)
    assert state["seq"] == 4 and state["scores"]["A"] == 5
    post(server.port, "/api/events", {"type": "throw", "side": "B", "cup": "miss"})
    ctl.wait_for_function(f"document.body.dataset.version === '{get_state(server.port)['version']}'", timeout=3000)
    assert double_tap(ctl, "#undo") == [200, 409]
    assert get_state(server.port)["seq"] == 4, "one undo, not two"
    # a tap made on another game (the page still shows one the table has left) is explained in
    # the phone's language; a different throw made on an older state of this game would count.
    # (The page first shows the state after the undo, whose arrival would set its rev again, and
    # the undo's own "nothing was done" toast is cleared: either could let this check pass by chance.)
    ctl.wait_for_function(f"document.body.dataset.version === '{get_state(server.port)['version']}'", timeout=3000)
    ctl.evaluate("document.querySelector('#toast').textContent = ''")
    ctl.evaluate("C.rev = '99-1'")
    ctl.click('button[data-cup="red"]')
    ctl.wait_for_function("document.querySelector('#toast').textContent.includes('nothing was done')", timeout=3000)
    assert get_state(server.port)["seq"] == 4
    assert errors == []


def test_setup_asks_before_leaving_an_unfinished_game(browser, server):
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    post(server.port, "/api/events", {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    errors: list[str] = []
    setup = phone(browser, server.url + f"/controller#pin={PIN}", errors)
    setup.wait_for_selector(".conn[data-state=on]")
    setup.goto(server.url + "/setup")
    setup.select_option("#game", "exact21")
    asked: list[str] = []
    setup.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    setup.click("button[type=submit]")
    setup.wait_for_selector("#toast:not([hidden])")
    assert asked and "not finished" in asked[0]
    assert get_state(server.port)["game_id"] == 1 and get_state(server.port)["seq"] == 2
    setup.once("dialog", lambda d: d.accept())
    setup.click("button[type=submit]")
    setup.wait_for_url("**/controller")
    state = get_state(server.port)
    assert state["game_id"] == 2 and state["seq"] == 1
    assert errors == []


def test_a_page_whose_stream_was_refused_connects_when_a_slot_frees(browser, server):
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    hub = server.app.extensions["companion"].hub
    taken = 0
    while hub.admit("127.0.0.1", exempt=True) is None:  # every slot held, as by other phones
        taken += 1
    errors: list[str] = []
    board = phone(browser, server.url + "/", errors)
    board.wait_for_timeout(800)
    assert board.locator(".conn").get_attribute("data-state") != "on"
    for _ in range(taken):
        hub.release("127.0.0.1")
    board.wait_for_selector(".conn[data-state=on]", timeout=10000)
    board.wait_for_selector('#board [data-side="A"]')
    post(server.port, "/api/events", {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    version = get_state(server.port)["version"]
    board.wait_for_function(f"document.body.dataset.version === '{version}'", timeout=3000)
    assert [e for e in errors if "503" not in e] == []


def test_history_resumes_an_unfinished_game_and_the_scoreboards_show_it(browser, server):
    """Game 1 is left half played for game 2; on History its Resume button asks first (game 2
    is unfinished too), then the scoreboard shows game 1's scores and whose turn it is, and a
    scoreboard already open follows without a reload."""
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "Reds"}, {"name": "Blues"}]})
    post(server.port, "/api/events", {"type": "dice", "side": "Reds", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    post(server.port, "/api/events", {"type": "dice", "side": "Blues", "values": {"blue": 1, "red": 2, "green": 6, "yellow": 4}})
    post(server.port, "/api/events", {"type": "throw", "side": "Reds", "cup": "yellow"})
    post(server.port, "/api/games?replace=1", {"type": "new_game", "game": "exactly", "players": ["P1", "P2"]})
    errors: list[str] = []
    board = phone(browser, server.url + "/", errors)
    board.evaluate("window.__not_reloaded = true")
    board.wait_for_selector('#board [data-player="P1"], #board:has-text("P1")')

    page = phone(browser, server.url + f"/controller#pin={PIN}", errors)
    page.wait_for_function("localStorage.getItem('companion.pin') !== null")
    page.goto(server.url + "/history")
    page.wait_for_selector('#games [data-game="1"] button.resume')
    assert page.locator('#games [data-game="2"] button.resume').count() == 0, "game 2 is being played"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "history-resume.png"), full_page=True)

    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.click('#games [data-game="1"] button.resume')
    page.wait_for_selector("#toast:not([hidden])")
    assert asked and "#1" in asked[0] and "not finished" in asked[0]
    assert get_state(server.port)["game_id"] == 2, "dismissed: the game in progress goes on"

    page.once("dialog", lambda d: d.accept())
    page.click('#games [data-game="1"] button.resume')
    page.wait_for_url(server.url + "/")
    for b in (page, board):
        b.wait_for_function("document.querySelector('#board [data-score=\"Reds\"]')?.textContent === '5'",
                            timeout=3000)
        assert score(b, "Blues") == "0"
        assert b.locator("#board .on-turn").get_attribute("data-side") == "Blues"
    assert board.evaluate("window.__not_reloaded") is True
    state = get_state(server.port)
    assert state["game_id"] == 1 and state["to_act"] == ["Blues"]
    page.screenshot(path=str(SHOTS / "resumed-scoreboard.png"))
    assert errors == []


def test_the_121st_page_shows_the_game_from_the_state_and_says_it_is_not_live(browser, server):
    """Every stream slot taken: the scoreboard filled only from the stream, so it showed "No game
    yet" and an offline dot while the game was played. Now it reads /api/state every few
    seconds, says it is not live, and goes live when a slot frees."""
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    hub = server.app.extensions["companion"].hub
    taken = 0
    while hub.admit("127.0.0.1", exempt=True) is None:
        taken += 1
    errors: list[str] = []
    board = phone(browser, server.url + "/?lang=es", errors, "es-ES")
    board.wait_for_selector('#board [data-side="A"]', timeout=5000)
    board.wait_for_selector("#notlive:not([hidden])", timeout=5000)
    assert "No en directo" in board.locator("#notlive").inner_text()
    assert board.locator(".conn").get_attribute("data-state") == "poll"
    SHOTS.mkdir(parents=True, exist_ok=True)
    board.screenshot(path=str(SHOTS / "scoreboard-not-live.png"))
    post(server.port, "/api/events", {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}})
    version = get_state(server.port)["version"]
    board.wait_for_function(f"document.body.dataset.version === '{version}'", timeout=8000)
    for _ in range(taken):
        hub.release("127.0.0.1")
    board.wait_for_selector(".conn[data-state=on]", timeout=10000)
    assert board.locator("#notlive").is_hidden()
    assert [e for e in errors if "503" not in e] == []


def test_every_page_shows_the_logs_alerts_and_the_stream_brings_new_ones(browser, server):
    table = server.app.extensions["companion"].table
    table.tell("EVENTS_LOST", "game 3: 5 recorded events were lost", game_id=3, events=5)
    errors: list[str] = []
    for path in ("/", "/controller", "/setup", "/history", "/health"):
        page = phone(browser, server.url + path + "?lang=hu", errors, "hu-HU")
        assert "#3 játék: 5 rögzített esemény elveszett" in page.locator("#alerts").inner_text(), path
        page.context.close()
    board = phone(browser, server.url + "/", errors)
    board.wait_for_selector(".conn[data-state=on]")
    table.tell("LOG_UNREADABLE", "part of the table log could not be read")
    board.wait_for_selector('#alerts [data-code="LOG_UNREADABLE"]', timeout=5000)
    assert "History may be missing" in board.locator("#alerts").inner_text()
    board.screenshot(path=str(SHOTS / "scoreboard-alerts.png"))
    assert errors == []
