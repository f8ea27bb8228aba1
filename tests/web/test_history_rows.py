"""History on a phone (real Chromium at 390 x 844 against a real server on loopback, a real
SQLite log): each row says who played, who won and the score, in English, Magyar and Español,
not "date, N events"; the score chart opens on-screen under the row it was asked from, and its
axis labels are at least 11 px on the phone. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

from typing import Any

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, PHONE, SHOTS, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, WORD, finishing_events, get, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

EXACTLY = {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea", "Cy"], "options": {"target": 1}}
EXACT21 = {"type": "new_game", "game": "exact21",
           "sides": [{"name": "Reds", "players": ["Ann", WORD]}, {"name": "Blues", "players": ["Bea"]}]}
UNFINISHED = {"type": "new_game", "game": "exactly", "players": ["Dan", "Eve"]}

# Every axis label's size on the phone's screen: its font size times the SVG's scale.
LABEL_PX = """() => Array.from(document.querySelectorAll('#chart svg text')).map((t) =>
  parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)"""


def play(port: int, new_game: dict[str, Any]) -> dict[str, Any]:
    state = post(port, "/api/games?replace=1", new_game)
    for event in finishing_events(new_game):
        state = post(port, "/api/events", event)
    assert state["finished"]
    return state


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"] \
        and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]


def test_history_rows_say_who_played_who_won_and_the_score(browser, server):
    first = play(server.port, EXACTLY)
    second = play(server.port, EXACT21)
    for _ in range(2):  # enough rows that the oldest is below the fold of a phone
        post(server.port, "/api/games", UNFINISHED)
        play(server.port, EXACTLY)
    post(server.port, "/api/games", UNFINISHED)
    listed = {g["id"]: g for g in get(server.port, "/api/games")["games"]}
    assert listed[first["game_id"]]["winners"] == first["winners"]
    assert listed[second["game_id"]]["members"] == {"Reds": ["Ann", WORD], "Blues": ["Bea"]}
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    for lang, locale in LANGS:
        t = texts(lang)
        page = phone(browser, f"{server.url}/history?lang={lang}", errors, locale)
        page.wait_for_selector("#chart svg")
        for state in (first, second):
            row = page.locator(f'#games [data-game="{state["game_id"]}"]')
            text = row.inner_text()
            for unit in state["players"]:
                points = row.locator(f'.h-unit[data-unit="{unit}"] .h-pts').inner_text()
                assert points == str(state["scores"][unit]), (unit, points)
            winner = state["winners"][0]
            label = winner if state["game"] == "exactly" else f"{winner} ({', '.join(state['detail']['sides'][winner]['players'])})"
            assert t["h_won"].replace("{name}", label) in text, (lang, text)
            assert row.locator(".h-unit.won").count() == 1
            events = t["events"].replace("{n}", "")
            assert events.strip() not in text, ("no event count", lang, text)
        assert "Dan" in page.inner_text("#games [data-current]")
        assert t["playing_now"] in page.inner_text("#games [data-current]")
        # the chart of the game on the table opens at once, on-screen, labels readable
        assert in_view(page, "#chart svg")
        assert min(page.evaluate(LABEL_PX)) >= 11
        page.screenshot(path=str(SHOTS / f"history-{lang}.png"), full_page=False)
        # the oldest game, far down: its chart opens under its row, on-screen
        oldest = page.locator(f'#games [data-game="{first["game_id"]}"]')
        oldest.locator("button.chart-btn").click()
        page.wait_for_function(f"document.querySelector('#chart h2').textContent.includes('#{first['game_id']} ')")
        assert page.locator(f'#games [data-game="{first["game_id"]}"] #chart').count() == 1
        page.wait_for_timeout(300)  # the smooth scroll, if any, settles
        assert in_view(page, "#chart svg"), page.locator("#chart svg").bounding_box()
        assert min(page.evaluate(LABEL_PX)) >= 11
        assert page.locator("#chart path[data-player]").count() == 3
        page.screenshot(path=str(SHOTS / f"history-chart-{lang}.png"), full_page=False)
        wide = page.evaluate(TOO_WIDE)
        assert not wide, "\n".join(wide)
        page.context.close()
    assert errors == []


def test_history_does_not_link_the_log_of_a_game_whose_stock_is_hidden(browser, server):
    """A Stack 21 game dealt from a virtual deck, being played: its log holds the deck's seed,
    which replayed names every card of the stock, so History does not link it (the server refuses
    it too, 409 CARDS_HIDDEN) and says, in the phone's language, that it is exported once the game
    is over; a finished game's row links its log as before."""
    done = play(server.port, EXACTLY)
    post(server.port, "/api/games?replace=1", {"type": "new_game", "game": "stack21", "players": ["Ann", "Bea"]})
    current = post(server.port, "/api/events", {"type": "deal", "dealer": "Bea", "seed": 424242})
    errors: list[str] = []
    for lang, locale in LANGS:
        t = texts(lang)
        page = phone(browser, f"{server.url}/history?lang={lang}", errors, locale)
        row = page.locator(f'#games [data-game="{current["game_id"]}"]')
        row.wait_for()
        assert row.locator("a[href$='log.jsonl']").count() == 0
        assert row.locator(".export-later").inner_text() == t["export_later"]
        assert page.locator(f'#games [data-game="{done["game_id"]}"] a[href$="log.jsonl"]').count() == 1
        # the address typed in anyway, in this phone's browser: refused, the seed nowhere
        said = page.evaluate(f"fetch('/api/games/{current['game_id']}/log.jsonl').then((r) => r.text().then((b) => [r.status, b]))")
        assert said[0] == 409 and "424242" not in said[1]
        assert not page.evaluate(TOO_WIDE)
        page.context.close()
    assert errors == []
