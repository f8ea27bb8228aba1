"""Taps made while the table is away (real Chromium at 390 x 844, a real server on loopback that
is stopped and started again on the same port and data folder): the controller keeps the tap,
says it is waiting for the table (en/hu/es), keeps it over a reload (localStorage), and sends it
once when the table is back; a tap the table has meanwhile recorded from elsewhere is refused in
the page's language and dropped, never applied twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.web.i18n import texts
from companion.web.server import start
from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PIN, SHOTS, make_app, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, get, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

THROW = {"type": "throw", "side": "A", "cup": "blue"}


class Table:
    """The companion on loopback, stopped and started again on its port and data folder."""

    def __init__(self, data: Path):
        self.data, self.port, self.running = data, 0, None
        self.up()

    def up(self) -> None:
        app = make_app(self.data)
        self.running = start(app, "127.0.0.1", self.port, threads=24)
        self.port = self.running.port

    def down(self) -> None:
        self.running.stop()
        self.running.app.extensions["companion"].table.close()
        self.running = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def throws(port: int) -> int:
    return sum(1 for row in get(port, f"/api/games/{get(port, '/api/state')['game_id']}/log.jsonl")
               if row.get("type") == "throw")


@pytest.fixture
def table(tmp_path: Path):
    t = Table(tmp_path)
    yield t
    if t.running is not None:
        t.down()


def queued(page) -> list:
    return page.evaluate("JSON.parse(localStorage.getItem('companion.queue') || '[]')")


def test_a_tap_while_the_server_restarts_is_sent_once_when_it_is_back(browser, table):
    errors: list[str] = []
    for lang, locale in LANGS:
        t = texts(lang)
        post(table.port, "/api/games?replace=1", NEW_EXACT21)
        post(table.port, "/api/events", DICE_A)
        post(table.port, "/api/events", DICE_B)
        version = get(table.port, "/api/state")["version"]
        ctl = phone(browser, f"{table.url}/controller?lang={lang}#pin={PIN}", errors, locale)
        ctl.wait_for_function(f"document.body.dataset.version === '{version}'")
        ctl.wait_for_function("localStorage.getItem('companion.pin') !== null")
        table.down()
        ctl.wait_for_function("document.getElementById('conn').dataset.state !== 'on'")
        ctl.click('[data-cup="blue"]')
        ctl.wait_for_selector("#queued:not([hidden])")
        text = ctl.inner_text("#queued")
        assert t["queue_waiting"].replace("{n}", "1") in text, text
        assert "A · " + t["cup_blue"] in text and "throw" not in text and "cup" not in text, text
        assert t["error"] not in text and t["offline"] not in ctl.inner_text("#toast"), "not 'Refused: reconnecting…'"
        [item] = queued(ctl)
        assert item["body"]["cup"] == "blue" and item["rev"]
        assert not ctl.evaluate(TOO_WIDE)
        SHOTS.mkdir(parents=True, exist_ok=True)
        ctl.screenshot(path=str(SHOTS / f"controller-queued-{lang}.png"))
        if lang == "en":  # a reload keeps it: the page goes, the tap stays in localStorage
            ctl.goto("about:blank")
            table.up()
            ctl.goto(f"{table.url}/controller?lang={lang}")
        else:
            table.up()
        ctl.wait_for_function("JSON.parse(localStorage.getItem('companion.queue') || '[]').length === 0", timeout=15000)
        ctl.wait_for_selector("#queued", state="hidden")
        ctl.wait_for_timeout(2500)  # a retry's interval: nothing goes a second time
        assert throws(table.port) == 1, lang
        state = get(table.port, "/api/state")
        assert state["detail"]["last"]["cup"] == "blue"
        # the same tap sent again with the rev it was made on (a second tab, a lost answer): STALE
        again = ctl.evaluate("(q) => C.api(q.method, q.path, q.body, q.rev)", item)
        assert again["status"] == 409 and again["data"]["code"] == "STALE"
        assert throws(table.port) == 1
        ctl.close()
    assert errors == []


def test_a_queued_tap_the_table_already_has_is_refused_and_dropped(browser, table):
    errors: list[str] = []
    t = texts("hu")
    post(table.port, "/api/games", NEW_EXACT21)
    post(table.port, "/api/events", DICE_A)
    post(table.port, "/api/events", DICE_B)
    version = get(table.port, "/api/state")["version"]
    ctl = phone(browser, f"{table.url}/controller?lang=hu#pin={PIN}", errors, "hu-HU")
    ctl.wait_for_function(f"document.body.dataset.version === '{version}'")
    ctl.wait_for_function("localStorage.getItem('companion.pin') !== null")
    table.down()
    ctl.wait_for_function("document.getElementById('conn').dataset.state !== 'on'")
    ctl.evaluate("C.queueRetryMs = 60000")
    ctl.click('[data-cup="blue"]')
    ctl.wait_for_selector("#queued:not([hidden])")
    # meanwhile another phone records the same throw, on the same data folder
    other = make_app(table.data)
    other.test_client().post("/api/events", json=THROW, headers={"X-Table-Pin": PIN})
    other.extensions["companion"].close()
    other.extensions["companion"].table.close()
    table.up()
    ctl.wait_for_selector("#queued", state="hidden", timeout=15000)
    ctl.wait_for_selector("#toast:not([hidden])")
    assert ctl.inner_text("#toast") == t["error"] + ": " + t["code_STALE"]
    assert queued(ctl) == []
    assert throws(table.port) == 1
    ctl.close()
    assert errors == []


def test_a_table_that_cannot_be_reached_is_said_in_words(browser, table):
    """Offline was only a red dot in the header. While the table cannot be reached the scoreboard
    and the controller now say so under the header in the phone's language, and stop saying it
    once the table answers again."""
    post(table.port, "/api/games?replace=1", NEW_EXACT21)
    errors: list[str] = []
    pages = []
    for lang, locale in LANGS:
        for path in (f"/?lang={lang}", f"/controller?lang={lang}#pin={PIN}"):
            page = phone(browser, table.url + path, errors, locale)
            page.wait_for_selector(".conn[data-state=on]")
            assert page.locator("#offline").is_hidden()
            pages.append((lang, page))
    table.down()
    for lang, page in pages:
        page.wait_for_selector("#offline:not([hidden])", timeout=10000)
        assert page.inner_text("#offline") == texts(lang)["offline_line"]
        assert not page.evaluate(TOO_WIDE)
    pages[2][1].screenshot(path=str(SHOTS / "scoreboard-offline-hu.png"))
    table.up()
    for _lang, page in pages:
        page.wait_for_selector("#offline", state="hidden", timeout=15000)
        page.wait_for_selector(".conn[data-state=on]", timeout=15000)
        page.context.close()
    assert errors == []
