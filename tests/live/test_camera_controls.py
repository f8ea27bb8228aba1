"""Exposure, white balance and focus: set from ``[camera]`` at each open, what is automatic held
after ``lock_after_s``, measured again on request. Against stand-ins for picamera2 and
OpenCV's VideoCapture that implement only the documented calls the camera makes."""

from __future__ import annotations

import logging
import os
import signal
import sys
import types

import numpy as np
import pytest

from companion.config import ConfigError, load
from companion.live.camera import (
    CameraError,
    CameraSettings,
    Picamera2Source,
    ResilientCamera,
    UsbSource,
    open_source,
)
from tests.hardware.test_sensor_modes import IMX219


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class Job:
    def __init__(self, result):
        self.result = result


class AfModeEnum:
    """libcamera.controls.AfModeEnum's members (Manual 0, Auto 1, Continuous 2)."""

    Manual = "AfModeEnum.Manual"
    Auto = "AfModeEnum.Auto"
    Continuous = "AfModeEnum.Continuous"


class ExposureTimeModeEnum:
    Auto = "ExposureTimeModeEnum.Auto"
    Manual = "ExposureTimeModeEnum.Manual"


class AnalogueGainModeEnum:
    Auto = "AnalogueGainModeEnum.Auto"
    Manual = "AnalogueGainModeEnum.Manual"


class Transform:
    """libcamera.Transform(hflip=…, vflip=…)."""

    def __init__(self, hflip: int = 0, vflip: int = 0):
        self.hflip, self.vflip = hflip, vflip

    def __eq__(self, other):
        return isinstance(other, Transform) and (self.hflip, self.vflip) == (other.hflip, other.vflip)


MODULE_3 = {"AeEnable": (False, True, True), "ExposureTime": (26, 220_000_000, 20000),
            "AnalogueGain": (1.12, 16.0, 1.0), "AwbEnable": (False, True, True),
            "ColourGains": (0.0, 32.0, None), "AfMode": (0, 2, 0), "LensPosition": (0.0, 15.0, 1.0),
            "FrameRate": (1.0, 120.0, 30.0)}
MODULE_2 = {k: v for k, v in MODULE_3.items() if k not in ("AfMode", "LensPosition")}


class StandInPicamera2:
    """picamera2.Picamera2 as documented: global_camera_info(), Picamera2(n), camera_controls,
    sensor_modes, create_video_configuration(main=, controls=, transform=, sensor=, raw=),
    configure, start, set_controls(dict), capture_array / capture_metadata (with
    signal_function: a job at once, collected by wait(job)), stop, close. ``metadata`` is what
    the camera's algorithms have reached; ``sent`` every set_controls; ``modes`` what
    sensor_modes lists (None: a camera object without it). configure() evens the main size, as
    picamera2's align_stream does."""

    offered = MODULE_3
    metadata: dict = {}
    sent: list[dict] = []
    configs: list[dict] = []
    metadata_reads = 0
    modes: list[dict] | None = None
    mode_reads = 0
    closed = 0

    @classmethod
    def global_camera_info(cls):
        return [{"Model": "imx708", "Num": 0}]

    def __init__(self, camera_num: int = 0):
        self.camera_controls = dict(self.offered)
        self.size = (0, 0)

    @property
    def sensor_modes(self):
        if self.modes is None:
            raise AttributeError("sensor_modes")
        type(self).mode_reads += 1
        return [dict(m) for m in self.modes]

    def create_video_configuration(self, main=None, controls=None, transform=None, sensor=None, raw=None):
        config = {"main": main, "controls": controls, "transform": transform}
        if sensor is not None:
            config["sensor"] = sensor
        if raw is not None:
            config["raw"] = raw
        type(self).configs.append(config)
        return config

    def configure(self, config):
        w, h = config["main"]["size"]
        self.size = (w - w % 2, h - h % 2)

    def start(self):
        pass

    def set_controls(self, controls):
        unknown = [k for k in controls if k not in self.camera_controls]
        if unknown:  # what picamera2 does with a control the camera does not advertise
            raise RuntimeError(f"Control {unknown[0]} is not advertised by libcamera")
        type(self).sent.append(dict(controls))

    def capture_array(self, name="main", wait=None, signal_function=None):
        w, h = self.size
        job = Job(np.full((h, w, 3), 90, np.uint8))
        signal_function(job)
        return job

    def capture_metadata(self, wait=None, signal_function=None):
        type(self).metadata_reads += 1
        job = Job(dict(self.metadata))
        signal_function(job)
        return job

    def wait(self, job):
        return job.result

    def stop(self):
        pass

    def close(self):
        type(self).closed += 1


@pytest.fixture
def picam(monkeypatch: pytest.MonkeyPatch):
    module = types.ModuleType("picamera2")
    module.Picamera2 = StandInPicamera2
    libcamera = types.ModuleType("libcamera")
    libcamera.Transform = Transform
    libcamera.controls = types.SimpleNamespace(AfModeEnum=AfModeEnum, ExposureTimeModeEnum=ExposureTimeModeEnum,
                                               AnalogueGainModeEnum=AnalogueGainModeEnum)
    monkeypatch.setitem(sys.modules, "picamera2", module)
    monkeypatch.setitem(sys.modules, "libcamera", libcamera)
    StandInPicamera2.offered = MODULE_3
    StandInPicamera2.sent = []
    StandInPicamera2.configs = []
    StandInPicamera2.metadata_reads = 0
    StandInPicamera2.modes = None
    StandInPicamera2.mode_reads = 0
    StandInPicamera2.closed = 0
    StandInPicamera2.metadata = {"ExposureTime": 12000, "AnalogueGain": 2.5, "ColourGains": (1.8, 1.4),
                                 "LensPosition": 1.25, "FrameDuration": 66666}
    return StandInPicamera2


AUTO = {"AeEnable": True, "AwbEnable": True, "AfMode": AfModeEnum.Continuous}


def settings(**kw) -> CameraSettings:
    return CameraSettings.from_config(kw)


def test_automatic_until_lock_after_s_then_the_metadatas_values_held_then_again_on_request(picam):
    clock = Clock()
    source = Picamera2Source(640, 480, 15, settings=settings(lock_after_s=5.0), clock=clock)
    source.open()
    assert picam.sent == [AUTO]
    for _ in range(4):  # 4 s of frames: still measuring
        assert source.read().shape == (480, 640, 3)
        clock.t += 1.0
    assert picam.sent == [AUTO] and picam.metadata_reads == 0
    assert source.controls() == "measuring (held in 1 s)"
    clock.t += 1.0
    source.read()
    held = {"AeEnable": False, "ExposureTime": 12000, "AnalogueGain": 2.5, "AwbEnable": False,
            "ColourGains": (1.8, 1.4), "AfMode": AfModeEnum.Manual, "LensPosition": 1.25}
    assert picam.sent == [AUTO, held] and picam.metadata_reads == 1
    assert "exposure 12000 µs" in source.controls() and "white balance 1.80/1.40" in source.controls()
    for _ in range(30):  # held: nothing more is sent, however long it runs
        source.read()
        clock.t += 1.0
    assert len(picam.sent) == 2

    # the light changed: measured again from automatic, then held at the new values
    picam.metadata = {"ExposureTime": 30000, "AnalogueGain": 4.0, "ColourGains": (2.1, 1.2), "LensPosition": 1.5}
    source.remeasure()
    source.read()
    assert picam.sent[2] == AUTO and source.controls().startswith("measuring")
    clock.t += 4.9
    source.read()
    assert len(picam.sent) == 3
    clock.t += 0.1
    source.read()
    assert picam.sent[3] == {"AeEnable": False, "ExposureTime": 30000, "AnalogueGain": 4.0, "AwbEnable": False,
                             "ColourGains": (2.1, 1.2), "AfMode": AfModeEnum.Manual, "LensPosition": 1.5}


def test_values_fixed_in_the_configuration_are_sent_at_open_and_nothing_is_measured(picam):
    clock = Clock()
    fixed = settings(exposure_us=8000, gain=2.0, white_balance=[1.7, 1.5], focus=1.0, lock_after_s=5.0)
    source = Picamera2Source(640, 480, 15, settings=fixed, clock=clock)
    source.open()
    clock.t += 60
    source.read()
    assert picam.sent == [{"AeEnable": False, "ExposureTime": 8000, "AnalogueGain": 2.0, "AwbEnable": False,
                           "ColourGains": (1.7, 1.5), "AfMode": AfModeEnum.Manual, "LensPosition": 1.0}]
    assert picam.metadata_reads == 0 and source.controls() == "fixed in companion.toml"


def test_a_fixed_exposure_with_automatic_gain_holds_the_configured_exposure_and_the_measured_gain(picam):
    clock = Clock()
    source = Picamera2Source(640, 480, 15, settings=settings(exposure_us=8000), clock=clock)
    source.open()
    assert picam.sent == [{"AeEnable": True, "ExposureTime": 8000, "AwbEnable": True,
                           "AfMode": AfModeEnum.Continuous}]
    clock.t += 5
    source.read()
    assert picam.sent[1]["ExposureTime"] == 8000 and picam.sent[1]["AnalogueGain"] == 2.5
    assert picam.sent[1]["AeEnable"] is False


def test_a_module_without_autofocus_is_never_sent_focus_controls(picam, caplog):
    picam.offered = MODULE_2
    clock = Clock()
    with caplog.at_level(logging.WARNING):
        source = Picamera2Source(640, 480, 15, settings=settings(focus=2.0), clock=clock)
        source.open()
    assert picam.sent == [{"AeEnable": True, "AwbEnable": True}]
    assert "fixed-focus lens" in caplog.text
    clock.t += 5
    source.read()
    assert picam.sent[1] == {"AeEnable": False, "ExposureTime": 12000, "AnalogueGain": 2.5,
                             "AwbEnable": False, "ColourGains": (1.8, 1.4)}


def test_a_newer_libcamera_without_aeenable_gets_exposure_and_gain_modes(picam, caplog):
    """libcamera 0.5 switches exposure and gain each with a mode control; AeEnable may be gone
    (picamera2 raises for a control the camera does not advertise: never sent, said once)."""
    picam.offered = {**{k: v for k, v in MODULE_3.items() if k != "AeEnable"},
                     "ExposureTimeMode": (0, 1, 0), "AnalogueGainMode": (0, 1, 0)}
    clock = Clock()
    with caplog.at_level(logging.WARNING):
        source = Picamera2Source(640, 480, 15, settings=settings(gain=2.0), clock=clock)
        source.open()
        assert picam.sent == [{"AnalogueGain": 2.0, "ExposureTimeMode": ExposureTimeModeEnum.Auto,
                               "AnalogueGainMode": AnalogueGainModeEnum.Manual, "AwbEnable": True,
                               "AfMode": AfModeEnum.Continuous}]
        clock.t += 5
        source.read()
        source.remeasure()
        source.read()
    assert picam.sent[1] == {"ExposureTime": 12000, "AnalogueGain": 2.0,
                             "ExposureTimeMode": ExposureTimeModeEnum.Manual,
                             "AnalogueGainMode": AnalogueGainModeEnum.Manual, "AwbEnable": False,
                             "ColourGains": (1.8, 1.4), "AfMode": AfModeEnum.Manual, "LensPosition": 1.25}
    assert caplog.text.count("does not offer AeEnable") == 1


def test_lock_after_0_leaves_everything_automatic(picam):
    clock = Clock()
    source = Picamera2Source(640, 480, 15, settings=settings(lock_after_s=0.0), clock=clock)
    source.open()
    clock.t += 600
    source.read()
    assert picam.sent == [AUTO] and picam.metadata_reads == 0
    assert source.controls() == "automatic (lock_after_s = 0)"


def test_flips_go_to_the_configuration_as_a_libcamera_transform(picam):
    Picamera2Source(640, 480, 15, settings=settings(hflip=True)).open()
    Picamera2Source(640, 480, 15, settings=settings(hflip=True, vflip=True)).open()
    Picamera2Source(640, 480, 15, settings=settings()).open()
    assert [c["transform"] for c in picam.configs] == [Transform(1, 0), Transform(1, 1), None]


def test_the_configured_camera_holds_its_values_and_the_service_can_ask_for_a_remeasure(picam, tmp_path):
    config = load(None, {"camera": {"source": "picamera2", "lock_after_s": 3.0, "vflip": True}})
    camera = open_source("picamera2", config)
    assert camera is not None
    assert camera.remeasure() is False  # not open yet: the open measures anyway
    assert camera.read() is not None
    health = camera.health()
    assert health["controls"].startswith("measuring") and picam.configs[0]["transform"] == Transform(0, 1)
    assert camera.remeasure() is True
    camera.read()
    assert picam.sent == [AUTO, AUTO]


def test_sigusr1_asks_the_running_service_to_remeasure(picam, tmp_path):
    from companion.live.service import Service

    config = load(None, {"panel": {"enabled": False}, "data": {"dir": str(tmp_path)}, "server": {"pin": "0000"}})
    service = Service(config)
    service.start()  # no camera, so no camera thread: this test reads the camera by hand
    clock = Clock()
    service.live.camera = ResilientCamera(
        lambda: Picamera2Source(320, 240, 15, settings=settings(lock_after_s=5.0), clock=clock))
    try:
        assert service.live.camera.read() is not None
        clock.t += 5
        service.live.camera.read()
        assert len(picam.sent) == 2 and picam.sent[1]["AeEnable"] is False
        os.kill(os.getpid(), signal.SIGUSR1)
        service.live.camera.read()
        assert picam.sent[2] == AUTO
    finally:
        service.stop()
        service.table.close()
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL


# -- USB cameras through OpenCV's VideoCapture

class StandInCapture:
    """cv2.VideoCapture as documented: isOpened, read, set(prop, value) -> bool, get(prop), release.
    ``refuses`` are properties its set answers False for; ``values`` what get reads."""

    def __init__(self, target, refuses=(), values=None):
        import cv2

        self.cv2 = cv2
        self.refuses = set(refuses)
        self.values = dict(values or {})
        self.sets: list[tuple[str, float]] = []

    def isOpened(self):
        return True

    def read(self):
        img = np.zeros((48, 64, 3), np.uint8)
        img[:, :8] = 200  # a bright left edge, to see the flip
        return True, img

    def set(self, prop, value):
        name = next(n for n in dir(self.cv2) if n.startswith("CAP_PROP_") and getattr(self.cv2, n) == prop)
        self.sets.append((name, value))
        if prop in self.refuses:
            return False
        self.values[prop] = value
        return True

    def get(self, prop):
        return self.values.get(prop, -1.0)

    def release(self):
        pass


def usb(captures, **kw):
    """An opener for UsbSource that keeps each stand-in capture it makes."""
    def opener(target):
        captures.append(StandInCapture(target, **kw))
        return captures[-1]
    return opener


def test_a_usb_camera_is_told_its_controls_holds_what_it_reached_and_logs_what_it_refuses(tmp_path, caplog):
    import cv2

    clock = Clock()
    captures: list[StandInCapture] = []
    opener = usb(captures, refuses={cv2.CAP_PROP_AUTOFOCUS},
                 values={cv2.CAP_PROP_EXPOSURE: 156.0, cv2.CAP_PROP_GAIN: 64.0, cv2.CAP_PROP_WB_TEMPERATURE: 4600.0})
    source = UsbSource(0, sysfs=tmp_path / "none", settings=settings(lock_after_s=5.0, hflip=True),
                       clock=clock, opener=opener)
    with caplog.at_level(logging.WARNING):
        source.open()
        cap = captures[0]
        assert cap.sets == [("CAP_PROP_AUTO_EXPOSURE", 3), ("CAP_PROP_AUTO_WB", 1), ("CAP_PROP_AUTOFOCUS", 1)]
        assert "refused CAP_PROP_AUTOFOCUS = 1" in caplog.text
        frame = source.read()
        assert frame[0, -1, 0] == 200 and frame[0, 0, 0] == 0  # mirrored
        cap.sets.clear()
        clock.t += 5
        source.read()
    assert cap.sets == [("CAP_PROP_AUTO_EXPOSURE", 1), ("CAP_PROP_EXPOSURE", 156.0), ("CAP_PROP_GAIN", 64.0),
                        ("CAP_PROP_AUTO_WB", 0), ("CAP_PROP_WB_TEMPERATURE", 4600.0)]
    assert "CAP_PROP_FOCUS (read -1)" in caplog.text  # focus: nothing to read, left automatic
    assert source.controls() == "held: exposure 156, gain 64, white balance 4600"
    cap.sets.clear()
    source.remeasure()
    source.read()
    assert cap.sets[:2] == [("CAP_PROP_AUTO_EXPOSURE", 3), ("CAP_PROP_AUTO_WB", 1)]
    assert caplog.text.count("refused CAP_PROP_AUTOFOCUS = 1") == 1  # said once


def test_a_usb_cameras_fixed_values_are_sent_in_its_own_units(tmp_path):
    import cv2

    captures: list[StandInCapture] = []
    source = UsbSource(0, sysfs=tmp_path / "none", opener=usb(captures),
                       settings=settings(exposure_us=10000, gain=32.0, white_balance=4500, focus=40.0))
    source.open()
    assert captures[0].sets == [("CAP_PROP_AUTO_EXPOSURE", 1), ("CAP_PROP_EXPOSURE", 100.0),
                                ("CAP_PROP_AUTO_WB", 0), ("CAP_PROP_WB_TEMPERATURE", 4500),
                                ("CAP_PROP_AUTOFOCUS", 0), ("CAP_PROP_FOCUS", 40.0), ("CAP_PROP_GAIN", 32.0)]
    assert cv2.CAP_PROP_EXPOSURE in captures[0].values and source.controls() == "fixed in companion.toml"


# -- the sensor mode ([camera] sensor_mode; the choice itself: tests/hardware/test_sensor_modes.py)

def test_auto_asks_picamera2_for_the_sensor_mode_that_sees_the_whole_sensor(picam, caplog):
    picam.modes = IMX219  # a Camera Module 2: for 1280x720 picamera2 alone takes the cropped 1920x1080
    source = Picamera2Source(1280, 720, 15, settings=settings())
    with caplog.at_level(logging.INFO, logger="companion.live.camera"):
        source.open()
    config = picam.configs[-1]
    assert config["sensor"] == {"output_size": (1640, 1232), "bit_depth": 10}
    assert config["main"] == {"size": (1280, 720), "format": "RGB888"} and "raw" not in config
    assert source.read().shape == (720, 1280, 3)
    assert source.describe() == "picamera2 1280x720@15, sensor 1640x1232 10-bit, full view"
    assert "sensor 1640x1232 10-bit, full view for 1280x720 frames" in caplog.text


def test_a_sensor_mode_size_is_asked_for_and_default_leaves_the_modes_unread(picam):
    picam.modes = IMX219
    Picamera2Source(1280, 720, 15, settings=settings(sensor_mode="1920x1080")).open()
    assert picam.configs[-1]["sensor"] == {"output_size": (1920, 1080), "bit_depth": 10}
    reads = picam.mode_reads
    source = Picamera2Source(1280, 720, 15, settings=settings(sensor_mode="default"))
    source.open()  # listing the modes reconfigures the camera once per mode: not done for nothing
    assert picam.mode_reads == reads and "sensor" not in picam.configs[-1]
    assert source.describe() == "picamera2 1280x720@15"


def test_a_size_the_camera_has_no_mode_of_is_a_camera_error_naming_its_modes(picam):
    picam.modes = IMX219
    source = Picamera2Source(1280, 720, 15, settings=settings(sensor_mode="2304x1296"))
    with pytest.raises(CameraError, match=r"camera.sensor_mode 2304x1296 is not a mode of this camera "
                                          r"\(its modes: 640x480, 1640x1232, 1920x1080, 3280x2464; or \"auto\"\)"):
        source.open()
    assert picam.closed == 1  # the camera is let go, for the next try


def test_an_older_picamera2_without_sensor_is_asked_through_the_raw_streams_size(picam, monkeypatch):
    full = StandInPicamera2.create_video_configuration

    def without_sensor(self, main=None, controls=None, transform=None, raw=None):
        return full(self, main, controls, transform, raw=raw)

    monkeypatch.setattr(StandInPicamera2, "create_video_configuration", without_sensor)
    picam.modes = IMX219
    Picamera2Source(1280, 720, 15, settings=settings()).open()
    assert picam.configs[-1]["raw"] == {"size": (1640, 1232)} and "sensor" not in picam.configs[-1]


def test_a_camera_without_sensor_modes_is_left_to_picamera2(picam):
    source = Picamera2Source(1280, 720, 15, settings=settings())  # picam.modes None: no sensor_modes
    source.open()
    assert "sensor" not in picam.configs[-1]
    assert source.describe() == "picamera2 1280x720@15, sensor mode chosen by picamera2"


def test_frames_come_at_the_size_asked_for(picam, caplog):
    source = Picamera2Source(641, 481, 15, settings=settings())  # picamera2 evens a stream's size
    source.open()
    with caplog.at_level(logging.WARNING, logger="companion.live.camera"):
        assert source.read().shape == (481, 641, 3)
        assert source.read().shape == (481, 641, 3)
    assert caplog.text.count("gives 640x480 frames, not the 641x481 asked for") == 1


# -- companion.toml

def write(tmp_path, text: str):
    path = tmp_path / "companion.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("line,key", [
    ('exposure_us = "fast"', "camera.exposure_us"),
    ("exposure_us = 0", "camera.exposure_us"),
    ("exposure_us = 1500.5", "camera.exposure_us"),
    ("gain = -1", "camera.gain"),
    ("white_balance = [1.8]", "camera.white_balance"),
    ('white_balance = "warm"', "camera.white_balance"),
    ("focus = true", "camera.focus"),
    ("lock_after_s = -5", "camera.lock_after_s"),
    ('hflip = "yes"', "camera.hflip"),
    ("exposure_us = 80000", "camera.exposure_us"),  # longer than a frame at 15 fps
])
def test_a_bad_camera_value_is_one_line_naming_its_key(tmp_path, line, key):
    with pytest.raises(ConfigError) as err:
        load(write(tmp_path, f'[camera]\nsource = "picamera2"\n{line}\n'))
    text = str(err.value)
    assert f"'{key}'" in text and "\n" not in text


def test_white_balance_given_the_other_cameras_way_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="'camera.white_balance' of the Pi camera is \\[red, blue\\]"):
        load(write(tmp_path, '[camera]\nsource = "picamera2"\nwhite_balance = 4500\n'))
    with pytest.raises(ConfigError, match="'camera.white_balance' of a USB camera is a colour temperature"):
        load(write(tmp_path, '[camera]\nsource = "usb:0"\nwhite_balance = [1.8, 1.5]\n'))


def test_good_camera_values_are_read(tmp_path):
    cam = load(write(tmp_path, '[camera]\nsource = "picamera2"\nexposure_us = 8000\ngain = 2\n'
                               'white_balance = [1.8, 1.5]\nfocus = 1.25\nhflip = true\nlock_after_s = 0\n'))["camera"]
    s = CameraSettings.from_config(cam)
    assert s == CameraSettings(8000, 2.0, (1.8, 1.5), 1.25, True, False, 0.0)
    assert CameraSettings.from_config(load(None)["camera"]) == CameraSettings()
    assert CameraSettings.from_config(load(write(tmp_path, '[camera]\nsensor_mode = "2304x1296"\n'))["camera"]) \
        == CameraSettings(sensor_mode="2304x1296")
