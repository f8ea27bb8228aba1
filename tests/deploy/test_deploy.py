"""The Pi deployment files agree with each other and with the program: the example config loads,
the unit runs the venv and config the installer creates, as the unprivileged user, restarting on
failure; the install script is valid bash (and shellcheck-clean where shellcheck is installed)."""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from companion.config import load

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read(DEPLOY / "companion.service")
    return parser


def test_example_config_loads_with_pi_settings():
    config = load(DEPLOY / "companion.toml")
    assert config["camera"]["source"] == "picamera2"
    assert config["data"]["dir"] == "/var/lib/companion"
    assert (config["panel"]["button_pin"], config["panel"]["buzzer_pin"]) == (17, 18)


def test_unit_runs_what_the_installer_installs_as_the_unprivileged_user():
    service = unit()["Service"]
    script = (DEPLOY / "install.sh").read_text()
    assert service["ExecStart"] == "/opt/companion/venv/bin/companion serve --config /etc/companion/companion.toml"
    # each release has its own venv; /opt/companion/venv points through /opt/companion/current to
    # the current one's (tests/deploy/test_install_releases.py runs that path)
    assert "PREFIX=/opt/companion" in script and 'python3 -m venv --system-site-packages "$rel/venv"' in script
    assert 'ln -sfn "current/$name"' in script
    assert 'CONF_DIR/companion.toml' in script and "CONF_DIR=/etc/companion" in script
    assert service["User"] == "companion" and "SERVICE_USER=companion" in script
    assert set(service["SupplementaryGroups"].split()) == {"video", "gpio"}
    assert "usermod -a -G video,gpio" in script
    assert service["Restart"] == "on-failure"
    assert service["WorkingDirectory"] == "/var/lib/companion" and "DATA_DIR=/var/lib/companion" in script
    assert "PrivateDevices" not in service  # the camera and GPIO devices must stay reachable
    assert "python3-picamera2" in script and "python3-lgpio" in script and "avahi-daemon" in script
    assert '"$rel/src[pi]"' in script


def test_install_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(DEPLOY / "install.sh")], check=True)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_install_script_is_shellcheck_clean():
    result = subprocess.run(["shellcheck", str(DEPLOY / "install.sh")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_install_script_refuses_to_run_as_a_normal_user(tmp_path: Path):
    if shutil.which("id") and subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip() == "0":
        pytest.skip("running as root: the script would really install")
    result = subprocess.run(["bash", str(DEPLOY / "install.sh")], capture_output=True, text=True)
    assert result.returncode == 1 and "sudo" in result.stderr


def test_install_script_rejects_unknown_options():
    result = subprocess.run(["bash", str(DEPLOY / "install.sh"), "--frobnicate"], capture_output=True, text=True)
    assert result.returncode == 2 and "--frobnicate" in result.stderr


def installer_copy(dest: Path) -> None:
    """Copy this checkout to ``dest`` with the installer's own tar command (its excludes)."""
    script = (DEPLOY / "install.sh").read_text()
    match = re.search(r'tar -C "\$src".*?\| tar -C "\$rel/src" -xf -', script, re.S)
    assert match, "install.sh no longer copies the checkout with tar"
    (dest / "src").mkdir(parents=True)
    subprocess.run(["bash", "-c", match.group(0)], check=True,
                   env={**os.environ, "src": str(DEPLOY.parent), "rel": str(dest)})


def test_the_installed_service_finds_its_models_from_its_copy_of_the_checkout(tmp_path: Path):
    """The dice networks and colour defaults live in models/, beside the package, not in it: the
    installer must run the package from its copy of the checkout (pip install -e), and the copy
    must hold them. A plain `pip install` left them behind and the service stopped at every start
    ("cannot read …/models/dice-colours.json"), restarted by systemd every two seconds."""
    script = (DEPLOY / "install.sh").read_text()
    assert 'pip" install --quiet -e "$rel/src[pi]"' in script
    installer_copy(tmp_path)
    assert (tmp_path / "src" / "models" / "dice-finder.onnx").is_file()
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}  # what the editable install does
    result = subprocess.run(
        [sys.executable, "-m", "companion", "dice", str(tmp_path / "src" / "calibration" / "table.example-frame.jpg"),
         "--json"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    line = json.loads(result.stdout)
    assert len(line["dice"]) == 8 and str(tmp_path / "src") in subprocess.run(
        [sys.executable, "-c", "import companion.vision.dice.reader as d; print(d.MODELS)"],
        cwd=elsewhere, env=env, capture_output=True, text=True).stdout
    # ... and the installer checks the same before it starts the service
    assert 'companion" dice "$rel/src/calibration/table.example-frame.jpg" --json' in script


@pytest.mark.skipif(os.geteuid() != 0, reason="the script stops first when not root")
def test_install_refuses_the_32_bit_os_on_a_64_bit_kernel(tmp_path: Path):
    """32-bit Raspberry Pi OS on a Pi 4/5 boots a 64-bit kernel (`uname -m` says aarch64) and its
    packages are armhf: pip then finds no OpenCV wheel and builds it for hours. The installer asks
    dpkg, and stops before it installs anything."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, out in (("uname", "aarch64"), ("dpkg", "armhf")):
        (bin_dir / name).write_text(f"#!/bin/sh\necho {out}\n")
        (bin_dir / name).chmod(0o755)
    result = subprocess.run(["bash", str(DEPLOY / "install.sh")], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.returncode == 1
    assert "64-bit Raspberry Pi OS is needed" in result.stderr and "armhf" in result.stderr
