"""The demo's one extra endpoint, registered only when the service plays the rendered demo table:
``POST /api/demo/new`` (PIN) starts the next rendered game and answers its state, 201."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from companion.web.api import ApiError, _api_error, body, needs_pin
from companion.web.context import ctx

demo = Blueprint("demo", __name__, url_prefix="/api/demo")
demo.register_error_handler(ApiError, _api_error)  # the PIN's refusals, as the API gives them


@demo.post("/new")
@needs_pin
def new_demo() -> tuple[Response, int]:
    body(frozenset(), optional=True)
    live = ctx().live
    assert live is not None and live.demo  # registered only then
    return jsonify(live.new_demo_game()), 201
