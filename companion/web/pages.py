"""The pages: scoreboard, controller, set-up, history, players, camera health. Phone first, dark, no CDN.

Pages are thin HTML shells; the JavaScript in ``static/`` fills them from ``/api/state`` and
keeps them current from ``/api/stream``. The texts of the phone's language are embedded in each
page so the scripts need no extra request.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, render_template, request

from companion.games import ENGINES, get_engine
from companion.games.base import Option
from companion.web.auth import is_loopback
from companion.web.i18n import LANGUAGES, choose, texts

pages = Blueprint("pages", __name__, static_folder="static", static_url_path="/static",
                  template_folder="templates")

# House rules of engines that are not on this branch yet (RULES.md); an engine that can be
# imported describes its own options instead.
FALLBACK_OPTIONS: dict[str, dict[str, dict[str, Any]]] = {
    "exact21": {"silver_rule": {"default": "single_cup", "choices": ["single_cup", "combination"]}},
    "twentyone": {"selective_reroll": {"default": False}, "incomplete_row_bonus": {"default": True}},
    "exactly": {"cap_mode": {"default": "before", "choices": ["before", "after"]},
                "simultaneous_exact": {"default": "both", "choices": ["both", "active_first"]},
                "restart_with_5c": {"default": False},
                "target": {"default": 3, "minimum": 1}},
    "stack21": {"target": {"default": 21, "minimum": 1},
                "stock_exhausted": {"default": "end_round", "choices": ["end_round", "void_round"]},
                "zero_bonus_points": {"default": 1, "minimum": 0, "maximum": 10}},
}


def _option(opt: Option) -> dict[str, Any]:
    out: dict[str, Any] = {"default": opt.default}
    if opt.choices is not None:
        out["choices"] = list(opt.choices)
    if opt.minimum is not None:
        out["minimum"] = opt.minimum
    if opt.maximum is not None:
        out["maximum"] = opt.maximum
    return out


def game_options() -> dict[str, dict[str, dict[str, Any]]]:
    """Each game's house rules: default, choices, range."""
    out = {}
    for name in ENGINES:
        try:
            out[name] = {k: _option(v) for k, v in get_engine(name).options.items()}
        except ImportError:
            out[name] = FALLBACK_OPTIONS.get(name, {})
    return out


def event_fields() -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """Each importable game's event types and their fields, so the controller can ask for the
    fields a legal-action template leaves to the table (dice, a drawn card...)."""
    out = {}
    for name in ENGINES:
        try:
            engine = get_engine(name)
        except ImportError:
            continue
        out[name] = {etype: {f: {"kind": spec.kind.__name__, "required": spec.required} for f, spec in fs.items()}
                     for etype, fs in engine.events.items()}
    return out


def alerts() -> list[dict[str, Any]]:
    """What every page shows in its banner: the table's alerts (its log's troubles), a camera
    that stopped sending pictures, and what the camera cannot see for the game."""
    c = current_app.extensions["companion"]
    shown = [{**a, "from": "table"} for a in c.table.alerts]
    if c.live is not None:
        try:
            health = c.live.health()
        except Exception:  # the banner never breaks a page
            health = {}
        camera = health.get("camera", {})
        if camera.get("state") in ("retrying", "stalled"):
            # said by its state in the page's language (alert_CAMERA_LOST_retrying, _stalled), never
            # with the camera's English status inside; status and message stay for the JSON's readers
            shown.append({"code": "CAMERA_LOST", "from": "camera", "state": camera["state"],
                          "status": camera.get("status", ""),
                          "message": f"the camera is not sending pictures ({camera.get('status', '')})"})
        # what the camera cannot do for the game (the cups of a 21 Exact set-up not all seen)
        for info in (health.get("processors") or {}).values():
            if isinstance(info, dict) and isinstance(info.get("alert"), dict):
                shown.append({**info["alert"], "from": "camera"})
    return shown


def alert_text(alert: dict[str, Any], t: dict[str, str]) -> str:
    """An alert in the page's language (its English sentence when the language has none); one
    with a ``state`` by the catalogue's sentence for that state when there is one."""
    text = t.get(f"alert_{alert.get('code')}_{alert.get('state')}") if alert.get("state") else None
    if text is None:
        text = t.get("alert_" + str(alert.get("code")))
    if text is None:
        return str(alert.get("message", ""))
    for key, value in alert.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def _render(template: str, page: str, **extra: Any) -> str:
    lang = choose(request.args.get("lang"), request.accept_languages)
    c = current_app.extensions["companion"]
    local = is_loopback(request.remote_addr)
    t = texts(lang)
    shown = [{**a, "text": alert_text(a, t)} for a in alerts()]
    return render_template(template, page=page, lang=lang, t=t, languages=LANGUAGES,
                           pin=c.guard.pin if local else None, local=local, alerts=shown, **extra)


@pages.get("/")
def scoreboard() -> str:
    return _render("scoreboard.html", "scoreboard")


@pages.get("/controller")
def controller() -> str:
    live = current_app.extensions["companion"].live
    return _render("controller.html", "controller", event_fields=event_fields(),
                   demo=live is not None and live.demo)


@pages.get("/setup")
def setup() -> str:
    return _render("setup.html", "setup", options=game_options(), games=list(ENGINES))


@pages.get("/history")
def history() -> str:
    return _render("history.html", "history")


@pages.get("/players")
def players() -> str:
    return _render("players.html", "players")


@pages.get("/health")
def health() -> str:
    return _render("health.html", "health")


@pages.get("/favicon.ico")
def favicon() -> Response:
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" '
           'fill="#f5c542"/><text x="8" y="12" font-size="9" text-anchor="middle">21</text></svg>')
    return Response(svg, mimetype="image/svg+xml")
