"""The table PIN: every request that changes something needs it; reading is open.

A request proves the PIN with the ``X-Table-Pin`` header or with the session cookie the
controller gets after entering the PIN once (``POST /api/login``). Wrong PINs are counted per
client address: after ``MAX_WRONG`` wrong tries within ``WINDOW_SECONDS`` that address gets 429
for ``LOCKOUT_SECONDS``, so a four-digit PIN cannot be guessed from a phone in an evening.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass

MAX_WRONG = 5
WINDOW_SECONDS = 60.0
LOCKOUT_SECONDS = 60.0
LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})


def generate_pin(digits: int = 4) -> str:
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def is_loopback(address: str | None) -> bool:
    """The Pi's own screen (a kiosk browser on the Pi) asks from loopback."""
    return address in LOOPBACK


@dataclass
class Verdict:
    ok: bool
    code: str = ""
    message: str = ""
    retry_after: int = 0


class PinGuard:
    """Checks PINs and rate-limits wrong ones per client address. Thread-safe."""

    def __init__(self, pin: str, clock=time.monotonic):
        self.pin = pin
        self._clock = clock
        self._wrong: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}
        self._lock = threading.Lock()

    def matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.pin.encode())

    def check(self, given: str | None, address: str) -> Verdict:
        """Verdict for a PIN ``given`` by ``address`` (None: no PIN given at all)."""
        now = self._clock()
        with self._lock:
            until = self._locked_until.get(address, 0.0)
            if until > now:
                return Verdict(False, "RATE_LIMITED",
                               "too many wrong PINs from this device: wait a minute and try again",
                               retry_after=max(1, int(until - now + 0.999)))
            if given is None or given == "":
                return Verdict(False, "PIN_REQUIRED", "changing the game needs the table PIN")
            if self.matches(given):
                self._wrong.pop(address, None)
                return Verdict(True)
            tries = self._wrong.setdefault(address, deque())
            while tries and tries[0] < now - WINDOW_SECONDS:
                tries.popleft()
            tries.append(now)
            if len(tries) >= MAX_WRONG:
                self._locked_until[address] = now + LOCKOUT_SECONDS
                tries.clear()
            return Verdict(False, "BAD_PIN", "that is not the table PIN")
