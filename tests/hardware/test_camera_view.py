"""A table calibration made under one camera view is not used under another: the sensor mode
(full field of view or a crop), the camera, the frame's shape. What the calibration was made
under is stored with it; the service compares it with what the Pi camera runs when it opens and,
on a mismatch, says so on the health page and in the log and reads nothing through it.

Through the project's stand-in for picamera2's documented API (tests/live/test_camera_controls.py)
with the sensor mode tables of real cameras (tests/hardware/test_sensor_modes.py); the frames are
the project's drawn table, so the service really calibrates from its markers."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.config import load
from companion.hardware.sensor_modes import choose
from companion.live.camera import Picamera2Source
from companion.live.service import Service
from companion.sim.render import Look, Renderer, Scene, full_table
from companion.vision.calibrate import Calibration, calibrate
from companion.vision.images import jpeg_note
from companion.vision.layout import Layout
from companion.vision.view import CameraView, view_change
from companion.web.i18n import texts
from companion.web.pages import alert_text
from tests.hardware.test_sensor_modes import IMX219, IMX708
from tests.live.test_camera_controls import StandInPicamera2, picam, settings  # noqa: F401 (picam: a fixture)

LAYOUT = Layout()
TABLE = Renderer(Look(tilt_deg=15), LAYOUT, seed=3).frame(Scene((), full_table(LAYOUT).dice, ()))  # 1280x720


def view_of(modes, wanted, frame=(1280, 720), model="imx708") -> CameraView:
    choice = choose(modes, wanted, frame, 15)
    return CameraView(frame=frame, model=model, sensor=choice.size, crop=choice.crop, array=choice.array)


# -- what counts as another view

def test_a_cropped_sensor_mode_is_another_view_and_a_larger_frame_or_mode_of_the_whole_sensor_is_not():
    full = view_of(IMX708, "auto")                     # 2304x1296, the whole 4608x2592
    assert (full.sensor, full.crop, full.array) == ((2304, 1296), (0, 0, 4608, 2592), (4608, 2592))
    cropped = view_of(IMX708, (1536, 864))             # the middle 3072x1728
    assert view_change(full, cropped) == (
        "it was made under sensor mode 2304x1296, which sees the whole 4608x2592 sensor, and the camera now runs "
        "sensor mode 1536x864, which sees only 3072x1728 of the 4608x2592 sensor (from 768,432): the table lies "
        "elsewhere in the frame")
    assert view_change(full, view_of(IMX708, (4608, 2592))) is None          # every pixel: the same view
    assert view_change(full, view_of(IMX708, "auto", (1920, 1080))) is None  # a larger frame of it: scaled
    assert view_change(full, full) is None


def test_another_camera_or_frame_shape_is_another_view():
    made = view_of(IMX708, "auto")
    assert view_change(made, view_of(IMX219, "auto", model="imx219")) == (
        "it was made with camera imx708 and the camera is now imx219")
    four_three = view_of(IMX219, "auto", (1280, 960), model="imx219")
    wide = view_of(IMX219, "auto", (1280, 720), model="imx219")  # the ISP cuts a band off top and bottom
    assert "made on 1280x960 frames and the camera now gives 1280x720" in view_change(four_three, wide)


def test_what_either_side_does_not_know_refuses_nothing():
    made = view_of(IMX708, "auto")
    assert view_change(None, made) is None and view_change(made, None) is None     # a file from before
    chosen_by_picamera2 = CameraView(frame=(1280, 720), model="imx708")            # sensor_mode "default"
    assert view_change(made, chosen_by_picamera2) is None
    assert view_change(CameraView(frame=(1280, 720)), view_of(IMX708, (1536, 864))) is None  # a photo's size only


def test_the_calibration_file_keeps_it_and_older_or_hand_edited_files_still_load(tmp_path: Path):
    cal = calibrate(TABLE)
    made = view_of(IMX708, "auto")
    replace(cal, made_under=made).save(tmp_path / "table.json")
    stored = json.loads((tmp_path / "table.json").read_text())
    assert stored["made_under"] == {"frame": [1280, 720], "model": "imx708", "sensor": [2304, 1296],
                                    "crop": [0, 0, 4608, 2592], "array": [4608, 2592]}
    assert Calibration.load(tmp_path / "table.json").made_under == made
    for record in (None, "imx708", {"frame": "1280x720"}, {"crop": [0, 0, 0, 0]}):
        if record is None:
            del stored["made_under"]
        else:
            stored["made_under"] = record
        (tmp_path / "old.json").write_text(json.dumps(stored))
        assert Calibration.load(tmp_path / "old.json").made_under is None  # not known: refuses nothing


# -- the Pi camera says what it runs under

def test_the_pi_camera_says_its_model_sensor_mode_and_crop(picam):  # noqa: F811
    picam.modes = IMX708
    source = Picamera2Source(1280, 720, 15, settings=settings())
    source.open()
    assert source.view == CameraView((1280, 720), "imx708", (2304, 1296), (0, 0, 4608, 2592), (4608, 2592))
    source = Picamera2Source(1280, 720, 15, settings=settings(sensor_mode="1536x864"))
    source.open()
    assert source.view.crop == (768, 432, 3072, 1728)
    source = Picamera2Source(1280, 720, 15, settings=settings(sensor_mode="default"))
    source.open()   # picamera2 chooses: the mode is not known
    assert source.view == CameraView((1280, 720), "imx708", None, None, None)


# -- the service

class TableCamera(StandInPicamera2):
    """The stand-in whose frames show the drawn table as the sensor mode sees it: a mode that
    reads the middle two thirds of the sensor shows the middle of the table, magnified."""

    model = "imx708"

    @classmethod
    def global_camera_info(cls):
        return [{"Model": cls.model, "Num": 0}]

    def configure(self, config):
        super().configure(config)
        self.middle = (config.get("sensor") or {}).get("output_size") == (1536, 864)

    def capture_array(self, name="main", wait=None, signal_function=None):
        frame = TABLE
        if self.middle:
            h, w = frame.shape[:2]
            frame = cv2.resize(frame[h // 6:h - h // 6, w // 6:w - w // 6], (w, h))
        job = type("Job", (), {"result": cv2.resize(frame, self.size)})()
        signal_function(job)
        return job


@contextmanager
def serving(tmp_path: Path, **camera) -> Iterator[Service]:
    """The real service on the stand-in Pi camera (``camera``: its [camera] settings), stopped after."""
    config = load(None, {"panel": {"enabled": False}, "data": {"dir": str(tmp_path)}, "server": {"pin": "0000"},
                         "camera": {"source": "picamera2", "lock_after_s": 0, **camera}})
    service = Service(config)
    try:
        yield service
    finally:
        service.stop()
        service.table.close()


def run(service: Service, frames: int = 3) -> dict:
    for _ in range(frames):
        assert service.live.step()
    return service.live.health()["processors"]["vision"]


@pytest.fixture
def table_camera(picam, monkeypatch):  # noqa: F811
    monkeypatch.setattr(sys.modules["picamera2"], "Picamera2", TableCamera)
    TableCamera.modes = IMX708
    TableCamera.model = "imx708"
    return TableCamera


def test_a_calibration_made_in_one_sensor_mode_is_refused_in_a_cropped_one_and_said_on_every_page(
        table_camera, tmp_path: Path, caplog):
    # the service calibrates itself from the markers under "auto" (the whole sensor) and keeps what it was made under
    with serving(tmp_path) as service:
        vision = run(service)
        assert vision["status"].startswith("calibrated (from the markers") and vision["alert"] is None
    stored = json.loads((tmp_path / "table.json").read_text())
    assert stored["made_under"]["sensor"] == [2304, 1296] and stored["made_under"]["crop"] == [0, 0, 4608, 2592]
    before = (tmp_path / "table.json").read_bytes()
    # someone sets sensor_mode to the cropped mode: the table lies elsewhere in its frames
    with serving(tmp_path, sensor_mode="1536x864") as service:
        with caplog.at_level(logging.WARNING, logger="companion.live.pipeline"):
            vision = run(service, 5)
        alert = vision["alert"]
        assert alert is not None and alert["code"] == "CALIBRATION_VIEW_CHANGED", vision
        sentence = alert["message"]
        assert sentence.startswith("the table calibration cannot be used with the camera as it runs now: it was made "
                                   "under sensor mode 2304x1296, which sees the whole 4608x2592 sensor, and the camera "
                                   "now runs sensor mode 1536x864, which sees only 3072x1728")
        assert "Calibrate the table again (companion calibrate table" in sentence
        assert "nothing is read from the table until then" in sentence
        for lang in ("hu", "es"):   # every phone says it in its own words, what changed as the detail
            t = texts(lang)
            assert alert_text(alert, t) == t["alert_CALIBRATION_VIEW_CHANGED"].replace("{detail}", alert["detail"])
            assert alert["detail"] in sentence
        assert vision["status"] == f"not reading: {sentence}" and sentence in caplog.text
        assert caplog.text.count(sentence) == 1   # said once, not at every frame
        assert vision["dice"] == "waiting"   # never fed a frame
        page = service.app.test_client().get("/health").get_data(as_text=True)
        assert "which sees only 3072x1728" in page   # the banner every page shows
    assert (tmp_path / "table.json").read_bytes() == before   # kept as it was, not replaced
    # every pixel of the sensor (another size, the same view): read as before
    with serving(tmp_path, sensor_mode="4608x2592") as service:
        vision = run(service)
        assert vision["alert"] is None and vision["status"].startswith("calibrated (loaded"), vision


def test_another_camera_is_refused_and_an_older_calibration_file_is_read_as_before(table_camera, tmp_path: Path):
    with serving(tmp_path) as service:
        run(service)
    table_camera.model, table_camera.modes = "imx219", IMX219   # a Camera Module 2 in its place
    with serving(tmp_path) as service:
        vision = run(service)
        assert vision["alert"]["code"] == "CALIBRATION_VIEW_CHANGED"
        assert "it was made with camera imx708 and the camera is now imx219" in vision["alert"]["message"]
    stored = json.loads((tmp_path / "table.json").read_text())
    del stored["made_under"]   # as every calibration before this version
    (tmp_path / "table.json").write_text(json.dumps(stored))
    with serving(tmp_path) as service:
        vision = run(service)
        assert vision["alert"] is None and vision["status"].startswith("calibrated (loaded"), vision


def test_a_frame_taken_from_the_service_tells_calibrate_table_what_it_was_taken_under(table_camera, tmp_path: Path,
                                                                                    capsys):
    with serving(tmp_path / "data") as service:
        run(service, 1)
        raw = service.latest_jpeg(raw=True)
    assert raw is not None
    assert jpeg_note(raw) == {"frame": [1280, 720], "model": "imx708", "sensor": [2304, 1296],
                              "crop": [0, 0, 4608, 2592], "array": [4608, 2592]}
    assert cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR).shape == (720, 1280, 3)
    (tmp_path / "frame.jpg").write_bytes(raw)
    out = tmp_path / "table.json"
    assert main(["calibrate", "table", str(tmp_path / "frame.jpg"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "made under: camera imx708, sensor mode 2304x1296 (the whole 4608x2592 sensor), 1280x720 frames" in printed
    assert Calibration.load(out).made_under == CameraView((1280, 720), "imx708", (2304, 1296), (0, 0, 4608, 2592),
                                                          (4608, 2592))
    # a photo that does not say (another program's, or resized): its size only, which is certain
    cv2.imwrite(str(tmp_path / "photo.png"), TABLE)
    assert main(["calibrate", "table", str(tmp_path / "photo.png"), "--out", str(out)]) == 0
    assert "made under: 1280x720 frames, the camera's sensor mode not known" in capsys.readouterr().out
    assert Calibration.load(out).made_under == CameraView(frame=(1280, 720))


def test_frames_of_another_shape_through_an_older_calibration_are_refused_in_words_not_a_traceback(tmp_path: Path):
    """A table.json from before the camera view was kept says nothing of it; frames of another
    shape than it was made on (width and height changed in companion.toml) still cannot be read
    through it: the same alert, and the loop's processor does not raise at every frame."""
    from companion.live.pipeline import TableVision
    from companion.table import Table

    calibrate(TABLE).save(tmp_path / "table.json")   # made_under not kept: as every older file
    table = Table(tmp_path / "table.sqlite")
    try:
        vision = TableVision(table, tmp_path / "table.json")
        taller = cv2.resize(TABLE, (1280, 960))
        assert vision.feed(taller, 0.0) == [] and vision.feed(taller, 0.1) == []
        alert = vision.health()["alert"]
        assert alert["code"] == "CALIBRATION_VIEW_CHANGED"
        assert "frames are 1280×960, calibrated for 1280×720" in alert["message"]
        assert "calibrate the table again (companion calibrate table)" in alert["message"]
    finally:
        table.close()
