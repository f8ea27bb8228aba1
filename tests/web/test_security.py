"""What a guest on the Wi-Fi, or a page of another site a phone has open, can do to the table:
strict JSON in, short names, writes only as JSON from the table's own pages, pages no other site
can frame, and a PIN that cannot be found by guessing."""

from __future__ import annotations

import json

import pytest

from tests.web.conftest import DICE_A, DICE_B, NEW_EXACT21, PIN

H = {"X-Table-Pin": PIN}


def post(client, path, body, headers=None, content_type="application/json"):
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(path, data=data, headers={**H, **(headers or {})}, content_type=content_type)


def ready(client) -> dict:
    assert post(client, "/api/games", NEW_EXACT21).status_code == 201
    post(client, "/api/events", DICE_A)
    return post(client, "/api/events", DICE_B).json


# -- strict JSON, short names -------------------------------------------------------------------

@pytest.mark.parametrize("number", ["1e400", "-1e400", "1E999"])
def test_a_number_beyond_json_is_refused_and_the_export_stays_json(client, number):
    """1e400 was stored as Infinity: the export was no longer JSON and `companion replay`
    refused it."""
    ready(client)
    raw = '{"type": "throw", "side": "A", "cup": "yellow", "note": ' + number + "}"
    r = post(client, "/api/events", raw)
    assert r.status_code == 400 and r.json["code"] == "BAD_JSON"
    assert client.get("/api/state").json["seq"] == 3
    for line in client.get("/api/games/1/log.jsonl?raw=1").get_data(as_text=True).splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in the export"))


@pytest.mark.parametrize("new_game", [
    {"type": "new_game", "game": "exact21", "sides": [{"name": "A" * 41}, {"name": "B"}]},
    {"type": "new_game", "game": "exact21", "sides": [{"name": "A", "players": ["x" * 60_000]}, {"name": "B"}]},
    {"type": "new_game", "game": "twentyone", "players": [{"name": "Ann" * 20, "sheet": "A"}, {"name": "Bea", "sheet": "B"}]},
    {"type": "new_game", "game": "exactly", "players": ["Ann", "B" * 41]},
    {"type": "new_game", "game": "stack21", "players": ["P1", "P2", "P3", "Q" * 41],
     "teams": [["P1", "P3"], ["P2", "Q" * 41]]},
])
def test_a_name_over_40_characters_is_refused_with_a_sentence(client, new_game):
    r = post(client, "/api/games", new_game)
    assert r.status_code == 422 and r.json["code"] == "BAD_VALUE"
    assert "at most 40 characters" in r.json["message"]
    assert client.get("/api/state").json["game"] is None


def test_a_name_of_40_characters_is_fine(client):
    game = {**NEW_EXACT21, "sides": [{"name": "A" * 40, "players": ["Ő" * 40]}, {"name": "B"}]}
    assert post(client, "/api/games", game).status_code == 201


# -- cross-site writes, frames ------------------------------------------------------------------

def test_a_body_not_sent_as_json_is_refused(client):
    """A form on another site can send text/plain without asking the server first."""
    ready(client)
    throw = json.dumps({"type": "throw", "side": "A", "cup": "yellow"})
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
        r = post(client, "/api/events", throw, content_type=kind)
        assert (r.status_code, r.json["code"]) == (415, "NOT_JSON"), kind
    assert client.get("/api/state").json["seq"] == 3
    assert post(client, "/api/undo", "", content_type="").status_code == 200, "no body needs no type"


def test_a_page_of_another_origin_cannot_change_the_game_with_the_phones_cookie(client):
    """The phone logged in; a page on another port of the same host posts with its cookie."""
    ready(client)
    assert client.post("/api/login", json={"pin": PIN}).status_code == 200
    throw = {"type": "throw", "side": "A", "cup": "yellow"}
    for origin in ("http://localhost:8080", "http://evil.example", "null"):
        r = client.post("/api/events", json=throw, headers={"Origin": origin})
        assert (r.status_code, r.json["code"]) == (403, "BAD_ORIGIN"), origin
    r = client.post("/api/events", json=throw, headers={"Sec-Fetch-Site": "same-site"})
    assert (r.status_code, r.json["code"]) == (403, "BAD_ORIGIN")
    assert client.get("/api/state").json["seq"] == 3
    r = client.post("/api/events", json=throw, headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200, "the table's own page"
    assert client.post("/api/undo").status_code == 200, "a script sends no Origin"


@pytest.mark.parametrize("path", ["/", "/controller", "/setup", "/history", "/health", "/api/state"])
def test_no_page_can_be_framed_by_another_site(client, path):
    r = client.get(path)
    assert r.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]


# -- the PIN ------------------------------------------------------------------------------------

class Clock:
    """Time that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_10000_guesses_from_250_addresses_do_not_find_the_pin_in_a_day():
    """The attacker sends the next guess from the next of 250 addresses as soon as the table lets
    it (a 429's Retry-After is waited, to the second). With a lockout per address only, 250
    addresses found a four-digit PIN in 7 minutes."""
    import random

    from companion.web.auth import PinGuard, generate_pin

    pin = f"{random.Random(23).randrange(10**6):06d}"
    clock = Clock()
    guard = PinGuard(pin, clock=clock)
    start = clock.now
    sent = checked = 0
    found = False
    guesses = (f"{n:06d}" for n in range(10**6))
    guess = next(guesses)
    while sent < 10_000 and clock.now - start < 24 * 3600:
        verdict = guard.check(guess, f"10.0.{sent % 250 // 250}.{sent % 250}")
        sent += 1
        if verdict.code == "RATE_LIMITED":
            clock.now += verdict.retry_after
            continue
        checked += 1
        if verdict.ok:
            found = True
            break
        guess = next(guesses)
        clock.now += 0.01  # a fast client on the Wi-Fi
    hours = (clock.now - start) / 3600
    print(f"{sent} guesses sent, {checked} checked in {hours:.1f} h")
    assert not found
    assert clock.now - start >= 24 * 3600 or sent >= 10_000
    assert checked <= 1_500, "about one guess a minute: a day tries under 0.15 % of a million PINs"
    assert len(generate_pin()) == 6


def test_the_delay_grows_from_a_few_typos_to_a_minute_and_is_forgiven():
    from companion.web.auth import FORGIVE_SECONDS, FREE_WRONG, MAX_DELAY_SECONDS, PinGuard

    clock = Clock()
    guard = PinGuard("246810", clock=clock)
    for n in range(FREE_WRONG):  # a few typos at the table cost nothing
        assert guard.check("000000", f"10.0.0.{n}").code == "BAD_PIN"
    waits = []
    for n in range(12):
        assert guard.check("000000", f"10.0.1.{n}").code == "BAD_PIN"
        verdict = guard.check("246810", "10.0.2.1")  # even the right PIN waits: it is not looked at
        assert verdict.code == "RATE_LIMITED"
        waits.append(verdict.retry_after)
        clock.now += verdict.retry_after
    assert waits[:4] == [1, 2, 4, 8] and waits[-1] == MAX_DELAY_SECONDS
    assert guard.check("246810", "10.0.2.1").ok
    clock.now += 20 * FORGIVE_SECONDS  # a quiet evening: the count falls back
    assert guard.check("000000", "10.0.3.1").code == "BAD_PIN"
    assert guard.check("246810", "10.0.3.2").ok


def test_a_phone_that_logged_in_plays_on_while_someone_guesses(app):
    """The slow-down is for PINs, not for phones already in: their session is a random id the
    server keeps, and the cookie never carries the PIN."""
    from companion.web.auth import PinGuard

    clock = Clock()
    app.extensions["companion"].guard = PinGuard(PIN, clock=clock)
    player, guest, newcomer = app.test_client(), app.test_client(), app.test_client()
    assert player.post("/api/login", json={"pin": PIN}).status_code == 200
    cookie = player.get_cookie("session").value
    assert PIN not in cookie
    payload = app.session_interface.get_signing_serializer(app).loads(cookie)
    assert list(payload) == ["sid"] and PIN not in json.dumps(payload)
    for n in range(40):
        guest.post("/api/login", json={"pin": f"{n:06d}"}, environ_base={"REMOTE_ADDR": f"10.1.0.{n}"})
    assert player.post("/api/games", json=NEW_EXACT21).status_code == 201
    r = newcomer.post("/api/login", json={"pin": PIN}, environ_base={"REMOTE_ADDR": "10.1.1.1"})
    assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 60
    clock.now += int(r.headers["Retry-After"])
    assert newcomer.post("/api/login", json={"pin": PIN}, environ_base={"REMOTE_ADDR": "10.1.1.1"}).status_code == 200
    assert player.post("/api/logout").status_code == 200
    assert player.post("/api/undo").json["code"] == "PIN_REQUIRED"


def test_the_controller_qr_is_no_free_pin_oracle(app):
    """GET /api/qr/controller.svg answered a PIN in X-Table-Pin without counting it: unlimited
    guesses. Now it counts like any other."""
    client = app.test_client()
    codes = [client.get("/api/qr/controller.svg", headers={"X-Table-Pin": f"{n:06d}"},
                        environ_base={"REMOTE_ADDR": "10.2.0.1"}).status_code for n in range(8)]
    assert codes[:5] == [403] * 5 and set(codes[5:]) == {429}


STACK21 = {"type": "new_game", "game": "stack21", "players": ["Ann", "Bea"], "options": {"target": 5}}


@pytest.mark.parametrize("deal", [{"seed": 424242},
                                  {"upcard": "7", "stock": ["4", "10", "3"],
                                   "hands": {"Ann": ["A", "6", "10", "9"], "Bea": ["5", "5", "8", "2"]}}])
def test_the_log_of_a_game_in_play_does_not_hand_out_the_stock(client, deal):
    """Stack 21 with a stock the companion holds: the state never names its face-down cards, but
    the game's log, which anyone on the Wi-Fi could download without the PIN (History links it),
    held the virtual deck's seed (replayed, every card of the stock in order) or the stock typed
    in. While the game is played its log is now refused (409 CARDS_HIDDEN, raw or not) and
    History is told not to link it; once the game is over it is served whole, as before."""
    from companion.games import get_engine
    from companion.games.base import Game
    from tests.web.test_game_over import finishing_events

    assert post(client, "/api/games", STACK21).status_code == 201
    assert post(client, "/api/events", {"type": "deal", "dealer": "Bea", **deal}).status_code == 200
    for path in ("/api/games/1/log.jsonl", "/api/games/1/log.jsonl?raw=1"):
        for headers in ({}, {"X-Table-Pin": PIN}):
            r = client.get(path, headers=headers)
            assert r.status_code == 409 and r.json["code"] == "CARDS_HIDDEN", (path, r.status_code)
            assert "424242" not in r.get_data(as_text=True) and '"10", "3"' not in r.get_data(as_text=True)
    listed = client.get("/api/games").json["games"][0]
    assert listed["hidden_cards"] is True
    # a Stack 21 game played to its end (a new one, each deal a virtual deck's seed): served whole;
    # the first one, left unfinished, stays refused
    events = finishing_events(STACK21)
    assert any("seed" in e for e in events)
    assert post(client, "/api/games?replace=1", STACK21).status_code == 201
    assert client.get("/api/games/1/log.jsonl").status_code == 409
    state = None
    for event in events:
        r = post(client, "/api/events", event)
        assert r.status_code == 200, r.json
        state = r.json
    assert state["finished"]
    r = client.get(f"/api/games/{state['game_id']}/log.jsonl")
    assert r.status_code == 200
    served = [json.loads(line) for line in r.get_data(as_text=True).splitlines()]
    engine = get_engine("stack21")
    game = Game(engine, served[0], engine.new_game(served[0]))
    for e in served[1:]:
        game.push(e)
    assert game.view()["scores"] == state["scores"]
    assert not [g for g in client.get("/api/games").json["games"] if g["id"] == state["game_id"]][0]["hidden_cards"]
