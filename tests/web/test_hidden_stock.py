"""Stack 21's virtual deck: the stock's face-down cards never leave the server until drawn (issue
24). The page used to draw the deal's seed itself (Math.random) and send it: the dealing phone,
and anyone who saw the request, knew every card of the stock. Real Chromium at 390 x 844 against
a real server on loopback: the controller deals, the table draws the seed, and nothing a phone
receives (the page's own requests and answers, the stream, every API a phone may read without
the PIN) holds the seed or the stock; a draw still takes the stock's top card."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from typing import Any

import pytest

from companion.games import deck
from tests.web.conftest import CHROMIUM, PIN, phone
from tests.web.test_game_over import post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

PLAYERS = ["Ann", "Bea"]

# What the page sends and receives: each request's body and each answer's text (fetch), and each
# state the stream brings (EventSource), recorded in the page as it happens.
RECORD = """(() => {
  window.__sent = []; window.__got = [];
  const send = window.fetch;
  window.fetch = async (path, init) => {
    if (init && typeof init.body === "string") window.__sent.push(init.body);
    const r = await send(path, init);
    r.clone().text().then((t) => window.__got.push(t), () => {});
    return r;
  };
  const Source = window.EventSource;
  window.EventSource = class extends Source {
    constructor(url, opts) { super(url, opts); this.addEventListener("state", (e) => window.__got.push(e.data)); }
  }; })();"""


def read(port: int, path: str) -> tuple[int, str]:
    """A GET as any phone on the Wi-Fi makes it, without the PIN: status and body."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def first_streamed(port: int) -> str:
    """The state the stream sends a phone as it connects."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stream", timeout=5) as r:
        lines = []
        while not lines or lines[-1] != "":
            lines.append(r.readline().decode().rstrip("\n"))
    return "\n".join(lines)


def leaks(texts: list[str], seed: int, stock: list[str]) -> list[str]:
    """Where a text names the seed or runs of the stock in order (either way), or a field that
    could carry them (``seed``, ``stock``), or a legal draw that names its face-down card (a card
    once drawn is no secret: ``detail.last`` names it)."""
    out = []
    runs = [json.dumps(stock[i:i + 4], separators=(",", ":"))[1:-1] for i in range(len(stock) - 3)]
    runs += [json.dumps(stock[i:i + 4][::-1], separators=(",", ":"))[1:-1] for i in range(len(stock) - 3)]

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for a in value.get("legal") or []:
                if isinstance(a, dict) and a.get("type") == "draw" and a.get("from") != "upcard" and "card" in a:
                    out.append(f"a legal draw naming its card in {where}")
            for k, v in value.items():
                if k in ("seed", "stock"):
                    out.append(f"'{k}' in {where}")
                walk(v, where)
        elif isinstance(value, list):
            for v in value:
                walk(v, where)

    for text in texts:
        where = text[:60]
        if str(seed) in text:
            out.append(f"the seed in {where}")
        out += [f"the stock's run {run} in {where}" for run in runs if run in text.replace(" ", "")]
        for part in text.split("data: ")[1:] if text.startswith("retry") else [text]:
            try:
                walk(json.loads(part.split("\n\n")[0]), where)
            except ValueError:
                pass
    return out


def test_the_table_draws_the_seed_and_no_phone_sees_the_stock(browser, server):
    start = post(server.port, "/api/games", {"type": "new_game", "game": "stack21", "players": PLAYERS})
    table = server.app.extensions["companion"].table
    errors: list[str] = []
    ctl = phone(browser, "about:blank", errors)
    ctl.context.add_init_script(RECORD)
    ctl.goto(f"{server.url}/controller#pin={PIN}")
    board = phone(browser, "about:blank", errors)
    board.context.add_init_script(RECORD)
    board.goto(f"{server.url}/")
    ctl.wait_for_function(f"document.body.dataset.version === '{start['version']}'")
    board.wait_for_function(f"document.body.dataset.version === '{start['version']}'")

    ctl.click("button[data-virtual-deal]")
    board.wait_for_selector("#board .s21-round .s21-upcard [data-card]")
    dealt = table.export(start["game_id"])[-1]
    assert dealt["type"] == "deal"
    seed = dealt["seed"]  # drawn by the table: the page sent none
    assert isinstance(seed, int) and not isinstance(seed, bool)
    cards = deck.deal(PLAYERS, dealt["dealer"], table.game.state.options, random.Random(seed))
    stock = cards["stock"]
    assert table.game.state.round.stock == stock and len(stock) > 8
    sent = ctl.evaluate("window.__sent")
    deal_sent = [json.loads(b) for b in sent if json.loads(b).get("type") == "deal"]
    assert deal_sent and all("seed" not in d for d in deal_sent), deal_sent

    def everything() -> list[str]:
        texts = ctl.evaluate("window.__got") + board.evaluate("window.__got") + ctl.evaluate("window.__sent")
        for path in ("/api/state", "/api/pending", "/api/games", f"/api/games/{start['game_id']}/scores"):
            status, body = read(server.port, path)
            assert status == 200, (path, status)
            texts.append(body)
        for path in (f"/api/games/{start['game_id']}/log.jsonl", f"/api/games/{start['game_id']}/log.jsonl?raw=1"):
            status, body = read(server.port, path)
            assert status == 409 and "CARDS_HIDDEN" in body, (path, status)
            texts.append(body)
        texts.append(first_streamed(server.port))
        return texts

    found = everything()
    assert len(found) > 8
    assert leaks(found, seed, stock) == []

    # drawing still works: one tap, and the card in hand is the stock's top card
    version = table.state()["version"]
    player = table.state()["detail"]["to_act_player"]
    ctl.wait_for_function(f"document.body.dataset.version === '{version}'")
    ctl.click('#controls button[data-action="draw"][data-from="stock"]')
    board.wait_for_function(f"document.body.dataset.version !== '{version}'")
    board.wait_for_selector("#board .s21-round .s21-upcard + .s21-upcard [data-card]")
    assert board.locator("#board .s21-round .s21-upcard + .s21-upcard [data-card]").get_attribute("data-card") == stock[0]
    hand = table.state()["detail"]["hand"]
    assert (hand["player"], hand["card"]) == (player, stock[0])
    assert leaks(everything(), seed, stock[1:]) == []

    # a deal that names its seed (replays, tests) is stored as given
    post(server.port, "/api/undo", {})
    post(server.port, "/api/undo", {})
    post(server.port, "/api/events", {"type": "deal", "dealer": dealt["dealer"], "seed": 424242})
    assert table.export(start["game_id"])[-1]["seed"] == 424242
    assert table.game.state.round.stock == deck.deal(PLAYERS, dealt["dealer"], table.game.state.options,
                                                     random.Random(424242))["stock"]
    assert errors == []


def test_a_second_tap_of_the_virtual_deal_is_stale_and_each_deal_gets_its_own_seed(client):
    """The table draws the seed after it has looked for a repeated tap: the same deal sent twice
    from one board is STALE (as any double tap), though the stored deal holds a seed the phone
    never sent; and two deals are not dealt from the same seed."""
    headers = {"X-Table-Pin": PIN}
    started = client.post("/api/games", json={"type": "new_game", "game": "stack21", "players": PLAYERS}, headers=headers)
    seen = started.json["rev"]
    deal = {"type": "deal", "dealer": "Bea"}
    first = client.post("/api/events", json=deal, headers={**headers, "X-Table-Rev": seen})
    assert first.status_code == 200 and "seed" not in json.dumps(first.json)
    again = client.post("/api/events", json=deal, headers={**headers, "X-Table-Rev": seen})
    assert (again.status_code, again.json["code"]) == (409, "STALE")
    table = client.application.extensions["companion"].table
    seeds = [table.export(started.json["game_id"])[-1]["seed"]]
    assert client.post("/api/undo", headers=headers).status_code == 200
    assert client.post("/api/events", json=deal, headers=headers).status_code == 200
    seeds.append(table.export(started.json["game_id"])[-1]["seed"])
    assert seeds[0] != seeds[1] and all(0 <= s < 2**53 for s in seeds)
