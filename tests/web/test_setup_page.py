"""The New game page on a phone (real Chromium at 390 x 844 against a real server on loopback):
its suggested names are placeholders, not values a player must first delete, and a field left
empty stands for what it shows; the PIN is asked on the page beside Start, in the phone's
language, never by a native prompt after it."""

from __future__ import annotations

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, PIN, phone
from tests.web.test_game_over import get

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
