"""The kiosk (install.sh --kiosk): the scoreboard full-screen in Chromium on the Pi's own screen.
The files' content; install.sh writing and removing them on a temporary prefix (the shims of
test_install_releases: systemctl only writes down what it was asked); and deploy/kiosk.sh opening
the scoreboard once the companion listens, with a stand-in chromium that writes down its arguments.
Not tested here: cage and Chromium themselves, logind's seat, a desktop session's autostart."""

from __future__ import annotations

import configparser
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.deploy.test_install_releases import Box, as_root, installed
from tests.loopback import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
FLAGS = ["--kiosk", "--noerrdialogs", "--disable-infobars"]


def unit(text: str) -> configparser.ConfigParser:
    parsed = configparser.ConfigParser(strict=False, interpolation=None)  # After= appears twice
    parsed.optionxform = str
    parsed.read_string(text)
    return parsed


def test_the_cage_unit_runs_the_kiosk_on_tty1_as_a_logged_in_user():
    u = unit((DEPLOY / "companion-kiosk.service").read_text())
    s = u["Service"]
    assert s["ExecStart"] == "/usr/bin/cage -- /opt/companion/src/deploy/kiosk.sh @PORT@"
    assert s["User"] == "@USER@" and s["PAMName"] == "companion-kiosk"  # a logind session: the screen and input
    assert s["TTYPath"] == "/dev/tty1" and s["StandardInput"] == "tty-fail" and s["Restart"] == "always"
    assert u["Unit"]["Conflicts"] == "getty@tty1.service"
    assert "companion.service" in u["Unit"]["Wants"]
    assert u["Install"]["WantedBy"] == "multi-user.target"  # Lite boots to multi-user, not graphical
    pam = (DEPLOY / "companion-kiosk.pam").read_text()
    assert "session  required pam_systemd.so" in pam


def test_the_desktop_entry_is_a_valid_autostart_entry():
    entry = unit((DEPLOY / "companion-kiosk.desktop").read_text())["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Exec"] == "/opt/companion/src/deploy/kiosk.sh 8000"
    if shutil.which("desktop-file-validate"):
        out = subprocess.run(["desktop-file-validate", str(DEPLOY / "companion-kiosk.desktop")],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stdout


@pytest.fixture
def box(tmp_path: Path) -> Box:
    b = Box(tmp_path)
    as_root(b)
    return b


def run(box: Box, body: str, **env: str) -> subprocess.CompletedProcess:
    dirs = f'AUTOSTART_DIR="{box.tmp / "xdg"}"; PAM_DIR="{box.tmp / "pam"}"; '
    return box.run(dirs + body, **env)


def test_console_only_gets_the_cage_unit_and_uninstall_removes_it(box: Box):
    installed(box)
    out = run(box, f'install_kiosk "{DEPLOY.parent}"', SUDO_USER="pi")
    assert out.returncode == 0, out.stderr
    written = (box.units / "companion-kiosk.service").read_text()
    assert "User=pi\n" in written and f"kiosk.sh {box.port}\n" in written and "@USER@" not in written and "@PORT@" not in written
    assert (box.tmp / "pam" / "companion-kiosk").read_text() == (DEPLOY / "companion-kiosk.pam").read_text()
    assert "systemctl enable companion-kiosk.service" in box.calls()
    assert not (box.tmp / "xdg").exists()
    assert "full-screen on tty1 as 'pi'" in out.stdout

    # an upgrade without --kiosk keeps it, for the same user (sudo by someone else does not change it)
    assert run(box, "kiosk_installed && kiosk_user", SUDO_USER="other").stdout.strip() == "pi"

    out = run(box, "main --uninstall")
    assert out.returncode == 0, out.stderr
    assert "systemctl disable --now companion-kiosk.service" in box.calls()
    assert not (box.units / "companion-kiosk.service").exists() and not (box.tmp / "pam" / "companion-kiosk").exists()
    assert "removed the kiosk" in out.stdout


def test_a_desktop_gets_an_autostart_entry_and_no_kiosk_removes_it(box: Box):
    box.units.mkdir()
    (box.units / "display-manager.service").symlink_to("/lib/systemd/system/lightdm.service")
    out = run(box, f'install_kiosk "{DEPLOY.parent}"')
    assert out.returncode == 0, out.stderr
    entry = box.tmp / "xdg" / "companion-kiosk.desktop"
    assert f"Exec=/opt/companion/src/deploy/kiosk.sh {box.port}\n" in entry.read_text()
    assert entry.stat().st_mode & 0o777 == 0o644
    assert not (box.units / "companion-kiosk.service").exists()
    assert run(box, "kiosk_packages", PATH=os.environ["PATH"]).stdout.split()[-1] != "cage"  # the desktop draws
    out = run(box, "remove_kiosk")
    assert out.returncode == 0 and not entry.exists()


def test_the_kiosk_is_never_roots_and_goes_only_with_an_install(box: Box):
    out = run(box, f'KIOSK_USER=root; install_kiosk "{DEPLOY.parent}"', SUDO_USER="")
    assert out.returncode == 1 and "--kiosk-user pi" in out.stderr
    out = run(box, "main --rollback --kiosk")
    assert out.returncode == 2 and "go with an install or upgrade" in out.stderr


def test_kiosk_sh_waits_for_the_companion_then_opens_it_full_screen(tmp_path: Path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    args = tmp_path / "args"
    (bin_dir / "chromium").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >"{args}"\n')
    (bin_dir / "chromium").chmod(0o755)
    port = free_port()
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "KIOSK_WAIT_S": "20"}
    proc = subprocess.Popen([str(DEPLOY / "kiosk.sh"), str(port)], env=env)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(1.5)  # nothing listens yet: it waits
        with socket.create_server(("127.0.0.1", port)):
            assert proc.wait(10) == 0
    finally:
        proc.kill()
    opened = args.read_text().split()
    assert opened[-1] == f"http://127.0.0.1:{port}/" and all(f in opened for f in FLAGS)


def test_kiosk_sh_without_a_browser_says_so(tmp_path: Path):
    out = subprocess.run([shutil.which("bash"), str(DEPLOY / "kiosk.sh"), str(free_port())], capture_output=True, text=True,
                         env={"PATH": str(tmp_path), "KIOSK_WAIT_S": "0"})
    assert out.returncode == 1 and "neither chromium-browser nor chromium" in out.stderr
