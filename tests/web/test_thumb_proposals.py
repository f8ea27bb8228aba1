"""A camera proposal under the thumb (real Chromium at 390 x 844 against a real server on
loopback, in English, Magyar and Español): while the camera proposes a reading (21 Exact's throw
or a side's set-up dice, Twenty One's roll, exactly's rolled face, Stack 21's draw), its Confirm and Reject sit in the dock
above the Undo bar as well as in the list at the top of the page. Scrolled to the page's end, the
dock's Confirm is inside the window and a tap at its centre lands on it, and confirms the
proposal: the event is on the table, the proposal gone from the dock and the list. Reject in the
dock drops it and leaves the game as it was. The controller with a proposal pending passes
axe-core. What the proposal is, in the dock and in the list, is said in the page's language from
the catalogue: in Magyar and Español none of the English words of the old raw summary ("throw ·
side A · cup blue") and the side, the player and the cup and die colours by the catalogue's
names; the scoreboard's list says it in the same words. The proposal is made by the table's own ``propose``, as the camera's live loop does."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PHONE, phone
from tests.web.test_axe import FAILING, RUN_AXE, axe_source
from tests.web.test_game_over import LANGS, post
from tests.web.test_thumb_controller import BOXES, controller, shot, shown

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

OK = "#dock [data-dock-proposal] button.okb"
NO = "#dock [data-dock-proposal] button.badb"


def _exact21(port: int) -> dict[str, Any]:
    post(port, "/api/games", NEW_EXACT21)
    post(port, "/api/events", DICE_A)
    post(port, "/api/events", DICE_B)
    return {"type": "throw", "side": "A", "cup": "blue"}


def _exact21_dice(port: int) -> dict[str, Any]:  # a set-up roll: the game's dock is empty until then
    post(port, "/api/games", NEW_EXACT21)
    return DICE_A


def _twentyone(port: int) -> dict[str, Any]:
    post(port, "/api/games", {"type": "new_game", "game": "twentyone",
                              "players": [{"name": "Ann", "sheet": "C"}, {"name": "Bea", "sheet": "A"}]})
    return {"type": "roll", "player": "Ann",
            "dice": {"white": 4, "black": 5, "red": 1, "blue": 3, "yellow": 2, "green": 6}}


def _exactly(port: int) -> dict[str, Any]:
    post(port, "/api/games", {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea"]})
    return {"type": "roll", "player": "Ann", "face": "5"}


def _stack21(port: int) -> dict[str, Any]:
    post(port, "/api/games", {"type": "new_game", "game": "stack21", "players": ["Ann", "Bea"]})
    state = post(port, "/api/events", {"type": "deal", "dealer": "Ann", "seed": 5})
    return next(a for a in state["legal"] if a["type"] == "draw")


GAMES = {"exact21": _exact21, "exact21-dice": _exact21_dice, "twentyone": _twentyone, "exactly": _exactly, "stack21": _stack21}


def at_the_end(page: Any, selector: str) -> dict[str, Any]:
    """The box of ``selector`` with the page scrolled to its end."""
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_timeout(50)
    boxes = page.evaluate(BOXES, selector)
    assert len(boxes) == 1, boxes
    return boxes[0]


def inside(box: dict[str, Any]) -> bool:
    return (box["top"] >= 0 and box["bottom"] <= PHONE["height"] and box["left"] >= 0
            and box["right"] <= PHONE["width"] and box["reached"])


def axe_failures(page: Any, axe: str) -> list[str]:
    page.add_script_tag(content=axe)
    found = page.evaluate(RUN_AXE)
    return [f"{v['impact']} {v['id']}: {v['examples'][:2]}" for v in found["violations"] if v["impact"] in FAILING]


@pytest.mark.parametrize("lang", [lang for lang, _ in LANGS])
@pytest.mark.parametrize("game", list(GAMES))
def test_a_camera_proposal_is_confirmed_from_the_dock(browser, server, game, lang):
    event = GAMES[game](server.port)
    table = server.app.extensions["companion"].table
    proposal = table.propose(event, source="camera")
    errors: list[str] = []
    ctl = controller(browser, server, errors, lang)
    before = shown(ctl, server)
    assert [p["id"] for p in before["pending"]] == [proposal.id]
    ctl.wait_for_selector(OK)
    assert ctl.locator(f'#pending [data-proposal="{proposal.id}"] button.okb').count() == 1  # still at the top too
    if game == "exact21":  # the dock's own controls and the proposal: axe-core finds nothing serious
        assert axe_failures(ctl, axe_source()) == []
    assert ctl.evaluate("document.documentElement.scrollHeight") > PHONE["height"], "the page goes on below"
    ok = at_the_end(ctl, OK)
    assert inside(ok), ok
    assert inside(at_the_end(ctl, NO))
    assert ctl.evaluate("window.scrollY") > 0
    shot(ctl, f"proposal-{game}-{lang}")
    ctl.mouse.click((ok["left"] + ok["right"]) / 2, (ok["top"] + ok["bottom"]) / 2)
    ctl.wait_for_selector("#dock [data-dock-proposal]", state="detached")
    ctl.wait_for_selector("#pending", state="hidden")
    after = shown(ctl, server)
    assert after["pending"] == [] and after["seq"] == before["seq"] + 1
    last = after["detail"]["last"]
    assert last["type"] == event["type"]
    keys = [k for k in ("cup", "player", "side") if k in event]
    assert {k: last.get(k) for k in keys} == {k: event[k] for k in keys}
    assert errors == []


@pytest.mark.parametrize("lang", [lang for lang, _ in LANGS])
def test_a_camera_proposal_is_rejected_from_the_dock(browser, server, lang):
    GAMES["exact21"](server.port)
    table = server.app.extensions["companion"].table
    table.propose({"type": "throw", "side": "A", "cup": "red"}, source="camera")
    errors: list[str] = []
    ctl = controller(browser, server, errors, lang)
    before = shown(ctl, server)
    no = at_the_end(ctl, NO)
    assert inside(no), no
    ctl.mouse.click((no["left"] + no["right"]) / 2, (no["top"] + no["bottom"]) / 2)
    ctl.wait_for_selector("#dock [data-dock-proposal]", state="detached")
    ctl.wait_for_selector("#pending", state="hidden")
    after = shown(ctl, server)
    assert after["pending"] == [] and after["seq"] == before["seq"] and after["scores"] == before["scores"]
    assert ctl.locator("#dock button[data-cup]").count() == 6  # the throws are there as before
    assert errors == []


def raw_summary(event: dict[str, Any]) -> str:
    """The summary the page showed before the catalogue said it: the event's type, then each
    field's English name and its value ("throw · side A · cup blue")."""
    parts = [event["type"]] + [f"{k} {json.dumps(v) if isinstance(v, dict) else v}"
                               for k, v in event.items() if k not in ("type", "source", "at")]
    return " · ".join(parts)


def english_words(event: dict[str, Any], names: set[str]) -> set[str]:
    """The English words of the raw summary: the field names, the type and English values (the
    colours, "stock"); the players' and sides' names are names in every language."""
    return {w.lower() for w in re.findall(r"[A-Za-z]+", raw_summary(event))} - {n.lower() for n in names}


def colours_of(event: dict[str, Any]) -> list[str]:
    found = [event["cup"]] if "cup" in event else []
    for k in ("values", "dice"):
        found += list(event.get(k) or {})
    return found


@pytest.mark.parametrize("lang", ["hu", "es"])
@pytest.mark.parametrize("game", list(GAMES))
def test_what_a_proposal_is_is_said_in_the_pages_language(browser, server, game, lang):
    event = GAMES[game](server.port)
    table = server.app.extensions["companion"].table
    proposal = table.propose(event, source="camera")
    errors: list[str] = []
    ctl = controller(browser, server, errors, lang)
    state = shown(ctl, server)
    ctl.wait_for_selector(OK)
    t = texts(lang)
    names = {n for unit in state["players"] for n in [unit, *state["detail"].get("sides", {}).get(unit, {}).get("players", [])]}
    docked = ctl.inner_text("#dock [data-dock-proposal] .what")
    listed = ctl.inner_text(f'#pending [data-proposal="{proposal.id}"] .what')
    assert listed.startswith(t["pending"] + ": ")
    assert listed[len(t["pending"]) + 2:] == docked
    assert ctl.get_attribute("#dock [data-dock-proposal]", "aria-label") == t["pending"] + ": " + docked
    english = english_words(event, names)
    said = {w.lower() for w in re.findall(r"[^\W\d_]+", docked)}
    assert not english & said, (docked, english & said)
    for colour in colours_of(event):  # each cup and die by the catalogue's colour name
        assert re.search(rf"\b{re.escape(t['cup_' + colour] if 'cup' in event else t['colour_' + colour])}\b", docked), (docked, colour)
    for who in (event.get("side"), event.get("player")):
        if who:
            assert who in docked, (docked, who)
    if game == "exact21":  # the thrower the board names for the side, beside the side
        assert docked == t["prop_throw_by"].format(name=state["detail"]["thrower"], side="A", cup=t["cup_blue"])
    if "dice" in event or "values" in event:  # each die's value beside its colour
        for colour, value in (event.get("dice") or event.get("values")).items():
            assert f"{t['colour_' + colour]} {value}" in docked, (docked, colour)
    if game == "exactly":
        assert docked == t["u_rolled_face"].format(name="Ann", face="5")
    shot(ctl, f"proposal-words-{game}-{lang}")
    # the scoreboard's list says it in the same words
    board = phone(ctl.context.browser, f"{server.url}/?lang={lang}", errors, dict(LANGS)[lang])
    board.wait_for_selector("#pending .what")
    assert board.inner_text("#pending .what") == listed
    assert errors == []
