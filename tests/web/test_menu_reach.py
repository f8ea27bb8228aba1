"""The menu one tap away on a phone (real Chromium at 390 x 844 against a real server on
loopback, in English, Magyar and Español): the menu sits at the end of each page, 1,000 px and
more down a controller in play, and the header meant to stay on screen scrolled away with the
page (a body that hid its overflow was a scroll box of its own). The header now stays and holds
a menu button; on the controller, whose dock and Undo bar leave the page little room, the button
is in the bar under the thumb and the header scrolls away. Wherever the page is scrolled to the
button is on screen and at least 44 x 44 px; one tap brings every link of the menu into view,
none of them under the dock, the Undo bar or the header, and a tap on a link's centre follows it."""

from __future__ import annotations

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PHONE, PIN, SHOTS, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

# An element's box and whether a tap at its centre lands on it.
REACH = """(e) => { const r = e.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, w: r.width, h: r.height,
          reached: hit === e || e.contains(hit)}; }"""


def reachable(box: dict) -> bool:
    return box["top"] >= 0 and box["bottom"] <= PHONE["height"] and box["left"] >= 0 \
        and box["right"] <= PHONE["width"] and box["reached"]


@pytest.mark.parametrize("lang,locale", LANGS)
def test_the_menu_is_one_tap_away_on_every_page(browser, server, lang, locale):
    post(server.port, "/api/games", NEW_EXACT21)
    post(server.port, "/api/events", DICE_A)
    post(server.port, "/api/events", DICE_B)  # in play: the controller's dock of throws is up
    t = texts(lang)
    errors: list[str] = []
    for path in ("/", f"/controller#pin={PIN}", "/setup", "/history", "/players", "/health"):
        url = server.url + path.replace("#", f"?lang={lang}#") if "#" in path else f"{server.url}{path}?lang={lang}"
        page = phone(browser, url, errors, locale)
        page.wait_for_selector("nav.bottom a")
        page.wait_for_timeout(300)  # the board and the dock drawn
        page.wait_for_selector("#toast", state="hidden", timeout=5000)  # "PIN accepted" goes in 1.8 s
        height = page.evaluate("document.documentElement.scrollHeight")
        for y in (0, height // 2):
            page.evaluate(f"window.scrollTo(0, {y})")
            page.wait_for_timeout(50)
            # the controller's in the bar under the thumb (its header scrolls away), elsewhere in the header
            button = page.locator("#thumb a.to-menu" if path.startswith("/controller") else "header a.to-menu")
            assert button.get_attribute("aria-label") == t["menu"]
            box = button.evaluate(REACH)
            assert reachable(box) and box["w"] >= 44 and box["h"] >= 44, (lang, path, y, box)
        button.click()
        page.wait_for_timeout(400)  # a smooth scroll settles
        for link in page.locator("nav.bottom a").all():
            box = link.evaluate(REACH)
            assert reachable(box), (lang, path, link.inner_text(), box)
        if path.startswith("/controller"):
            page.screenshot(path=str(SHOTS / f"controller-menu-{lang}.png"))
            page.locator("nav.bottom a[href='/history']").click()
            page.wait_for_url("**/history")
        assert not page.evaluate(TOO_WIDE)
        page.context.close()
    assert errors == []
