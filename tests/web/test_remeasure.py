"""Exposure and white balance measured again on request from the health page (issue 25): a real
service (its live loop reading a USB camera whose frames are the recorded example frame, through
UsbSource with a stand-in for OpenCV's VideoCapture) behind a real server on loopback. The
request needs the PIN; once asked, the camera goes back to automatic, and the health shows it
measuring and then held again, at a later time. In a browser, the page's button asks, after a
confirmation in the phone's language."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import pytest

from companion.config import load
from companion.live.camera import CameraSettings, ResilientCamera, UsbSource
from companion.live.service import Service
from companion.web.i18n import texts
from companion.web.server import Running, start
from tests.web.conftest import CHROMIUM, PHONE

PIN = "4321"
FRAME = cv2.imread(str(Path(__file__).resolve().parents[2] / "calibration" / "table.example-frame.jpg"))
LOCK_AFTER_S = 2.5  # longer than the health page's 2 s between reads, so it sees the measuring


class RecordedUsbCamera:
    """cv2.VideoCapture as a webcam answers: the recorded frame at each read; set(prop, value)
    kept; get(prop) what its automatic reached (exposure 156 × 100 µs, gain 64, 4600 K, focus 30)."""

    def __init__(self, target: Any):
        self.values = {cv2.CAP_PROP_EXPOSURE: 156.0, cv2.CAP_PROP_GAIN: 64.0,
                       cv2.CAP_PROP_WB_TEMPERATURE: 4600.0, cv2.CAP_PROP_FOCUS: 30.0}
        self.sets: list[tuple[int, float]] = []

    def isOpened(self) -> bool:
        return True

    def read(self):
        time.sleep(1 / 30)  # a webcam's pace
        return True, FRAME.copy()

    def set(self, prop: int, value: float) -> bool:
        self.sets.append((prop, value))
        self.values[prop] = value
        return True

    def get(self, prop: int) -> float:
        return self.values.get(prop, -1.0)

    def release(self) -> None:
        pass


def automatic_asked(cap: RecordedUsbCamera) -> int:
    """How often the camera was switched to automatic exposure (at the open and at each re-measure)."""
    return cap.sets.count((cv2.CAP_PROP_AUTO_EXPOSURE, 3))


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Service, Running, list[RecordedUsbCamera]]]:
    config = load(None, {"panel": {"enabled": False}, "data": {"dir": str(tmp_path)}, "server": {"pin": PIN}})
    service = Service(config)
    captures: list[RecordedUsbCamera] = []

    def opener(target: Any) -> RecordedUsbCamera:
        captures.append(RecordedUsbCamera(target))
        return captures[-1]

    settings = CameraSettings.from_config({"lock_after_s": LOCK_AFTER_S})
    service.live.camera = ResilientCamera(
        lambda: UsbSource(0, sysfs=tmp_path / "no-sysfs", settings=settings, opener=opener), "usb:0")
    service.start()  # the live loop's thread reads the camera from here on
    running = start(service.app, "127.0.0.1", 0, threads=8)
    try:
        yield service, running, captures
    finally:
        running.stop()
        service.stop()
        service.table.close()


def call(running: Running, method: str, path: str, pin: str | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(running.url + path, method=method, data=b"" if method == "POST" else None,
                                     headers={"X-Table-Pin": pin} if pin else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def camera_health(running: Running) -> dict[str, Any]:
    return call(running, "GET", "/api/health")[1]["camera"]["camera"]


def wait_for(running: Running, state: str, timeout: float = 10.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        cam = camera_health(running)
        if cam.get("controls_state") == state:
            return cam
        time.sleep(0.05)
    raise AssertionError(f"the camera never said {state!r}: {camera_health(running)}")


def test_the_pin_holder_asks_and_the_camera_measures_again_and_holds_new_values(table):
    service, running, captures = table
    first = wait_for(running, "locked")
    assert first["controls_measures"] == 1 and first["controls"].startswith("held: exposure 156")
    (cap,) = captures
    assert automatic_asked(cap) == 1

    # without the PIN, or with a wrong one: refused, nothing asked
    status, data = call(running, "POST", "/api/camera/remeasure")
    assert status == 403 and data["code"] == "PIN_REQUIRED"
    status, data = call(running, "POST", "/api/camera/remeasure", pin="0000")
    assert status == 403 and data["code"] == "BAD_PIN"
    time.sleep(0.3)
    assert camera_health(running)["controls_measures"] == 1 and automatic_asked(cap) == 1

    cap.values[cv2.CAP_PROP_EXPOSURE] = 80.0  # a lamp switched on: the automatic now reaches less
    status, data = call(running, "POST", "/api/camera/remeasure", pin=PIN)
    assert (status, data) == (202, {"asked": True})
    measuring = wait_for(running, "measuring", timeout=2.0)
    assert measuring["controls_measures"] == 2
    again = wait_for(running, "locked")
    assert again["controls_held_at"] > first["controls_held_at"] + LOCK_AFTER_S * 0.9
    assert again["controls"].startswith("held: exposure 80")
    assert automatic_asked(cap) == 2 and len(captures) == 1  # measured again on the same open camera, not reopened


def test_nothing_to_measure_again_is_409(tmp_path: Path):
    config = load(None, {"panel": {"enabled": False}, "data": {"dir": str(tmp_path)}, "server": {"pin": PIN}})
    service = Service(config)  # no camera configured
    running = start(service.app, "127.0.0.1", 0, threads=4)
    try:
        status, data = call(running, "POST", "/api/camera/remeasure", pin=PIN)
        assert status == 409 and data["code"] == "NO_CAMERA_CONTROLS"
    finally:
        running.stop()
        service.table.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_the_health_pages_button_asks_after_a_confirmation_in_the_phones_language(browser, table):
    service, running, captures = table
    t = texts("hu")
    first = wait_for(running, "locked")
    context = browser.new_context(viewport=PHONE, locale="hu-HU", color_scheme="dark")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    dialogs: list[str] = []

    def answer(dialog: Any) -> None:
        dialogs.append(dialog.message)
        if len(dialogs) == 1:
            dialog.dismiss()  # the first time: "no"
        else:
            dialog.accept()

    page.on("dialog", answer)

    def as_a_phone(route: Any) -> None:
        """The page as a phone gets it: loopback is the Pi's own screen, whose pages carry the PIN."""
        response = route.fetch()
        html = response.text().replace(f'"pin": "{PIN}"', '"pin": null')
        assert '"local": true' in html and PIN not in html
        route.fulfill(response=response, body=html.replace('"local": true', '"local": false'))

    page.route("**/health?lang=hu", as_a_phone)
    page.goto(f"{running.url}/health?lang=hu")
    button = page.locator("#remeasure")
    button.wait_for(state="visible", timeout=10000)
    assert button.text_content() == t["remeasure"]
    page.wait_for_function("document.querySelector('dd[data-key=controls]') !== null")
    assert page.text_content("dt[data-key=controls]") == t["cam_controls"]
    assert page.text_content("dd[data-key=controls]").startswith(t["cam_controls_locked"].split("{")[0])

    button.click()  # declined: nothing asked
    page.wait_for_function("!document.getElementById('toast').hidden")
    assert page.text_content("#toast") == t["remeasure_kept"]
    assert camera_health(running)["controls_measures"] == 1

    pin_row = page.locator(".pin-row")
    assert pin_row.is_hidden()
    button.click()  # confirmed, but this phone has no PIN yet: refused, and the field beside the button asks
    pin_row.wait_for(state="visible")
    assert pin_row.locator("label").text_content() == t["pin_enter"]
    assert page.text_content("#toast") == t["error"] + ": " + t["code_PIN_REQUIRED"]
    assert camera_health(running)["controls_measures"] == 1
    pin_row.locator("input").fill(PIN)
    button.click()  # confirmed with the PIN: asked
    page.wait_for_function(f"document.getElementById('toast').textContent === {json.dumps(t['remeasure_asked'])}")
    assert dialogs == [t["remeasure_confirm"]] * 3 and pin_row.is_hidden()
    page.wait_for_function("document.querySelector('dd[data-key=controls]').textContent === "
                           + json.dumps(t["cam_controls_measuring"]), timeout=5000)
    again = wait_for(running, "locked")
    assert again["controls_measures"] == 2 and again["controls_held_at"] > first["controls_held_at"]
    assert errors == []
    context.close()
