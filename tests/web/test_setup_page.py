"""The New game page on a phone (real Chromium at 390 x 844 against a real server on loopback):
its suggested names are placeholders, not values a player must first delete, and a field left
empty stands for what it shows; the PIN is asked on the page beside Start, in the phone's
language, never by a native prompt after it; Stack 21's many deck settings wait under "More
options", and no house rule's text is cut."""

from __future__ import annotations

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, PIN, SHOTS, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, get

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")


def test_suggested_names_are_placeholders_and_an_empty_field_stands_for_them(browser, server):
    errors: list[str] = []
    setup = phone(browser, server.url + "/setup", errors)
    setup.wait_for_selector("input[name=side0]")
    for i, side in enumerate(["A", "B"]):
        field = setup.locator(f"input[name=side{i}]")
        assert field.input_value() == "" and field.get_attribute("placeholder") == side
    for game in ("twentyone", "exactly", "stack21"):
        setup.select_option("#game", game)
        field = setup.locator("textarea[name=players]")
        assert field.input_value() == "" and field.get_attribute("placeholder") == "P1\nP2", game
    # nothing typed: the game starts with what the fields showed
    setup.select_option("#game", "exact21")
    setup.fill("textarea[name=players0]", "Ann")
    setup.click("button[type=submit]")
    setup.wait_for_url("**/controller")
    state = get(server.port, "/api/state")
    assert state["game"] == "exact21" and state["players"] == ["A", "B"]
    assert state["detail"]["sides"]["A"]["players"] == ["Ann"]
    assert errors == []


@pytest.mark.parametrize("lang,locale", [("en", "en-GB"), ("hu", "hu-HU")])
def test_the_pin_is_asked_on_the_page_not_by_a_prompt(browser, server, lang, locale):
    errors: list[str] = []
    dialogs: list[str] = []
    setup = phone(browser, f"{server.url}/setup?lang={lang}", errors, locale)
    setup.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    setup.wait_for_selector("#setup #who textarea")
    assert setup.locator("#pin-row").is_hidden(), "the Pi's own screen (loopback) is served the PIN"
    setup.evaluate("C.pin = null")  # as a phone that has not given the PIN yet
    setup.select_option("#game", "exactly")
    setup.fill("textarea[name=players]", "Ann\nBea")
    setup.click("button[type=submit]")
    setup.wait_for_selector("#pin-row:not([hidden])")
    t = texts(lang)
    assert t["code_PIN_REQUIRED"] in setup.inner_text("#toast")
    assert setup.inner_text("#pin-row label") == t["pin_enter"]
    assert setup.evaluate("document.activeElement.id") == "setup-pin"
    assert get(server.port, "/api/state")["game"] is None, "nothing started without the PIN"
    setup.fill("#setup-pin", "9999")  # a wrong one is said, and asked again
    setup.click("button[type=submit]")
    setup.wait_for_function("(t) => document.getElementById('toast').textContent.includes(t)", arg=t["code_BAD_PIN"])
    assert get(server.port, "/api/state")["game"] is None
    setup.fill("#setup-pin", PIN)
    setup.click("button[type=submit]")
    setup.wait_for_url("**/controller")
    assert get(server.port, "/api/state")["players"] == ["Ann", "Bea"]
    assert setup.evaluate("localStorage.getItem('companion.pin')") == PIN, "asked once per phone"
    assert dialogs == []
    assert errors == []


# Every house rule's text on the page, with whether it is cut: wider than its box, or past the
# phone's edge.
CUT = """() => Array.from(document.querySelectorAll('#options label, #options legend, #options summary'))
  .filter((e) => e.checkVisibility())
  .map((e) => ({text: e.textContent, cut: e.scrollWidth > e.clientWidth + 1
    || e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5}))"""


@pytest.mark.parametrize("lang,locale", LANGS)
def test_stack21_keeps_its_deck_settings_under_more_options_and_no_rule_is_cut(browser, server, lang, locale):
    """Stack 21 showed eight deck settings up front, and a long choice was cut at the select's
    edge. The target and what happens when the stock runs out stay in view; the virtual deck's
    settings are under a closed "More options"; a choice is a radio button whose text wraps."""
    t = texts(lang)
    errors: list[str] = []
    setup = phone(browser, f"{server.url}/setup?lang={lang}", errors, locale)
    setup.wait_for_selector("#setup #who textarea")
    setup.select_option("#game", "stack21")
    more = setup.locator("#options details.more")
    assert more.get_attribute("open") is None and more.locator("summary").inner_text() == t["more_options"]
    shown = setup.evaluate("""() => Array.from(document.querySelectorAll('#options [name^=opt_]'))
        .filter((e) => e.checkVisibility()).map((e) => e.name)""")
    assert sorted(set(shown)) == ["opt_stock_exhausted", "opt_target"], shown
    for game in ("exact21", "exactly", "twentyone", "stack21"):
        setup.select_option("#game", game)
        if game == "stack21":
            setup.click("#options details.more summary")
        texts_cut = [r["text"] for r in setup.evaluate(CUT) if r["cut"]]
        assert texts_cut == [], (game, texts_cut)
        assert not setup.evaluate(TOO_WIDE), game
    SHOTS.mkdir(parents=True, exist_ok=True)
    setup.screenshot(path=str(SHOTS / f"setup-stack21-more-{lang}.png"), full_page=True)
    # what is set under "More options" and by a radio button goes with the new game
    setup.fill("textarea[name=players]", "Ann\nBea")
    setup.fill('[name="opt_decks"]', "3")
    setup.check('[name="opt_face_cards"][value=\'"remove"\']')
    setup.check('[name="opt_stock_exhausted"][value=\'"void_round"\']')
    setup.click("button[type=submit]")
    setup.wait_for_url("**/controller")
    state = get(server.port, "/api/state")
    first = get(server.port, f"/api/games/{state['game_id']}/log.jsonl")[0]
    assert first["options"] == {"decks": 3, "face_cards": "remove", "stock_exhausted": "void_round"}, first
    assert errors == []


LONG = "Maximilianusbartholomeusfriedrichwilhelmx"  # 41 characters, one word
assert len(LONG) == 41


@pytest.mark.parametrize("lang,locale", LANGS)
def test_a_name_over_40_characters_is_refused_on_the_page_in_its_language(browser, server, lang, locale):
    """A player's or a side's name of 41 characters: Start says, in the page's language, that a
    name may have at most 40 characters and which one has more; no game starts and the page
    stays, what was typed still in its fields."""
    t = texts(lang)
    said = t["rule_BAD_VALUE@length,most,name"].replace("{most}", "40").replace("{length}", "41") \
        .replace("{name}", LONG[:20] + "…")
    errors: list[str] = []
    setup = phone(browser, f"{server.url}/setup?lang={lang}", errors, locale)
    setup.wait_for_selector("input[name=side0]")
    for game, field in (("exactly", "textarea[name=players]"), ("exact21", "input[name=side1]")):
        setup.select_option("#game", game)
        if game == "exact21":
            setup.fill("textarea[name=players0]", "Ann")
            setup.fill("textarea[name=players1]", "Zsófia")
            setup.fill(field, LONG)
        else:
            setup.fill(field, "Ann\n" + LONG)
        setup.click("button[type=submit]")
        setup.wait_for_function("(t) => { const n = document.querySelector('#toast');"
                                " return n && !n.hidden && n.textContent.includes(t); }", arg=said, timeout=5000)
        toast = setup.inner_text("#toast")
        assert toast == t["error"] + ": " + said, (lang, game, toast)
        assert get(server.port, "/api/state")["game"] is None, "no game started"
        assert setup.url.endswith(f"/setup?lang={lang}")
        assert LONG in setup.input_value(field)
        assert not setup.evaluate(TOO_WIDE)
        if game == "exactly":
            SHOTS.mkdir(parents=True, exist_ok=True)
            setup.screenshot(path=str(SHOTS / f"setup-name-too-long-{lang}.png"))
        setup.evaluate("document.getElementById('toast').hidden = true")
    assert errors == []
