"""The panel on gpiozero's MockFactory pins: press → confirm, hold → reject, nothing pending →
miss (RULES.md E7), buzzer patterns read from the mock pins' state history, the null panel."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.config import load
from companion.hardware import BEEPS, GpioPanel, NullPanel, make_panel
from companion.live.confirm import Confirmer
from companion.table import Table

BUTTON, BUZZER = 17, 18
HOLD = 0.15  # long-press threshold in these tests (1 s in the default config)
QUIET = 0.1  # edges ignored after a reported press (0.25 s by default)

NEW_GAME = {"type": "new_game", "game": "exact21",
            "sides": [{"name": "A", "players": ["Ann", "Ben"]}, {"name": "B"}]}
DICE_A = {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}}
DICE_B = {"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 6}}


class RecordingPWMPin(MockPWMPin):
    """A mock PWM pin that also remembers every frequency it was set to (MockPWMPin keeps only
    the duty cycle in ``states``)."""

    def __init__(self, factory, info):
        super().__init__(factory, info)
        self.frequencies: list[float | None] = []

    def _set_frequency(self, value):
        super()._set_frequency(value)
        self.frequencies.append(value)


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    f = MockFactory()
    yield f
    f.reset()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path / "table.sqlite")
    t.start(NEW_GAME)
    t.apply(DICE_A)
    t.apply(DICE_B)
    yield t
    t.close()


@pytest.fixture
def panel(factory: MockFactory) -> Iterator[GpioPanel]:
    p = GpioPanel(BUTTON, BUZZER, long_press_seconds=HOLD, pin_factory=factory, quiet_seconds=QUIET)
    yield p
    p.close()


def press(factory: MockFactory, seconds: float = 0.06) -> None:
    pin = factory.pin(BUTTON)
    pin.drive_low()  # the button pulls the pin to GND against the internal pull-up
    time.sleep(seconds)
    pin.drive_high()
    time.sleep(QUIET + 0.05)  # the panel's quiet time after a press


def bouncy(factory: MockFactory, seconds: float) -> None:
    """A real button: make/break chatter when pressed and again when let go."""
    pin = factory.pin(BUTTON)
    for _ in range(3):
        pin.drive_low()
        pin.drive_high()
    pin.drive_low()
    time.sleep(seconds)
    for _ in range(3):
        pin.drive_high()
        pin.drive_low()
    pin.drive_high()
    time.sleep(QUIET + 0.05)


def wait_for(condition, timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def highs(pin) -> list[float]:
    """Seconds the pin stayed high, per pulse, from the mock pin's state history."""
    out = []
    states = pin.states
    for before, after in zip(states, states[1:], strict=False):
        if before.state and not after.state:
            out.append(after.timestamp)
    return out


def test_short_press_confirms_the_oldest_proposal(table: Table, panel: GpioPanel, factory: MockFactory):
    confirmer = Confirmer(table, panel)
    first = table.propose({"type": "throw", "side": "A", "cup": "red"}, evidence={"slot": "A/red/2"})
    table.propose({"type": "throw", "side": "A", "cup": "blue"})
    press(factory)
    assert wait_for(lambda: table.state()["scores"]["A"] == 4)
    assert table.history()[-1]["cup"] == "red"
    assert [p.id for p in table.pending()] != [first.id]
    assert confirmer.last == {"action": "confirmed", "proposal": first.id, "source": "button"}
    stored = table.export(table.game_id or 0, raw=True)[-1]
    assert stored["source"] == "button"  # the log says who confirmed it
    confirmer.close()


def test_long_press_rejects_and_records_nothing(table: Table, panel: GpioPanel, factory: MockFactory):
    confirmer = Confirmer(table, panel)
    seq = table.state()["seq"]
    table.propose({"type": "throw", "side": "A", "cup": "yellow"})
    press(factory, seconds=HOLD + 0.15)
    assert wait_for(lambda: not table.pending())
    assert table.state()["seq"] == seq
    assert table.state()["scores"]["A"] == 0
    assert confirmer.last is not None and confirmer.last["action"] == "rejected"
    confirmer.close()


def test_a_bouncing_button_confirms_one_proposal_per_press(table: Table, panel: GpioPanel, factory: MockFactory):
    confirmer = Confirmer(table, panel)
    table.propose({"type": "throw", "side": "A", "cup": "red"})
    table.propose({"type": "throw", "side": "A", "cup": "blue"})
    bouncy(factory, 0.05)
    assert wait_for(lambda: table.state()["seq"] == 4)
    time.sleep(0.1)
    assert table.state()["seq"] == 4 and len(table.pending()) == 1  # the blue one still waits
    confirmer.close()


def test_letting_go_of_a_bouncing_long_press_is_not_a_short_press(table: Table, panel: GpioPanel,
                                                                  factory: MockFactory):
    confirmer = Confirmer(table, panel)
    table.propose({"type": "throw", "side": "A", "cup": "red"})
    table.propose({"type": "throw", "side": "A", "cup": "blue"})
    bouncy(factory, HOLD + 0.15)
    assert wait_for(lambda: len(table.pending()) == 1)
    time.sleep(0.1)
    assert table.state()["seq"] == 3 and table.pending()[0].event["cup"] == "blue"
    confirmer.close()


def test_E7_short_press_with_nothing_pending_is_a_miss_for_the_thrower_on_turn(
        table: Table, panel: GpioPanel, factory: MockFactory):
    confirmer = Confirmer(table, panel)
    assert table.state()["detail"]["thrower"] == "Ann"
    press(factory)
    assert wait_for(lambda: table.state()["detail"]["thrower"] == "Ben")
    last = table.history()[-1]
    assert (last["type"], last["side"], last["cup"]) == ("throw", "A", "miss")
    assert table.state()["scores"] == {"A": 0, "B": 0}
    press(factory)  # Ben misses too: the turn goes to side B (E5)
    assert wait_for(lambda: table.state()["to_act"] == ["B"])
    confirmer.close()


def test_a_press_before_the_dice_are_set_is_refused_and_stores_nothing(tmp_path: Path, factory: MockFactory):
    t = Table(tmp_path / "t.sqlite")
    t.start(NEW_GAME)
    panel = GpioPanel(BUTTON, BUZZER, long_press_seconds=HOLD, pin_factory=factory, quiet_seconds=QUIET)
    confirmer = Confirmer(t, panel)
    press(factory)
    assert wait_for(lambda: confirmer.last is not None)
    assert confirmer.last["action"] == "refused" and confirmer.last["code"] == "DICE_NOT_SET"
    assert t.state()["seq"] == 1
    assert panel.last_sound == "refused"
    confirmer.close()
    panel.close()
    t.close()


@pytest.mark.slow
def test_sounds_follow_the_table_proposed_confirmed_won(table: Table, panel: GpioPanel, factory: MockFactory):
    confirmer = Confirmer(table, panel)
    buzzer = factory.pin(BUZZER)
    table.propose({"type": "throw", "side": "A", "cup": "red"})
    assert panel.last_sound == "proposed"
    time.sleep(0.15)
    buzzer.clear_states()
    press(factory)
    assert wait_for(lambda: panel.last_sound == "confirmed")
    time.sleep(0.4)
    assert len(highs(buzzer)) == 2  # double beep
    # Play side A (Ann, Ben) to 17 with B missing between turns; Ben's red then makes 21 (E12).
    for side, cup in [("A", "miss"), ("B", "miss"), ("A", "red"), ("A", "red"), ("B", "miss"),
                      ("A", "yellow")]:
        table.apply({"type": "throw", "side": side, "cup": cup})
    assert table.state()["scores"]["A"] == 17
    table.propose({"type": "throw", "side": "A", "cup": "red"})
    press(factory)
    assert wait_for(lambda: table.state()["finished"])
    assert panel.last_sound == "won"
    assert table.state()["winners"] == ["A"]
    confirmer.close()


def test_a_proposal_the_rules_refuse_buzzes_low(table: Table, panel: GpioPanel, factory: MockFactory):
    confirmer = Confirmer(table, panel)
    table.propose({"type": "throw", "side": "B", "cup": "red"})  # side A is on turn
    press(factory)
    assert wait_for(lambda: confirmer.last is not None)
    assert confirmer.last["code"] == "NOT_YOUR_TURN"
    assert panel.last_sound == "refused"
    assert not table.pending() and table.state()["seq"] == 3
    confirmer.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["proposed", "confirmed", "refused", "won"])
def test_active_buzzer_patterns(kind: str, panel: GpioPanel, factory: MockFactory):
    buzzer = factory.pin(BUZZER)
    buzzer.clear_states()
    started = time.monotonic()
    panel.sound(kind)
    assert time.monotonic() - started < 0.05  # never blocks the caller
    on, off, n = BEEPS[kind]
    assert wait_for(lambda: len(highs(buzzer)) >= n and buzzer.state == 0, timeout=5)
    time.sleep(off + 0.1)  # and nothing after
    pulses = highs(buzzer)
    assert len(pulses) == n
    for seconds in pulses:
        assert on * 0.9 <= seconds <= on + 0.25  # never shorter; a busy machine may make it longer
    assert buzzer.state == 0  # silent afterwards


@pytest.mark.slow
def test_refused_is_a_long_buzz_and_proposed_a_short_chirp(panel: GpioPanel, factory: MockFactory):
    buzzer = factory.pin(BUZZER)
    buzzer.clear_states()
    panel.sound("proposed")
    time.sleep(0.2)
    chirp = highs(buzzer)
    buzzer.clear_states()
    panel.sound("refused")
    time.sleep(0.9)
    buzz = highs(buzzer)
    assert len(chirp) == 1 and len(buzz) == 1
    assert buzz[0] > 5 * chirp[0]


@pytest.mark.slow
def test_tonal_buzzer_plays_a_tune_when_won_and_a_low_note_when_refused():
    factory = MockFactory(pin_class=RecordingPWMPin)
    panel = GpioPanel(BUTTON, BUZZER, tonal=True, long_press_seconds=HOLD, pin_factory=factory)
    try:
        pin = factory.pin(BUZZER)
        pin.frequencies.clear()  # forget gpiozero's PWM set-up (100 Hz)
        panel.sound("won")
        assert wait_for(lambda: pin.frequencies and pin.frequencies[-1] is None and len(pin.frequencies) > 5)
        notes = [f for f in pin.frequencies if f]
        assert len(notes) >= 5 and notes[0] < notes[3]  # a rising tune, C5 → C6
        assert round(notes[0]) == 523 and round(notes[3]) == 1047
        pin.frequencies.clear()
        panel.sound("refused")
        assert wait_for(lambda: pin.frequencies and pin.frequencies[-1] is None)
        notes = [f for f in pin.frequencies if f]
        assert notes == [110.0]  # one long low A2
    finally:
        panel.close()
        factory.reset()


def test_a_new_sound_cuts_the_tune_playing():
    factory = MockFactory(pin_class=RecordingPWMPin)
    panel = GpioPanel(BUTTON, BUZZER, tonal=True, long_press_seconds=HOLD, pin_factory=factory)
    try:
        pin = factory.pin(BUZZER)
        pin.frequencies.clear()  # forget gpiozero's PWM set-up (100 Hz)
        panel.sound("won")
        time.sleep(0.05)
        panel.sound("proposed")
        assert wait_for(lambda: pin.frequencies[-1] is None)
        time.sleep(0.3)
        assert 880 in [round(f) for f in pin.frequencies if f]
        assert 1047 not in [round(f) for f in pin.frequencies if f]  # the tune never got to C6
    finally:
        panel.close()
        factory.reset()


def test_null_panel_says_so_once_and_stays_silent(caplog: pytest.LogCaptureFixture, table: Table):
    with caplog.at_level(logging.WARNING):
        panel = make_panel(load(None, {"panel": {"enabled": False}}))
        confirmer = Confirmer(table, panel)
        table.propose({"type": "throw", "side": "A", "cup": "red"})
        panel.short_press()  # what the button would do
        panel.sound("won")
    assert isinstance(panel, NullPanel)
    warnings = [r for r in caplog.records if "no button or buzzer" in r.getMessage()]
    assert len(warnings) == 1 and "disabled" in warnings[0].getMessage()
    assert table.state()["scores"]["A"] == 4
    confirmer.close()


def test_make_panel_falls_back_to_null_without_gpio(caplog: pytest.LogCaptureFixture):
    class NoGpio(MockFactory):
        def pin(self, name, pin_class=None, **kwargs):
            raise OSError("no /dev/gpiochip0")

    with caplog.at_level(logging.WARNING):
        panel = make_panel(load(None), pin_factory=NoGpio())
    assert isinstance(panel, NullPanel)
    assert "gpiochip0" in panel.reason


def test_make_panel_uses_the_configured_pins(factory: MockFactory):
    config = load(None, {"panel": {"button_pin": 23, "buzzer_pin": 24}, "confirm": {"long_press_seconds": 0.5}})
    panel = make_panel(config, pin_factory=factory)
    try:
        assert isinstance(panel, GpioPanel)
        assert panel.button.hold_time == 0.5
        factory.pin(23).drive_low()
        assert panel.button.is_pressed
        factory.pin(23).drive_high()
        panel.sound("proposed")
        assert wait_for(lambda: len(highs(factory.pin(24))) == 1)
    finally:
        panel.close()


def test_confirming_a_proposal_someone_else_just_confirmed_is_not_a_refusal(table: Table, panel: GpioPanel):
    confirmer = Confirmer(table, panel)
    proposal = table.propose({"type": "throw", "side": "A", "cup": "red"})
    table.confirm(proposal.id, "phone")  # a tap on a phone got there first
    outcome = confirmer.confirm(proposal.id, source="button")
    assert outcome["action"] == "nothing"
    assert panel.last_sound == "confirmed"  # the phone's confirm; no low buzz after it
    assert table.state()["scores"]["A"] == 4
    confirmer.close()
