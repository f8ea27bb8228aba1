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
