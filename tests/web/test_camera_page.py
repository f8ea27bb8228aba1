"""The camera page on a phone (real Chromium at 390 x 844 against a real server on loopback):
its state is a sentence in the phone's language, not the health's JSON with English keys; with
no camera it asks for no picture at all (it asked every 2 s, a 404 and a console error each
time); with a camera that does not answer it asks for none either, and says so; with the drawn
demo camera it shows the picture. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.config import load
from companion.live.service import Service
from companion.web.i18n import texts
from companion.web.server import start
from tests.web.conftest import CHROMIUM, PHONE, SHOTS
from tests.web.test_game_over import LANGS, TOO_WIDE

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
WATCH_MS = 6000  # three of the old 2-second rounds
RAW = ("{", "configured", "last_error", "bad_frames", "median_ms", "retrying", "undefined", "null")


def open_page(browser, url: str, locale: str) -> tuple[Any, dict[str, list[str]]]:
    seen: dict[str, list[str]] = {"frames": [], "health": [], "console": [], "errors": []}
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, locale=locale, color_scheme="dark")
    page = context.new_page()
    page.on("request", lambda r: seen["frames" if "/api/frame.jpg" in r.url else "health" if "/api/health" in r.url
                                      else "errors"].append(r.url) if "/api/" in r.url else None)
    page.on("console", lambda m: seen["console"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["console"].append(str(e)))
    page.on("response", lambda r: seen["console"].append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(url)
    return page, seen


def shown(page) -> dict[str, str]:
    return dict(page.eval_on_selector_all("#health dd", "(dds) => dds.map((d) => [d.dataset.key, d.textContent])"))


def test_no_camera_a_sentence_and_no_picture_asked(browser, server):
    for lang, locale in LANGS:
        t = texts(lang)
        page, seen = open_page(browser, f"{server.url}/health?lang={lang}", locale)
        page.wait_for_selector('#health dd[data-key="status"]')
        page.wait_for_timeout(WATCH_MS)
        assert seen["frames"] == [], "no picture asked without a camera"
        assert seen["console"] == []
        assert len(seen["health"]) <= 2, seen["health"]  # read every 10 s, not every 2
        values = shown(page)
        assert values["status"] == t["no_camera"]
        assert values["streams"] == "0"
        labels = " ".join(page.eval_on_selector_all("#health dt", "(ds) => ds.map((d) => d.textContent)"))
        assert t["cam_status"] in labels and t["cam_phones"] in labels
        for raw in RAW:
            assert raw not in labels, (lang, raw)
        text = page.inner_text("#health")
        assert "{" not in text and "undefined" not in text
        if lang != "en":
            assert texts("en")["no_camera"] not in text
        assert page.locator("#frame").is_hidden()
        page.screenshot(path=str(SHOTS / f"camera-none-{lang}.png"))
        assert not page.evaluate(TOO_WIDE)
        page.context.close()


def service_on(tmp_path: Path, camera: dict[str, Any]) -> tuple[Service, Any]:
    from companion.sim.rendered_table import for_config

    config = load(None, {"camera": camera, "data": {"dir": str(tmp_path / "data")}, "server": {"pin": "2468"},
                         "panel": {"enabled": False}, "confirm": {"auto_seconds": 0.3}})
    service = Service(config, rendered=for_config(config) if camera["source"] == "render" else None)
    service.start()
    return service, start(service.app, "127.0.0.1", 0, threads=16)


def test_a_camera_that_does_not_answer_is_said_and_no_picture_asked(browser, tmp_path):
    service, running = service_on(tmp_path, {"source": str(tmp_path / "no-such-video.mp4")})
    try:
        for lang, locale in LANGS[1:]:  # the words of the two other languages
            t = texts(lang)
            page, seen = open_page(browser, f"{running.url}/health?lang={lang}", locale)
            page.wait_for_function("document.getElementById('health').dataset.camera === 'retrying'", timeout=10000)
            page.wait_for_timeout(WATCH_MS)
            assert seen["frames"] == [] and seen["console"] == []
            values = shown(page)
            assert values["status"] == t["cam_retrying"]
            assert values["frames"] == t["cam_frames_value"].replace("{n}", "0").replace("{bad}", "0")
            assert values["panel"] == t["cam_panel_none"]
            assert "no-such-video.mp4" in values["source"]
            labels = " ".join(page.eval_on_selector_all("#health dt", "(ds) => ds.map((d) => d.textContent)"))
            for raw in RAW:
                assert raw not in labels, (lang, raw)
            page.screenshot(path=str(SHOTS / f"camera-retrying-{lang}.png"))
            page.context.close()
    finally:
        running.stop()
        service.stop()


def test_the_drawn_camera_is_shown_with_its_state_in_the_phones_language(browser, tmp_path):
    service, running = service_on(tmp_path, {"source": "render", "render_seed": 10, "render_speed": 1.0})
    try:
        t = texts("hu")
        page, seen = open_page(browser, f"{running.url}/health?lang=hu", "hu-HU")
        page.wait_for_function("document.getElementById('frame').naturalWidth > 0 && !document.getElementById('frame').hidden",
                               timeout=20000)
        page.wait_for_function("document.getElementById('health').dataset.camera === 'ok'")
        status = shown(page)["status"]
        head, tail = t["cam_ok"].split("{fps}")
        assert status.startswith(head) and status.endswith(tail), status
        assert seen["console"] == []
        assert page.get_attribute("#frame", "alt") == t["cam_frame_alt"]
        page.screenshot(path=str(SHOTS / "camera-render-hu.png"), full_page=True)
        assert not page.evaluate(TOO_WIDE)
        page.context.close()
    finally:
        running.stop()
        service.stop()
