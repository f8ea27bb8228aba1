#!/usr/bin/env bash
# Install the companion on Raspberry Pi OS (64-bit, Bookworm or later) as a systemd service.
#
#   git clone … companion && cd companion
#   sudo deploy/install.sh [--hostname companion] [--no-start]   install, or upgrade to this checkout
#   sudo deploy/install.sh --kiosk [--kiosk-user pi]             also: the scoreboard full-screen on the Pi's screen
#   sudo deploy/install.sh --no-kiosk                            upgrade, and take the kiosk away
#   sudo deploy/install.sh --rollback                            back to the version before the last upgrade
#   sudo deploy/install.sh --uninstall [--purge]                 remove it (--purge: the games and settings too)
#
# What it does (safe to run again to upgrade):
#   - apt: python3-picamera2 (the camera; it cannot come from PyPI), python3-lgpio (GPIO for
#     gpiozero), python3-venv, avahi-daemon (the Pi answers as <hostname>.local);
#   - a new release in /opt/companion/releases/VERSION-DATE: a copy of this checkout (src) and its
#     own venv made with --system-site-packages (so it sees picamera2 and lgpio from apt), with
#     `pip install -e src[pi]`; then a smoke check of the new release (--version, replay, dice);
#   - only if all of that worked: a backup of the games, then /opt/companion/current switched to
#     the new release (/opt/companion/venv and src point through it), the one before kept as
#     /opt/companion/previous; a failed upgrade leaves the running version as it was;
#   - a system user `companion` in the `video` and `gpio` groups, data in /var/lib/companion;
#   - /etc/avahi/services/companion.service: phones and apps browsing for _http._tcp find the scoreboard;
#   - /etc/companion/companion.toml (kept if it exists) and the systemd unit, enabled and started;
#     if the new release does not answer on /api/health within a minute, it rolls back by itself;
#   - with --kiosk (kept on upgrades until --no-kiosk or --uninstall): Chromium full-screen on the
#     scoreboard at boot, from /etc/xdg/autostart on a desktop, or a cage unit on tty1 on Lite.
set -euo pipefail

PREFIX=/opt/companion
DATA_DIR=/var/lib/companion
CONF_DIR=/etc/companion
BACKUP_DIR=/var/backups/companion
SERVICE_USER=companion
UNIT=companion.service
UNIT_DIR=/etc/systemd/system
AVAHI_DIR=/etc/avahi/services
KIOSK_UNIT=companion-kiosk.service
AUTOSTART_DIR=/etc/xdg/autostart
PAM_DIR=/etc/pam.d
KIOSK=""           # "on" (--kiosk), "off" (--no-kiosk), "" (as it is)
KIOSK_USER=""
NEW_HOSTNAME=""
START=1
KEEP_BACKUPS=5
HEALTH_WAIT_S=60

usage() {
    sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
}

say() { printf '\n== %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

# -- releases: build one beside the running one, switch only when it works ----------------------

# The version in a checkout (companion/__init__.py), for the release's name.
source_version() {
    sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$1/companion/__init__.py" | head -n 1
}

# The release a link points to (its name), or "none".
release_of() {
    if [ -L "$1" ]; then basename "$(readlink "$1")"; else echo none; fi
}

# Build a release from the checkout $1 and check it; print its directory. On any failure the
# half-built release is removed and the status is not 0: nothing that runs has changed.
build_release() {
    local src=$1 version rel
    version=$(source_version "$src")
    [ -n "$version" ] || { echo "install.sh: no __version__ in $src/companion/__init__.py" >&2; return 1; }
    rel="$PREFIX/releases/$version-$(date +%Y%m%d-%H%M%S)"
    [ ! -e "$rel" ] || rel="$rel-$$"
    install -d -m 0755 "$PREFIX/releases" "$rel" "$rel/src"
    if ! build_into "$src" "$rel" >&2; then
        rm -rf "$rel"
        echo "install.sh: the new release was not installed (see above); still running: $(release_of "$PREFIX/current")" >&2
        return 1
    fi
    echo "$rel"
}

# Every step is checked by hand: this runs where the caller tests its status, and there bash
# ignores `set -e` (a failed pip would otherwise go on to the switch).
build_into() {
    local src=$1 rel=$2
    # A clean copy of the checkout (no .git, no venvs, no local data) that the service runs from.
    tar -C "$src" --exclude=.git --exclude=.venv --exclude=venv --exclude=data --exclude=test-output \
        --exclude='__pycache__' --exclude='*.egg-info' --exclude=build -cf - . | tar -C "$rel/src" -xf - \
        || { echo "install.sh: cannot copy $src to $rel/src"; return 1; }
    python3 -m venv --system-site-packages "$rel/venv" || { echo "install.sh: python3 -m venv failed"; return 1; }
    "$rel/venv/bin/pip" install --quiet --upgrade pip || { echo "install.sh: pip cannot upgrade itself"; return 1; }
    # Editable (-e), so the service runs the package from the release's src: the dice reader's
    # networks and the default colour profiles live in src/models, beside the package, and a
    # plain install would copy only the package into site-packages and leave them behind.
    "$rel/venv/bin/pip" install --quiet -e "$rel/src[pi]" \
        || { echo "install.sh: pip install of the new release failed"; return 1; }
    # The service's user cannot write there: compile the modules now, not at every start.
    "$rel/venv/bin/python" -m compileall -q "$rel/src/companion" >/dev/null \
        || { echo "install.sh: the new release's modules do not compile"; return 1; }
    # OpenCV's wheels bring numpy 2 into the venv; apt's simplejpeg (used by picamera2) is built
    # against Debian's numpy 1.x and then fails to import ("numpy.dtype size changed", picamera2
    # issues #1088, #1211). A simplejpeg wheel from PyPI inside the venv matches numpy 2.
    if ! "$rel/venv/bin/python" -c "import picamera2" 2>/dev/null; then
        echo "picamera2 does not import with the venv's numpy: installing simplejpeg into the venv"
        "$rel/venv/bin/pip" install --quiet --force-reinstall simplejpeg || return 1
    fi
    "$rel/venv/bin/python" -c "import picamera2, gpiozero, cv2" \
        || { echo "install.sh: the venv cannot import picamera2, gpiozero and cv2 together"; return 1; }
    smoke "$rel"
}

# The new release must run before anything switches to it: its version, a game log replayed to
# its known score, and the dice of the example frame read with its networks (from /, so no
# ./companion.toml or ./data is used).
smoke() {
    local rel=$1 want got
    want="companion $(source_version "$rel/src")"
    got=$(cd / && "$rel/venv/bin/companion" --version) || { echo "install.sh: smoke check: companion --version failed"; return 1; }
    [ "$got" = "$want" ] || { echo "install.sh: smoke check: --version says '$got', not '$want'"; return 1; }
    (cd / && "$rel/venv/bin/companion" replay "$rel/src/deploy/smoke-game.jsonl" --compact) \
        | grep -q '"scores":{"A":5,"B":0}' \
        || { echo "install.sh: smoke check: companion replay of deploy/smoke-game.jsonl is wrong"; return 1; }
    (cd / && "$rel/venv/bin/companion" dice "$rel/src/calibration/table.example-frame.jpg" --json >/dev/null) \
        || { echo "install.sh: smoke check: the new release cannot read dice (its models in $rel/src/models?)"; return 1; }
    echo "smoke check passed: $got"
}

# A backup of the games before the switch (a newer version may change the log's format; a
# rollback runs the older code on the same data). Warned about, never fatal: a damaged log is
# exactly what a newer version may be needed for.
backup_games() {
    local rel=$1 conf="$CONF_DIR/companion.toml"
    [ -f "$DATA_DIR/table.sqlite" ] || return 0
    install -d -m 0700 "$BACKUP_DIR"
    local args=(backup --out "$BACKUP_DIR")
    if [ -f "$conf" ]; then args+=(--config "$conf"); else args+=(--data-dir "$DATA_DIR"); fi
    if (cd / && "$rel/venv/bin/companion" "${args[@]}"); then
        # shellcheck disable=SC2012  # the names are ours: companion-backup-YYYYmmdd-HHMMSS.tar.gz
        ls -1t "$BACKUP_DIR"/companion-backup-*.tar.gz 2>/dev/null | tail -n +$((KEEP_BACKUPS + 1)) | xargs -r rm -f --
    else
        echo "install.sh: WARNING: the games could not be backed up before the upgrade (see above)" >&2
    fi
}

# Make the release $1 the current one; the current one becomes the previous one. Each link is
# replaced by a rename, so it always points at a whole release.
switch_to() {
    local rel=$1 old=""
    [ -L "$PREFIX/current" ] && old=$(readlink "$PREFIX/current")
    if [ -d "$PREFIX/venv" ] && [ ! -L "$PREFIX/venv" ]; then
        # the layout before releases: a venv and src of their own, which cannot move (the venv's
        # scripts name their paths); the service stops while they are replaced by links
        systemctl stop "$UNIT" 2>/dev/null || true
        rm -rf "$PREFIX/venv" "$PREFIX/src"
        echo "replaced the unversioned install in $PREFIX/venv and $PREFIX/src (nothing to roll back to yet)"
    fi
    if ! { ln -sfn "releases/$(basename "$rel")" "$PREFIX/.current.new" && mv -T "$PREFIX/.current.new" "$PREFIX/current"; }; then
        echo "install.sh: cannot switch $PREFIX/current to $rel" >&2
        return 1
    fi
    if [ -n "$old" ] && [ "$old" != "releases/$(basename "$rel")" ]; then
        ln -sfn "$old" "$PREFIX/.previous.new"
        mv -T "$PREFIX/.previous.new" "$PREFIX/previous"
    fi
    local name
    for name in venv src; do
        if [ ! -L "$PREFIX/$name" ]; then
            ln -sfn "current/$name" "$PREFIX/.$name.new"
            mv -T "$PREFIX/.$name.new" "$PREFIX/$name"
        fi
    done
}

# Every release but the current and the previous one is removed.
prune_releases() {
    local keep_cur keep_prev dir
    keep_cur=$(release_of "$PREFIX/current")
    keep_prev=$(release_of "$PREFIX/previous")
    for dir in "$PREFIX"/releases/*/; do
        [ -d "$dir" ] || continue
        case "$(basename "$dir")" in
            "$keep_cur"|"$keep_prev") ;;
            *) rm -rf "$dir" ;;
        esac
    done
}

# The port of the configuration (8000 when it names none).
service_port() {
    local port=""
    [ -f "$CONF_DIR/companion.toml" ] && port=$(sed -n 's/^port *= *\([0-9][0-9]*\).*/\1/p' "$CONF_DIR/companion.toml" | head -n 1)
    echo "${port:-8000}"
}

# Where the service listens, as this machine reaches it: the configured address, or loopback
# when it listens on every address (the default).
service_host() {
    local host=""
    [ -f "$CONF_DIR/companion.toml" ] && host=$(sed -n 's/^host *= *"\([^"]*\)".*/\1/p' "$CONF_DIR/companion.toml" | head -n 1)
    case "$host" in
        ""|0.0.0.0|::) echo 127.0.0.1 ;;
        *:*) echo "[$host]" ;;
        *) echo "$host" ;;
    esac
}

# True once the service answers /api/health with its current release's version.
service_answers() {
    local want
    want=$(source_version "$PREFIX/current/src")
    "$PREFIX/current/venv/bin/python" - "$(service_host):$(service_port)" "$want" <<'PY'
import json, sys, urllib.request
try:
    with urllib.request.urlopen(f"http://{sys.argv[1]}/api/health", timeout=3) as r:
        sys.exit(0 if json.load(r).get("companion") == sys.argv[2] else 1)
except Exception:
    sys.exit(1)
PY
}

# Restart the unit and wait until it answers; false when it never does.
restart_and_check() {
    systemctl restart "$UNIT" || return 1
    local waited=0
    while [ "$waited" -lt "$HEALTH_WAIT_S" ]; do
        if service_answers; then return 0; fi
        sleep 2
        waited=$((waited + 2))
    done
    return 1
}

# Switch current and previous, restart, and check. Status 1 when there is nothing to go back to.
rollback() {
    if ! { [ -L "$PREFIX/previous" ] && [ -d "$PREFIX/$(readlink "$PREFIX/previous")" ]; }; then
        echo "install.sh: nothing to roll back to: no previous release in $PREFIX (only an upgrade keeps one)" >&2
        return 1
    fi
    local from to
    from=$(readlink "$PREFIX/current")
    to=$(readlink "$PREFIX/previous")
    if ! { ln -sfn "$to" "$PREFIX/.current.new" && mv -T "$PREFIX/.current.new" "$PREFIX/current"; }; then
        echo "install.sh: cannot switch $PREFIX/current back to $to" >&2
        return 1
    fi
    ln -sfn "$from" "$PREFIX/.previous.new"
    mv -T "$PREFIX/.previous.new" "$PREFIX/previous"
    echo "rolled back from $(basename "$from") to $(basename "$to") (the data and configuration are not changed;"
    echo "  a backup taken before the upgrade is in $BACKUP_DIR)"
}

# The upgrade itself: build and check a release from $1, back up, switch; with START=1 restart,
# and go back by itself when the new release does not answer.
upgrade() {
    local src=$1 rel
    rel=$(build_release "$src") || return 1
    backup_games "$rel"
    switch_to "$rel" || return 1
    prune_releases
    echo "current: $(release_of "$PREFIX/current"), previous: $(release_of "$PREFIX/previous")"
}

# After the unit is in place: start the new release, and roll back when it does not answer.
start_checked() {
    [ "$START" -eq 1 ] || return 0
    if restart_and_check; then
        echo "the companion answers: $(release_of "$PREFIX/current")"
        return 0
    fi
    echo "install.sh: the new release did not answer on http://$(service_host):$(service_port)/api/health within ${HEALTH_WAIT_S} s" >&2
    journalctl -u "$UNIT" -n 20 --no-pager 2>/dev/null || true
    if rollback && restart_and_check; then
        die "rolled back: the companion runs $(release_of "$PREFIX/current") again"
    fi
    die "the companion does not answer, and there was no working release to go back to: journalctl -u companion"
}

# The scoreboard announced over DNS-SD as a web server (_http._tcp) on the configured port, so
# that phones and apps that browse for one list it; avahi-daemon reads the folder by itself.
install_avahi_service() {
    local src=$1 port
    port=$(service_port)
    install -d -m 0755 "$AVAHI_DIR"
    if ! { sed "s|<port>[0-9]*</port>|<port>$port</port>|" "$src/deploy/companion-avahi.service" >"$AVAHI_DIR/.companion.service.new" \
           && chmod 0644 "$AVAHI_DIR/.companion.service.new" \
           && mv -f "$AVAHI_DIR/.companion.service.new" "$AVAHI_DIR/companion.service"; }; then
        echo "install.sh: cannot write $AVAHI_DIR/companion.service" >&2
        return 1
    fi
    echo "announced as _http._tcp on port $port ($AVAHI_DIR/companion.service)"
}

# -- the kiosk: the scoreboard full-screen on the Pi's own screen --------------------------------

# A display manager (lightdm on Raspberry Pi OS with a desktop) starts a desktop session, which
# runs the XDG autostart entries; without one (Lite) nothing draws on the screen but cage.
has_desktop() {
    [ -e "$UNIT_DIR/display-manager.service" ] || [ -L "$UNIT_DIR/display-manager.service" ]
}

kiosk_installed() {
    [ -f "$UNIT_DIR/$KIOSK_UNIT" ] || [ -f "$AUTOSTART_DIR/companion-kiosk.desktop" ]
}

# Who the screen's session runs as: --kiosk-user, else the user of the kiosk already installed,
# else whoever ran sudo, else the first user Raspberry Pi OS made (uid 1000). Never root.
kiosk_user() {
    local user=$KIOSK_USER
    [ -n "$user" ] || [ ! -f "$UNIT_DIR/$KIOSK_UNIT" ] || user=$(sed -n 's/^User=//p' "$UNIT_DIR/$KIOSK_UNIT" | head -n 1)
    [ -n "$user" ] || user=${SUDO_USER:-}
    [ -n "$user" ] || user=$(getent passwd 1000 | cut -d: -f1)
    case "$user" in
        ""|root) echo "install.sh: name the user the screen runs as: --kiosk-user pi" >&2; return 1 ;;
    esac
    echo "$user"
}

# Write the kiosk for the release in $1: an autostart entry on a desktop, or the cage unit on tty1
# (with its PAM service) on a console-only system, each opening http://127.0.0.1:PORT/.
install_kiosk() {
    local src=$1 port user
    port=$(service_port)
    if has_desktop; then
        install -d -m 0755 "$AUTOSTART_DIR"
        { sed "s|^Exec=\(.*kiosk.sh\) [0-9]*$|Exec=\1 $port|" "$src/deploy/companion-kiosk.desktop" \
            >"$AUTOSTART_DIR/companion-kiosk.desktop" && chmod 0644 "$AUTOSTART_DIR/companion-kiosk.desktop"; } \
            || { echo "install.sh: cannot write $AUTOSTART_DIR/companion-kiosk.desktop" >&2; return 1; }
        echo "kiosk: the desktop opens http://127.0.0.1:$port/ full-screen when it starts ($AUTOSTART_DIR/companion-kiosk.desktop)"
        return 0
    fi
    user=$(kiosk_user) || return 1
    install -d -m 0755 "$UNIT_DIR" "$PAM_DIR"
    { sed -e "s|@USER@|$user|" -e "s|@PORT@|$port|" "$src/deploy/companion-kiosk.service" >"$UNIT_DIR/$KIOSK_UNIT" \
        && chmod 0644 "$UNIT_DIR/$KIOSK_UNIT" \
        && install -m 0644 "$src/deploy/companion-kiosk.pam" "$PAM_DIR/companion-kiosk"; } \
        || { echo "install.sh: cannot write $UNIT_DIR/$KIOSK_UNIT" >&2; return 1; }
    systemctl daemon-reload
    systemctl enable "$KIOSK_UNIT"
    echo "kiosk: cage opens http://127.0.0.1:$port/ full-screen on tty1 as '$user' at boot ($UNIT_DIR/$KIOSK_UNIT)"
}

remove_kiosk() {
    kiosk_installed || [ -f "$PAM_DIR/companion-kiosk" ] || return 0
    if [ -f "$UNIT_DIR/$KIOSK_UNIT" ]; then
        systemctl disable --now "$KIOSK_UNIT" 2>/dev/null || true
    fi
    rm -f "$UNIT_DIR/$KIOSK_UNIT" "$PAM_DIR/companion-kiosk" "$AUTOSTART_DIR/companion-kiosk.desktop"
    systemctl daemon-reload 2>/dev/null || true
    echo "removed the kiosk (the scoreboard no longer opens on the Pi's screen at boot)"
}

# The browser and, without a desktop, cage. Raspberry Pi OS Bookworm's browser is chromium-browser;
# Debian's (and later Raspberry Pi OS's) is chromium.
kiosk_packages() {
    local browser=chromium
    apt-cache show chromium-browser >/dev/null 2>&1 && browser=chromium-browser
    if has_desktop; then echo "$browser"; else echo "$browser cage"; fi
}

# Stop and disable the unit, remove the program; the data, configuration and backups stay
# unless $1 is "purge" (then they go too, with the service's user).
uninstall() {
    local purge=${1:-}
    case "$PREFIX" in ""|/) echo "install.sh: refusing to remove the prefix '$PREFIX'" >&2; return 1 ;; esac
    remove_kiosk
    systemctl disable --now "$UNIT" 2>/dev/null || true
    rm -f "$UNIT_DIR/$UNIT" "$AVAHI_DIR/companion.service"
    systemctl daemon-reload 2>/dev/null || true
    rm -rf "$PREFIX"
    echo "removed the service ($UNIT) and the program ($PREFIX: every release and its venv)"
    if [ "$purge" = purge ]; then
        rm -rf "$DATA_DIR" "$CONF_DIR" "$BACKUP_DIR"
        if id "$SERVICE_USER" >/dev/null 2>&1; then userdel "$SERVICE_USER" 2>/dev/null || true; fi
        echo "removed the games, calibration and colour profiles ($DATA_DIR), the configuration and PIN"
        echo "  ($CONF_DIR), the backups taken at upgrades ($BACKUP_DIR) and the user '$SERVICE_USER'"
    else
        echo "kept, to install again or to take away:"
        echo "  $DATA_DIR   the games (table.sqlite), table.json, colours.json"
        echo "  $CONF_DIR   companion.toml and environment (the PIN)"
        [ -d "$BACKUP_DIR" ] && echo "  $BACKUP_DIR   the backups taken before each upgrade"
        echo "  the user '$SERVICE_USER'; remove all of it with: sudo $0 --uninstall --purge"
    fi
    echo "the apt packages (python3-picamera2, python3-lgpio, avahi-daemon, …) stay: other programs may use them"
}

main() {
    local mode=install purge=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --hostname) NEW_HOSTNAME="${2:?--hostname needs a name}"; shift 2 ;;
            --no-start) START=0; shift ;;
            --rollback) mode=rollback; shift ;;
            --uninstall) mode=uninstall; shift ;;
            --purge) purge=purge; shift ;;
            --kiosk) KIOSK=on; shift ;;
            --no-kiosk) KIOSK=off; shift ;;
            --kiosk-user) KIOSK_USER="${2:?--kiosk-user needs a user}"; KIOSK=on; shift 2 ;;
            -h|--help) usage; exit 0 ;;
            *) echo "install.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        esac
    done

    if [ -n "$purge" ] && [ "$mode" != uninstall ]; then
        echo "install.sh: --purge goes with --uninstall" >&2
        exit 2
    fi
    if [ -n "$KIOSK" ] && [ "$mode" != install ]; then
        echo "install.sh: --kiosk and --no-kiosk go with an install or upgrade" >&2
        exit 2
    fi
    [ "$(id -u)" -eq 0 ] || die "run it as root: sudo $0"
    if [ "$mode" = uninstall ]; then
        uninstall "$purge" || exit 1
        exit 0
    fi
    if [ "$mode" = rollback ]; then
        rollback || exit 1
        if [ "$START" -eq 1 ]; then
            restart_and_check || die "the companion does not answer after the rollback: journalctl -u companion"
            echo "the companion answers: $(release_of "$PREFIX/current")"
        fi
        exit 0
    fi

    local src
    src=$(cd "$(dirname "$0")/.." && pwd)
    [ -f "$src/pyproject.toml" ] || die "run it from a companion checkout ($src has no pyproject.toml)"

    # -- the system: 64-bit Raspberry Pi OS, Bookworm or later
    # the userland counts, not the kernel: 32-bit Raspberry Pi OS on a Pi 4/5 boots a 64-bit kernel
    # (uname -m says aarch64) and then finds no armhf wheel of OpenCV, which pip tries to build for hours
    local arch
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

    say "configuration in $CONF_DIR"
    install -d -m 0755 "$CONF_DIR"
    if [ ! -f "$CONF_DIR/companion.toml" ]; then
        install -m 0644 "$src/deploy/companion.toml" "$CONF_DIR/companion.toml"
        echo "wrote $CONF_DIR/companion.toml (edit it, then: sudo systemctl restart companion)"
    else
        echo "kept your $CONF_DIR/companion.toml"
    fi
    if [ ! -f "$CONF_DIR/environment" ]; then
        install -m 0640 -g "$SERVICE_USER" /dev/null "$CONF_DIR/environment"
        echo "# COMPANION_PIN=1234" >"$CONF_DIR/environment"
    fi

    say "the program: a new release in $PREFIX/releases (running now: $(release_of "$PREFIX/current"))"
    install -d -m 0755 "$PREFIX"
    upgrade "$src" || die "the upgrade stopped before anything was switched: the companion runs as before"

    say "network name"
    if [ -n "$NEW_HOSTNAME" ]; then
        if command -v raspi-config >/dev/null 2>&1; then
            raspi-config nonint do_hostname "$NEW_HOSTNAME"
        else
            hostnamectl set-hostname "$NEW_HOSTNAME"
        fi
    fi
    systemctl enable --now avahi-daemon
    install_avahi_service "$src" || die "cannot announce the scoreboard to avahi"
    local name
    name=$(hostnamectl --static 2>/dev/null || hostname)
    [ -n "$NEW_HOSTNAME" ] && name=$NEW_HOSTNAME

    say "systemd service"
    install -m 0644 "$src/deploy/companion.service" "$UNIT_DIR/$UNIT"
    systemctl daemon-reload
    systemctl enable "$UNIT"
    start_checked

    if [ "$KIOSK" = off ]; then
        say "kiosk"
        remove_kiosk
    elif [ "$KIOSK" = on ] || kiosk_installed; then
        say "kiosk: the scoreboard on the Pi's own screen"
        # shellcheck disable=SC2046  # the package names are words
        apt-get install -y -q --no-install-recommends $(kiosk_packages)
        install_kiosk "$src" || die "the kiosk was not installed (the companion itself runs)"
    fi

    say "done: open http://${name}.local:$(service_port) on a phone on the same Wi-Fi"
    echo "logs: journalctl -u companion -f"
    if [ -L "$PREFIX/previous" ]; then
        echo "back to $(release_of "$PREFIX/previous") if this one misbehaves: sudo $0 --rollback"
    fi
    if [ -n "$NEW_HOSTNAME" ]; then
        echo "the new name takes effect after a reboot: sudo reboot"
    fi
}

# Sourced (the tests call the functions on a temporary prefix), it defines them and stops here.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
