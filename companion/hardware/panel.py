"""The panel on the Pi: one button and one buzzer, behind one small interface.

A short press confirms what the camera proposed, a long press rejects it (what a press *means* is
decided by :mod:`companion.live.confirm`; the panel only tells short from long). The buzzer answers
with four sounds:

==========  ==============================  ==========================================
kind        active buzzer (``Buzzer``)      ``TonalBuzzer`` (PWM pin)
==========  ==============================  ==========================================
proposed    one short chirp                 a short high note
confirmed   two short beeps                 two rising notes
refused     one long buzz                   a long low note
won         four long beeps                 a little rising tune
==========  ==============================  ==========================================

Like gpiozero itself, the hardware sits behind a pin factory: :class:`GpioPanel` takes
``pin_factory`` (gpiozero's ``MockFactory`` in tests, the real one on a Pi). Where there is no
GPIO at all (a laptop, a container) :func:`make_panel` returns a :class:`NullPanel`, which says so
once in the log and otherwise stays silent. Sounds never block the caller.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

SOUNDS = ("proposed", "confirmed", "refused", "won")

# Active buzzer: (on seconds, off seconds, count) for gpiozero's Buzzer.beep.
BEEPS: dict[str, tuple[float, float, int]] = {
    "proposed": (0.04, 0.04, 1),
    "confirmed": (0.08, 0.08, 2),
    "refused": (0.7, 0.05, 1),
    "won": (0.35, 0.15, 4),
}

# TonalBuzzer: (note or None for a rest, seconds). Notes within A2..A6 (mid A4, two octaves).
TUNES: dict[str, list[tuple[str | None, float]]] = {
    "proposed": [("A5", 0.05)],
    "confirmed": [("C5", 0.08), (None, 0.05), ("G5", 0.1)],
    "refused": [("A2", 0.6)],
    "won": [("C5", 0.12), ("E5", 0.12), ("G5", 0.12), ("C6", 0.3), (None, 0.08), ("G5", 0.1),
            ("C6", 0.45)],
}

Callback = Callable[[], Any]


class Panel:
    """The interface: ``on_short_press`` / ``on_long_press`` callbacks and ``sound(kind)``.

    :meth:`short_press` and :meth:`long_press` fire the callbacks; a real panel calls them from
    its button, and anything else (a test, a debugging console) may call them too.
    """

    kind = "panel"

    def __init__(self) -> None:
        self.on_short_press: Callback | None = None
        self.on_long_press: Callback | None = None
        self.sounds_played: int = 0
        self.last_sound: str | None = None

    def short_press(self) -> None:
        self._fire(self.on_short_press, "short press")

    def long_press(self) -> None:
        self._fire(self.on_long_press, "long press")

    def _fire(self, callback: Callback | None, what: str) -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:  # a button handler must never kill gpiozero's event thread
            log.exception("the %s handler failed", what)

    def sound(self, kind: str) -> None:
        """Play one of :data:`SOUNDS` in the background. Unknown kinds are a programming error."""
        if kind not in SOUNDS:
            raise ValueError(f"unknown sound '{kind}' (known: {', '.join(SOUNDS)})")
        self.sounds_played += 1
        self.last_sound = kind
        self._play(kind)

    def _play(self, kind: str) -> None:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "last_sound": self.last_sound}

    def close(self) -> None:
        pass


class NullPanel(Panel):
    """No button, no buzzer. Says why once, at creation."""

    kind = "null"

    def __init__(self, reason: str = "no GPIO on this machine") -> None:
        super().__init__()
        self.reason = reason
        log.warning("no button or buzzer: %s (confirm on a phone, or set [confirm] auto_seconds)", reason)

    def _play(self, kind: str) -> None:
        log.debug("null panel: would play '%s'", kind)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "reason": self.reason}


class GpioPanel(Panel):
    """gpiozero ``Button`` (to GND, internal pull-up) and ``Buzzer`` or ``TonalBuzzer``.

    A press shorter than ``long_press_seconds`` is a short press, reported on release; holding
    the button that long is a long press, reported at once (while still held) so the player hears
    the answer without letting go. A real button bounces (a few make/break edges within
    milliseconds): contact shorter than ``min_press_seconds`` is chatter, not a press, and for
    ``quiet_seconds`` after a press has been reported further edges are ignored — one press never
    confirms two proposals, and letting go after a long press is never a short press.
    """

    kind = "gpio"

    def __init__(self, button_pin: int | str, buzzer_pin: int | str, tonal: bool = False,
                 long_press_seconds: float = 1.0, pin_factory: Any = None,
                 bounce_seconds: float | None = None, quiet_seconds: float = 0.25,
                 min_press_seconds: float = 0.015,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        from gpiozero import Button, Buzzer, TonalBuzzer
        from gpiozero.tones import Tone

        self.tonal = tonal
        self.quiet_seconds = quiet_seconds
        self.min_press_seconds = min_press_seconds
        self._pressed_at = float("-inf")
        self.clock = clock
        self._held = False
        self._quiet_until = float("-inf")
        self.button = Button(button_pin, pull_up=True, bounce_time=bounce_seconds,
                             hold_time=long_press_seconds, pin_factory=pin_factory)
        try:
            if tonal:
                self.buzzer: Any = TonalBuzzer(buzzer_pin, mid_tone=Tone("A4"), octaves=2,
                                               pin_factory=pin_factory)
            else:
                self.buzzer = Buzzer(buzzer_pin, pin_factory=pin_factory)
        except BaseException:
            self.button.close()
            raise
        self.button.when_pressed = self._pressed
        self.button.when_held = self._on_held
        self.button.when_released = self._released
        self._tune_stop = threading.Event()
        self._tune_thread: threading.Thread | None = None
        self._tune_lock = threading.Lock()
        self.pins = {"button": button_pin, "buzzer": buzzer_pin}

    # -- the button
    def _quiet(self) -> bool:
        return self.clock() < self._quiet_until

    def _pressed(self) -> None:
        if not self._quiet():
            self._held = False
            self._pressed_at = self.clock()

    def _on_held(self) -> None:
        self._held = True
        self.long_press()

    def _released(self) -> None:
        if self._quiet():
            return  # contact bounce after a press that was already reported
        if not self._held and self.clock() - self._pressed_at < self.min_press_seconds:
            return  # chatter as the contacts close: the press goes on
        self._quiet_until = self.clock() + self.quiet_seconds
        if self._held:
            self._held = False
            return
        self.short_press()

    # -- the buzzer
    def _play(self, kind: str) -> None:
        if self.tonal:
            self._play_tune(TUNES[kind])
        else:
            on, off, n = BEEPS[kind]
            self.buzzer.beep(on_time=on, off_time=off, n=n, background=True)

    def _play_tune(self, tune: list[tuple[str | None, float]]) -> None:
        """Stop the tune playing (if any) and play this one from a small background thread."""
        with self._tune_lock:
            self._stop_tune()
            stop = threading.Event()
            self._tune_stop = stop
            thread = threading.Thread(target=self._tune_worker, args=(tune, stop), daemon=True,
                                      name="panel-tune")
            self._tune_thread = thread
            thread.start()

    def _tune_worker(self, tune: list[tuple[str | None, float]], stop: threading.Event) -> None:
        try:
            for note, seconds in tune:
                if stop.is_set():
                    break
                if note is None:
                    self.buzzer.stop()
                else:
                    self.buzzer.play(note)
                if stop.wait(seconds):
                    break
            self.buzzer.stop()
        except Exception:  # closed under our feet at shutdown
            log.debug("tune interrupted", exc_info=True)

    def _stop_tune(self) -> None:
        self._tune_stop.set()
        thread = self._tune_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)
        self._tune_thread = None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "pins": self.pins,
                "buzzer": "TonalBuzzer" if self.tonal else "Buzzer"}

    def close(self) -> None:
        with self._tune_lock:
            self._stop_tune()
        for device in (self.buzzer, self.button):
            try:
                device.close()
            except Exception:
                log.debug("closing %r failed", device, exc_info=True)


def make_panel(config: Mapping[str, Any], pin_factory: Any = None) -> Panel:
    """The panel the config asks for (``[panel]`` and ``[confirm] long_press_seconds``), or a
    :class:`NullPanel` saying why when it is disabled or GPIO is absent."""
    panel_cfg = config["panel"]
    if not panel_cfg["enabled"]:
        return NullPanel("disabled in companion.toml ([panel] enabled = false)")
    try:
        with warnings.catch_warnings():  # gpiozero warns once per pin library it tries; we say it once
            warnings.simplefilter("ignore")
            return GpioPanel(panel_cfg["button_pin"], panel_cfg["buzzer_pin"], tonal=panel_cfg["tonal"],
                             long_press_seconds=config["confirm"]["long_press_seconds"],
                             pin_factory=pin_factory)
    except Exception as err:  # BadPinFactory, PinInvalidPin, lgpio errors, no /dev/gpiochip...
        return NullPanel(f"GPIO unavailable ({type(err).__name__}: {err})")
