"""The avahi service file: phones and apps that browse for web servers (``_http._tcp``) over
mDNS find the scoreboard by name. Checked against avahi's own DTD (``avahi-service.dtd``; by
xmllint where it and the DTD are installed, and by its content model here everywhere), on the
port of the Pi's configuration; and installed by install.sh with the configured port."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from companion.config import load

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SERVICE = DEPLOY / "companion-avahi.service"
DTD = Path("/usr/share/avahi/avahi-service.dtd")  # Debian's avahi-daemon


def check_content_model(root: ET.Element) -> None:
    """avahi-service.dtd: service-group (name, service+); service (type, subtype*, domain-name?,
    host-name?, port, txt-record*); name's replace-wildcards yes|no; protocol ipv4|ipv6|any."""
    assert root.tag == "service-group" and not root.attrib
    tags = [child.tag for child in root]
    assert tags[0] == "name" and tags[1:] and set(tags[1:]) == {"service"}, tags
    assert root[0].get("replace-wildcards", "no") in ("yes", "no")
    order = ["type", "subtype", "domain-name", "host-name", "port", "txt-record"]
    for service in root.findall("service"):
        assert service.get("protocol", "any") in ("ipv4", "ipv6", "any")
        children = [c.tag for c in service]
        assert all(t in order for t in children), children
        assert children == sorted(children, key=order.index), f"out of the DTD's order: {children}"
        assert children.count("type") == 1 and children.count("port") == 1
        assert children.count("domain-name") <= 1 and children.count("host-name") <= 1
        assert service.findtext("port", "").isdigit() and 0 < int(service.findtext("port")) < 65536


def test_the_file_announces_the_scoreboard_as_a_web_server_on_the_pis_port():
    root = ET.parse(SERVICE).getroot()
    check_content_model(root)
    assert root.findtext("name") == "companion scoreboard on %h" and root.find("name").get("replace-wildcards") == "yes"
    (service,) = root.findall("service")
    assert service.findtext("type") == "_http._tcp"
    assert int(service.findtext("port")) == load(DEPLOY / "companion.toml")["server"]["port"]
    assert [t.text for t in service.findall("txt-record")] == ["path=/"]  # DNS-SD's key for a web page's path


@pytest.mark.skipif(shutil.which("xmllint") is None or not DTD.is_file(),
                    reason="xmllint (libxml2-utils) or avahi's DTD (avahi-daemon) is not installed")
def test_xmllint_validates_it_against_avahis_dtd(tmp_path: Path):
    def valid(path: Path) -> subprocess.CompletedProcess:
        return subprocess.run(["xmllint", "--noout", "--nonet", "--dtdvalid", str(DTD), str(path)],
                              capture_output=True, text=True)

    assert valid(SERVICE).returncode == 0, valid(SERVICE).stderr
    # the check is not vacuous: a port before the type is refused
    wrong = tmp_path / "wrong.service"
    wrong.write_text(SERVICE.read_text().replace("<type>_http._tcp</type>\n    <port>8000</port>",
                                                 "<port>8000</port>\n    <type>_http._tcp</type>"))
    assert valid(wrong).returncode != 0


def test_install_sh_writes_it_with_the_configured_port(tmp_path: Path):
    conf = tmp_path / "etc"
    conf.mkdir()
    (conf / "companion.toml").write_text("[server]\nport = 8123\n")
    services = tmp_path / "avahi" / "services"
    script = (f'set -euo pipefail; source "{DEPLOY / "install.sh"}"; CONF_DIR="{conf}"; AVAHI_DIR="{services}"; '
              f'install_avahi_service "{DEPLOY.parent}"')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert f"announced as _http._tcp on port 8123 ({services}/companion.service)" in out.stdout
    written = services / "companion.service"
    assert written.stat().st_mode & 0o777 == 0o644  # avahi-daemon runs as its own user
    root = ET.parse(written).getroot()
    check_content_model(root)
    assert root.find("service").findtext("port") == "8123"
