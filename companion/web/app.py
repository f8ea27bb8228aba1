"""The Flask app factory: ``create_app(config, table=None, live=None)``.

``config`` is a ``companion.toml`` dictionary (``companion.config.load``); missing keys take their
defaults. Without a ``table`` one is opened at ``<data.dir>/table.sqlite``. ``live`` is the running
service (:class:`LiveLink`); without it the scoreboard runs on phone entry alone. The demo's
"new game" endpoint (``web/demo.py``) exists only when the service plays the demo table.
"""

from __future__ import annotations

import copy
import secrets
from typing import Any

from flask import Flask

from companion.config import DEFAULTS, data_path
from companion.table import Table
from companion.web.api import api
from companion.web.auth import PinGuard, generate_pin
from companion.web.context import Companion, LiveLink
from companion.web.i18n import LANGUAGES
from companion.web.pages import pages
from companion.web.stream import Hub

MAX_BODY_BYTES = 64 * 1024  # the largest legitimate body (a twentyone new_game with six sheets) is ~5 KB


def complete_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """``config`` over the defaults, section by section."""
    out = copy.deepcopy(DEFAULTS)
    for section, values in (config or {}).items():
        if isinstance(values, dict) and isinstance(out.get(section), dict):
            out[section].update(values)
        else:
            out[section] = values
    return out


def create_app(config: dict[str, Any] | None = None, table: Table | None = None,
               live: LiveLink | None = None) -> Flask:
    import os

    cfg = complete_config(config)
    pin = str(cfg["server"].get("pin") or "")
    source = "env" if pin and pin == os.environ.get("COMPANION_PIN") else "config"
    if not pin and os.environ.get("COMPANION_PIN"):
        pin, source = os.environ["COMPANION_PIN"], "env"
    if not pin:
        pin, source = generate_pin(), "generated"
    cfg["server"]["pin"] = pin
    if table is None:
        table = Table(data_path(cfg, "table.sqlite"))

    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=secrets.token_hex(32),  # sessions last while this server runs
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_HTTPONLY=True,
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False
    app.json.ensure_ascii = False
    app.extensions["companion"] = Companion(cfg, table, Hub(table), PinGuard(pin), source, live)
    app.jinja_env.globals["LANGUAGES"] = LANGUAGES

    app.register_blueprint(api)
    app.register_blueprint(pages)
    app.after_request(_headers)
    if live is not None and live.demo:
        from companion.web.demo import demo

        app.register_blueprint(demo)
    return app


def _headers(response: Any) -> Any:
    """No page of the table may be shown inside another site's frame (a tap there would be a tap
    here), and no answer is read as another type than it says."""
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    return response


def companion_of(app: Flask) -> Companion:
    return app.extensions["companion"]
