"""The PIN is asked on the page, beside the button, never by a native prompt (real Chromium at
390 x 844): a phone without the PIN sees a field beside the scoreboard's Rematch (en/hu/es), a
wrong PIN is refused there in the page's language and nothing starts; History's Resume shows the
field in its row when refused, and resumes once the PIN is typed."""

from __future__ import annotations

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, NEW_EXACT21, PIN, SHOTS, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, get, play_to_the_end, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")


@pytest.mark.parametrize("lang,locale", LANGS)
def test_the_scoreboard_asks_the_pin_beside_rematch(browser, server, lang, locale):
    t = texts(lang)
    final = play_to_the_end(server.port, "exact21")
    errors: list[str] = []
    board = phone(browser, server.url + "/?lang=" + lang, errors, locale)
    board.wait_for_selector("#final:not([hidden])")
    # as on a phone: the page was not served to the Pi itself, which knows the PIN
    board.evaluate("async () => { C.pin = null; const r = await C.api('GET', '/api/state'); C.render(r.data); }")
    dialogs: list[str] = []
    board.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # the phone has no PIN: the field is there before the tap, labelled in the page's language
    board.wait_for_selector("#final .pin-row:not([hidden])")
    assert board.inner_text("#final .pin-row label") == t["pin_enter"]
    board.fill("#final .pin-row input", "0000")
    board.click("#final button.rematch")
    board.wait_for_function("(t) => document.querySelector('#toast').textContent.includes(t)", arg=t["code_BAD_PIN"])
    assert get(server.port, "/api/state")["game_id"] == final["game_id"], "nothing started on a wrong PIN"
    assert board.is_visible("#final .pin-row")
    assert not board.evaluate(TOO_WIDE)
    SHOTS.mkdir(parents=True, exist_ok=True)
    board.screenshot(path=str(SHOTS / f"scoreboard-rematch-pin-{lang}.png"), full_page=True)
    board.fill("#final .pin-row input", PIN)
    board.press("#final .pin-row input", "Enter")
    board.wait_for_selector("#final", state="hidden", timeout=5000)
    assert get(server.port, "/api/state")["game_id"] == final["game_id"] + 1
    assert dialogs == [] and errors == []


@pytest.mark.parametrize("lang,locale", LANGS)
def test_history_asks_the_pin_beside_resume(browser, server, lang, locale):
    t = texts(lang)
    post(server.port, "/api/games", NEW_EXACT21)  # game 1, left unfinished
    post(server.port, "/api/games?replace=1", {"type": "new_game", "game": "exactly", "players": ["P1", "P2"]})
    errors: list[str] = []
    page = phone(browser, server.url + "/history?lang=" + lang, errors, locale)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    row = '#games [data-game="1"]'
    page.wait_for_selector(row + " button.resume")
    assert page.locator(row + " .pin-row:not([hidden])").count() == 0, "no field until it is needed"
    page.evaluate("C.pin = null")  # as on a phone: the page was not served to the Pi itself
    page.click(row + " button.resume")
    page.wait_for_selector(row + " .pin-row:not([hidden])")
    assert page.inner_text(row + " .pin-row label") == t["pin_enter"]
    assert t["code_PIN_REQUIRED"] in page.inner_text("#toast")
    assert not page.evaluate(TOO_WIDE)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"history-resume-pin-{lang}.png"), full_page=True)
    assert get(server.port, "/api/state")["game_id"] == 2
    page.fill(row + " .pin-row input", PIN)
    page.click(row + " button.resume")  # the game in progress is left: the confirm dialog says yes
    page.wait_for_url(server.url + "/")
    assert get(server.port, "/api/state")["game_id"] == 1
    assert dialogs and all("#1" in d for d in dialogs), "only the 'leave the game in progress?' question"
    assert errors == []
