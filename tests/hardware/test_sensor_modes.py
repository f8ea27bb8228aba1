"""``[camera] sensor_mode``: the mode chosen from the sensor mode tables of real Pi cameras, as
picamera2's ``sensor_modes`` lists them, and the configuration key's accepted and refused values.

The tables are the sensors' modes as ``rpicam-hello --list-cameras`` prints them (size, fps,
crop) in the Raspberry Pi camera documentation and the picamera2 manual's Camera Module 3
example, written in picamera2's form: format, unpacked, bit_depth, size, fps, crop_limits
(x, y, width, height on the pixel array), exposure_limits."""

from __future__ import annotations

import subprocess
import sys

import pytest

from companion.config import ConfigError, load
from companion.hardware.sensor_modes import SensorModeError, choose, full_view, parse


def mode(fmt: str, size, fps, crop):
    depth = int(fmt[5:7].rstrip("_"))  # SRGGB10_CSI2P -> 10, SRGGB8 -> 8
    return {"format": fmt, "unpacked": fmt.split("_")[0], "bit_depth": depth, "size": size, "fps": fps,
            "crop_limits": crop, "exposure_limits": (75, 11766829, None)}


# Camera Module 3: 4608x2592, 16:9; its 1536x864 mode is binned *and* cropped to the middle
IMX708 = [mode("SRGGB10_CSI2P", (1536, 864), 120.13, (768, 432, 3072, 1728)),
          mode("SRGGB10_CSI2P", (2304, 1296), 56.03, (0, 0, 4608, 2592)),
          mode("SRGGB10_CSI2P", (4608, 2592), 14.35, (0, 0, 4608, 2592))]
# Camera Module 2: 3280x2464, 4:3; a Pi 4 lists each size at 10 and at 8 bits
IMX219 = [mode(fmt, size, fps, crop) for fmt, fast in (("SRGGB10_CSI2P", 1.0), ("SRGGB8", 2.0))
          for size, fps, crop in (((640, 480), 206.65, (1000, 752, 1280, 960)),
                                  ((1640, 1232), round(41.85 * fast, 2), (0, 0, 3280, 2464)),
                                  ((1920, 1080), 47.57, (680, 692, 1920, 1080)),
                                  ((3280, 2464), 21.19, (0, 0, 3280, 2464)))]
# HQ camera: 4056x3040, 4:3; 2028x1080 reads a 4056x2160 band, 1332x990 the middle
IMX477 = [mode("SRGGB10_CSI2P", (1332, 990), 120.05, (696, 528, 2664, 1980)),
          mode("SRGGB12_CSI2P", (2028, 1080), 50.03, (0, 440, 4056, 2160)),
          mode("SRGGB12_CSI2P", (2028, 1520), 40.01, (0, 0, 4056, 3040)),
          mode("SRGGB12_CSI2P", (4056, 3040), 10.0, (0, 0, 4056, 3040))]


def test_the_full_view_is_the_whole_pixel_array():
    assert full_view(IMX708) == (0, 0, 4608, 2592)
    assert full_view(IMX219) == (0, 0, 3280, 2464)
    assert full_view(IMX477) == (0, 0, 4056, 3040)
    assert full_view([{"format": "YUYV"}]) is None


@pytest.mark.parametrize("modes,frame,size", [
    # 1536x864 is large enough and faster, but sees only the middle 3072x1728
    (IMX708, (1280, 720), (2304, 1296)),
    (IMX708, (1536, 864), (2304, 1296)),
    (IMX708, (2304, 1296), (2304, 1296)),
    (IMX708, (2560, 1440), (4608, 2592)),
    # picamera2's own choice for 1280x720 on a Camera Module 2 is the cropped 1920x1080
    (IMX219, (1280, 720), (1640, 1232)),
    (IMX219, (640, 480), (1640, 1232)),
    (IMX219, (1920, 1080), (3280, 2464)),
    (IMX477, (1280, 720), (2028, 1520)),
    (IMX477, (1332, 990), (2028, 1520)),
])
def test_auto_takes_the_smallest_mode_that_sees_the_whole_sensor_and_is_at_least_the_frame(modes, frame, size):
    choice = choose(modes, "auto", frame, 15)
    assert choice.size == size and choice.full_view
    assert "the smallest mode that reads the whole" in choice.why


def test_auto_prefers_the_deeper_mode_and_the_one_that_reaches_the_frame_rate():
    assert choose(IMX219, "auto", (1280, 960), 15).bit_depth == 10       # both reach 15 fps: 10 bits
    fast = choose(IMX219, "auto", (1280, 960), 60)                        # only the 8-bit one reaches 60
    assert (fast.size, fast.bit_depth) == ((1640, 1232), 8)
    assert choose(IMX477, "auto", (1280, 720), 15).bit_depth == 12


def test_auto_says_what_it_costs():
    slow = choose(IMX708, "auto", (2560, 1440), 15)
    assert "it reaches 14.35 fps, below camera.fps = 15" in slow.why
    wide = choose(IMX219, "auto", (1280, 720), 15)  # a 16:9 frame from a 4:3 sensor
    assert "13% at the top and at the bottom of the view are cut" in wide.why
    assert "about 1280x962, keeps them" in wide.why
    assert "not the sensor's shape" not in choose(IMX708, "auto", (1280, 720), 15).why
    assert "not the sensor's shape" not in choose(IMX219, "auto", (1280, 960), 15).why
    big = choose(IMX219, "auto", (4000, 3000), 15)  # larger than the sensor: its whole view, scaled up
    assert big.size == (3280, 2464) and big.full_view and "scaled up" in big.why
    assert wide.describe() == "sensor 1640x1232 10-bit, full view"


def test_a_size_takes_that_mode_even_a_cropped_one():
    crop = choose(IMX219, (1920, 1080), (1280, 720), 15)
    assert (crop.size, crop.bit_depth, crop.full_view) == ((1920, 1080), 10, False)
    assert "reads only 1920x1080 of the 3280x2464 sensor" in crop.why
    assert crop.describe() == "sensor 1920x1080 10-bit, cropped view"
    assert choose(IMX708, (4608, 2592), (1280, 720), 15).full_view


def test_a_size_this_camera_has_no_mode_of_names_the_ones_it_has():
    with pytest.raises(SensorModeError) as err:
        choose(IMX708, (1920, 1080), (1280, 720), 15)
    assert str(err.value) == ('camera.sensor_mode 1920x1080 is not a mode of this camera '
                              '(its modes: 1536x864, 2304x1296, 4608x2592; or "auto")')


def test_default_and_a_camera_without_raw_modes_leave_it_to_picamera2():
    assert choose(IMX708, "default", (1280, 720), 15).size is None
    assert choose([{"format": "YUYV"}, {"format": "MJPEG"}], "auto", (1280, 720), 15).size is None
    assert choose([], "auto", (1280, 720), 15).describe() == "sensor mode chosen by picamera2"
    unknown = [dict(m, crop_limits=(65535, 65535, 65535, 65535)) for m in IMX708]  # crops not known
    assert choose(unknown, "auto", (1280, 720), 15).size is None
    assert choose(unknown, (2304, 1296), (1280, 720), 15).size == (2304, 1296)  # a size still works


def test_parse_reads_what_the_configuration_keeps():
    assert parse("auto") == "auto" and parse("default") == "default"
    assert parse("2304x1296") == (2304, 1296)
    with pytest.raises(SensorModeError):
        parse("full")


# -- companion.toml

def write(tmp_path, text: str):
    path = tmp_path / "companion.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("value,kept", [
    ('"auto"', "auto"), ('"default"', "default"), ('"2304x1296"', "2304x1296"),
    ('" 1640 X 1232 "', "1640x1232"), ('"Auto"', "auto"), ('"1640×1232"', "1640x1232"),
])
def test_sensor_mode_values_that_are_accepted(tmp_path, value, kept):
    cam = load(write(tmp_path, f'[camera]\nsource = "picamera2"\nsensor_mode = {value}\n'))["camera"]
    assert cam["sensor_mode"] == kept
    assert cam["width"] == 1280 and cam["fps"] == 15  # nothing else changed


def test_sensor_mode_is_auto_by_default():
    assert load(None)["camera"]["sensor_mode"] == "auto"


@pytest.mark.parametrize("value", ['"full"', '"1920*1080"', '"1920x"', '"0x0"', '"1920x1080x10"',
                                   "1920", "true", "[1920, 1080]", '""'])
def test_sensor_mode_values_that_are_refused_name_the_key_and_what_it_takes(tmp_path, value):
    path = write(tmp_path, f'[camera]\nsource = "picamera2"\nsensor_mode = {value}\n')
    with pytest.raises(ConfigError) as err:
        load(path)
    text = str(err.value)
    assert text.startswith(f"{path}: 'camera.sensor_mode' must be \"auto\"")
    assert '"default"' in text and "WIDTHxHEIGHT" in text and "rpicam-hello --list-cameras" in text
    assert "\n" not in text


def test_a_bad_sensor_mode_stops_the_start_with_one_line_and_no_traceback(tmp_path):
    path = write(tmp_path, '[camera]\nsource = "picamera2"\nsensor_mode = "1920by1080"\n')
    run = subprocess.run([sys.executable, "-m", "companion", "serve", "--config", str(path),
                          "--data-dir", str(tmp_path / "data")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "'camera.sensor_mode' must be" in lines[0] and "'1920by1080'" in lines[0]
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())
