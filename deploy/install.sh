#!/usr/bin/env bash
# Install the companion on Raspberry Pi OS (64-bit, Bookworm or later) as a systemd service.
#
#   git clone … companion && cd companion
#   sudo deploy/install.sh [--hostname companion] [--no-start]
#
# What it does (safe to run again to upgrade):
#   - apt: python3-picamera2 (the camera; it cannot come from PyPI), python3-lgpio (GPIO for
#     gpiozero), python3-venv, avahi-daemon (the Pi answers as <hostname>.local);
#   - a venv in /opt/companion/venv made with --system-site-packages (so it sees picamera2 and
#     lgpio from apt), then `pip install -e .[pi]` of a copy of this checkout in /opt/companion/src
#     (editable: the dice models and colour defaults in models/ are found beside the package);
#   - a system user `companion` in the `video` and `gpio` groups, data in /var/lib/companion;
#   - /etc/companion/companion.toml (kept if it exists) and the systemd unit, enabled and started.
set -euo pipefail

PREFIX=/opt/companion
DATA_DIR=/var/lib/companion
CONF_DIR=/etc/companion
SERVICE_USER=companion
NEW_HOSTNAME=""
START=1

usage() {
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
        --hostname) NEW_HOSTNAME="${2:?--hostname needs a name}"; shift 2 ;;
        --no-start) START=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

say() { printf '\n== %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run it as root: sudo $0"
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$SRC/pyproject.toml" ] || die "run it from a companion checkout ($SRC has no pyproject.toml)"

# -- the system: 64-bit Raspberry Pi OS, Bookworm or later
# the userland counts, not the kernel: 32-bit Raspberry Pi OS on a Pi 4/5 boots a 64-bit kernel
# (uname -m says aarch64) and then finds no armhf wheel of OpenCV, which pip tries to build for hours
arch=$(dpkg --print-architecture 2>/dev/null || echo unknown)
[ "$arch" = "arm64" ] || die "64-bit Raspberry Pi OS is needed (this system's packages are $arch): OpenCV has no 32-bit ARM wheels"
# shellcheck disable=SC1091
. /etc/os-release
case "${VERSION_CODENAME:-}" in
    bullseye|buster|stretch|"") die "Raspberry Pi OS Bookworm or later is needed (this is '${VERSION_CODENAME:-unknown}')" ;;
esac
python3 - <<'PY' || die "Python 3.11 or later is needed"
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

say "apt packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
    python3-venv python3-pip python3-picamera2 python3-lgpio avahi-daemon libnss-mdns

say "user '$SERVICE_USER' (groups video, gpio) and $DATA_DIR"
getent group gpio >/dev/null || groupadd --system gpio
if ! id "$SERVICE_USER" >/dev/null 2>&1; then
    useradd --system --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
fi
usermod -a -G video,gpio "$SERVICE_USER"
install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0750 "$DATA_DIR"

say "the program in $PREFIX"
# A clean copy of the checkout (no .git, no venvs, no local data) that the service runs from
# (emptied first, so a module removed upstream does not stay importable after an upgrade).
rm -rf "$PREFIX/src"
install -d -m 0755 "$PREFIX" "$PREFIX/src"
tar -C "$SRC" --exclude=.git --exclude=.venv --exclude=venv --exclude=data --exclude=test-output \
    --exclude='__pycache__' --exclude='*.egg-info' --exclude=build -cf - . | tar -C "$PREFIX/src" -xf -
if [ ! -x "$PREFIX/venv/bin/python" ]; then
    python3 -m venv --system-site-packages "$PREFIX/venv"
fi
"$PREFIX/venv/bin/pip" install --quiet --upgrade pip
# Editable (-e), so the service runs the package from $PREFIX/src: the dice reader's networks
# and the default colour profiles live in $PREFIX/src/models, beside the package, and a plain
# install would copy only the package into site-packages and leave them behind (the service
# would stop at every start with "cannot read .../models/dice-colours.json").
"$PREFIX/venv/bin/pip" install --quiet -e "$PREFIX/src[pi]"
# The service's user cannot write there: compile the modules now, not at every start.
"$PREFIX/venv/bin/python" -m compileall -q "$PREFIX/src/companion" >/dev/null
# OpenCV's wheels bring numpy 2 into the venv; apt's simplejpeg (used by picamera2) is built
# against Debian's numpy 1.x and then fails to import ("numpy.dtype size changed", picamera2
# issues #1088, #1211). A simplejpeg wheel from PyPI inside the venv matches numpy 2.
if ! "$PREFIX/venv/bin/python" -c "import picamera2" 2>/dev/null; then
    echo "picamera2 does not import with the venv's numpy: installing simplejpeg into the venv"
    "$PREFIX/venv/bin/pip" install --quiet --force-reinstall simplejpeg
fi
"$PREFIX/venv/bin/python" -c "import picamera2, gpiozero, cv2" \
    || die "the venv cannot import picamera2, gpiozero and cv2 together"
# The vision the service builds at start: the dice networks and colour profiles must load and
# read the dice of the example frame shipped in calibration/ (from /, so no ./data is used).
(cd / && "$PREFIX/venv/bin/companion" dice "$PREFIX/src/calibration/table.example-frame.jpg" --json >/dev/null) \
    || die "the installed companion cannot read dice (its models in $PREFIX/src/models?)"

say "configuration in $CONF_DIR"
install -d -m 0755 "$CONF_DIR"
if [ ! -f "$CONF_DIR/companion.toml" ]; then
    install -m 0644 "$SRC/deploy/companion.toml" "$CONF_DIR/companion.toml"
    echo "wrote $CONF_DIR/companion.toml (edit it, then: sudo systemctl restart companion)"
else
    echo "kept your $CONF_DIR/companion.toml"
fi
if [ ! -f "$CONF_DIR/environment" ]; then
    install -m 0640 -g "$SERVICE_USER" /dev/null "$CONF_DIR/environment"
    echo "# COMPANION_PIN=1234" >"$CONF_DIR/environment"
fi

say "network name"
if [ -n "$NEW_HOSTNAME" ]; then
    if command -v raspi-config >/dev/null 2>&1; then
        raspi-config nonint do_hostname "$NEW_HOSTNAME"
    else
        hostnamectl set-hostname "$NEW_HOSTNAME"
    fi
fi
systemctl enable --now avahi-daemon
NAME=$(hostnamectl --static 2>/dev/null || hostname)
[ -n "$NEW_HOSTNAME" ] && NAME=$NEW_HOSTNAME

say "systemd service"
install -m 0644 "$SRC/deploy/companion.service" /etc/systemd/system/companion.service
systemctl daemon-reload
systemctl enable companion.service
if [ "$START" -eq 1 ]; then
    systemctl restart companion.service
    sleep 2
    systemctl --no-pager --lines=5 status companion.service || true
fi

PORT=$(sed -n 's/^port *= *\([0-9][0-9]*\).*/\1/p' "$CONF_DIR/companion.toml" | head -n 1)
say "done: open http://${NAME}.local:${PORT:-8000} on a phone on the same Wi-Fi"
echo "logs: journalctl -u companion -f"
if [ -n "$NEW_HOSTNAME" ]; then
    echo "the new name takes effect after a reboot: sudo reboot"
fi
