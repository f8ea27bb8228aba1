"""The Flask app factory: ``create_app(config, table=None, live=None)``.

``config`` is a ``companion.toml`` dictionary (``companion.config.load``); missing keys take their
defaults. Without a ``table`` one is opened at ``<data.dir>/table.sqlite``. ``live`` is the camera
loop of ``companion serve`` when a camera is configured (``health() -> dict``,
``latest_jpeg() -> bytes | None``); without it the scoreboard runs on phone entry alone.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass
from typing import Any, Protocol

from flask import Flask

from companion.config import DEFAULTS, data_path
from companion.table import Table
from companion.web.auth import PinGuard, generate_pin
from companion.web.i18n import LANGUAGES
from companion.web.stream import Hub

MAX_BODY_BYTES = 64 * 1024  # the largest legitimate body (a twentyone new_game with six sheets) is ~5 KB


class Live(Protocol):
    def health(self) -> dict[str, Any]: ...

    def latest_jpeg(self, quality: int = 80, raw: bool = False) -> bytes | None: ...


@dataclass
class Companion:
    """What the blueprints share: ``current_app.extensions["companion"]``."""

    config: dict[str, Any]
    table: Table
    hub: Hub
    guard: PinGuard
    pin_source: str  # "config", "env" or "generated"
    live: Live | None = None
    public_base: str | None = None  # e.g. "http://192.168.1.20:8000/", set by the server

    def close(self) -> None:
        self.hub.close()


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
               live: Live | None = None) -> Flask:
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

    from companion.web.api import api
    from companion.web.pages import pages

    app.register_blueprint(api)
    app.register_blueprint(pages)
    return app


def companion_of(app: Flask) -> Companion:
    return app.extensions["companion"]
