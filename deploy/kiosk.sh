#!/usr/bin/env bash
# The scoreboard full-screen on the Pi's own screen: wait until the companion answers on this
# machine, then open it in Chromium's kiosk mode (no address bar, no error dialogs or infobars).
# Started by companion-kiosk.service (under cage, on a console-only Raspberry Pi OS) or by
# /etc/xdg/autostart/companion-kiosk.desktop (the desktop), both written by install.sh --kiosk.
#   deploy/kiosk.sh [PORT]          (KIOSK_WAIT_S: how long to wait for the port, 90 s by default)
set -u
port=${1:-8000}
url="http://127.0.0.1:$port/"
# Chromium's error page for a refused connection does not come back by itself: at boot the
# browser can be up before the companion listens, so wait for the port first.
waited=0
while [ "$waited" -lt "${KIOSK_WAIT_S:-90}" ]; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 1
    waited=$((waited + 1))
done
# Raspberry Pi OS Bookworm calls it chromium-browser, Debian (and later Raspberry Pi OS) chromium.
browser=$(command -v chromium-browser || command -v chromium) \
    || { echo "kiosk.sh: neither chromium-browser nor chromium is installed" >&2; exit 1; }
exec "$browser" --kiosk --noerrdialogs --disable-infobars --no-first-run --password-store=basic \
    --ozone-platform-hint=auto "$url"
