"""``companion.toml``: one file, every key with a default. Unknown keys are an error with the
key's name (a typo must not silently fall back to a default)."""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, Any] = {
    "server": {
        "host": "0.0.0.0",      # every phone on the Wi-Fi
        "port": 8000,
        "threads": 128,         # one per open SSE stream (phone) plus headroom
        "pin": "",              # table PIN; empty = COMPANION_PIN or generated at start
    },
    "data": {
        "dir": "data",          # SQLite log, calibration, colour profiles
    },
    "camera": {
        "source": "none",       # none | picamera2 | usb:N | rtsp://… | video file | image folder | render
        "width": 1280,
        "height": 720,
        "fps": 15,              # the camera's rate and the live loop's cap: CPU for the rest of the Pi
        "render_seed": 10,      # source = "render": which scripted game the rendered table plays
        "render_speed": 1.0,    # ... and how fast
        # Left automatic, exposure and white balance drift as players lean over the table, under
        # the dice colour profiles and the cup hues learnt at the start: measured for
        # lock_after_s, then held (docs/pi.md "Exposure, white balance and focus").
        "exposure_us": "auto",  # or a fixed exposure in microseconds (at most one frame: 66666 at 15 fps)
        "gain": "auto",         # or a fixed gain (Pi camera: analogue gain, 1.0 up; USB: the camera's units)
        "white_balance": "auto",  # or [red, blue] gains (Pi camera), or a colour temperature in kelvin (USB)
        "focus": "auto",        # or a lens position in dioptres, 1 / metres (Camera Module 3; USB: its units)
        "hflip": False,         # mirror left-right (a camera mounted facing the other way)
        "vflip": False,         # upside down
        "lock_after_s": 5.0,    # the automatic values measured this long after the camera opens, then held; 0: never held
        # Pi camera: which sensor mode (docs/pi.md "Sensor mode and field of view"). Some modes read
        # only the middle of the sensor; "auto" takes the smallest that reads all of it.
        "sensor_mode": "auto",  # auto | default (picamera2 chooses) | a mode's size, e.g. "2304x1296"
    },
    "calibration": {
        "table": "",            # table calibration file; empty = <data dir>/table.json
        "colours": "",          # dice colour profiles; empty = <data dir>/colours.json, else models/
    },
    "confirm": {
        "auto_seconds": 0.0,    # 0 = wait for the button or a phone; the demo uses a delay
        "long_press_seconds": 1.0,
    },
    "panel": {
        "enabled": True,        # gpiozero button + buzzer; a null panel where GPIO is absent
        "button_pin": 17,
        "buzzer_pin": 18,
        "tonal": False,         # TonalBuzzer (PWM) instead of an active buzzer
    },
}


# Keys whose values have a range as well as a type: (lowest, highest or None, what it is).
RANGES: dict[str, tuple[float, float | None, str]] = {
    "server.port": (1, 65535, "a TCP port"),       # 99999 listened on 34463 (99999 mod 65536)
    "server.threads": (1, None, "a number of server threads"),
    # Out of range, these did not stop the service but broke the table quietly: a hold of 0 s
    # made every press a long press (each confirm a reject), a negative one left no button at
    # all, and a camera of 0 fps or -5 pixels kept the camera "retrying" for ever.
    "confirm.long_press_seconds": (0.2, 10, "a hold time in seconds"),
    "confirm.auto_seconds": (0, None, "a delay in seconds (0: wait for a press)"),
    "camera.fps": (1, 120, "frames per second"),
    "camera.width": (32, 10000, "a frame width in pixels"),
    "camera.height": (32, 10000, "a frame height in pixels"),
    "camera.lock_after_s": (0, 3600, "a time in seconds (0: never lock)"),
    "panel.button_pin": (0, 27, "a GPIO number (BCM) of the 40-pin header"),
    "panel.buzzer_pin": (0, 27, "a GPIO number (BCM) of the 40-pin header"),
}


class ConfigError(ValueError):
    pass


def _auto_or_number(what: str, low: float, high: float, whole: bool = False) -> Callable[[Any], Any]:
    """A check for a key that is "auto" or a number from ``low`` to ``high``."""
    def check(value: Any) -> Any:
        if value == "auto":
            return value
        if _is_number(value) and low <= value <= high and (not whole or float(value).is_integer()):
            return int(value) if whole else float(value)
        raise ValueError(f'must be "auto" or {what} from {_num(low)} to {_num(high)}, not {value!r}')
    return check


def _white_balance(value: Any) -> Any:
    if value == "auto":
        return value
    if (isinstance(value, list) and len(value) == 2 and all(_is_number(v) and 0 < v <= 32 for v in value)):
        return [float(v) for v in value]
    if _is_number(value) and 1000 <= value <= 15000:
        return int(value)
    raise ValueError('must be "auto", [red, blue] gains from 0 to 32 (the Pi camera, e.g. [1.8, 1.5]) '
                     f"or a colour temperature in kelvin from 1000 to 15000 (a USB camera, e.g. 4500), not {value!r}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _sensor_mode(value: Any) -> str:
    """"auto", "default" or WIDTHxHEIGHT (kept as "2304x1296"); the sizes themselves are the
    camera's, known only when it opens (rpicam-hello --list-cameras lists them)."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text in ("auto", "default"):
        return text
    parts = text.replace(" ", "").replace("×", "x").split("x") if text else []
    if len(parts) == 2 and all(p.isdigit() and 16 <= int(p) <= 20000 for p in parts):
        return f"{int(parts[0])}x{int(parts[1])}"
    raise ValueError('must be "auto" (the smallest mode that sees the whole sensor), "default" '
                     '(picamera2 chooses) or a sensor mode\'s WIDTHxHEIGHT as rpicam-hello --list-cameras '
                     f'lists them (e.g. "2304x1296"), not {value!r}')


# Keys that take "auto" or a value of another type than their default's: the check returns the
# value to keep, or raises ValueError with "must be …".
CHOICES: dict[str, Callable[[Any], Any]] = {
    "camera.exposure_us": _auto_or_number("an exposure time in microseconds", 1, 10_000_000, whole=True),
    "camera.gain": _auto_or_number("a gain", 0, 1000),
    "camera.white_balance": _white_balance,
    "camera.focus": _auto_or_number("a lens position (dioptres on the Pi camera)", 0, 1000),
    "camera.sensor_mode": _sensor_mode,
}


def _check_camera(config: dict[str, Any], where: str) -> None:
    """What one [camera] key cannot say alone: an exposure longer than a frame (the camera would
    slow down to fit it), white balance given the other camera's way."""
    cam = config["camera"]
    source = str(cam["source"]).strip()
    frame_us = 1_000_000 // cam["fps"]
    if cam["exposure_us"] != "auto" and cam["exposure_us"] > frame_us:
        raise ConfigError(f"{where}: 'camera.exposure_us' {cam['exposure_us']} is longer than a frame at "
                          f"{cam['fps']} fps ({frame_us} µs): the camera would slow down to fit it")
    wb = cam["white_balance"]
    if source == "picamera2" and isinstance(wb, int):
        raise ConfigError(f"{where}: 'camera.white_balance' of the Pi camera is [red, blue] gains "
                          f"(e.g. [1.8, 1.5]), not a colour temperature ({wb})")
    if source.startswith("usb:") and isinstance(wb, list):
        raise ConfigError(f"{where}: 'camera.white_balance' of a USB camera is a colour temperature in "
                          f"kelvin (e.g. 4500), not [red, blue] gains")


def check_range(name: str, value: float) -> str | None:
    """Why ``value`` is out of range for the key ``name`` (``server.port``…): "must be …"; or None."""
    low, high, what = RANGES[name]
    if value < low or (high is not None and value > high):
        return (f"must be {what} from {_num(low)} to {_num(high)}, not {_num(value)}" if high is not None
                else f"must be {what}, {_num(low)} or more, not {_num(value)}")
    return None


def _num(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def load(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults, then the TOML file (if given or ``./companion.toml`` exists), then overrides."""
    config = copy.deepcopy(DEFAULTS)
    if path is None and Path("companion.toml").exists():
        path = "companion.toml"
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except OSError as err:
            raise ConfigError(f"cannot read {path}: {err.strerror}") from None
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{path}: {err}") from None
        except UnicodeDecodeError as err:  # TOML is UTF-8; Notepad may save UTF-16
            utf16 = " (it looks like UTF-16: save it as UTF-8)" if err.object[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
            raise ConfigError(f"{path}: not UTF-8 text, as TOML must be{utf16}: "
                              f"{err.reason} at byte {err.start}") from None
        _merge(config, data, str(path))
    if overrides:
        _merge(config, overrides, "overrides")
    _check_camera(config, str(path) if path is not None else "configuration")
    if not config["server"]["pin"]:
        config["server"]["pin"] = os.environ.get("COMPANION_PIN", "")
    return config


def option(name: str) -> Callable[[str], int]:
    """An argparse ``type`` for a command-line option that sets the key ``name`` (``--port``)."""
    import argparse

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        why = check_range(name, value)
        if why is not None:
            raise argparse.ArgumentTypeError(why)
        return value

    return parse


def _merge(into: dict[str, Any], data: dict[str, Any], where: str, prefix: str = "") -> None:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if key not in into:
            raise ConfigError(f"{where}: unknown key '{name}'")
        if isinstance(into[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: '{name}' must be a table")
            _merge(into[key], value, where, name + ".")
        elif name in CHOICES:
            try:
                into[key] = CHOICES[name](value)
            except ValueError as err:
                raise ConfigError(f"{where}: '{name}' {err}") from None
        else:
            want = type(into[key])
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise ConfigError(f"{where}: '{name}' must be {want.__name__}")
            if name in RANGES and (why := check_range(name, value)) is not None:
                raise ConfigError(f"{where}: '{name}' {why}")
            into[key] = value


def data_path(config: dict[str, Any], *parts: str) -> Path:
    root = Path(config["data"]["dir"])
    root.mkdir(parents=True, exist_ok=True)
    return root.joinpath(*parts)


def calibration_file(config: dict[str, Any], name: str) -> Path | None:
    """Where the service reads the table's ``name`` file ("table" or "colours") and the calibrate
    commands write it: ``[calibration] <name>`` of companion.toml, else ``<data dir>/<name>.json``;
    None when it is set to "none" (no colours)."""
    configured = config["calibration"][name]
    if not configured:
        return Path(config["data"]["dir"]) / f"{name}.json"
    return None if str(configured).lower() == "none" else Path(configured)


def cannot_write(path: str | Path, err: OSError) -> str:
    """Why a calibration command could not write its file, with what to do on the Pi."""
    hint = ""
    if isinstance(err, PermissionError):
        hint = ("; on the Pi the data directory belongs to the service's user: run the command as "
                "sudo -u companion /opt/companion/venv/bin/companion … --config /etc/companion/companion.toml")
    return f"cannot write {path}: {err.strerror or err}{hint}"
