"""The support bundle from the running service: a real server on loopback, the bundle downloaded
over HTTP and opened as the tar it is; the PIN and a camera's password appear nowhere in it, and
every part that is missing or broken is a line in it, never a failed download."""

from __future__ import annotations

import io
import json
import logging
import shutil
import tarfile
import urllib.request
from pathlib import Path

import pytest

from companion.web import create_app, support
from companion.web.server import start

ROOT = Path(__file__).resolve().parents[2]
PIN = "837261"
CAMERA = "rtsp://admin:hunter2@10.0.0.9/stream1"
JOURNAL = f"""#!/bin/sh
echo "2024-05-01T20:00:00+0200 companion companion[812]: scoreboard: http://192.168.1.20:8000/"
echo "2024-05-01T20:00:00+0200 companion companion[812]: table PIN: {PIN} (config)   the controller asks for it"
echo "2024-05-01T20:00:01+0200 companion companion[812]: camera rtsp://admin:hunter2@10.0.0.9/stream1: trying again in 2 s"
echo "2024-05-01T20:00:02+0200 companion companion[812]: someone typed {PIN} somewhere"
"""


def members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = [m.name for m in tar]
        assert all(n.startswith("companion-support/") for n in names), names
        return {m.name.removeprefix("companion-support/"): tar.extractfile(m).read() for m in tar if m.isfile()}


def shim(folder: Path, name: str, text: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    (folder / name).chmod(0o755)


def assert_no_secret(inside: dict[str, bytes]) -> None:
    for name, data in inside.items():
        assert PIN.encode() not in data, f"the PIN is in {name}"
        assert b"hunter2" not in data, f"the camera's password is in {name}"


@pytest.fixture
def table_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copyfile(ROOT / "calibration" / "table.example.json", data / "table.json")
    (data / "colours.json").write_text('{"white": [1, 2,', encoding="utf-8")  # cut short
    return data


def test_the_health_page_downloads_a_bundle_without_the_pin(tmp_path, table_dir, monkeypatch):
    bin_dir = tmp_path / "bin"
    shim(bin_dir, "journalctl", JOURNAL)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    recent = support.RecentLog(lines=50)
    monkeypatch.setattr(support, "RECENT", recent)
    log = logging.getLogger("companion.test_support")
    log.addHandler(recent)
    log.setLevel(logging.INFO)
    try:
        log.info("a phone logged in with %s", PIN)
        log.info("camera %s opened", CAMERA)
    finally:
        log.removeHandler(recent)
    config_file = tmp_path / "companion.toml"
    config_file.write_text(f'[server]\npin = "{PIN}"\nport = 8000\n\n[data]\ndir = "{table_dir}"\n\n'
                           f'[camera]\nsource = "{CAMERA}"\n', encoding="utf-8")
    app = create_app({"data": {"dir": str(table_dir)}, "server": {"pin": PIN}, "camera": {"source": CAMERA}})
    app.extensions["companion"].config_file = config_file
    running = start(app, "127.0.0.1", 0, threads=8)
    try:
        base = f"http://127.0.0.1:{running.port}"
        with urllib.request.urlopen(f"{base}/health", timeout=10) as r:
            page = r.read().decode()
        assert 'href="/api/support.tar.gz"' in page and "Download the support bundle" in page
        with urllib.request.urlopen(f"{base}/api/support.tar.gz", timeout=30) as r:  # the Pi's own screen
            assert r.status == 200 and r.headers["Content-Type"] == "application/gzip"
            assert r.headers["Content-Disposition"].startswith('attachment; filename="companion-support-')
            data = r.read()
    finally:
        running.stop()
        app.extensions["companion"].table.close()

    inside = members(data)
    assert set(inside) == {"README.txt", "version.txt", "health.json", "config/companion.toml",
                           "config/effective.json", "calibration/table.json", "calibration/colours.json",
                           "log/journal.txt", "log/recent.txt", "platform.json"}
    assert_no_secret(inside)
    from companion import __version__

    assert inside["version.txt"].decode().startswith(f"companion {__version__}\n")
    health = json.loads(inside["health.json"])
    assert health["companion"] == __version__ and health["camera"]["configured"] is False
    assert health["pin_source"] == "config"
    toml = inside["config/companion.toml"].decode()
    assert 'pin = "<redacted>"' in toml and "rtsp://<redacted>@10.0.0.9/stream1" in toml and "port = 8000" in toml
    effective = json.loads(inside["config/effective.json"])
    assert effective["server"]["pin"] == "<redacted>" and effective["server"]["port"] == 8000
    assert effective["camera"]["source"] == "rtsp://<redacted>@10.0.0.9/stream1"
    assert inside["calibration/table.json"] == (table_dir / "table.json").read_bytes()
    # a broken calibration file is kept as it is (the helper needs to see it), and said so
    assert inside["calibration/colours.json"] == (table_dir / "colours.json").read_bytes()
    readme = inside["README.txt"].decode()
    assert "calibration/colours.json: " in readme and "is not valid JSON" in readme
    journal = inside["log/journal.txt"].decode()
    assert "the last 4 lines of journalctl -u companion" in journal
    assert "table PIN: <redacted> (config)" in journal and "someone typed <redacted> somewhere" in journal
    recent_text = inside["log/recent.txt"].decode()
    assert "a phone logged in with <redacted>" in recent_text and "camera rtsp://<redacted>@10.0.0.9" in recent_text
    facts = json.loads(inside["platform.json"])
    assert facts["python"] and facts["cpus"] >= 1 and "free_mb" in facts["disk"]
    assert str(facts["throttled"]).startswith("unavailable")  # not a Pi: said, not failed


def test_a_phone_needs_the_pin_for_the_bundle(tmp_path, table_dir):
    app = create_app({"data": {"dir": str(table_dir)}, "server": {"pin": PIN}})
    try:
        phone = app.test_client()
        phone.environ_base["REMOTE_ADDR"] = "192.168.1.33"
        refused = phone.get("/api/support.tar.gz")
        assert refused.status_code == 403 and refused.json["code"] == "PIN_REQUIRED"
        wrong = phone.get("/api/support.tar.gz", headers={"X-Table-Pin": "000000"})
        assert wrong.status_code == 403
        assert phone.post("/api/login", json={"pin": PIN}).status_code == 200  # the controller's login
        answer = phone.get("/api/support.tar.gz")
        assert answer.status_code == 200
        assert_no_secret(members(answer.data))
    finally:
        app.extensions["companion"].close()
        app.extensions["companion"].table.close()


class BrokenLive:
    """A camera loop whose health raises: the bundle is wanted most when something is broken."""

    demo = False

    def health(self):
        raise RuntimeError("the camera loop is wedged")

    def latest_jpeg(self, quality: int = 80, raw: bool = False):
        return None


def test_missing_and_broken_parts_are_lines_in_the_bundle(tmp_path, monkeypatch):
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))  # no journalctl, no dpkg
    monkeypatch.setattr(support, "RECENT", None)
    data_dir = tmp_path / "data"
    app = create_app({"data": {"dir": str(data_dir)}, "server": {"pin": PIN},
                      "calibration": {"colours": "none"}}, live=BrokenLive())
    try:
        answer = app.test_client().get("/api/support.tar.gz")  # the test client asks from loopback
        assert answer.status_code == 200
    finally:
        app.extensions["companion"].close()
        app.extensions["companion"].table.close()
    inside = members(answer.data)
    assert_no_secret(inside)
    readme = inside["README.txt"].decode()
    assert "health.txt: the health could not be read: RuntimeError: the camera loop is wedged" in readme
    assert inside["health.txt"].decode().startswith("the health could not be read")
    assert "config/companion.toml: no configuration file in use" in readme
    assert f"calibration/table.json: there is no {data_dir / 'table.json'}" in readme
    assert 'calibration/colours.json: [calibration] colours is "none"' in readme
    assert "log/journal.txt: journalctl is not on this machine" in readme
    assert "log/recent.txt" not in inside  # only `companion serve` keeps its lines
    assert json.loads(inside["platform.json"])["dpkg_architecture"].startswith("unavailable")


@pytest.mark.parametrize("text,expected", [
    ('[server]\npin = "123456"\n', '[server]\npin = "<redacted>"\n'),
    ("  pin='123456' # fixed\n", "  pin=\"<redacted>\" # fixed\n"),
    ('server.pin = "9999"\n', 'server.pin = "<redacted>"\n'),
    ('server = { port = 8000, pin = "9999" }\n', 'server = { port = 8000, pin = "<redacted>" }\n'),
    ('spin = 3\nport = 8000\n', 'spin = 3\nport = 8000\n'),
    ('source = "http://u:p@cam:8080/x"\n', 'source = "http://<redacted>@cam:8080/x"\n'),
    ("table PIN: 4711 (generated)\n", "table PIN: <redacted> (generated)\n"),
])
def test_redacting_a_configuration_and_a_log(text, expected):
    assert support.redact_text(text) == expected


def test_the_pin_itself_is_removed_wherever_it_stands_alone():
    assert support.redact_text("at 2024-05-01 pin 2024 x20245", pin="2024") == \
        "at <redacted>-05-01 pin <redacted> x20245"
    assert support.redact_text("ratio 0.2024 and 12", pin="12") == "ratio 0.2024 and 12"  # too short to hunt
