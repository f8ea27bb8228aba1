"""The controller built around the thumb (real Chromium at 390 x 844 against a real server on
loopback): in play, each game's main actions sit in the dock fixed just above the Undo bar, so a
player never scrolls to act. For each game, at the top of the page and at its end, every main
action button is inside the window and a tap at its centre lands on it (nothing covers it); and
tapped, it acts. The main actions: 21 Exact's six throw buttons; Twenty One's typed roll and its
Roll button, then each waiting player's six dice, Enter and Strike; exactly's six faces, then its
moves; Stack 21's deal of a virtual deck between rounds, its draw, then the stacks to keep the
card on or give it to. Screenshots go to
``test-output/screenshots/``. In English, Magyar and Español: no label is cut or wider than the
screen in any of them.

With 4 and with 6 players (Stack 21: 4, its most) and long names, in every phase of every game
and with a camera proposal on top, the dock holds all its controls without scrolling inside
itself (its scrollHeight is its clientHeight), each control is at least 44 x 44 CSS px and a tap
at its centre lands on it; where the dock shows one player's entry (Twenty One) or one stack's
moves (exactly) at a time, tapping another tab shows that one, and the dock still fits; axe-core
finds nothing serious in the tabs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PHONE, PIN, SHOTS, phone
from tests.web.test_axe import FAILING, RUN_AXE, axe_source
from tests.web.test_game_over import LANGS, TOO_WIDE, get, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

# Every button matching a selector: its box, and whether a tap at its centre lands on it.
BOXES = """(sel) => Array.from(document.querySelectorAll(sel)).map((b) => {
  const r = b.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {what: (b.dataset.cup || b.dataset.colour || b.dataset.face || b.dataset.move || b.dataset.action
                 || b.name || b.textContent).trim(), top: r.top, bottom: r.bottom, left: r.left, right: r.right,
          reached: hit === b || b.contains(hit)}; })"""


def out_of_reach(page: Any, selector: str) -> list[dict[str, Any]]:
    """The controls of ``selector`` a thumb cannot reach without scrolling, at the top of the page
    and at its end (none at all is a failure too)."""
    far: list[dict[str, Any]] = []
    for where in ("0", "document.documentElement.scrollHeight"):
        page.evaluate(f"window.scrollTo(0, {where})")
        page.wait_for_timeout(50)
        boxes = page.evaluate(BOXES, selector)
        assert boxes, f"no {selector} on the page"
        far += [b for b in boxes if not (b["top"] >= 0 and b["bottom"] <= PHONE["height"] and b["left"] >= 0
                                        and b["right"] <= PHONE["width"] and b["reached"])]
    page.evaluate("window.scrollTo(0, 0)")
    return far


# The dock's own scroll: how high its content is and how high the dock is.
DOCK = """() => { const d = document.getElementById('dock');
  return d && {scroll: d.scrollHeight, client: d.clientHeight, top: d.getBoundingClientRect().top}; }"""
# Every control in the dock smaller than a 44 x 44 CSS px tap target.
SMALL = """() => Array.from(document.querySelectorAll('#dock :is(button, input)')).map((b) => {
  const r = b.getBoundingClientRect(); return {what: b.textContent || b.name, w: r.width, h: r.height}; })
  .filter((b) => b.w < 44 || b.h < 44)"""
MANY = ["Annabella", "Bernadett", "Cyprián", "Dorottya", "Erzsébet", "Ferdinánd"]


def controller(browser: Any, server: Any, errors: list[str], lang: str) -> Any:
    locale = dict(LANGS)[lang]
    ctl = phone(browser, f"{server.url}/controller?lang={lang}#pin={PIN}", errors, locale)
    ctl.wait_for_function("localStorage.getItem('companion.pin') !== null")
    return ctl


def shown(page: Any, server: Any) -> dict[str, Any]:
    """The table's state, once the page shows it."""
    state = get(server.port, "/api/state")
    page.wait_for_function(f"document.body.dataset.version === '{state['version']}'")
    return state


def moved(page: Any, server: Any, before: dict[str, Any]) -> dict[str, Any]:
    """The state after the tap that was to move the game on from ``before`` (shown on the page)."""
    try:
        page.wait_for_function(f"document.body.dataset.version !== '{before['version']}'", timeout=5000)
    except Exception as e:
        raise AssertionError(f"the tap did nothing: {page.inner_text('#toast')}") from e
    state = shown(page, server)
    assert state["seq"] > before["seq"]
    return state


def shot(page: Any, name: str) -> None:
    """A screenshot; and nothing on the page cut or wider than the screen."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"thumb-{name}.png"))
    assert not page.evaluate(TOO_WIDE), name


@pytest.mark.parametrize("lang", [lang for lang, _ in LANGS])
def test_21_exact_throws_are_under_the_thumb(browser, server, lang):
    post(server.port, "/api/games", NEW_EXACT21)
    post(server.port, "/api/events", DICE_A)
    post(server.port, "/api/events", DICE_B)
    errors: list[str] = []
    ctl = controller(browser, server, errors, lang)
    state = shown(ctl, server)
    assert ctl.evaluate("document.documentElement.scrollHeight") > PHONE["height"], "the board goes on below"
    assert out_of_reach(ctl, "#dock button[data-cup], #undo") == []
    assert ctl.locator("#dock button[data-cup]").count() == 6
    shot(ctl, f"exact21-{lang}")
    ctl.click('#dock button[data-cup="blue"]')
    after = moved(ctl, server, state)
    assert after["detail"]["last"]["cup"] == "blue" and after["scores"]["A"] == 3
    assert out_of_reach(ctl, "#dock button[data-cup]") == []  # B's turn: still in reach
    ctl.click('#dock button[data-cup="miss"]')
    assert moved(ctl, server, after)["detail"]["last"]["cup"] == "miss"
    assert errors == []


@pytest.mark.parametrize("lang", [lang for lang, _ in LANGS])
def test_twenty_one_roll_and_entries_are_under_the_thumb(browser, server, lang):
    post(server.port, "/api/games", {"type": "new_game", "game": "twentyone",
                                        "players": [{"name": "Ann", "sheet": "C"}, {"name": "Bea", "sheet": "A"}]})
    errors: list[str] = []
    ctl = controller(browser, server, errors, lang)
    state = shown(ctl, server)
    # the roll: the typed field and Roll under the thumb (the colour pickers stay in the page)
    assert out_of_reach(ctl, '#dock .t21-dice[data-kind="roll"] :is(input[name=typed], button[type=submit])') == []
    shot(ctl, f"twentyone-roll-{lang}")
    ctl.click("#dock input[name=typed]")
    ctl.keyboard.type("451326")  # the sixth digit sends it
    state = moved(ctl, server, state)
    assert state["detail"]["roll"]["white"] == 4
    # each waiting player's dice, Enter and Strike
    assert ctl.evaluate("document.documentElement.scrollHeight") > PHONE["height"], "the sheets go on below"
    assert out_of_reach(ctl, "#dock .t21-act button") == []
    assert ctl.locator("#dock .t21-act").count() == 2
    shot(ctl, f"twentyone-enter-{lang}")
    colour = state["detail"]["choices"]["Ann"]["enter"][0]
    ann = ctl.locator('#dock .t21-act[data-player="Ann"]')
    ann.locator(f'button[data-colour="{colour}"]').click()
    ann.locator("button[data-enter]").click()
    state = moved(ctl, server, state)
    assert state["detail"]["last"]["type"] == "enter" and state["detail"]["last"]["player"] == "Ann"
    assert out_of_reach(ctl, "#dock .t21-act button") == []
    ctl.click('#dock .t21-act[data-player="Bea"] button[data-strike]')
    state = moved(ctl, server, state)
    assert state["detail"]["roller"] == "Bea"  # everyone acted: Bea rolls next, in the dock again
    assert out_of_reach(ctl, '#dock .t21-dice[data-kind="roll"] :is(input[name=typed], button[type=submit])') == []
    assert errors == []


@pytest.mark.parametrize("lang", [lang for lang, _ in LANGS])
def test_exactly_faces_and_moves_are_under_the_thumb(browser, server, lang):
    post(server.port, "/api/games", {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea"]})
    errors: list[str] = []
    ctl = controller(browser, server, errors, lang)
    state = shown(ctl, server)
    assert ctl.locator(".x-start-box[open]").count() == 1  # the start roll: in the page, open
    assert out_of_reach(ctl, "#dock .faces button[data-face]") == []
    assert ctl.locator("#dock .faces button[data-face]").count() == 6
    shot(ctl, f"exactly-roll-{lang}")
    ctl.click('#dock button[data-face="5"]')
    state = moved(ctl, server, state)
    assert state["detail"]["phase"] == "move"
    assert out_of_reach(ctl, "#dock button[data-move]") == []
    assert ctl.locator("#dock button[data-move]").count() == len(state["detail"]["legal_moves"])
    shot(ctl, f"exactly-move-{lang}")
    ctl.locator("#dock button[data-move]").first.click()
    state = moved(ctl, server, state)
    assert state["detail"]["last"]["type"] == "move"
    assert out_of_reach(ctl, "#dock .faces button[data-face]") == []  # Bea rolls: in reach
    assert errors == []


@pytest.mark.parametrize("lang", [lang for lang, _ in LANGS])
def test_stack_21_draw_and_stacks_are_under_the_thumb(browser, server, lang):
    post(server.port, "/api/games", {"type": "new_game", "game": "stack21", "players": ["Ann", "Bea"]})
    errors: list[str] = []
    ctl = controller(browser, server, errors, lang)
    state = shown(ctl, server)
    # a round's deal (a virtual deck): in the dock too, the page's own fields (hands typed in,
    # a round's result) below it in the page
    assert out_of_reach(ctl, "#dock button[data-virtual-deal]") == []
    assert ctl.evaluate(SMALL) == []
    shot(ctl, f"stack21-deal-{lang}")
    ctl.click("#dock button[data-virtual-deal]")
    state = moved(ctl, server, state)
    assert ctl.evaluate("document.documentElement.scrollHeight") > PHONE["height"], "the stacks go on below"
    assert out_of_reach(ctl, '#dock button[data-action="draw"]') == []
    assert out_of_reach(ctl, "#dock button[data-action]") == []  # combine and take too, where offered
    shot(ctl, f"stack21-draw-{lang}")
    ctl.click('#dock button[data-action="draw"][data-from="stock"]')
    state = moved(ctl, server, state)
    assert state["detail"]["hand"]
    assert out_of_reach(ctl, '#dock button[data-action="keep"], #dock button[data-action="give"]') == []
    shot(ctl, f"stack21-keep-{lang}")
    ctl.locator('#dock button[data-action="keep"]').first.click()
    state = moved(ctl, server, state)
    assert state["detail"]["last"]["type"] in ("keep", "place")
    assert errors == []


def _many(game: str, n: int) -> list[Any]:
    """The events to a phase of ``game`` with ``n`` players; a string is the first legal action
    of that type, a tuple ("propose", event) a camera proposal."""
    p = MANY[:n]
    seats = [{"name": x, "sheet": "ABCDEF"[i]} for i, x in enumerate(p)]
    exact21 = [{"type": "new_game", "game": "exact21", "sides": [{"name": "A", "players": p[:n // 2]},
                                                                {"name": "B", "players": p[n // 2:]}]}, DICE_A, DICE_B]
    roll = {"type": "roll", "player": p[0], "dice": {"white": 4, "black": 5, "red": 1, "blue": 3, "yellow": 2, "green": 6}}
    stack21 = [{"type": "new_game", "game": "stack21", "players": p}, {"type": "deal", "dealer": p[0], "seed": 5}]
    return {
        "exact21": exact21,
        "exact21-proposal": [*exact21, ("propose", {"type": "throw", "side": "A", "cup": "green"})],
        "twentyone-roll": [{"type": "new_game", "game": "twentyone", "players": seats}, ("propose", roll)],
        "twentyone-enter": [{"type": "new_game", "game": "twentyone", "players": seats}, roll],
        "exactly-roll": [{"type": "new_game", "game": "exactly", "players": p},
                         ("propose", {"type": "roll", "player": p[0], "face": "5"})],
        "exactly-move": [{"type": "new_game", "game": "exactly", "players": p}, {"type": "roll", "player": p[0], "face": "5"}],
        "exactly-move-any": [{"type": "new_game", "game": "exactly", "players": p}, {"type": "roll", "player": p[0], "face": "?"}],
        "stack21-draw": [*stack21, ("propose", {"type": "draw", "player": p[1]})],
        "stack21-keep": [*stack21, "draw"],
        "stack21-give": [*stack21, *["draw", "keep"] * n, "draw"],
    }[game]


MANY_CASES = [(g, n) for g in ("exact21", "exact21-proposal", "twentyone-roll", "twentyone-enter", "exactly-roll",
                               "exactly-move", "exactly-move-any", "stack21-draw", "stack21-keep", "stack21-give")
              for n in (4, 6) if not (g.startswith("stack21") and n > 4)]  # Stack 21: 2 to 4 players


def fits(page: Any) -> dict[str, Any]:
    """The dock holds every control without scrolling inside itself, each a 44 px target in reach."""
    page.wait_for_timeout(50)
    dock = page.evaluate(DOCK)
    assert dock, "no dock"
    assert dock["scroll"] <= dock["client"], dock
    assert page.evaluate(SMALL) == []
    assert out_of_reach(page, "#dock :is(button, input)") == []
    return dock


@pytest.mark.parametrize("game,n", MANY_CASES)
def test_the_dock_holds_every_main_action_with_many_players(browser, server, game, n):
    table = server.app.extensions["companion"].table
    for event in _many(game, n):
        if isinstance(event, str):
            event = next(a for a in get(server.port, "/api/state")["legal"] if a["type"] == event)
        if isinstance(event, tuple):
            table.propose(event[1], source="camera")
        else:
            post(server.port, "/api/games" if event["type"] == "new_game" else "/api/events", event)
    errors: list[str] = []
    for lang, _ in LANGS:
        ctl = controller(browser, server, errors, lang)
        state = shown(ctl, server)
        if state["pending"]:
            ctl.wait_for_selector("#dock [data-dock-proposal]")
        fits(ctl)
        shot(ctl, f"many-{game}-{n}-{lang}")
        if n == 6 and lang == "hu" and game in ("twentyone-enter", "exactly-move"):  # the tabs: axe-core clean
            ctl.add_script_tag(content=axe_source())
            found = ctl.evaluate(RUN_AXE)["violations"]
            assert [f"{v['impact']} {v['id']}: {v['examples'][:2]}" for v in found if v["impact"] in FAILING] == []
        tabs = ctl.locator("#dock :is([data-tab], [data-from-tab])")
        if game in ("twentyone-enter", "exactly-move"):  # more than the dock holds: one at a time
            assert tabs.count() > 2
        if tabs.count():  # the last tab shows its player's entry, its value's or its stack's moves
            last = tabs.last
            key = "data-tab" if last.get_attribute("data-tab") is not None else "data-from-tab"
            picked = f'#dock [{key}="{last.get_attribute(key)}"]'
            last.click()
            ctl.wait_for_selector(f'{picked}[aria-pressed="true"]')
            fits(ctl)
            if game == "twentyone-enter":
                assert ctl.locator(f'#dock .t21-act[data-player="{MANY[n - 1]}"]').count() == 1
        ctl.context.close()
    assert errors == []
