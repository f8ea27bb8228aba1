"""What the web's blueprints share (``current_app.extensions["companion"]``), and the one typed
interface through which the web reaches the running service."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from flask import current_app

from companion.table import Table
from companion.web.auth import PinGuard
from companion.web.stream import Hub


class LiveLink(Protocol):
    """All the web asks of the running service (``companion.live.service.Service`` is one): the
    web never reaches into the camera loop, the panel or the rendered table itself."""

    @property
    def demo(self) -> bool:
        """The camera is the demo's rendered table (the controller offers "new demo game")."""

    def health(self) -> dict[str, Any]:
        """The camera loop's state for the health page."""

    def latest_jpeg(self, quality: int = 80, raw: bool = False) -> bytes | None:
        """The latest frame (with detections drawn unless ``raw``); None before the first."""

    def refused(self) -> None:
        """The rules refused a phone's confirm: the buzzer says so."""

    def new_demo_game(self) -> dict[str, Any]:
        """The demo's next game, started; the new state. Only when :attr:`demo`."""

    def remeasure_camera(self) -> bool:
        """The camera measures exposure, white balance and focus again, then holds them; False
        when no open camera has such controls."""


@dataclass
class Companion:
    """What the blueprints share: ``current_app.extensions["companion"]``."""

    config: dict[str, Any]
    table: Table
    hub: Hub
    guard: PinGuard
    pin_source: str  # "config", "env" or "generated"
    live: LiveLink | None = None
    public_base: str | None = None  # e.g. "http://192.168.1.20:8000/", set by the server
    config_file: Path | None = None  # the companion.toml read, for the support bundle; set by `companion serve`

    def close(self) -> None:
        self.hub.close()


def ctx() -> Companion:
    return current_app.extensions["companion"]
