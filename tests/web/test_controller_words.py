"""What the controller says and keeps out of a player's way (real Chromium at 390 x 844 against
a real server on loopback): a 21 Exact side of one player named as the side throws as "Ann
throws", not "Ann (Ann) throws"; the raw JSON box is no longer among a game's controls but closed
at the foot of the page, under the board, for developers, in the page's language."""

from __future__ import annotations

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, PIN, phone
from tests.web.test_game_over import LANGS, get, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

DICE = {"blue": 3, "red": 4, "green": 2, "yellow": 5}


@pytest.mark.parametrize("lang,locale", LANGS)
def test_a_side_of_one_is_not_named_twice(browser, server, lang, locale):
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21",
                                     "sides": [{"name": "Ann"}, {"name": "Blues", "players": ["Bea"]}]})
    post(server.port, "/api/events", {"type": "dice", "side": "Ann", "values": DICE})
    post(server.port, "/api/events", {"type": "dice", "side": "Blues", "values": DICE})
    t = texts(lang)
    errors: list[str] = []
    ctl = phone(browser, f"{server.url}/controller?lang={lang}#pin={PIN}", errors, locale)
    ctl.wait_for_selector("#controls .who")
    assert ctl.inner_text("#controls .who") == t["throw_for_one"].replace("{name}", "Ann")
    post(server.port, "/api/events", {"type": "throw", "side": "Ann", "cup": "miss"})
    ctl.wait_for_function("(w) => document.querySelector('#controls .who').textContent === w",
                          arg=t["throw_for"].replace("{name}", "Bea").replace("{side}", "Blues"))
    assert errors == []


@pytest.mark.parametrize("game", ["exact21", "twentyone", "exactly", "stack21"])
def test_the_json_box_is_closed_at_the_foot_for_developers(browser, server, game):
    new = {"exact21": {"sides": [{"name": "A"}, {"name": "B"}]}, "twentyone": {"players": [{"name": "Ann", "sheet": "A"}, {"name": "Bea", "sheet": "B"}]},
           "exactly": {"players": ["Ann", "Bea"]}, "stack21": {"players": ["Ann", "Bea"]}}[game]
    post(server.port, "/api/games", {"type": "new_game", "game": game, **new})
    errors: list[str] = []
    ctl = phone(browser, f"{server.url}/controller?lang=hu#pin={PIN}", errors, "hu-HU")
    ctl.wait_for_selector("#dev details.dev")
    assert "JSON" not in ctl.inner_text("#controls")
    assert ctl.locator("#dev details.dev[open]").count() == 0
    assert ctl.inner_text("#dev summary") == texts("hu")["dev_event"]
    # after the game's controls and its board: the last thing on the page before the menu
    assert ctl.evaluate("""() => { const d = document.getElementById('dev'), m = document.getElementById('mini');
        return !!(m.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING) && m.children.length > 0; }""")
    # it still works for whoever opens it (and stays open while the game goes on)
    ctl.click("#dev summary")
    state = get(server.port, "/api/state")
    ctl.fill("#dev textarea", '{"type": "undo_nothing"}')
    ctl.click("#dev button[type=submit]")
    ctl.wait_for_selector("#toast:not([hidden])")
    assert get(server.port, "/api/state")["seq"] == state["seq"]
    assert ctl.locator("#dev details.dev[open]").count() == 1
    assert errors == []
