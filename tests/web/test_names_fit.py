"""Names on the boards of a game in play (real Chromium at 390 x 844 against a real server on
loopback, in English, Magyar and Español): 21 Exact broke names in half beside a two-digit score
("An / n", "Zs / ófi / a") and Twenty One broke longer ones. On each game's scoreboard and
controller, mid-game with two-digit scores where the game has them, every name shown on the board
(and every name on a move button in the dock) keeps each of its words on one line, a name wider
than its box ends in "…" with the whole name in its title, and nothing is wider than the phone;
short names ("Ann", "Zsófia") are not cut at all."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import CHROMIUM, PIN, SHOTS, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, WORD, WORDS, WORDS_SPLIT, finishing_events, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

GAMES: dict[str, dict[str, Any]] = {
    "exact21": {"type": "new_game", "game": "exact21",
                "sides": [{"name": "Zsófia", "players": ["Zsófia", WORD]}, {"name": WORDS, "players": ["Ann"]}]},
    "twentyone": {"type": "new_game", "game": "twentyone", "players": [{"name": "Ann", "sheet": "A"},
                  {"name": "Zsófia", "sheet": "B"}, {"name": WORD, "sheet": "C"}, {"name": WORDS, "sheet": "D"}]},
    "exactly": {"type": "new_game", "game": "exactly", "players": ["Ann", "Zsófia", WORD, WORDS]},
    "stack21": {"type": "new_game", "game": "stack21", "players": ["Ann", "Zsófia", WORD, WORDS]},
}
SHORT = ("Ann", "Zsófia")

# Every name element on the board: each word on one line; cut only with an ellipsis and a title
# holding the whole name; a short name not cut.
NAMES = """(short) => {
  const out = [], seen = [], split = """ + WORDS_SPLIT + """;
  for (const e of document.querySelectorAll("#board .nm, #board .name, #mini .nm, #mini .name, #dock .nm")) {
    const node = e.firstChild;
    if (!node || node.nodeType !== Node.TEXT_NODE || !e.getBoundingClientRect().width) continue;
    seen.push(node.textContent);
    for (const word of split(node)) out.push("split: " + word + " in " + e.className);
    const cut = e.scrollWidth > e.clientWidth + 1;
    if (cut && (getComputedStyle(e).textOverflow !== "ellipsis" || e.title !== node.textContent))
      out.push("cut without ellipsis or title: " + node.textContent);
    if (cut && short.includes(node.textContent)) out.push("a short name cut: " + node.textContent);
  }
  return {out, seen};
}"""


@pytest.mark.parametrize("lang,locale", LANGS)
@pytest.mark.parametrize("name", list(GAMES))
def test_names_keep_their_words_whole_on_the_boards_in_play(browser, server, name, lang, locale):
    events = finishing_events(GAMES[name])
    state = post(server.port, "/api/games", GAMES[name])
    for event in events[: int(len(events) * 0.7)]:
        state = post(server.port, "/api/events", event)
    assert not state["finished"]
    if name in ("exact21", "twentyone"):
        assert max(state["scores"].values()) >= 10, state["scores"]  # a two-digit score beside a name
    errors: list[str] = []
    for path, page_name in ((f"/?lang={lang}", "scoreboard"), (f"/controller?lang={lang}#pin={PIN}", "controller")):
        page = phone(browser, server.url + path, errors, locale)
        page.wait_for_function(f"document.body.dataset.version === '{state['version']}'")
        found = page.evaluate(NAMES, list(SHORT))
        assert found["seen"], "names are shown on the board"
        assert not found["out"], (name, lang, page_name, found["out"])
        assert not page.evaluate(TOO_WIDE), (name, lang, page_name)
        if page_name == "scoreboard" and lang == "hu":
            page.screenshot(path=str(SHOTS / f"{name}-names-{lang}.png"), full_page=True)
        page.context.close()
    assert errors == []


@pytest.mark.parametrize("lang,locale", LANGS)
def test_stack21_between_rounds_with_a_long_dealer_fits_the_controller(browser, server, lang, locale):
    """Between two rounds of Stack 21 the controller shows the deal (in the dock: who deals) and,
    in the page, the typed hands ("<name>'s four cards") and the round's result per player: with
    a 40-letter one-word name dealing next, nothing is wider than the phone."""
    new_game = GAMES["stack21"]
    state = post(server.port, "/api/games", new_game)
    for event in finishing_events(new_game):
        state = post(server.port, "/api/events", event)
        if state["detail"].get("phase") == "deal" and state["detail"].get("next_dealer") == WORD:
            break
    else:
        raise AssertionError("no deal of the long name's before the game ended")
    errors: list[str] = []
    page = phone(browser, f"{server.url}/controller?lang={lang}#pin={PIN}", errors, locale)
    page.wait_for_function(f"document.body.dataset.version === '{state['version']}'")
    page.wait_for_selector("#dock button[data-virtual-deal]")
    for box in (".s21-deal-hands", ".s21-more:has(.s21-result)"):
        page.click(f"{box} summary")
    found = page.evaluate(NAMES, list(SHORT))
    assert not found["out"], (lang, found["out"])
    assert not page.evaluate(TOO_WIDE), lang
    page.context.close()
    assert errors == []
