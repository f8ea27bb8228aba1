"""The JSON API. Reading is open; every change needs the table PIN (see ``auth``).

Errors are always ``{"code": ..., "message": ...}`` with a 4xx status, or 503 when the service or
its disk cannot do it now; a refusal of the rules whose sentence names players or values adds
them as ``"args"`` (``{"player": "Ann"}``), which the pages put into their own language's sentence:

- 400 ``BAD_JSON`` (body not JSON, not an object, or too deep), ``BAD_EVENT`` (the engine's
  EventError: unknown type, missing field, wrong JSON type), ``UNKNOWN_FIELD`` (a key this
  endpoint does not take);
- 403 ``PIN_REQUIRED`` / ``BAD_PIN``; 429 ``RATE_LIMITED`` (with ``Retry-After``);
- 403 ``BAD_ORIGIN``: a write whose ``Origin`` is not the table's own; 415 ``NOT_JSON``: a body not
  sent as ``application/json`` (no page of another site may change the game);
- 404 ``NOT_FOUND`` / ``NO_SUCH_PROPOSAL`` / ``NO_SUCH_GAME``; 413 ``TOO_LARGE``;
- 422 for a rule refusal about the event's own values (``BAD_VALUE``, ``UNKNOWN_PLAYER``,
  ``DICE_NOT_DISTINCT``), 409 for every other rule refusal: the event is fine, the table is not
  in a state that allows it (``GAME_OVER``, ``NOT_YOUR_TURN``, ``NO_GAME``, ``NOTHING_TO_UNDO``...);
- 409 ``STALE``: the change was made on a state the table has left (see below);
- 409 ``GAME_IN_PROGRESS``: a new game, or resuming another game, while the current one is
  unfinished, without ``?replace=1``; 409 ``GAME_OVER`` / ``CANNOT_RESUME``: resuming a finished
  game, or one whose first row the rules refuse;
- 503 ``TOO_MANY_STREAMS`` (with ``Retry-After``): every stream slot is taken (``GET /api/stream``);
- 503 ``NOT_STORED``: the change could not be written to the log (disk full, read-only): nothing
  was changed, send it again once there is room; 503 ``LOG_UNREADABLE``: a damaged page of the log
  (an old game's history): nothing was changed.

Changes made on what a phone saw: the state carries ``rev`` (an opaque string, new after every
stored event, undo, new game or resume). ``POST /api/events``, ``/api/undo``, ``/api/games`` and
``/api/games/<id>/resume`` take it back in the ``X-Table-Rev`` header. An undo, a new game or a
resume made on a state the table has left, or an event that was already stored since that state,
does nothing and is 409 ``STALE``: a double tap or ten phones pressing undo at once change the
game once. Any other event made on an older state applies (after a Twenty One roll every player
enters at once, each from a board one entry behind). Without the header a change applies to the
current state (the camera, the button, scripts). An event may also carry ``"game_id"``: it must
be the current game's (409 ``STALE`` otherwise) and is not stored.

Starting a game: ``POST /api/games`` (or a ``new_game`` to ``/api/events``) while the current game
is not finished is 409 ``GAME_IN_PROGRESS``; ``?replace=1`` confirms that the unfinished game
should be left (it stays in the history and its log can be exported).

Resuming a game: ``POST /api/games/<id>/resume`` (no body) makes an unfinished game of the
history the current game again, exactly as it was left (events, scores, whose turn), and answers
its state; events from then on are stored in that game's log, and a restart comes back to it.
Proposals pending from the camera are dropped, every stream gets the resumed game's state, and
its rev is one never seen before. 404 ``NO_SUCH_GAME`` for an unknown id, 409 ``GAME_OVER`` for a
finished game, 409 ``GAME_IN_PROGRESS`` while the current game is unfinished unless
``?replace=1`` confirms (the game left stays in the history, resumable in turn); resuming the
current game changes nothing. ``GET /api/games`` lists every game with ``finished`` (null for a
game that cannot be restored) and ``current``, the current game's id.

Unknown fields: an *event* (``POST /api/events``, ``POST /api/games``) may carry fields the engine
does not know — EVENTS.md lets events be extended with optional fields, so they are stored and
ignored by the rules. The *other* bodies (login, undo, confirm, reject) are ours: an unknown key
there is a typo and gets 400 ``UNKNOWN_FIELD``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from functools import wraps
from typing import Any

import segno
from flask import Blueprint, Response, current_app, jsonify, request, session, stream_with_context
from werkzeug.exceptions import HTTPException

from companion import __version__
from companion.games.base import EventError, Game, RuleError, no_json_constant, not_text
from companion.table import LogUnreadable, NotStored, stats
from companion.table.table import NO_SUCH_GAME, NO_SUCH_PROPOSAL, replay_rows
from companion.web.auth import is_loopback
from companion.web.context import ctx

api = Blueprint("api", __name__, url_prefix="/api")

VALUE_CODES = frozenset({"BAD_VALUE", "UNKNOWN_PLAYER", "DICE_NOT_DISTINCT"})
MAX_DEPTH = 32  # JSON nesting: a new_game with sheets is 5 deep


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def error(status: int, code: str, message: str, headers: dict[str, str] | None = None,
          args: dict[str, Any] | None = None) -> Response:
    """``args``: the specifics the message names (players, values), by name, for a page that says
    the refusal in its own language; only when there are any (``code`` and ``message`` stay)."""
    response = jsonify(code=code, message=message, **({"args": args} if args else {}))
    response.status_code = status
    response.headers.update(headers or {})
    return response


@api.errorhandler(ApiError)
def _api_error(err: ApiError) -> Response:
    return error(err.status, err.code, err.message, err.headers)


@api.errorhandler(RuleError)
def _rule_error(err: RuleError) -> Response:
    if err.code in (NO_SUCH_PROPOSAL, NO_SUCH_GAME):
        return error(404, err.code, err.message, args=err.params)
    return error(422 if err.code in VALUE_CODES else 409, err.code, err.message, args=err.params)


@api.errorhandler(EventError)
def _event_error(err: EventError) -> Response:
    return error(400, "BAD_EVENT", str(err))


@api.errorhandler(NotStored)
def _not_stored(err: NotStored) -> Response:
    """The disk, not a bug: a change that could not be written (full, read-only). Nothing was
    changed, and the phone is told so in a sentence."""
    current_app.logger.error("table log: %s", err)
    table = ctx().table
    if not any(a["code"] in ("READ_ONLY", "LOG_NOT_WRITABLE") for a in table.alerts):
        table.tell("NOT_STORED", str(err))  # every page says so until a change is stored again
    return error(503, "NOT_STORED", str(err))


@api.errorhandler(LogUnreadable)
def _unreadable(err: LogUnreadable) -> Response:
    """A damaged page of an old game: nothing was changed. Every page says so from now on."""
    current_app.logger.error("table log: %s", err)
    ctx().table.tell("LOG_UNREADABLE", f"part of the table log could not be read ({err}): some of the history "
                                       "may be missing; the game being played goes on")
    return error(503, "LOG_UNREADABLE", f"the table log could not be read ({err}): nothing was changed; "
                                         "the game being played goes on")


@api.app_errorhandler(HTTPException)
def _http_error(err: HTTPException) -> Response | HTTPException:
    if not request.path.startswith("/api/"):
        return err  # pages keep Flask's own error pages
    codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "TOO_LARGE"}
    status = err.code or 400
    message = {413: f"the body is larger than {current_app.config['MAX_CONTENT_LENGTH']} bytes"}.get(
        status, err.description or err.name)
    return error(status, codes.get(status, "BAD_REQUEST"), message)


@api.errorhandler(Exception)
def _bug(err: Exception) -> Response | HTTPException:  # a bug, never bad input: logged, answered in JSON
    if isinstance(err, HTTPException):
        return _http_error(err)
    current_app.logger.exception("API error")
    return error(500, "INTERNAL", "the companion hit a bug; the game is unchanged unless the state says so")


# -- what every change must be ------------------------------------------------------------------

@api.before_request
def _same_origin_json() -> None:
    """A change comes from the table's own pages (or a script), never from another site: a page
    elsewhere, even on another port of the same host, could make a phone's browser send its
    session cookie along. A browser always names the page a POST comes from in ``Origin``; it
    must be the table's own (403 ``BAD_ORIGIN``). A body is JSON, declared as such (415
    ``NOT_JSON``): a form of another site can only send ``text/plain``, urlencoded or multipart
    bodies without asking the server first."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    origin = request.headers.get("Origin")
    own = request.host_url.rstrip("/")
    if origin is not None and origin != own:
        raise ApiError(403, "BAD_ORIGIN", f"changes are only taken from the table's own pages ({own}), "
                                          f"not from {origin[:80]}")
    if origin is None and request.headers.get("Sec-Fetch-Site") in ("cross-site", "same-site"):
        raise ApiError(403, "BAD_ORIGIN", "changes are only taken from the table's own pages")
    if request.content_length or request.headers.get("Transfer-Encoding"):
        if request.mimetype != "application/json":
            raise ApiError(415, "NOT_JSON", "a body must be JSON sent as Content-Type: application/json, "
                                            f"not {request.mimetype or 'undeclared'}")


def _finite(text: str) -> float:
    """``json.loads(..., parse_float=_finite)``: ``1e400`` is read by Python as infinity, which is
    no JSON number (the log, its export and ``companion replay`` would no longer read it)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is beyond any number JSON can carry")
    return value


# -- helpers ----------------------------------------------------------------------------------

def _depth(value: Any, limit: int) -> bool:
    """True if ``value`` nests deeper than ``limit``."""
    stack = [(value, 1)]
    while stack:
        item, d = stack.pop()
        if d > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, d + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, d + 1) for v in item)
    return False


def body(allowed: frozenset[str] | None = None, optional: bool = False) -> dict[str, Any]:
    """The request body as a JSON object. ``allowed``: the keys this endpoint takes (None = an
    event, any key). ``optional``: an empty body counts as ``{}``."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if optional:
            return {}
        raise ApiError(400, "BAD_JSON", "the body must be a JSON object, and it is empty")
    try:
        value = json.loads(raw, parse_constant=no_json_constant, parse_float=_finite)
    except (ValueError, RecursionError) as err:
        raise ApiError(400, "BAD_JSON", f"the body is not valid JSON ({str(err)[:80]})") from None
    if not isinstance(value, dict):
        kind = type(value).__name__.replace("list", "an array").replace("str", "a string")
        raise ApiError(400, "BAD_JSON", f"the body must be a JSON object, not {kind}")
    if _depth(value, MAX_DEPTH):
        raise ApiError(400, "BAD_JSON", f"the body nests deeper than {MAX_DEPTH} levels")
    if not_text(value) is not None:
        raise ApiError(400, "BAD_JSON", "a string in the body holds a lone UTF-16 surrogate (\\ud800-\\udfff), "
                                        "which is not text")
    if allowed is not None:
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise ApiError(400, "UNKNOWN_FIELD",
                           f"unknown field '{unknown[0]}' (this takes: {', '.join(sorted(allowed)) or 'nothing'})")
    return value


def client_address() -> str:
    return request.remote_addr or "?"


def pin_ok_for_request() -> bool:
    """True if this request carries the right PIN (its session, or a header that is checked and
    counted like any guess: a header answered without counting was a free oracle)."""
    guard = ctx().guard
    if guard.session_ok(session.get("sid")):
        return True
    given = request.headers.get("X-Table-Pin")
    if not given:
        return False
    verdict = guard.check(given, client_address())
    if verdict.code == "RATE_LIMITED":
        raise ApiError(429, verdict.code, verdict.message, {"Retry-After": str(verdict.retry_after)})
    return verdict.ok


def needs_pin(view: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not ctx().guard.session_ok(session.get("sid")):
            verdict = ctx().guard.check(request.headers.get("X-Table-Pin"), client_address())
            if not verdict.ok:
                if verdict.code == "RATE_LIMITED":
                    raise ApiError(429, verdict.code, verdict.message, {"Retry-After": str(verdict.retry_after)})
                raise ApiError(403, verdict.code, verdict.message)
        return view(*args, **kwargs)

    return wrapped


def source_of(event: dict[str, Any]) -> str:
    source = event.get("source")
    return source if isinstance(source, str) and source else "phone"  # a wrong type: the table says so


def expected_rev() -> str | None:
    """The rev the phone made this change on (``X-Table-Rev``), or None: apply to what is current."""
    return request.headers.get("X-Table-Rev") or None


def replace_wanted() -> bool:
    return request.args.get("replace", "").lower() in ("1", "true", "yes")


# -- reading ----------------------------------------------------------------------------------

@api.get("/state")
def state() -> Response:
    return jsonify(ctx().table.state())


STREAM_RETRY_SECONDS = 5


@api.get("/stream")
def stream() -> Response:
    hub, address = ctx().hub, client_address()
    refused = hub.admit(address, exempt=is_loopback(address))
    if refused:
        raise ApiError(503, "TOO_MANY_STREAMS", refused, {"Retry-After": str(STREAM_RETRY_SECONDS)})
    try:
        disconnected = request.environ.get("waitress.client_disconnected")
        gen = hub.stream(disconnected)
        response = Response(stream_with_context(gen), mimetype="text/event-stream",
                            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    except BaseException:
        hub.release(address)
        raise
    response.call_on_close(lambda: hub.release(address))  # the server closes every answer it sent
    return response


@api.get("/pending")
def pending() -> Response:
    return jsonify(pending=[p.as_dict() for p in ctx().table.pending()])


@api.get("/games")
def games() -> Response:
    return jsonify(games=ctx().table.games(), current=ctx().table.game_id)


@api.get("/players")
def players() -> Response:
    """The players page: every person's games played and won (per game too), best scores,
    streaks, and head to head, from the finished games of the log (``companion.table.stats``)."""
    return jsonify(stats.players(ctx().table.games()))


def _rows(game_id: int) -> list[dict[str, Any]]:
    rows = ctx().table.log.events(game_id)
    if not rows:
        raise ApiError(404, "NO_SUCH_GAME", f"there is no game {game_id}")
    return rows


@api.get("/games/<int:game_id>/log.jsonl")
def export(game_id: int) -> Response:
    _rows(game_id)
    if ctx().table.hides_cards(game_id):  # the stock's face-down cards: not while the game is played
        raise ApiError(409, "CARDS_HIDDEN", f"game {game_id} is still being played and its log holds the stock's "
                       "face-down cards (a virtual deck's seed or the stock dealt): it is exported once the game is over")
    events = ctx().table.export(game_id, raw=request.args.get("raw") == "1")
    text = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events)
    return Response(text, mimetype="application/x-ndjson",
                    headers={"Content-Disposition": f'attachment; filename="game-{game_id}.jsonl"'})


@api.get("/games/<int:game_id>/scores")
def scores(game_id: int) -> Response:
    """The scores after every effective event of a game: the history page's chart."""
    events = replay_rows(_rows(game_id)).events
    game = Game.start(events[0])
    points = [{"seq": 1, "type": "new_game", "at": events[0].get("at"), "scores": game.view()["scores"]}]
    for seq, event in enumerate(events[1:], start=2):
        game.push(event)
        points.append({"seq": seq, "type": event.get("type"), "at": event.get("at"),
                       "scores": game.view()["scores"]})
    view = game.view()
    return jsonify(game=view["game"], game_id=game_id, players=view["players"],
                   winners=view["winners"], finished=view["finished"], points=points)


def health_data() -> dict[str, Any]:
    c = ctx()
    camera = c.live.health() if c.live is not None else {"configured": False, "message": "no camera configured"}
    return {"camera": camera, "streams": c.hub.clients, "max_streams": c.hub.max_streams, "game_id": c.table.game_id,
            "version": c.table.version, "companion": __version__, "pin_source": c.pin_source,
            "notices": c.table.notices}


@api.get("/health")
def health() -> Response:
    return jsonify(health_data())


@api.get("/support.tar.gz")
def support_bundle() -> Response:
    """The support bundle (``companion.web.support``): the health, the configuration without its
    secrets, the calibration, the log, the machine. It needs the PIN (its log names the phones'
    addresses), or the Pi's own screen."""
    from companion.web import support

    if not (is_loopback(request.remote_addr) or pin_ok_for_request()):
        raise ApiError(403, "PIN_REQUIRED", "the support bundle needs the table PIN (enter it on the controller first)")
    c = ctx()
    try:
        health: dict[str, Any] | str = json.loads(json.dumps(health_data(), default=str))
    except Exception as err:  # the bundle is wanted most when something is broken
        health = f"the health could not be read: {err.__class__.__name__}: {err}"
    recent = support.RECENT.text() if support.RECENT is not None else None
    data, _ = support.build(c.config, health=health, config_file=c.config_file, pin=c.guard.pin, recent=recent,
                         made_by="the running service (GET /api/support.tar.gz)")
    return Response(data, mimetype="application/gzip", headers={
        "Content-Disposition": f'attachment; filename="{support.file_name()}"', "Cache-Control": "no-store"})


@api.get("/frame.jpg")
def frame() -> Response:
    c = ctx()
    raw = request.args.get("raw") == "1"  # the plain frame, for `companion calibrate`
    jpeg = None if c.live is None else c.live.latest_jpeg(raw=True) if raw else c.live.latest_jpeg()
    if jpeg is None:
        raise ApiError(404, "NO_FRAME", "no camera configured" if c.live is None else "no frame yet")
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


def base_url() -> str:
    """The address phones should open: the server's LAN address when asked from the Pi itself."""
    c = ctx()
    if c.public_base and is_loopback(request.remote_addr) and request.host.split(":")[0] in (
            "127.0.0.1", "localhost", "[::1]"):
        return c.public_base
    return request.host_url


@api.get("/qr/<target>.svg")
def qr(target: str) -> Response:
    """QR codes: ``scoreboard`` for anyone; ``controller`` carries the PIN, so only for the Pi's
    own screen or a request that already has the PIN."""
    if target == "scoreboard":
        url = base_url()
    elif target == "controller":
        if not (is_loopback(request.remote_addr) or pin_ok_for_request()):
            raise ApiError(403, "PIN_REQUIRED", "the controller's QR code carries the PIN")
        url = base_url() + "controller#pin=" + ctx().guard.pin
    else:
        raise ApiError(404, "NOT_FOUND", "QR codes: scoreboard or controller")
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=6, dark="#000", light="#fff", border=2,
                                    xmldecl=False, svgns=True, title="QR")
    return Response(out.getvalue(), mimetype="image/svg+xml", headers={"Cache-Control": "no-store", "X-QR-Text": url})


# -- changing ---------------------------------------------------------------------------------

@api.post("/login")
def login() -> Response:
    """Enter the PIN once; the session cookie (a random id the server keeps) then stands for it on
    this phone."""
    data = body(frozenset({"pin"}))
    pin = data.get("pin")
    if not isinstance(pin, str):
        raise ApiError(400, "BAD_JSON", "'pin' must be a string")
    verdict = ctx().guard.check(pin, client_address())
    if not verdict.ok:
        status = 429 if verdict.code == "RATE_LIMITED" else 403
        headers = {"Retry-After": str(verdict.retry_after)} if status == 429 else None
        raise ApiError(status, verdict.code, verdict.message, headers)
    ctx().guard.close_session(session.get("sid"))
    session.clear()
    session["sid"] = ctx().guard.open_session()  # a random id: the PIN never travels in the cookie
    return jsonify(ok=True)


@api.post("/logout")
def logout() -> Response:
    ctx().guard.close_session(session.get("sid"))
    session.clear()
    return jsonify(ok=True)


@api.post("/games")
@needs_pin
def start_game() -> tuple[Response, int]:
    event = body()
    event.setdefault("type", "new_game")
    if event["type"] != "new_game":
        raise ApiError(400, "BAD_EVENT", "POST /api/games takes a 'new_game' event; other events go to /api/events")
    return jsonify(ctx().table.start(event, source_of(event), expected_rev(), replace_wanted())), 201


@api.post("/games/<int:game_id>/resume")
@needs_pin
def resume_game(game_id: int) -> Response:
    """Continue an unfinished game of the history (see the module's docstring)."""
    body(frozenset(), optional=True)
    return jsonify(ctx().table.resume(game_id, "phone", expected_rev(), replace_wanted()))


@api.post("/events")
@needs_pin
def post_event() -> Response:
    event = body()
    return jsonify(ctx().table.apply(event, source_of(event), expected_rev(), replace_wanted()))


@api.post("/undo")
@needs_pin
def undo() -> Response:
    body(frozenset(), optional=True)
    return jsonify(ctx().table.undo("phone", expected_rev()))


@api.post("/pending/<int:proposal_id>/confirm")
@needs_pin
def confirm(proposal_id: int) -> Response:
    body(frozenset(), optional=True)
    c = ctx()
    try:
        return jsonify(c.table.confirm(proposal_id, None))
    except RuleError:
        if c.live is not None:  # the buzzer says "refused" for a phone's confirm too
            c.live.refused()
        raise


@api.post("/pending/<int:proposal_id>/reject")
@needs_pin
def reject(proposal_id: int) -> Response:
    body(frozenset(), optional=True)
    return jsonify(ctx().table.reject(proposal_id))


@api.post("/camera/remeasure")
@needs_pin
def remeasure_camera() -> tuple[Response, int]:
    """The camera measures exposure, white balance and focus again for ``lock_after_s`` and then
    holds the new values (a lamp switched on, daylight gone): what SIGUSR1 asks, from the health
    page. 202: asked (the camera acts at its next frame); 409 NO_CAMERA_CONTROLS: no open camera
    with such controls (none configured, not open yet, a video, an IP camera or the rendered
    table, every value fixed in companion.toml, or ``lock_after_s`` 0)."""
    body(frozenset(), optional=True)
    live = ctx().live
    if live is None or not live.remeasure_camera():
        raise ApiError(409, "NO_CAMERA_CONTROLS", "no open camera whose exposure and white balance can be measured again")
    return jsonify(asked=True), 202
