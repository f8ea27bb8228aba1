"""A finished game on a phone (real Chromium at 390 x 844 against a real server on loopback):
the scoreboard and the controller show the final standings, winner first, in English, Magyar
and Español; Rematch starts the same game again (players or sides, house rules) in one tap,
and only with the PIN; New game leads to the set-up page; names of 40 characters fit without
being split mid-word. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import json
import random
import urllib.request
from typing import Any

import pytest

from companion.games import get_engine
from companion.games.base import Game
from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, PIN, SHOTS, phone

browser_only = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

# 40 characters each: one long word (it can only be cut, with an ellipsis) and five words (they
# wrap, whole)
WORD = "Maximiliankarlheinzfriedrichwilhelmsohnx"
WORDS = "Anna Maria Konstantina Papadopoulou Smit"
assert len(WORD) == len(WORDS) == 40

# Each game with long names and house rules other than the defaults, so a rematch that dropped
# them would show.
GAMES: dict[str, dict[str, Any]] = {
    "exact21": {"type": "new_game", "game": "exact21",
                "sides": [{"name": WORDS, "players": ["Ann", WORD]}, {"name": "Blues", "players": ["Bea"]}],
                "options": {"silver_rule": "combination"}},
    "twentyone": {"type": "new_game", "game": "twentyone",
                  "players": [{"name": WORDS, "sheet": "C"}, {"name": WORD, "sheet": "A"}],
                  "options": {"selective_reroll": True, "incomplete_row_bonus": False}},
    "exactly": {"type": "new_game", "game": "exactly", "players": [WORDS, WORD, "Cy"],
                "options": {"target": 1, "cap_mode": "after"}},
    "stack21": {"type": "new_game", "game": "stack21", "players": [WORDS, "Bo", WORD, "Di"],
                "teams": [[WORDS, WORD], ["Bo", "Di"]], "options": {"target": 5, "zero_bonus_points": 2}},
}
LANGS = [("en", "en-GB"), ("hu", "hu-HU"), ("es", "es-ES")]
NEW_KEYS = ("standings", "standing_winner", "rematch", "new_game")


def post(port: int, path: str, body: dict) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"X-Table-Pin": PIN, "Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


def get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        body = r.read().decode()
    return [json.loads(line) for line in body.splitlines()] if path.endswith(".jsonl") else json.loads(body)


def finishing_events(new_game: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a seeded random game played to its end by the engine's legal actions,
    where one player (side, team) alone wins and is not the first listed: "winner first" then
    means the standings were ordered, not just listed in seat order."""
    engine = get_engine(new_game["game"])
    for seed in range(50):
        rng = random.Random(seed)
        game = Game(engine, new_game, engine.new_game(new_game))
        while not engine.finished(game.state) and len(game.events) < 3000:
            game.push(engine.random_action(game.state, rng))
        view = game.view()
        if view["finished"] and len(view["winners"]) == 1 and view["winners"][0] != view["players"][0]:
            return game.events[1:]
    raise AssertionError("no seed gives a single winner who is not listed first")


def play_to_the_end(port: int, name: str) -> dict[str, Any]:
    state = post(port, "/api/games", GAMES[name])
    for event in finishing_events(GAMES[name]):
        state = post(port, "/api/events", event)
    assert state["finished"]
    return state


# The page's own measures, run in the page.
# An element past the viewport's edge (unless a box inside the page clips it: a name cut with
# "…"), or text running out of its box where nothing clips it. (html and body clip whatever is
# wider than the phone: that is what is looked for, so they do not count as clipping.)
TOO_WIDE = """() => {
  const width = document.documentElement.clientWidth, out = [];
  const say = (e, why) => out.push(why + " " + e.tagName + "." + e.className + ": " + (e.textContent || "").slice(0, 50));
  const clipped = (e) => {
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== "visible" && a.getBoundingClientRect().right <= width + 0.5) return true;
    return false;
  };
  if (document.body.scrollWidth > width) say(document.body, "page " + document.body.scrollWidth + "px");
  for (const e of document.querySelectorAll("body *")) {
    const r = e.getBoundingClientRect();
    if (!r.width) continue;
    if ((r.right > width + 0.5 || r.left < -0.5) && !clipped(e)) say(e, "past the edge " + Math.round(r.right) + "px");
    else if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === "visible" && e.clientWidth)
      say(e, "text out of its box " + e.scrollWidth + "/" + e.clientWidth + "px");
  }
  return out;
}"""
# Every word of every name shown (standings and headline) on one line, and a name that does not
# fit its box cut with an ellipsis and whole in the title.
# (JavaScript) the words of a text node that the page breaks across lines
WORDS_SPLIT = """(node) => {
  const out = [], words = /\\S+/g;
  let m;
  while ((m = words.exec(node.textContent))) {
    const range = document.createRange();
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const lines = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    if (lines.size > 1) out.push(m[0]);
  }
  return out;
}"""
SPLIT_NAMES = """() => {
  const out = [], split = """ + WORDS_SPLIT + """;
  for (const e of document.querySelectorAll("#final .nm, #status .nm")) {
    const node = e.firstChild;
    if (!node || node.nodeType !== Node.TEXT_NODE) { out.push("not text: " + e.outerHTML.slice(0, 80)); continue; }
    for (const word of split(node)) out.push("split: " + word);
    if (e.scrollWidth > e.clientWidth + 1 && (getComputedStyle(e).textOverflow !== "ellipsis" || e.title !== node.textContent))
      out.push("cut without ellipsis or title: " + node.textContent);
  }
  return out;
}"""


def standings(page) -> list[dict[str, str]]:
    return page.eval_on_selector_all("#final .rank", """(rows) => rows.map((r) => ({unit: r.dataset.unit,
        place: r.dataset.place, points: r.querySelector(".pts").dataset.points,
        names: Array.from(r.querySelectorAll(".nm")).map((n) => n.title)}))""")


def check_final(page, state: dict[str, Any], lang: str, shot: str | None = None) -> None:
    """The standings of ``state`` on ``page``: winner first, every unit with its score, the
    language's own words, nothing too wide, no name split. ``shot``: a screenshot's file name."""
    page.wait_for_function(f"document.body.dataset.version === '{state['version']}'", timeout=5000)
    page.wait_for_selector("#final:not([hidden]) .rank")
    rows = standings(page)
    winner = state["winners"][0]
    assert rows[0]["unit"] == winner and rows[0]["place"] == "1"
    assert [r["unit"] for r in rows][1:] == sorted((u for u in state["players"] if u != winner),
                                                   key=lambda u: (-state["scores"][u], state["players"].index(u)))
    assert {r["unit"]: int(r["points"]) for r in rows} == state["scores"]
    assert all(r["place"] != "1" for r in rows[1:]), "one winner: nobody else is first"
    detail = state["detail"]
    for r in rows:  # who stands behind each unit: a side's players, a team's members
        if detail.get("teams"):
            assert r["names"] == [" + ".join(detail["teams"][r["unit"]])]
        elif detail.get("sides"):
            assert r["names"] == [r["unit"], *detail["sides"][r["unit"]]["players"]]
        else:
            assert r["names"] == [r["unit"]]
    t, english = texts(lang), texts("en")
    card = page.inner_text("#final")
    for key in NEW_KEYS:
        assert t[key] in card, (lang, key)
        if lang != "en":
            assert english[key] not in card, (lang, key, "English left")
    assert page.get_attribute("#final a.newgame", "href") == "/setup"
    assert page.locator("#final button.rematch").count() == 1
    if shot:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / shot), full_page=True)
    wide = page.evaluate(TOO_WIDE)
    assert not wide, "\n".join(wide)
    split = page.evaluate(SPLIT_NAMES)
    assert not split, "\n".join(split)


@browser_only
@pytest.mark.parametrize("name", list(GAMES))
def test_final_standings_in_every_language_and_rematch_from_the_controller(browser, server, name):
    final = play_to_the_end(server.port, name)
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    for lang, locale in LANGS:
        for path, page_name in (("/", "scoreboard"), ("/controller", "controller")):
            page = phone(browser, f"{server.url}{path}?lang={lang}", errors, locale)
            check_final(page, final, lang, f"{name}-final-{page_name}-{lang}.png")
            page.context.close()
    # the controller of a finished game offers nothing but what comes next
    ctl = phone(browser, server.url + "/controller", errors)
    check_final(ctl, final, "en")
    assert ctl.locator("#controls button").count() == 0

    ctl.click("#final button.rematch")
    ctl.wait_for_selector("#final", state="hidden", timeout=5000)
    state = get(server.port, "/api/state")
    assert state["game_id"] == final["game_id"] + 1 and state["seq"] == 1 and not state["finished"]
    assert state["game"] == name and state["players"] == final["players"]
    assert state["detail"].get("options") == final["detail"].get("options")
    assert state["detail"].get("teams") == final["detail"].get("teams")
    # the new game's log starts with the finished game's new_game, word for word
    first = get(server.port, f"/api/games/{state['game_id']}/log.jsonl")[0]
    assert {k: v for k, v in first.items() if k not in ("at", "source")} == GAMES[name] == final["new_game"]
    assert ctl.locator("#controls button").count() >= 1, "the new game is played on the controller at once"
    ctl.screenshot(path=str(SHOTS / f"{name}-rematch-controller.png"), full_page=True)
    assert errors == []


@browser_only
def test_rematch_needs_the_pin_and_counts_once(browser, server):
    """A phone without the PIN: the controller asks for it in its form and starts nothing; the
    scoreboard asks in a field beside Rematch, never a prompt. A second Rematch made on the finished game (another phone, a
    late tap) is refused: one new game, not two."""
    final = play_to_the_end(server.port, "exact21")
    errors: list[str] = []
    ctl = phone(browser, server.url + "/controller?lang=hu", errors, "hu-HU")
    check_final(ctl, final, "hu")
    ctl.evaluate("C.pin = null")  # as on a phone: the page was not served to the Pi itself
    ctl.click("#final button.rematch")
    ctl.wait_for_selector("#login:not([hidden])")
    assert texts("hu")["code_PIN_REQUIRED"] in ctl.inner_text("#toast")
    assert get(server.port, "/api/state")["game_id"] == final["game_id"], "nothing started without the PIN"

    ctl.evaluate("C.render = () => {}")  # it keeps the finished game, as a phone the stream has not reached yet
    board = phone(browser, server.url + "/?lang=es", errors, "es-ES")  # a second phone, same finished game
    check_final(board, final, "es")
    board.evaluate("C.pin = null")
    asked: list[str] = []
    board.on("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    board.click("#final button.rematch")  # refused: the PIN field beside Rematch says why
    board.wait_for_selector("#final .pin-row:not([hidden])")
    assert texts("es")["code_PIN_REQUIRED"] in board.inner_text("#toast")
    assert board.inner_text("#final .pin-row label") == texts("es")["pin_enter"]
    board.fill("#final .pin-row input", PIN)
    board.click("#final button.rematch")
    board.wait_for_selector("#final", state="hidden", timeout=5000)
    assert asked == [], "no native prompt"
    assert texts("es")["rematch_started"] in board.inner_text("#toast")
    state = get(server.port, "/api/state")
    assert state["game_id"] == final["game_id"] + 1 and state["players"] == final["players"]
    board.wait_for_selector('#board [data-side="Blues"]')
    board.screenshot(path=str(SHOTS / "exact21-rematch-scoreboard.png"), full_page=True)

    # the controller, still showing the finished game, logs in and taps Rematch: too late
    ctl.fill("#pin-input", PIN)
    ctl.click("#login button[type=submit]")
    ctl.wait_for_selector("#login", state="hidden")
    ctl.click("#final button.rematch")
    ctl.wait_for_function("(t) => document.querySelector('#toast').textContent.includes(t)",
                          arg=texts("hu")["code_STALE"], timeout=3000)
    assert get(server.port, "/api/state")["game_id"] == final["game_id"] + 1, "one rematch, not two"
    assert errors == []


def test_the_state_carries_the_new_game_once_finished(client):
    """Once finished, the state names the event that started the game (without when and from
    where): what Rematch sends again. Not before, and not after an undo reopens the game."""
    headers = {"X-Table-Pin": PIN}
    r = client.post("/api/games", json={**GAMES["exact21"], "source": "cli", "at": "2024-05-01T20:15:00Z"}, headers=headers)
    assert r.status_code == 201 and "new_game" not in r.json
    for event in finishing_events(GAMES["exact21"]):
        r = client.post("/api/events", json=event, headers=headers)
        assert r.status_code == 200
    assert r.json["finished"] and r.json["new_game"] == GAMES["exact21"]
    assert client.get("/api/state").json["new_game"] == GAMES["exact21"]
    assert "new_game" not in client.post("/api/undo", json={}, headers=headers).json
