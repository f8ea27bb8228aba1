"""A camera proposal under the thumb (real Chromium at 390 x 844 against a real server on
loopback, in English, Magyar and Español): while the camera proposes a reading (21 Exact's throw
or a side's set-up dice, Twenty One's roll, exactly's rolled face, Stack 21's draw), its Confirm and Reject sit in the dock
above the Undo bar as well as in the list at the top of the page. Scrolled to the page's end, the
dock's Confirm is inside the window and a tap at its centre lands on it, and confirms the
proposal: the event is on the table, the proposal gone from the dock and the list. Reject in the
dock drops it and leaves the game as it was. The controller with a proposal pending passes
axe-core. The proposal is made by the table's own ``propose``, as the camera's live loop does."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PHONE
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
