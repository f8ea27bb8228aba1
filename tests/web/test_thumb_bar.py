"""The controller's thumb bar on a phone (real Chromium at 390 x 844 against a real server on
loopback): Undo is fixed at the bottom of the screen, in reach without scrolling wherever the
page is scrolled to, nothing covers it and it covers no control; it says what it takes back
("Undo: Ann → blue") in English, Magyar and Español, and after an undo says the next one; with
nothing to undo it is off. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PHONE, PIN, SHOTS, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, get, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

# The undo button's box, and whether a tap at its centre lands on it (nothing over it).
UNDO = """() => { const b = document.getElementById('undo'), r = b.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, reached: hit === b || b.contains(hit),
          text: b.textContent, disabled: b.disabled}; }"""


def undo_box(page) -> dict:
    return page.evaluate(UNDO)


def in_reach(box: dict) -> bool:
    return box["top"] >= 0 and box["bottom"] <= PHONE["height"] and box["left"] >= 0 \
        and box["right"] <= PHONE["width"] and box["reached"]


def test_undo_is_in_reach_and_says_what_it_undoes_in_every_language(browser, server):
    post(server.port, "/api/games", NEW_EXACT21)
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctl = phone(browser, f"{server.url}/controller?lang=en#pin={PIN}", errors)
    ctl.wait_for_function("localStorage.getItem('companion.pin') !== null")
    box = undo_box(ctl)
    assert box["disabled"] and box["text"] == "↶ " + texts("en")["undo"], "nothing to undo at the start"
    ctl.context.close()
    post(server.port, "/api/events", DICE_A)
    post(server.port, "/api/events", DICE_B)
    for lang, locale in LANGS:
        t = texts(lang)
        post(server.port, "/api/events", {"type": "throw", "side": "A", "cup": "blue"})  # Ann throws for A
        version = get(server.port, "/api/state")["version"]
        ctl = phone(browser, f"{server.url}/controller?lang={lang}#pin={PIN}", errors, locale)
        ctl.wait_for_function(f"document.body.dataset.version === '{version}'")
        ctl.wait_for_function("localStorage.getItem('companion.pin') !== null")
        want = "↶ " + t["undo_what"].replace("{what}", "Ann → " + t["cup_blue"])
        assert undo_box(ctl)["text"] == want
        # in reach at the top of the page, in its middle and at its end, without scrolling to it
        height = ctl.evaluate("document.documentElement.scrollHeight")
        assert height > PHONE["height"], "the controller is longer than the screen: the bar must stay"
        for y in (0, height // 2, height):
            ctl.evaluate(f"window.scrollTo(0, {y})")
            ctl.wait_for_timeout(50)
            box = undo_box(ctl)
            assert in_reach(box), (lang, y, box)
        # at the end the last control and the menu are above the bar, not under it
        below = ctl.evaluate("""() => { const bar = document.getElementById('thumb').getBoundingClientRect().top;
            return Array.from(document.querySelectorAll('#controls button, nav.bottom a'))
              .filter((e) => e.getBoundingClientRect().bottom > bar + 0.5).map((e) => e.textContent); }""")
        assert below == [], below
        ctl.evaluate("window.scrollTo(0, 0)")
        ctl.screenshot(path=str(SHOTS / f"controller-thumb-{lang}.png"))
        assert not ctl.evaluate(TOO_WIDE)
        # one tap: the throw is taken back, and the bar names what the next undo would take
        ctl.click("#undo")
        ctl.wait_for_function("(w) => !document.getElementById('undo').textContent.includes(w)", arg="Ann")
        state = get(server.port, "/api/state")
        assert state["seq"] == 3 and state["scores"]["A"] == 0
        assert undo_box(ctl)["text"] == "↶ " + t["undo_what"].replace("{what}", t["u_dice"].replace("{side}", "B"))
        ctl.context.close()
    assert errors == []


def test_undo_names_the_last_move_of_exactly(browser, server):
    post(server.port, "/api/games", {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea"]})
    post(server.port, "/api/events", {"type": "roll", "player": "Ann", "face": "50"})
    errors: list[str] = []
    ctl = phone(browser, f"{server.url}/controller?lang=es#pin={PIN}", errors, "es-ES")
    t = texts("es")
    want = "↶ " + t["undo_what"].replace("{what}", t["u_rolled_face"].replace("{name}", "Ann").replace("{face}", "50"))
    ctl.wait_for_function("(w) => document.getElementById('undo').textContent === w", arg=want)
    assert in_reach(undo_box(ctl))
    assert errors == []
