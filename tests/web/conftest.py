"""Fixtures of the web tests: an app on a real SQLite table, a real waitress server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from companion.web import create_app
from companion.web.server import Running, start

PIN = "4321"
CHROMIUM = Path("/usr/bin/chromium")  # Debian's; Playwright drives it, never downloads a browser
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
NEW_EXACT21 = {"type": "new_game", "game": "exact21",
               "sides": [{"name": "A", "players": ["Ann", "Ben"]}, {"name": "B", "players": ["Bea"]}]}
DICE_A = {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}}
DICE_B = {"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 6, "yellow": 4}}


def make_app(data_dir: Path, **server: Any) -> Flask:
    return create_app({"data": {"dir": str(data_dir)}, "server": {"pin": PIN, **server}})


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    app = make_app(tmp_path)
    yield app
    app.extensions["companion"].close()
    app.extensions["companion"].table.close()


@pytest.fixture
def client(app: Flask):
    return app.test_client()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Running]:
    app = make_app(tmp_path)
    running = start(app, "127.0.0.1", 0, threads=24)
    yield running
    running.stop()
    app.extensions["companion"].table.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def phone(browser: Any, url: str, errors: list[str], lang: str = "en-GB") -> Any:
    """A page in its own phone-sized context (its own cookies, like another phone)."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, locale=lang, color_scheme="dark")
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page
