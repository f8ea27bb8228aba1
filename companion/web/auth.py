"""The table PIN: every request that changes something needs it; reading is open.

A request proves the PIN with the ``X-Table-Pin`` header, or with the session a phone gets after
entering the PIN once (``POST /api/login``): its cookie carries only a random session id, which
the server keeps while it runs; the PIN itself never leaves the server in a cookie.

Guessing is slowed down twice:

- **across all addresses**, a growing delay: after ``FREE_WRONG`` wrong PINs, each further wrong
  PIN (from any address) makes every address wait ``delay`` before the next PIN is even looked at,
  doubling up to ``MAX_DELAY_SECONDS``. A PIN sent during the wait is answered 429 with
  ``Retry-After`` and not checked. The count of wrong PINs falls by one every
  ``FORGIVE_SECONDS`` without a wrong one. So 250 addresses guess no faster than one: at most
  about one guess a minute, some 1,440 a day, against a million six-digit PINs. Phones that have
  logged in keep their session and are not slowed down;
- **per address**, ``MAX_WRONG`` wrong PINs within ``WINDOW_SECONDS`` lock that address out for
  ``LOCKOUT_SECONDS``, so one phone's typing does not make the others wait long.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

PIN_DIGITS = 6
MAX_WRONG = 5
WINDOW_SECONDS = 60.0
LOCKOUT_SECONDS = 60.0
FREE_WRONG = 5  # wrong PINs at the whole table before any delay (a few typos)
FIRST_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 60.0
FORGIVE_SECONDS = 600.0
MAX_SESSIONS = 1000
LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})


def generate_pin(digits: int = PIN_DIGITS) -> str:
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
    """Checks PINs, slows down wrong ones (across addresses and per address), and keeps the
    sessions of phones that logged in. Thread-safe; ``clock`` is injectable for tests."""

    def __init__(self, pin: str, clock=time.monotonic):
        self.pin = pin
        self._clock = clock
        self._wrong: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._failures = 0  # wrong PINs at the whole table, minus those forgiven
        self._last_failure = 0.0
        self._next_check = 0.0  # no PIN from anyone is looked at before this
        self._sessions: OrderedDict[str, None] = OrderedDict()

    def matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.pin.encode())

    def delay(self, failures: int) -> float:
        """The wait after the table's ``failures``-th wrong PIN."""
        if failures <= FREE_WRONG:
            return 0.0
        return min(MAX_DELAY_SECONDS, FIRST_DELAY_SECONDS * 2 ** min(failures - FREE_WRONG - 1, 30))

    def check(self, given: str | None, address: str) -> Verdict:
        """Verdict for a PIN ``given`` by ``address`` (None: no PIN given at all)."""
        now = self._clock()
        with self._lock:
            if given is None or given == "":
                return Verdict(False, "PIN_REQUIRED", "changing the game needs the table PIN")
            until = self._locked_until.get(address, 0.0)
            if until > now:
                return Verdict(False, "RATE_LIMITED",
                               "too many wrong PINs from this device: wait a minute and try again",
                               retry_after=max(1, int(until - now + 0.999)))
            if self._next_check > now and not is_loopback(address):  # the Pi's own screen shows the PIN
                return Verdict(False, "RATE_LIMITED",
                               "too many wrong PINs were tried at this table: wait a moment and try again",
                               retry_after=max(1, int(self._next_check - now + 0.999)))
            if self._failures and now - self._last_failure >= FORGIVE_SECONDS:
                forgiven = int((now - self._last_failure) // FORGIVE_SECONDS)
                self._failures = max(0, self._failures - forgiven)
                self._last_failure = now
            if self.matches(given):
                self._wrong.pop(address, None)
                return Verdict(True)
            self._failures += 1
            self._last_failure = now
            self._next_check = now + self.delay(self._failures)
            tries = self._wrong.setdefault(address, deque())
            while tries and tries[0] < now - WINDOW_SECONDS:
                tries.popleft()
            tries.append(now)
            if len(tries) >= MAX_WRONG:
                self._locked_until[address] = now + LOCKOUT_SECONDS
                tries.clear()
            return Verdict(False, "BAD_PIN", "that is not the table PIN")

    # -- sessions: a random id in the phone's cookie, kept here while the server runs
    def open_session(self) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[sid] = None
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return sid

    def session_ok(self, sid: object) -> bool:
        if not isinstance(sid, str):
            return False
        with self._lock:
            return sid in self._sessions

    def close_session(self, sid: object) -> None:
        if isinstance(sid, str):
            with self._lock:
                self._sessions.pop(sid, None)
