"""What the person who sets up the Pi meets: ``companion serve`` as the systemd unit runs it
(a config file, a camera, the data directory in /var/lib/companion), when the files that set-up
leaves behind are damaged or missing. On a Pi that boots into the service, a start that fails is
a restart every two seconds and no scoreboard: the service must start and say what it did."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.loopback import free_port, get_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FRAME = ROOT / "calibration" / "table.example-frame.jpg"


def pi_config(tmp_path: Path, data_dir: Path, **camera: str) -> Path:
    """deploy/companion.toml with this machine's paths: a recorded table instead of picamera2."""
    frames = tmp_path / "frames"
    frames.mkdir(exist_ok=True)
    shutil.copy(EXAMPLE_FRAME, frames / "frame0.jpg")
    text = (ROOT / "deploy" / "companion.toml").read_text()
    text = text.replace('dir = "/var/lib/companion"', f'dir = "{data_dir}"')
    text = text.replace('source = "picamera2"', f'source = "{camera.get("source", frames)}"')
    text = text.replace("enabled = true", "enabled = false")
    config = tmp_path / "companion.toml"
    config.write_text(text)
    return config


def serve(config: Path, cwd: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "companion", "serve", "--config", str(config),
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "COMPANION_PIN": "2468"})
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"companion serve stopped ({proc.returncode}):\n{err[-3000:]}")
        try:
            get_json(base + "/api/state")
            return proc, base
        except (OSError, urllib.error.URLError):
            assert time.monotonic() < deadline, "companion serve did not answer"
            time.sleep(0.2)


def wait_for(what, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = what()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def stop(proc: subprocess.Popen) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    return err


def test_a_calibration_and_colours_left_empty_by_a_power_cut_do_not_stop_the_service(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "table.json").write_text("")              # the plug pulled while it was written
    (data / "colours.json").write_text('{"format": ')  # half a file
    proc, base = serve(pi_config(tmp_path, data), tmp_path)
    try:
        notices = get_json(base + "/api/health")["notices"]
        assert any("table.json" in n and "calibrated again from the markers" in n for n in notices), notices
        assert any("colours.json" in n and "shipped defaults" in n for n in notices), notices

        def vision_status() -> str:
            status = get_json(base + "/api/health")["camera"]["processors"]["vision"].get("status", "")
            return status if status.startswith("calibrated") else ""
        assert "from the markers" in wait_for(vision_status)
    finally:
        err = stop(proc)
    assert "Traceback" not in err and "WARNING" in err
    kept = list(data.glob("table.json.unusable-*"))
    assert len(kept) == 1 and kept[0].read_text() == ""   # kept for a person, not overwritten
    assert json.loads((data / "table.json").read_text())["markers"]  # the new calibration, whole
    assert not list(data.glob(".table.json.tmp-*"))


def companion(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


@pytest.mark.slow
def test_calibrating_on_the_pi_takes_the_frame_from_the_service_and_writes_where_it_reads(tmp_path: Path):
    """deploy/README.md's steps: the frame comes from the running service (the camera's own mode
    and size; no second program fighting it for the camera), and both calibrate commands, given
    the service's companion.toml, write into its data directory, wherever they are run from."""
    import cv2
    import numpy as np

    from tests.vision.test_colour import row_of_dice

    data = tmp_path / "data"
    config = pi_config(tmp_path, data)
    proc, base = serve(config, tmp_path)
    try:
        def plain_frame() -> bytes:
            try:
                with urllib.request.urlopen(base + "/api/frame.jpg?raw=1", timeout=5) as r:
                    return r.read()
            except urllib.error.HTTPError:  # 404 NO_FRAME before the first frame
                return b""
        jpeg = wait_for(plain_frame)
    finally:
        stop(proc)
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    (elsewhere / "frame.jpg").write_bytes(jpeg)
    frame = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    original = cv2.imread(str(EXAMPLE_FRAME))
    assert frame.shape == original.shape
    diff = np.abs(frame.astype(int) - original.astype(int))
    assert float(diff.mean()) < 3 and float(diff[:40, :400].mean()) < 3  # no status line drawn on it

    result = companion("calibrate", "table", "frame.jpg", "--config", str(config), cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert (data / "table.json").is_file() and (data / "table-overlay.png").is_file()

    names = ["white", "black", "red", "blue", "yellow", "green"]
    cv2.imwrite(str(elsewhere / "row.png"), row_of_dice(names))
    result = companion("calibrate", "colours", "--image", "row.png", "--colours", ",".join(names),
                       "--config", str(config), cwd=elsewhere)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (data / "colours.json").is_file() and not (elsewhere / "data").exists()


def test_a_calibration_that_cannot_be_written_says_so_without_a_traceback(tmp_path: Path):
    from companion.config import cannot_write

    (tmp_path / "afile").write_text("x")
    config = tmp_path / "c.toml"
    config.write_text(f'[data]\ndir = "{tmp_path / "afile"}"\n')
    result = companion("calibrate", "table", str(EXAMPLE_FRAME), "--config", str(config), cwd=tmp_path)
    assert result.returncode == 2 and "cannot write" in result.stderr and "Traceback" not in result.stderr
    # as the login user, in the service's /var/lib/companion (mode 0750, owned by companion)
    why = cannot_write("/var/lib/companion/table.json", PermissionError(13, "Permission denied"))
    assert "Permission denied" in why and "sudo -u companion" in why


@pytest.mark.parametrize("edit, words", [
    (("long_press_seconds = 1.0", "long_press_seconds = 0"),
     "'confirm.long_press_seconds' must be a hold time in seconds from 0.2 to 10, not 0"),
    (("fps = 15 ", "fps = 0 "), "'camera.fps' must be frames per second from 1 to 120, not 0"),
    (("width = 1280", "width = -5"), "'camera.width' must be a frame width in pixels from 32 to 10000, not -5"),
    (("button_pin = 17", "button_pin = 40"), "'panel.button_pin' must be a GPIO number (BCM) of the 40-pin header"),
])
def test_a_pi_config_value_out_of_range_stops_serve_with_its_name(tmp_path: Path, edit, words):
    """A hold of 0 s made every press of the button a long press — each confirm a reject — and
    pin 40 (the physical pin, not GPIO21) left the table with no button; both started quietly."""
    config = pi_config(tmp_path, tmp_path / "data")
    text = config.read_text()
    assert edit[0] in text
    config.write_text(text.replace(edit[0], edit[1]))
    result = companion("serve", "--config", str(config), "--port", str(free_port()), cwd=tmp_path)
    assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr


def test_a_zero_hold_time_would_make_every_press_a_reject():
    """Why the range: gpiozero fires when_held at once with hold_time 0 (on MockFactory pins)."""
    from gpiozero.pins.mock import MockFactory

    from companion.hardware import GpioPanel

    factory = MockFactory()
    panel = GpioPanel(17, 18, long_press_seconds=0.0, pin_factory=factory, quiet_seconds=0.05)
    presses: list[str] = []
    panel.on_short_press = lambda: presses.append("short")
    panel.on_long_press = lambda: presses.append("long")
    try:
        pin = factory.pin(17)
        pin.drive_low()
        time.sleep(0.08)
        pin.drive_high()
        time.sleep(0.1)
    finally:
        panel.close()
        factory.reset()
    assert presses == ["long"]


@pytest.mark.slow
def test_systemctl_stop_shuts_the_service_down_cleanly(tmp_path: Path):
    """systemd stops the unit with SIGTERM. Python's default ends the process on the spot (status
    -15, nothing closed: camera, streams, the buzzer's pin left as it was); now it leaves the way
    Ctrl-C does — camera and panel closed — with status 0 well within TimeoutStopSec."""
    import signal

    proc, base = serve(pi_config(tmp_path, tmp_path / "data"), tmp_path)
    wait_for(lambda: get_json(base + "/api/health")["camera"]["frames"] > 0)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err[-2000:]
    assert time.monotonic() - started < 10
    assert "companion: stopped" in err and "Traceback" not in err


def test_companion_help_starts_with_a_whole_sentence(tmp_path: Path):
    result = companion("--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "A game-table camera, a live scoreboard for phones, a button and a buzzer." in " ".join(result.stdout.split())
    assert "which provides" not in result.stdout  # the docstring's first line cut mid-sentence
