"""What the controller says and keeps out of a player's way (real Chromium at 390 x 844 against
a real server on loopback): a 21 Exact side of one player named as the side throws as "Ann
throws", not "Ann (Ann) throws"; the raw JSON box is no longer among a game's controls but closed
at the foot of the page, under the board, for developers, in the page's language; the fallback
controller (a game without its own) names each action and field in the catalogue's words, never
the event's English type and field names."""

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


# The words of the engines' events (types and field names) and the values the old fallback
# printed as they are: none of them may stand in the page's words of a Magyar or Español phone.
def raw_words(fields: dict) -> set[str]:
    words = {"true", "false", "cup", "send"}
    for types in fields.values():
        for etype, spec in types.items():
            words |= set(etype.split("_")) | {etype}
            for name in spec:
                words |= set(name.split("_")) | {name}
    return words


WORDS_SEEN = """() => Array.from(document.querySelectorAll('#controls *')).flatMap((e) =>
  Array.from(e.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent)
    .concat([e.getAttribute('aria-label'), e.getAttribute('title'), e.getAttribute('placeholder')]))
  .filter(Boolean).join(' | ')"""


@pytest.mark.parametrize("lang,locale", LANGS)
def test_the_fallback_controller_speaks_the_pages_language(browser, server, lang, locale):
    """The controller every game falls back to (one without its own, or one whose own failed):
    each legal action a button, a form for the fields a template leaves to the table. Its buttons
    said the event raw in English ("throw · side A · cup yellow", "dice · side B", a field named
    "values"); now the action's kind and its fields are the catalogue's words and its values the
    page's (a cup, a colour), in English, Magyar and Español."""
    from companion.web.pages import event_fields

    t, english = texts(lang), texts("en")
    post(server.port, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]})
    errors: list[str] = []
    ctl = phone(browser, f"{server.url}/controller?lang={lang}#pin={PIN}", errors, locale)
    ctl.wait_for_selector(".dice-entry")
    ctl.evaluate("delete C.controllers.exact21")  # as if 21 Exact had no controller of its own
    post(server.port, "/api/events", {"type": "dice", "side": "A", "values": DICE})
    form = ctl.locator(".actions form").first
    form.wait_for()
    assert form.locator("b").inner_text() == t["ev_dice"] + ": B"
    assert form.locator("label").inner_text().strip() == t["field_values"]
    seen = ctl.evaluate(WORDS_SEEN)
    if lang != "en":
        said = {w.lower() for w in seen.replace("|", " ").replace(":", " ").replace("·", " ").split()}
        left = said & raw_words(event_fields())
        assert not left, (lang, left, seen)
        assert english["ev_dice"] not in seen and english["field_values"] not in seen
    form.locator("textarea").fill('{"blue": 1, "red": 2, "green": 6, "yellow": 4}')
    form.locator("button[type=submit]").click()
    # A's throws: the side and the cup in the page's words
    label = t["ev_throw"] + ": A · " + t["cup_yellow"]
    button = ctl.locator(".actions button", has_text=label)
    button.wait_for()
    seen = ctl.evaluate(WORDS_SEEN)
    if lang != "en":
        said = {w.lower() for w in seen.replace("|", " ").replace(":", " ").replace("·", " ").split()}
        assert not said & raw_words(event_fields()), (lang, said & raw_words(event_fields()), seen)
    button.click()
    ctl.wait_for_function("document.querySelector('#mini [data-score=\"A\"]').textContent === '5'", timeout=3000)
    assert errors == []


@pytest.mark.parametrize("lang,locale", LANGS)
def test_a_stack_21_count_with_an_ace_is_said_in_the_pages_language(browser, server, lang, locale):
    """Stack 21: a stack holding an Ace counts two ways. The engine says it in English ("1 or
    11", its ``count``); the scoreboard and the controller's keep buttons showed that as it is on
    a Magyar or Español phone. Now the page says the counts with its own word ("1 vagy 11",
    "1 o 11")."""
    t = texts(lang)
    post(server.port, "/api/games", {"type": "new_game", "game": "stack21", "players": ["Ann", "Bea"]})
    post(server.port, "/api/events", {"type": "deal", "dealer": "Bea", "upcard": "7", "stock": ["4", "10", "3"],
                                      "hands": {"Ann": ["A", "6", "10", "9"], "Bea": ["5", "A", "8", "2"]}})
    version = post(server.port, "/api/events", {"type": "draw", "player": "Ann"})["version"]
    two_ways = "1 " + t["s21_or"] + " 11"
    errors: list[str] = []
    for path in (f"/?lang={lang}", f"/controller?lang={lang}#pin={PIN}"):
        page = phone(browser, server.url + path, errors, locale)
        page.wait_for_function(f"document.body.dataset.version === '{version}'")
        counts = page.eval_on_selector_all(".s21-stack .count", "(cs) => cs.map((c) => c.textContent)")
        assert counts.count(two_ways) == 2, (lang, path, counts)  # Ann's stack 1 and Bea's stack 2
        if path.startswith("/controller"):  # the keep buttons in the dock say each stack's count
            kept = page.eval_on_selector_all('.dock [data-action="keep"] small', "(cs) => cs.map((c) => c.textContent)")
            assert kept[0] == two_ways, (lang, kept)
        text = page.inner_text("body")
        if lang != "en":
            assert " or " not in text, (lang, path, text)
        page.context.close()
    assert errors == []


SWEEP = {
    "exact21": {"type": "new_game", "game": "exact21", "sides": [{"name": "Reds", "players": ["Ann", "Ben"]}, {"name": "Blues"}]},
    "twentyone": {"type": "new_game", "game": "twentyone", "players": [{"name": "Ann", "sheet": "A"}, {"name": "Bea", "sheet": "B"}]},
    "exactly": {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea"]},
    "stack21": {"type": "new_game", "game": "stack21", "players": ["Ann", "Bea"], "options": {"target": 5}},
}


@pytest.mark.parametrize("lang,locale", [lang for lang in LANGS if lang[0] != "en"])
@pytest.mark.parametrize("game", list(SWEEP))
def test_the_fallback_controller_of_every_game_has_no_raw_event_words(browser, server, game, lang, locale):
    """Each game played through to its end with the fallback controller on a Magyar or Español
    phone: at every sixth state none of the events' English types, field names or values (a
    Stack 21 draw "from upcard") is among the words on its buttons and forms."""
    from companion.web.pages import event_fields
    from tests.web.test_game_over import finishing_events

    raw = raw_words(event_fields())
    post(server.port, "/api/games", SWEEP[game])
    errors: list[str] = []
    ctl = phone(browser, f"{server.url}/controller?lang={lang}#pin={PIN}", errors, locale)
    ctl.wait_for_selector("#controls *")
    ctl.evaluate(f"delete C.controllers.{game}")
    checked = 0
    for i, event in enumerate(finishing_events(SWEEP[game])):
        state = post(server.port, "/api/events", event)
        if i % 6 or state["finished"]:
            continue
        ctl.wait_for_function(f"document.body.dataset.version === '{state['version']}'")
        seen = ctl.evaluate(WORDS_SEEN)
        said = {w.lower() for w in seen.replace("|", " ").replace(":", " ").replace("·", " ").replace(",", " ").split()}
        assert not said & raw, (game, lang, i, said & raw, seen)
        checked += 1
    assert checked >= 3 and errors == []
