"""The panel on the Pi: a gpiozero button and buzzer, or a null panel where GPIO is absent."""

from companion.hardware.panel import BEEPS, SOUNDS, TUNES, GpioPanel, NullPanel, Panel, make_panel

__all__ = ["BEEPS", "SOUNDS", "TUNES", "GpioPanel", "NullPanel", "Panel", "make_panel"]
