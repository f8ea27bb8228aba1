"""The confirm step between the camera's proposals and the table (DESIGN.md "The confirm step
is explicit").

A proposed event waits in :class:`~companion.table.Table` until someone confirms it:

- a **short press** of the panel's button confirms the oldest pending proposal;
- a **long press** rejects it;
- a **short press with nothing pending** records a miss (``{"type": "throw", "cup": "miss"}``)
  for the side on turn in 21 Exact (RULES.md E7: a miss changes nothing but the turn); in other
  games there is nothing to record and the buzzer says so (refused sound);
- a tap on a phone confirms through the web API (which calls :meth:`Confirmer.confirm`);
- with ``auto_seconds > 0`` (the demo) a proposal confirms itself after that delay.

The buzzer follows the table, whoever changed it: ``proposed`` when a new proposal appears,
``confirmed`` when an event is accepted, ``won`` when that event finishes the game, and
``refused`` when the rules refuse what was confirmed (or a press had nothing to do).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from companion.games.base import EventError, RuleError
from companion.hardware.panel import Panel
from companion.table import Table
from companion.table.log import NotStored
from companion.table.table import NO_SUCH_PROPOSAL

log = logging.getLogger(__name__)

Clock = Callable[[], float]


class Confirmer:
    """Connects a :class:`Panel` to a :class:`Table`. ``clock`` (seconds, monotonic) is injected
    so auto-confirm can be tested without waiting; :meth:`tick` does the auto-confirming and is
    called by the background thread (:meth:`start`) or directly."""

    def __init__(self, table: Table, panel: Panel, auto_seconds: float = 0.0,
                 clock: Clock = time.monotonic) -> None:
        self.table = table
        self.panel = panel
        self.auto_seconds = float(auto_seconds)
        self.clock = clock
        self.last: dict[str, Any] | None = None  # what the last press/confirm did, for health
        self._lock = threading.RLock()
        self._seen: dict[int, float] = {}  # proposal id -> when we first saw it (clock)
        self._game_id: int | None = None
        self._seq = 0
        self._finished = False
        self._stop = threading.Event()
        self._wake = threading.Event()  # a new proposal: the auto-confirm thread recomputes its wait
        self._thread: threading.Thread | None = None
        self._sync(table.state(), sound=False)
        self._unsubscribe = table.subscribe(self._on_change)
        panel.on_short_press = self.short_press
        panel.on_long_press = self.long_press

    # -- what the table did: sounds for every change, whoever made it
    def _on_change(self, state: dict[str, Any]) -> None:
        self._sync(state, sound=True)

    def _sync(self, state: dict[str, Any], sound: bool) -> None:
        with self._lock:
            now = self.clock()
            pending = {p["id"] for p in state.get("pending", [])}
            new = pending - set(self._seen)
            for pid in new:
                self._seen[pid] = now
            if new:
                self._wake.set()
            for pid in set(self._seen) - pending:
                del self._seen[pid]
            game_id, seq = state.get("game_id"), int(state.get("seq") or 0)
            finished = bool(state.get("finished"))
            accepted = game_id == self._game_id and seq > self._seq
            won = accepted and finished and not self._finished
            self._game_id, self._seq, self._finished = game_id, seq, finished
        if not sound:
            return
        if won:
            self.panel.sound("won")
        elif accepted:
            self.panel.sound("confirmed")
        elif new:
            self.panel.sound("proposed")

    # -- the button
    def short_press(self) -> dict[str, Any]:
        """Confirm the oldest pending proposal; with none, a miss for the thrower on turn."""
        oldest = self._oldest()
        if oldest is not None:
            return self.confirm(oldest, source="button")
        return self.miss()

    def long_press(self) -> dict[str, Any]:
        """Reject the oldest pending proposal (nothing pending: nothing happens, refused sound)."""
        oldest = self._oldest()
        if oldest is None:
            return self._done({"action": "nothing", "why": "no proposal to reject"}, refused=True)
        try:
            self.table.reject(oldest)
        except RuleError as err:  # confirmed or rejected elsewhere a moment ago
            return self._done({"action": "nothing", "why": err.message}, refused=True)
        return self._done({"action": "rejected", "proposal": oldest})

    def confirm(self, proposal_id: int, source: str = "button") -> dict[str, Any]:
        """Apply a pending proposal (a press, a phone tap, the demo's delay)."""
        try:
            self.table.confirm(proposal_id, source)
        except (RuleError, EventError, NotStored) as err:  # not stored: it stays pending, press again
            code = _code(err)
            if code == NO_SUCH_PROPOSAL:  # confirmed or rejected by someone else a moment ago
                return self._done({"action": "nothing", "proposal": proposal_id,
                                   "why": str(getattr(err, "message", err))})
            return self._done({"action": "refused", "proposal": proposal_id, "code": code,
                               "message": str(getattr(err, "message", err))}, refused=True)
        return self._done({"action": "confirmed", "proposal": proposal_id, "source": source})

    def miss(self) -> dict[str, Any]:
        """E7: a short press with nothing pending is a missed throw by the side on turn."""
        state = self.table.state()
        if state.get("game") != "exact21" or state.get("finished"):
            return self._done({"action": "nothing", "why": "no proposal to confirm"}, refused=True)
        side = state["detail"].get("turn")
        event = {"type": "throw", "side": side, "cup": "miss"}
        try:
            self.table.apply(event, source="button")
        except (RuleError, EventError, NotStored) as err:
            code = _code(err)
            return self._done({"action": "refused", "event": event, "code": code,
                               "message": str(getattr(err, "message", err))}, refused=True)
        return self._done({"action": "miss", "event": event, "thrower": state["detail"].get("thrower")})

    def _oldest(self) -> int | None:
        pending = self.table.pending()
        return min((p.id for p in pending), default=None)

    def _done(self, outcome: dict[str, Any], refused: bool = False) -> dict[str, Any]:
        self.last = outcome
        log.info("confirm: %s", outcome)
        if refused:
            self.panel.sound("refused")
        return outcome

    # -- auto-confirm (demo)
    def tick(self) -> list[dict[str, Any]]:
        """Confirm every proposal that has waited ``auto_seconds`` (oldest first)."""
        if self.auto_seconds <= 0:
            return []
        now = self.clock()
        with self._lock:
            due = sorted(pid for pid, seen in self._seen.items() if now - seen >= self.auto_seconds)
        return [self.confirm(pid, source="auto") for pid in due if self._is_pending(pid)]

    def _is_pending(self, proposal_id: int) -> bool:
        return any(p.id == proposal_id for p in self.table.pending())

    def next_due(self) -> float | None:
        """Seconds until the oldest waiting proposal is due (None: nothing waits)."""
        with self._lock:
            if not self._seen:
                return None
            return max(0.0, min(self._seen.values()) + self.auto_seconds - self.clock())

    def start(self, longest_wait: float = 1.0) -> None:
        """Auto-confirm in a background thread, each proposal when it is due (not polled)."""
        if self._thread is not None or self.auto_seconds <= 0:
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.is_set():
                due = self.next_due()
                self._wake.wait(longest_wait if due is None else min(due, longest_wait))
                self._wake.clear()
                if self._stop.is_set():
                    break
                try:
                    self.tick()
                except Exception:  # never let the demo's confirm loop die
                    log.exception("auto-confirm failed")
                if self.next_due() == 0.0:  # still due after a tick: do not spin on it
                    self._stop.wait(0.05)

        self._thread = threading.Thread(target=loop, daemon=True, name="auto-confirm")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None

    def close(self) -> None:
        self.stop()
        self._unsubscribe()
        self.panel.on_short_press = None
        self.panel.on_long_press = None

    def describe(self) -> dict[str, Any]:
        return {"auto_seconds": self.auto_seconds, "pending": len(self._seen), "last": self.last}


def _code(err: Exception) -> str:
    """What a refused press did, for health: the rule's code, BAD_EVENT, or NOT_STORED (the disk)."""
    if isinstance(err, RuleError):
        return err.code
    return "NOT_STORED" if isinstance(err, NotStored) else "BAD_EVENT"
