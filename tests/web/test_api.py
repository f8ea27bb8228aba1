"""The JSON API through Flask's test client, on a real SQLite table.

Errors are ``{"code", "message"}`` with a 4xx status; bad input never gets a 5xx.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from companion.games.replay import read_jsonl, replay
from companion.web.auth import MAX_WRONG
from tests.web.conftest import DICE_A, DICE_B, NEW_EXACT21, PIN

H = {"X-Table-Pin": PIN}
PHONE = {"REMOTE_ADDR": "192.168.1.50"}


def post(client, path: str, body: Any = None, pin: str | None = PIN, headers: dict | None = None, **kw):
    headers = {**({"X-Table-Pin": pin} if pin is not None else {}), **(headers or {})}
    data = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
    return client.post(path, data=data, headers=headers, content_type="application/json", **kw)


def started(client) -> dict:
    r = post(client, "/api/games", NEW_EXACT21)
    assert r.status_code == 201, r.json
    return r.json


def ready(client) -> dict:
    started(client)
    post(client, "/api/events", DICE_A)
    return post(client, "/api/events", DICE_B).json


def assert_error(r, status: int, code: str) -> None:
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.json["code"] == code
    assert isinstance(r.json["message"], str) and r.json["message"]


# -- reading ------------------------------------------------------------------------------------

def test_state_before_any_game_says_so(client):
    r = client.get("/api/state")
    assert r.status_code == 200
    assert r.json["game"] is None and r.json["pending"] == []


def test_state_is_the_replay_format_plus_table_fields(client):
    ready(client)
    state = client.get("/api/state").json
    for key in ("game", "players", "to_act", "finished", "winners", "scores", "rejected", "detail"):
        assert key in state
    assert state["game"] == "exact21" and state["players"] == ["A", "B"]
    assert state["seq"] == 3 and state["pending"] == []
    assert {"type": "throw", "side": "A", "cup": "yellow"} in state["legal"]
    assert state["detail"]["thrower"] == "Ann"


def test_reading_needs_no_pin(client):
    ready(client)
    for path in ("/api/state", "/api/pending", "/api/games", "/api/games/1/log.jsonl", "/api/health"):
        assert client.get(path, environ_base=PHONE).status_code == 200, path


# -- the PIN ------------------------------------------------------------------------------------

def test_change_without_pin_is_refused_and_changes_nothing(client):
    assert_error(post(client, "/api/games", NEW_EXACT21, pin=None), 403, "PIN_REQUIRED")
    assert_error(post(client, "/api/games", NEW_EXACT21, pin="0000"), 403, "BAD_PIN")
    assert client.get("/api/state").json["game"] is None
    assert client.get("/api/games").json["games"] == []


def test_every_changing_endpoint_needs_the_pin(client):
    ready(client)
    proposal = client.application.extensions["companion"].table.propose(
        {"type": "throw", "side": "A", "cup": "red"})
    for path in ("/api/games", "/api/events", "/api/undo", f"/api/pending/{proposal.id}/confirm",
                 f"/api/pending/{proposal.id}/reject", "/api/games/1/resume"):
        assert_error(post(client, path, {}, pin="9999", environ_base={"REMOTE_ADDR": f"10.0.0.{len(path)}"}),
                     403, "BAD_PIN")
    assert client.get("/api/state").json["seq"] == 3
    assert len(client.get("/api/pending").json["pending"]) == 1


def test_wrong_pins_are_rate_limited_per_device(client):
    for _ in range(MAX_WRONG):
        assert_error(post(client, "/api/games", NEW_EXACT21, pin="1111", environ_base=PHONE), 403, "BAD_PIN")
    r = post(client, "/api/games", NEW_EXACT21, pin=PIN, environ_base=PHONE)
    assert_error(r, 429, "RATE_LIMITED")
    assert int(r.headers["Retry-After"]) >= 1
    # another phone at the table is not locked out
    assert post(client, "/api/games", NEW_EXACT21, environ_base={"REMOTE_ADDR": "192.168.1.51"}).status_code == 201


def test_login_once_then_the_session_stands_for_the_pin(client):
    ready(client)
    assert_error(post(client, "/api/login", {"pin": "1"}, pin=None), 403, "BAD_PIN")
    assert post(client, "/api/login", {"pin": PIN}, pin=None).json == {"ok": True}
    r = post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"}, pin=None)
    assert r.status_code == 200 and r.json["scores"]["A"] == 5
    post(client, "/api/logout", pin=None)
    assert_error(post(client, "/api/undo", pin=None), 403, "PIN_REQUIRED")


def test_login_body_is_checked(client):
    assert_error(post(client, "/api/login", {"pin": PIN, "remember": True}, pin=None), 400, "UNKNOWN_FIELD")
    assert_error(post(client, "/api/login", {"pin": 4321}, pin=None), 400, "BAD_JSON")


# -- bad input: a clear 4xx, never a 5xx ---------------------------------------------------------

@pytest.mark.parametrize("raw, code", [
    ("{not json", "BAD_JSON"),
    ("[1, 2]", "BAD_JSON"),
    ('"dice"', "BAD_JSON"),
    ("", "BAD_JSON"),
    ('{"type": "throw", "side": "A", "cup": "red", "note": NaN}', "BAD_JSON"),
    ("\xff\xfe", "BAD_JSON"),
    ("[" * 30_000 + "]" * 30_000, "BAD_JSON"),
    ('{"type": "throw", "side": "A", "cup": "red", "x": ' + "[" * 40 + "]" * 40 + "}", "BAD_JSON"),
])
def test_bad_json_is_400(client, raw, code):
    ready(client)
    assert_error(post(client, "/api/events", raw), 400, code)
    assert client.get("/api/state").json["seq"] == 3


def test_huge_body_is_413(client):
    started(client)
    big = json.dumps({"type": "throw", "side": "A", "cup": "red", "note": "x" * 200_000})
    assert_error(post(client, "/api/events", big), 413, "TOO_LARGE")


@pytest.mark.parametrize("event, message", [
    ({"type": "jump", "side": "A"}, "unknown event type 'jump'"),
    ({"type": "throw", "side": "A"}, "needs the field 'cup'"),
    ({"type": "throw", "side": "A", "cup": 3}, "'cup' must be a string"),
    ({"side": "A", "cup": "red"}, "'type'"),
])
def test_malformed_events_are_400_bad_event(client, event, message):
    ready(client)
    r = post(client, "/api/events", event)
    assert_error(r, 400, "BAD_EVENT")
    assert message in r.json["message"]


def test_no_5xx_for_any_bad_body_on_any_endpoint(client):
    ready(client)
    table = client.application.extensions["companion"].table
    pid = table.propose({"type": "throw", "side": "A", "cup": "red"}).id
    bodies = ["", "null", "0", "[]", "{}", '{"type": null}', '{"type": "new_game"}', '{"x": 1}',
              '{"type": "throw", "side": ["A"], "cup": {}}', '{"type": "dice", "side": "A", "values": {"blue": "3"}}',
              '{"type": "new_game", "game": "exact21", "sides": "AB"}', '{"type": "new_game", "game": "chess"}',
              '{"type": "new_game", "game": "exact21", "sides": [1, 2]}', "\x00"]
    paths = ["/api/games", "/api/events", "/api/undo", f"/api/pending/{pid}/confirm", "/api/pending/999/reject",
             "/api/login", "/api/games/1/resume", "/api/games/7/resume"]
    for path in paths:
        for raw in bodies:
            r = post(client, path, raw)
            assert 400 <= r.status_code < 500 or r.status_code in (200, 201), (path, raw, r.status_code)
            if r.status_code >= 400:
                assert set(r.json) == {"code", "message"}


# -- unknown fields -----------------------------------------------------------------------------

def test_unknown_event_fields_are_kept_and_ignored_by_the_rules(client):
    """EVENTS.md: events may be extended with optional fields; the engine ignores them."""
    ready(client)
    r = post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow", "note": "bounced twice"})
    assert r.status_code == 200 and r.json["scores"]["A"] == 5
    log = client.get("/api/games/1/log.jsonl").get_data(as_text=True).splitlines()
    assert json.loads(log[-1])["note"] == "bounced twice"


def test_unknown_fields_in_our_own_bodies_are_400(client):
    ready(client)
    post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"})
    assert_error(post(client, "/api/undo", {"steps": 2}), 400, "UNKNOWN_FIELD")
    assert client.get("/api/state").json["scores"]["A"] == 5


# -- games, events, rules -----------------------------------------------------------------------

def test_start_game_stores_it_and_lists_it(client):
    state = started(client)
    assert state["game_id"] == 1 and state["to_act"] == ["A", "B"]
    games = client.get("/api/games").json
    assert games["current"] == 1 and games["games"][0]["game"] == "exact21"


def test_start_game_takes_only_new_game(client):
    r = post(client, "/api/games", {"type": "throw", "side": "A", "cup": "red"})
    assert_error(r, 400, "BAD_EVENT")


def test_E1_one_side_starts_nothing(client):
    r = post(client, "/api/games", {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}]})
    assert_error(r, 422, "BAD_VALUE")
    assert client.get("/api/games").json["games"] == []


def test_unknown_option_starts_nothing(client):
    r = post(client, "/api/games", {**NEW_EXACT21, "options": {"silver_rule": "golden"}})
    assert_error(r, 422, "BAD_VALUE")


def test_event_before_any_game_is_409_no_game(client):
    assert_error(post(client, "/api/events", {"type": "throw", "side": "A", "cup": "red"}), 409, "NO_GAME")


def test_E2_dice_not_distinct_is_422_and_nothing_stored(client):
    started(client)
    r = post(client, "/api/events", {**DICE_A, "values": {"blue": 1, "red": 1, "green": 2, "yellow": 3}})
    assert_error(r, 422, "DICE_NOT_DISTINCT")
    assert client.get("/api/state").json["seq"] == 1


def test_E5_throw_out_of_turn_is_409(client):
    ready(client)
    r = post(client, "/api/events", {"type": "throw", "side": "B", "cup": "red"})
    assert_error(r, 409, "NOT_YOUR_TURN")
    assert "side A" in r.json["message"]


def test_E6_throw_before_dice_is_409(client):
    started(client)
    assert_error(post(client, "/api/events", {"type": "throw", "side": "A", "cup": "red"}), 409, "DICE_NOT_SET")


def play_to_the_end(client) -> dict:
    """A makes four yellows (4 x 5 = 20); the silver cup is then in effect (E10) and wins (E11, E12)."""
    ready(client)
    for side, cup in [("A", "yellow"), ("A", "yellow"), ("B", "miss"), ("A", "yellow"), ("A", "yellow"),
                      ("B", "miss")]:
        assert post(client, "/api/events", {"type": "throw", "side": side, "cup": cup}).status_code == 200
    state = client.get("/api/state").json
    assert state["detail"]["sides"]["A"]["silver_active"] is True
    return post(client, "/api/events", {"type": "throw", "side": "A", "cup": "silver"}).json


def test_E12_events_for_a_finished_game_are_409_game_over(client):
    final = play_to_the_end(client)
    assert final["finished"] and final["winners"] == ["A"] and final["scores"]["A"] == 21
    assert final["legal"] == []
    r = post(client, "/api/events", {"type": "throw", "side": "B", "cup": "red"})
    assert_error(r, 409, "GAME_OVER")
    assert client.get("/api/state").json["seq"] == final["seq"]


def test_undo_takes_back_the_last_event(client):
    ready(client)
    post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"})
    r = post(client, "/api/undo")
    assert r.status_code == 200 and r.json["scores"]["A"] == 0 and r.json["seq"] == 3
    assert r.json["detail"]["thrower"] == "Ann"


def test_undo_after_finish_reopens_the_game(client):
    play_to_the_end(client)
    r = post(client, "/api/undo")
    assert r.json["finished"] is False and r.json["scores"]["A"] == 20


def test_undo_with_nothing_to_undo_is_409(client):
    assert_error(post(client, "/api/undo"), 409, "NO_GAME")
    started(client)
    assert_error(post(client, "/api/undo"), 409, "NOTHING_TO_UNDO")


def test_undo_event_through_events_endpoint(client):
    ready(client)
    r = post(client, "/api/events", {"type": "undo"})
    assert r.status_code == 200 and r.json["seq"] == 2


# -- proposals ----------------------------------------------------------------------------------

def test_pending_confirm_applies_the_proposal(client):
    ready(client)
    table = client.application.extensions["companion"].table
    p = table.propose({"type": "throw", "side": "A", "cup": "red"}, evidence={"frames": 12})
    pending = client.get("/api/pending").json["pending"]
    assert [x["id"] for x in pending] == [p.id] and pending[0]["evidence"] == {"frames": 12}
    assert client.get("/api/state").json["pending"][0]["event"]["cup"] == "red"
    r = post(client, f"/api/pending/{p.id}/confirm")
    assert r.status_code == 200 and r.json["scores"]["A"] == 4 and r.json["pending"] == []
    assert json.loads(client.get("/api/games/1/log.jsonl").get_data(as_text=True).splitlines()[-1])["source"] == "camera"


def test_pending_reject_drops_it_and_changes_nothing(client):
    ready(client)
    table = client.application.extensions["companion"].table
    p = table.propose({"type": "throw", "side": "A", "cup": "red"})
    r = post(client, f"/api/pending/{p.id}/reject")
    assert r.status_code == 200 and r.json["pending"] == [] and r.json["scores"]["A"] == 0
    assert_error(post(client, f"/api/pending/{p.id}/confirm"), 404, "NO_SUCH_PROPOSAL")


def test_confirming_a_proposal_the_rules_refuse_is_409_and_drops_it(client):
    ready(client)
    table = client.application.extensions["companion"].table
    p = table.propose({"type": "throw", "side": "B", "cup": "red"})
    assert_error(post(client, f"/api/pending/{p.id}/confirm"), 409, "NOT_YOUR_TURN")
    assert client.get("/api/pending").json["pending"] == []


# -- export and history -------------------------------------------------------------------------

def test_export_is_a_log_that_replay_reads_to_the_same_state(client):
    ready(client)
    for cup in ("yellow", "red"):
        post(client, "/api/events", {"type": "throw", "side": "A", "cup": cup})
    post(client, "/api/undo")
    r = client.get("/api/games/1/log.jsonl")
    assert r.status_code == 200 and r.mimetype == "application/x-ndjson"
    assert "attachment" in r.headers["Content-Disposition"]
    final = replay(read_jsonl(r.get_data(as_text=True).splitlines(keepends=True)))
    state = client.get("/api/state").json
    assert final["scores"] == state["scores"] == {"A": 5, "B": 0}
    assert final["detail"] == state["detail"]


def test_export_of_a_game_that_does_not_exist_is_404(client):
    assert_error(client.get("/api/games/7/log.jsonl"), 404, "NO_SUCH_GAME")


def test_past_games_stay_listed_and_exportable(client):
    play_to_the_end(client)
    started(client)
    games = client.get("/api/games").json
    assert [g["id"] for g in games["games"]] == [2, 1] and games["current"] == 2
    old = client.get("/api/games/1/log.jsonl").get_data(as_text=True).splitlines()
    assert len(old) == 10


def test_scores_over_time_for_the_chart(client):
    ready(client)
    post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"})
    post(client, "/api/events", {"type": "throw", "side": "A", "cup": "blue"})
    r = client.get("/api/games/1/scores").json
    assert r["players"] == ["A", "B"]
    assert [p["scores"]["A"] for p in r["points"]] == [0, 0, 0, 5, 8]


# -- camera health, QR codes, pages ----------------------------------------------------------------

def test_health_without_camera(client):
    r = client.get("/api/health").json
    assert r["camera"] == {"configured": False, "message": "no camera configured"}
    assert_error(client.get("/api/frame.jpg"), 404, "NO_FRAME")


class CameraLoop:
    """What issue 8's live loop offers the web app: health() and latest_jpeg()."""

    def health(self) -> dict:
        return {"configured": True, "fps": 14.5, "markers": 4}

    def latest_jpeg(self) -> bytes | None:
        return b"\xff\xd8\xff\xd9"


def test_health_and_frame_with_a_camera_loop(tmp_path):
    from tests.web.conftest import make_app

    app = make_app(tmp_path)
    app.extensions["companion"].live = CameraLoop()
    client = app.test_client()
    assert client.get("/api/health").json["camera"]["fps"] == 14.5
    r = client.get("/api/frame.jpg")
    assert r.status_code == 200 and r.mimetype == "image/jpeg" and r.data.startswith(b"\xff\xd8")
    app.extensions["companion"].close()


def test_scoreboard_qr_is_svg_for_anyone(client):
    r = client.get("/api/qr/scoreboard.svg", environ_base=PHONE)
    assert r.status_code == 200 and r.mimetype == "image/svg+xml" and b"<svg" in r.data
    assert PIN not in r.headers["X-QR-Text"]


def test_controller_qr_carries_the_pin_only_for_the_table_device_or_pin_holders(client):
    assert_error(client.get("/api/qr/controller.svg", environ_base=PHONE), 403, "PIN_REQUIRED")
    r = client.get("/api/qr/controller.svg", headers=H, environ_base=PHONE)
    assert r.status_code == 200 and r.headers["X-QR-Text"].endswith("/controller#pin=" + PIN)
    assert client.get("/api/qr/controller.svg").status_code == 200  # loopback: the Pi's own screen


@pytest.mark.parametrize("path", ["/", "/controller", "/setup", "/history", "/health"])
def test_pages_are_served_without_any_cdn(client, path):
    r = client.get(path)
    assert r.status_code == 200 and r.mimetype == "text/html"
    html = r.get_data(as_text=True)
    assert "//cdn" not in html and "https://" not in html and "http://" not in html


def test_pin_is_on_the_table_device_page_only(client):
    assert f"PIN {PIN}" in client.get("/").get_data(as_text=True)
    phone_page = client.get("/", environ_base=PHONE).get_data(as_text=True)
    assert PIN not in phone_page


@pytest.mark.parametrize("accept, word", [("hu-HU,hu;q=0.9,en;q=0.5", "Eredményjelző"),
                                          ("es-ES,es;q=0.9", "Marcador"), ("de-DE", "Scoreboard")])
def test_language_follows_the_phone(client, accept, word):
    html = client.get("/", headers={"Accept-Language": accept}).get_data(as_text=True)
    assert word in html


def test_language_can_be_chosen_in_the_address(client):
    assert "Nueva partida" in client.get("/?lang=es", headers={"Accept-Language": "hu"}).get_data(as_text=True)


def test_every_language_has_every_english_key():
    from companion.web.i18n import LANGUAGES, texts

    english = set(texts("en"))
    for lang in LANGUAGES:
        own = json.loads((__import__("pathlib").Path(__file__).parents[2] / "companion/web/i18n" /
                          f"{lang}.json").read_text(encoding="utf-8"))
        missing = english - set(own) - {"app", "game_exact21", "game_twentyone", "game_exactly", "game_stack21",
                                        "stack_total", "fill_in"}
        assert not missing, (lang, sorted(missing))


def test_unknown_api_path_is_json_404(client):
    assert_error(client.get("/api/nothing"), 404, "NOT_FOUND")
    assert_error(client.get("/api/undo"), 405, "METHOD_NOT_ALLOWED")


def test_setup_page_lists_house_rules(client):
    html = client.get("/setup").get_data(as_text=True)
    assert "silver_rule" in html and "selective_reroll" in html and "cap_mode" in html and "zero_bonus_points" in html


# -- changes made on what the phone saw (X-Table-Rev) ------------------------------------------

def test_the_same_throw_sent_twice_on_the_same_rev_counts_once(client):
    """A double tap, or a phone resending after a slow answer: the second copy was made on a
    state the table has left, so it is refused (409 STALE) and changes nothing."""
    seen = ready(client)["rev"]
    throw = {"type": "throw", "side": "A", "cup": "yellow"}
    first = post(client, "/api/events", throw, headers={"X-Table-Rev": seen})
    assert first.status_code == 200 and first.json["scores"]["A"] == 5 and first.json["rev"] != seen
    assert_error(post(client, "/api/events", throw, headers={"X-Table-Rev": seen}), 409, "STALE")
    state = client.get("/api/state").json
    assert state["scores"]["A"] == 5 and state["seq"] == 4
    # made on the rev the answer gave, the next throw is taken
    r = post(client, "/api/events", {"type": "throw", "side": "A", "cup": "red"}, headers={"X-Table-Rev": first.json["rev"]})
    assert r.status_code == 200 and r.json["scores"]["A"] == 9


def test_every_player_enters_at_once_from_a_board_one_entry_behind(client):
    """Twenty One: after the roll every phone sends its player's entry made on the same board;
    each is a different event, so each is taken (only a copy of a stored one is STALE)."""
    post(client, "/api/games", {"type": "new_game", "game": "twentyone",
                                "players": [{"name": "Ann", "sheet": "A"}, {"name": "Bea", "sheet": "B"}]})
    rolled = post(client, "/api/events", {"type": "roll", "player": "Ann", "dice": {
        "white": 1, "black": 1, "red": 1, "blue": 1, "yellow": 1, "green": 1}}).json
    seen = rolled["rev"]
    ann = post(client, "/api/events", {"type": "strike", "player": "Ann"}, headers={"X-Table-Rev": seen})
    bea = post(client, "/api/events", {"type": "enter", "player": "Bea", "colors": ["white"]},
               headers={"X-Table-Rev": seen})
    assert ann.status_code == 200 and bea.status_code == 200, bea.json
    assert bea.json["detail"]["turn"] == 2
    assert_error(post(client, "/api/events", {"type": "strike", "player": "Ann"}, headers={"X-Table-Rev": seen}),
                 409, "STALE")


def test_ten_phones_pressing_undo_at_once_undo_one_event(server):
    """Real server, ten threads: each undo names the rev it saw; one undoes, nine are STALE."""
    import threading
    import urllib.error
    import urllib.request

    def call(path: str, body: dict | None = None, rev: str | None = None) -> tuple[int, dict]:
        headers = {"X-Table-Pin": PIN, "Content-Type": "application/json", **({"X-Table-Rev": rev} if rev else {})}
        req = urllib.request.Request(server.url + path, data=json.dumps(body or {}).encode(), headers=headers,
                                     method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as err:
            return err.code, json.load(err)

    call("/api/games", NEW_EXACT21)
    call("/api/events", DICE_A)
    call("/api/events", DICE_B)
    for side, cup in [("A", "yellow"), ("A", "red"), ("B", "blue"), ("A", "green"), ("A", "miss"), ("B", "red")]:
        status, state = call("/api/events", {"type": "throw", "side": side, "cup": cup})
        assert status == 200, state
    assert state["seq"] == 9
    answers: list[tuple[int, dict]] = []
    threads = [threading.Thread(target=lambda: answers.append(call("/api/undo", rev=state["rev"]))) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(status for status, _ in answers) == [200] + [409] * 9
    assert {a["code"] for status, a in answers if status == 409} == {"STALE"}
    status, now = call("/api/undo", rev="no such rev")
    assert status == 409
    with urllib.request.urlopen(server.url + "/api/state", timeout=5) as r:
        assert json.load(r)["seq"] == 8


def test_changes_without_a_rev_apply_to_the_current_state_as_before(client):
    """The camera, the button and scripts send no rev: nothing changes for them."""
    ready(client)
    assert post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"}).status_code == 200
    assert post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"}).json["scores"]["A"] == 10
    assert post(client, "/api/undo").json["scores"]["A"] == 5


def test_an_event_tagged_with_another_game_is_refused(client):
    ready(client)
    post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"})
    play = post(client, "/api/games?replace=1", NEW_EXACT21).json
    assert play["game_id"] == 2
    r = post(client, "/api/events", {**DICE_A, "game_id": 1})
    assert_error(r, 409, "STALE")
    assert "game 1" in r.json["message"] and "game 2" in r.json["message"]
    assert client.get("/api/state").json["seq"] == 1
    assert_error(post(client, "/api/events", {**DICE_A, "game_id": "2"}), 400, "BAD_EVENT")
    # the current game's id is accepted, and not stored in the event
    assert post(client, "/api/events", {**DICE_A, "game_id": 2}).status_code == 200
    assert "game_id" not in json.loads(client.get("/api/games/2/log.jsonl").get_data(as_text=True).splitlines()[-1])


# -- a new game never silently abandons an unfinished one ---------------------------------------

def test_new_game_mid_game_needs_confirmation(client):
    ready(client)
    post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"})
    r = post(client, "/api/games", NEW_EXACT21)
    assert_error(r, 409, "GAME_IN_PROGRESS")
    assert_error(post(client, "/api/events", {**NEW_EXACT21, "game": "exactly", "players": ["P1", "P2"]}), 409,
                 "GAME_IN_PROGRESS")
    state = client.get("/api/state").json
    assert state["game_id"] == 1 and state["scores"]["A"] == 5
    assert post(client, "/api/undo").json["scores"]["A"] == 0, "the game in progress is still there"
    # confirmed, the new game starts and the unfinished one stays in the history
    r = post(client, "/api/games?replace=1", NEW_EXACT21)
    assert r.status_code == 201 and r.json["game_id"] == 2
    assert [g["id"] for g in client.get("/api/games").json["games"]] == [2, 1]


def test_new_game_after_a_finished_game_needs_no_confirmation(client):
    play_to_the_end(client)
    assert post(client, "/api/games", NEW_EXACT21).status_code == 201


# -- an unfinished game left behind can be resumed ---------------------------------------------

def test_an_unfinished_game_resumes_exactly_as_it_was_left(client):
    ready(client)
    post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"})
    left = client.get("/api/state").json
    assert post(client, "/api/games?replace=1", {**NEW_EXACT21, "sides": [{"name": "X"}, {"name": "Y"}]}).json[
        "game_id"] == 2
    client.application.extensions["companion"].table.propose(
        {"type": "dice", "side": "X", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 4}})
    assert [(g["id"], g["finished"]) for g in client.get("/api/games").json["games"]] == [(2, False), (1, False)]

    # game 2 is unfinished too: leaving it needs the same confirmation as a new game
    assert_error(post(client, "/api/games/1/resume"), 409, "GAME_IN_PROGRESS")
    assert client.get("/api/state").json["game_id"] == 2
    assert len(client.get("/api/pending").json["pending"]) == 1

    r = post(client, "/api/games/1/resume?replace=1")
    assert r.status_code == 200, r.json
    for key in ("game_id", "players", "scores", "to_act", "detail", "legal", "seq"):
        assert r.json[key] == left[key], key
    assert r.json["rev"] != left["rev"] and client.get("/api/state").json["rev"] == r.json["rev"]
    assert client.get("/api/pending").json["pending"] == [], "the camera's proposal was about game 2"
    listed = client.get("/api/games").json
    assert listed["current"] == 1 and [(g["id"], g["finished"]) for g in listed["games"]] == [(2, False), (1, False)]

    # a change made on the state the phones saw before game 1 was left is STALE, a fresh one applies
    assert_error(post(client, "/api/undo", headers={"X-Table-Rev": left["rev"]}), 409, "STALE")
    r = post(client, "/api/events", {"type": "throw", "side": "A", "cup": "red"}, headers={"X-Table-Rev": r.json["rev"]})
    assert r.status_code == 200 and r.json["scores"]["A"] == 9
    exported = [json.loads(line) for line in client.get("/api/games/1/log.jsonl").get_data(as_text=True).splitlines()]
    assert [e["type"] for e in exported][-2:] == ["throw", "throw"]
    assert replay(read_jsonl(json.dumps(e) + "\n" for e in exported))["scores"] == r.json["scores"]
    # resuming the current game again (a second tap) changes nothing
    assert post(client, "/api/games/1/resume").json["seq"] == r.json["seq"]


def test_resume_refuses_an_unknown_or_a_finished_game(client):
    assert_error(post(client, "/api/games/1/resume"), 404, "NO_SUCH_GAME")
    play_to_the_end(client)
    assert post(client, "/api/games", NEW_EXACT21).status_code == 201  # after a finished game: no question
    for path in ("/api/games/3/resume", f"/api/games/{2**63}/resume", f"/api/games/{2**64}/resume?replace=1"):
        assert_error(post(client, path), 404, "NO_SUCH_GAME")
    r = post(client, "/api/games/1/resume?replace=1")
    assert_error(r, 409, "GAME_OVER")
    assert "game 1" in r.json["message"]
    assert_error(post(client, "/api/games/1/resume", pin=None, environ_base=PHONE), 403, "PIN_REQUIRED")
    assert_error(post(client, "/api/games/1/resume", {"x": 1}), 400, "UNKNOWN_FIELD")
    state = client.get("/api/state").json
    assert state["game_id"] == 2 and state["seq"] == 1


# -- bad input: 4xx, never 5xx -------------------------------------------------------------------

@pytest.mark.parametrize("extra", [{"at": None}, {"at": [1]}, {"at": {"a": 1}}, {"at": 10**30}, {"at": 5},
                                   {"at": "yesterday"}, {"source": [1]}, {"source": {"a": 1}}, {"source": None}])
def test_a_valid_event_with_a_wrong_at_or_source_is_400(client, extra):
    """EVENTS.md: "source" is a name and "at" an ISO 8601 time: anything else is malformed."""
    ready(client)
    r = post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow", **extra})
    assert_error(r, 400, "BAD_EVENT")
    assert next(iter(extra)) in r.json["message"]
    assert client.get("/api/state").json["seq"] == 3
    ok = post(client, "/api/events", {"type": "throw", "side": "A", "cup": "yellow", "at": "2024-05-01T20:15:00Z",
                                      "source": "cli"})
    assert ok.status_code == 200 and ok.json["scores"]["A"] == 5


@pytest.mark.parametrize("path, raw", [
    ("/api/events", '{"type": "throw", "side": "A", "cup": "yellow", "note": "\\ud800"}'),
    ("/api/events", '{"type": "throw", "side": "\\udfff", "cup": "yellow"}'),
    ("/api/events", '{"type": "thr\\ud800ow", "side": "A", "cup": "yellow"}'),
    ("/api/events", '{"type": "throw", "side": "A", "cup": "yel\\ud83dlow"}'),
    ("/api/events", '{"type": "throw", "side": "A", "cup": "yellow", "\\ud800": 1}'),
    ("/api/games", '{"type": "new_game", "game": "exact21", "sides": [{"name": "\\ud800"}, {"name": "B"}]}'),
    ("/api/login", '{"pin": "\\ud800"}'),
])
def test_a_lone_surrogate_anywhere_is_400(client, path, raw):
    ready(client)
    assert_error(post(client, path, raw), 400, "BAD_JSON")
    assert client.get("/api/state").json["seq"] == 3
    assert [g["id"] for g in client.get("/api/games").json["games"]] == [1]


def test_a_pair_of_surrogates_is_text(client):
    """An emoji written as its JSON surrogate pair is one character, and fine."""
    r = post(client, "/api/games", '{"type": "new_game", "game": "exact21", "sides": [{"name": "\\ud83c\\udfb2"}, '
                                   '{"name": "B"}]}')
    assert r.status_code == 201 and r.json["players"] == ["\U0001F3B2", "B"]


@pytest.mark.parametrize("path", ["/api/games/99999999999999999999999/log.jsonl",
                                  "/api/games/99999999999999999999999/scores", "/api/games/9223372036854775808/scores",
                                  "/api/games/0/scores"])
def test_a_game_id_too_large_for_the_log_is_404(client, path):
    ready(client)
    assert_error(client.get(path), 404, "NO_SUCH_GAME")


def test_a_rev_header_that_is_not_a_count_of_rows_is_stale_not_a_500(server):
    """X-Table-Rev comes from a phone: "1-²" (latin-1 superscript two passes str.isdigit()) or a
    count of 5000 digits (past int()'s limit) were 500 INTERNAL; now they are 409 STALE and the
    event is not applied."""
    import http.client

    from tests.loopback import get_json

    def send(path: str, body: dict, rev: bytes) -> tuple[int, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            conn.putrequest("POST", path)
            data = json.dumps(body).encode()
            for name, value in (("X-Table-Pin", PIN.encode()), ("Content-Type", b"application/json"),
                                ("Content-Length", str(len(data)).encode()), ("X-Table-Rev", rev)):
                conn.putheader(name, value)
            conn.endheaders(data)
            r = conn.getresponse()
            return r.status, json.loads(r.read())
        finally:
            conn.close()

    assert send("/api/games", NEW_EXACT21, b"")[0] == 201
    send("/api/events", DICE_A, b"")
    state = send("/api/events", DICE_B, b"")[1]
    game = str(state["game_id"]).encode()
    throw = {"type": "throw", "side": "A", "cup": "yellow"}
    for rev in (game + b"-\xb2", game + b"-\xb9\xb2", game + b"-" + b"9" * 5000, game + b"-" + b"9" * 30):
        status, answer = send("/api/events", throw, rev)
        assert (status, answer["code"]) == (409, "STALE"), (rev[:20], status, answer)
    now = get_json(server.url + "/api/state")
    assert now["rev"] == state["rev"] and now["scores"]["A"] == 0


def test_a_damaged_page_is_put_aside_at_start_and_every_game_it_cost_is_named(tmp_path):
    """A card's bad sector under an old game's rows. Before, the service started on the damaged
    file and the history, export and chart of that game failed later (500, then 503). Now SQLite's
    check at start finds it: the file is put aside, every game still readable in it is carried
    into a new log, and each game it could not give back is named in the state's alerts (shown on
    every page). Nothing answers 5xx. Each copy of the log has a different page overwritten, and
    no second copy is there to help."""
    import shutil
    import sqlite3
    import urllib.error
    import urllib.request

    from companion.table import Table
    from companion.web.server import start
    from tests.web.conftest import make_app

    made = tmp_path / "made"
    table = Table(made / "table.sqlite")
    for n in range(30):
        table.start({**NEW_EXACT21, "note": "x" * 2000 + str(n)})
        table.apply(DICE_A)
    table.close()
    db = sqlite3.connect(str(made / "table.sqlite"))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    lost_somewhere = 0
    for page in range(2, pages - 3, 3):
        data_dir = tmp_path / f"p{page}"
        data_dir.mkdir()
        shutil.copy(made / "table.sqlite", data_dir / "table.sqlite")
        with open(data_dir / "table.sqlite", "r+b") as f:
            f.seek(4096 * (page - 1))
            f.write(b"\xde\xad\xbe\xef" * 1024)
        app = make_app(data_dir)
        running = start(app, "127.0.0.1", 0, threads=8)
        try:
            for path in ["/api/games", "/api/state"] + [f"/api/games/{g}/{what}" for g in (1, 2, 15)
                                                        for what in ("log.jsonl", "scores")]:
                try:
                    with urllib.request.urlopen(running.url + path, timeout=10) as r:
                        r.read()
                except urllib.error.HTTPError as err:
                    answer = json.load(err)
                    assert err.code < 500 or answer["code"] == "LOG_UNREADABLE", (page, path, answer)
            games = json.load(urllib.request.urlopen(running.url + "/api/games"))["games"]
            alerts = json.load(urllib.request.urlopen(running.url + "/api/state"))["alerts"]
            named = {a["game_id"] for a in alerts if a["code"] in ("GAME_LOST", "EVENTS_LOST")}
            missing = (set(range(1, 31)) - {g["id"] for g in games}) | {g["id"] for g in games if g["events"] < 2}
            assert missing <= named, (page, missing, alerts)
            lost_somewhere += len(missing)
            if missing:
                assert alerts[0]["code"] == "LOG_PUT_ASIDE"
        finally:
            running.stop()
            app.extensions["companion"].table.close()
    assert lost_somewhere > 0  # some page held games' rows, and they were named


def test_a_phone_confirming_a_proposal_from_before_a_restart_confirms_nothing(tmp_path):
    """The camera proposed A's throw into yellow; the service was killed before anyone confirmed
    it, and after the restart the camera proposed something else. Proposal ids started at 1 in
    every run, so the phone still showing "confirm 1" confirmed the new proposal 1, an event it
    never saw. Now that tap is 404 NO_SUCH_PROPOSAL and the new proposal still waits."""
    import urllib.error
    import urllib.request

    from companion.web.server import start
    from tests.loopback import get_json
    from tests.web.conftest import make_app

    def confirm(url: str, proposal: int) -> tuple[int, dict]:
        req = urllib.request.Request(f"{url}/api/pending/{proposal}/confirm", data=b"", method="POST",
                                     headers={"X-Table-Pin": PIN})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as err:
            return err.code, json.load(err)

    app = make_app(tmp_path)
    table = app.extensions["companion"].table
    table.start(NEW_EXACT21)
    table.apply(DICE_A)
    table.apply(DICE_B)
    running = start(app, "127.0.0.1", 0, threads=8)
    seen = table.propose({"type": "throw", "side": "A", "cup": "yellow"}, evidence={"frame": 1}).id
    assert [p["id"] for p in get_json(running.url + "/api/pending")["pending"]] == [seen]
    running.stop()
    table.close()  # the service is gone; the proposal lived in memory only

    app = make_app(tmp_path)
    table = app.extensions["companion"].table
    running = start(app, "127.0.0.1", 0, threads=8)
    try:
        new = table.propose({"type": "throw", "side": "A", "cup": "miss"}, evidence={"frame": 2}).id
        status, answer = confirm(running.url, seen)
        assert (status, answer.get("code")) == (404, "NO_SUCH_PROPOSAL"), (seen, new, answer.get("scores"))
        state = get_json(running.url + "/api/state")
        assert state["seq"] == 3 and [p["id"] for p in state["pending"]] == [new]
    finally:
        running.stop()
        table.close()
