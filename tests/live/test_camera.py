"""Camera sources and the camera that survives them: image folders, a real video file written
with cv2.VideoWriter, sources that raise, return None or garbage, vanish, and come back."""

from __future__ import annotations

import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.config import load
from companion.live.camera import (
    CallableSource,
    CameraError,
    ImageFolderSource,
    Picamera2Source,
    ResilientCamera,
    SourceEnded,
    TimedSource,
    VideoCaptureSource,
    check_frame,
    open_source,
    parse_spec,
)


class FakeClock:
    """Seconds that only move when the test says so."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


def frame(level: int, w: int = 64, h: int = 48) -> np.ndarray:
    img = np.full((h, w, 3), level, np.uint8)
    cv2.putText(img, str(level), (4, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255 - level,) * 3, 2)
    return img


def write_folder(folder: Path, levels: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, level in enumerate(levels):
        cv2.imwrite(str(folder / f"frame{i:03d}.png"), frame(level))
    return folder


def test_image_folder_reads_images_in_name_order_then_ends(tmp_path: Path):
    folder = write_folder(tmp_path / "shots", [10, 120, 240])
    (folder / "notes.txt").write_text("not an image")
    source = ImageFolderSource(folder)
    source.open()
    levels = [int(source.read()[0, 60, 0]) for _ in range(3)]
    assert levels == [10, 120, 240]
    with pytest.raises(SourceEnded):
        source.read()


def test_image_folder_loops_and_paces_to_fps(tmp_path: Path):
    folder = write_folder(tmp_path / "shots", [10, 120])
    clock = FakeClock()
    source = ImageFolderSource(folder, loop=True, fps=10, clock=clock, sleep=clock.sleep)
    source.open()
    levels = [int(source.read()[0, 60, 0]) for _ in range(5)]
    assert levels == [10, 120, 10, 120, 10]
    assert clock.slept == pytest.approx([0.1] * 4)


def test_an_undecodable_image_is_a_glitch_not_a_crash(tmp_path: Path):
    folder = write_folder(tmp_path / "shots", [10, 120])
    (folder / "frame000b.jpg").write_bytes(b"\xff\xd8 this is no jpeg")
    camera = ResilientCamera(lambda: ImageFolderSource(folder))
    got = [camera.read() for _ in range(3)]
    assert got[1] is None
    assert [int(f[0, 60, 0]) for f in (got[0], got[2])] == [10, 120]
    assert camera.health()["bad_frames"] == 1 and camera.health()["state"] == "ok"
    assert camera.read() is None and camera.health()["state"] == "ended"


def test_video_file_written_with_videowriter_is_read_and_looped(tmp_path: Path):
    path = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    assert writer.isOpened()
    for level in (20, 100, 180, 250):
        writer.write(frame(level))
    writer.release()
    source = VideoCaptureSource(str(path))
    source.open()
    levels = [int(source.read()[2:10, 40:60].mean()) for _ in range(6)]
    source.close()
    assert [abs(a - b) <= 6 for a, b in zip(levels, [20, 100, 180, 250, 20, 100], strict=True)] == [True] * 6
    once = VideoCaptureSource(str(path), loop=False)
    once.open()
    for _ in range(4):
        assert once.read() is not None
    with pytest.raises(SourceEnded):
        once.read()
    once.close()


def test_a_source_that_raises_returns_none_and_garbage_then_recovers():
    clock = FakeClock()
    script: list[object] = [frame(50), RuntimeError("USB bus reset"), None, None,
                            np.zeros((0, 0, 3), np.uint8), np.zeros((48, 64, 3), np.float32),
                            np.zeros((48, 64, 5), np.uint8), "not a frame", frame(60)]

    def next_frame():
        item = script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    camera = ResilientCamera(lambda: CallableSource(next_frame), backoff=0.5, max_bad=3, clock=clock)
    assert camera.read() is not None
    assert camera.read() is None  # the exception: closed, retry in 0.5 s
    h = camera.health()
    assert h["state"] == "retrying" and "USB bus reset" in h["last_error"] and h["status"] == "retrying in 0.5 s"
    assert camera.read() is None and len(script) == 7  # still waiting: the source is not touched
    clock.t += 0.5
    assert [camera.read() for _ in range(3)] == [None, None, None]  # None, None, empty: 3 bad in a row
    assert camera.health()["state"] == "retrying"
    assert "3 bad frames in a row (last: empty frame)" in camera.health()["last_error"]
    assert camera.retry_in() == pytest.approx(1.0)  # back-off doubled
    clock.t += 1.0
    assert [camera.read() for _ in range(3)] == [None, None, None]  # float32, 5 channels, a str
    assert "not an image but str" in camera.health()["last_error"]
    clock.t += 2.0
    good = camera.read()
    assert good is not None and int(good[0, 60, 0]) == 60
    h = camera.health()
    assert (h["state"], h["frames"], h["bad_frames"], h["opens"], h["failures"]) == ("ok", 2, 6, 4, 3)


def test_backoff_doubles_up_to_its_ceiling_and_resets_after_a_good_frame():
    clock = FakeClock()
    plugged = {"in": False}

    def factory():
        if not plugged["in"]:
            raise CameraError("no such device")
        return CallableSource(lambda: frame(90))

    camera = ResilientCamera(factory, backoff=0.5, backoff_max=4.0, clock=clock)
    waits = []
    for _ in range(6):
        assert camera.read() is None
        waits.append(camera.retry_in())
        clock.t += camera.retry_in()
    assert waits == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    plugged["in"] = True
    assert camera.read() is not None
    assert camera._backoff == 0.5


def test_a_vanished_image_folder_is_retried_until_it_is_back(tmp_path: Path):
    clock = FakeClock()
    folder = write_folder(tmp_path / "cam", [30, 70, 110])
    camera = ResilientCamera(lambda: ImageFolderSource(folder, loop=True), backoff=1.0, clock=clock)
    assert camera.read() is not None
    shutil.rmtree(folder)
    assert camera.read() is None
    assert "vanished" in camera.health()["last_error"]
    clock.t += 1.0
    assert camera.read() is None  # reopening fails: no folder
    assert "no image folder" in camera.health()["last_error"] and camera.retry_in() == 2.0
    write_folder(folder, [200])
    clock.t += 2.0
    back = camera.read()
    assert back is not None and int(back[0, 60, 0]) == 200
    assert camera.health()["state"] == "ok"


def test_a_usb_camera_that_is_not_there_never_raises():
    camera = open_source("usb:57", load(None), backoff=60.0)
    assert camera is not None
    assert camera.read() is None
    h = camera.health()
    assert h["state"] == "retrying" and "USB camera 57" in h["last_error"]


def test_picamera2_off_a_pi_is_a_clear_camera_error():
    source = Picamera2Source(640, 480)
    with pytest.raises(CameraError, match="python3-picamera2"):
        source.open()


def test_source_strings_from_the_config(tmp_path: Path):
    folder = write_folder(tmp_path / "imgs", [1])
    video = tmp_path / "clip.mp4"
    assert parse_spec("none") is None
    assert isinstance(parse_spec("picamera2")(), Picamera2Source)
    usb = parse_spec("usb:2", width=640, height=480)()
    assert isinstance(usb, VideoCaptureSource) and usb.target == 2
    stream = parse_spec("rtsp://10.0.0.5/cam")()
    assert isinstance(stream, VideoCaptureSource) and not stream.is_file
    assert isinstance(parse_spec(str(folder))(), ImageFolderSource)
    assert isinstance(parse_spec(str(video))(), VideoCaptureSource)
    assert parse_spec("render", render=lambda: CallableSource([]))().name == "callable"
    for bad, message in [("usb:x", "device number"), ("render", "renderer"), ("picamra2", "not none")]:
        with pytest.raises(CameraError, match=message):
            parse_spec(bad)


def test_check_frame_converts_grey_and_bgra_and_refuses_the_rest():
    grey = np.full((20, 30), 7, np.uint8)
    out, problem = check_frame(grey)
    assert problem is None and out.shape == (20, 30, 3)
    out, problem = check_frame(np.zeros((20, 30, 4), np.uint8))
    assert problem is None and out.shape == (20, 30, 3)
    assert check_frame(np.zeros((20, 30, 3), np.uint16))[1] == "pixels of type uint16, not uint8"
    assert check_frame(np.zeros((2, 2, 3), np.uint8))[1].endswith("too small")


def test_timed_frames_play_at_their_own_pace_and_restart_when_reopened():
    clock = FakeClock()
    source = TimedSource(lambda: ((i * 0.5, frame(10 * i)) for i in range(3)), speed=2.0,
                         clock=clock, sleep=clock.sleep)
    source.open()
    assert [int(source.read()[0, 60, 0]) for _ in range(3)] == [0, 10, 20]
    assert clock.slept == pytest.approx([0.25, 0.25])  # half a second of game time at double speed
    assert source.last_t == 1.0
    with pytest.raises(SourceEnded):
        source.read()
    source.open()
    assert int(source.read()[0, 60, 0]) == 0 and source.last_t == 0.0


class StandInJob:
    """picamera2's Job: the result of an asynchronous capture, collected with Picamera2.wait."""

    def __init__(self, result):
        self.result = result


class StandInPicamera2:
    """Stands in for picamera2 (only installable on Raspberry Pi OS), following its documented
    API: Picamera2(n), create_video_configuration(main=..., controls=...), configure, start,
    capture_array("main", wait=None, signal_function=None) — with a signal_function it returns
    a job at once and calls signal_function(job) when the frame has come —, wait(job), stop,
    close. Records the calls; ``fail_after`` frames, it raises as a camera does when its cable
    comes loose; ``stall_after`` frames, frames stop coming and the job never completes (the
    libcamera "Dequeue timer … has expired" case)."""

    calls: list[tuple] = []
    fail_after: int | None = None
    stall_after: int | None = None
    cameras = 1

    busy = False

    @classmethod
    def global_camera_info(cls) -> list[dict]:
        cls.calls.append(("global_camera_info",))
        return [{"Model": "imx708", "Num": n} for n in range(cls.cameras)]

    def __init__(self, camera_num: int = 0):
        if camera_num >= self.cameras:
            raise IndexError("list index out of range")  # what picamera2 does with no camera
        if self.busy:
            raise RuntimeError("Failed to acquire camera: Device or resource busy")
        self.calls.append(("Picamera2", camera_num))
        self.size = (0, 0)
        self.frames = 0

    def create_video_configuration(self, main=None, controls=None):
        self.calls.append(("create_video_configuration", main, controls))
        return {"main": main, "controls": controls}

    def configure(self, config):
        self.size = config["main"]["size"]
        self.calls.append(("configure",))

    def start(self):
        self.calls.append(("start",))

    def capture_array(self, name="main", wait=None, signal_function=None):
        self.frames += 1
        if self.fail_after is not None and self.frames > self.fail_after:
            raise RuntimeError("Device timeout detected, attempting a restart!!!")
        w, h = self.size
        job = StandInJob(np.full((h, w, 3), 77, np.uint8))
        if wait is None:
            wait = signal_function is None
        if wait:
            return job.result
        if self.stall_after is None or self.frames <= self.stall_after:
            signal_function(job)  # the camera thread signals the finished job
        return job

    def wait(self, job):
        return job.result

    def stop(self):
        self.calls.append(("stop",))

    def close(self):
        self.calls.append(("close",))


@pytest.fixture
def picamera2(monkeypatch: pytest.MonkeyPatch):
    import sys
    import types

    module = types.ModuleType("picamera2")
    module.Picamera2 = StandInPicamera2
    monkeypatch.setitem(sys.modules, "picamera2", module)
    StandInPicamera2.calls = []
    StandInPicamera2.fail_after = None
    StandInPicamera2.stall_after = None
    StandInPicamera2.busy = False
    StandInPicamera2.cameras = 1
    return StandInPicamera2


def test_picamera2_source_uses_the_documented_api_and_gives_bgr_frames(picamera2):
    source = Picamera2Source(640, 480, fps=25)
    source.open()
    frame_ = source.read()
    source.close()
    assert frame_.shape == (480, 640, 3) and frame_.dtype == np.uint8
    assert picamera2.calls == [
        ("global_camera_info",), ("Picamera2", 0),
        ("create_video_configuration", {"size": (640, 480), "format": "RGB888"}, {"FrameRate": 25.0}),
        ("configure",), ("start",), ("stop",), ("close",)]


def test_a_pi_camera_that_times_out_is_reopened(picamera2):
    clock = FakeClock()
    picamera2.fail_after = 2
    camera = ResilientCamera(lambda: Picamera2Source(320, 240), backoff=0.5, clock=clock)
    assert camera.read() is not None and camera.read() is not None
    assert camera.read() is None
    assert "Device timeout" in camera.health()["last_error"]
    assert picamera2.calls[-2:] == [("stop",), ("close",)]  # released, so it can be opened again
    clock.t += 0.5
    assert camera.read() is not None and camera.health()["opens"] == 2


def test_no_pi_camera_attached_is_a_camera_error(picamera2):
    """It says to check the cable and that a camera plugged in after boot needs a reboot, and
    it never builds a Picamera2 that finds no camera (each such try leaked a file descriptor)."""
    picamera2.cameras = 0
    for _ in range(3):  # the camera is retried while the service runs
        with pytest.raises(CameraError, match="no Pi camera 0 detected .*ribbon cable.*reboot"):
            Picamera2Source().open()
    assert picamera2.calls == [("global_camera_info",)] * 3


def test_a_pi_camera_another_program_holds_says_so(picamera2):
    picamera2.busy = True
    camera = ResilientCamera(lambda: Picamera2Source(), backoff=60.0)
    assert camera.read() is None
    error = camera.health()["last_error"]
    assert "Device or resource busy" in error and "another program" in error and "no Pi camera" not in error


def test_a_pi_camera_that_stops_sending_frames_is_reopened_not_waited_for(picamera2):
    """capture_array waits for the next frame with no limit: a camera that stops sending (a
    loose ribbon cable) used to hang the camera loop for ever, with the health page at "ok"."""
    import time

    picamera2.stall_after = 2
    camera = ResilientCamera(lambda: Picamera2Source(320, 240, frame_timeout=0.2), backoff=0.0)
    assert camera.read() is not None and camera.read() is not None
    started = time.monotonic()
    assert camera.read() is None
    assert time.monotonic() - started < 2.0
    health = camera.health()
    assert health["state"] == "retrying" and "no frame for 0.2 s" in health["last_error"]
    assert picamera2.calls[-2:] == [("stop",), ("close",)]  # released, so it can be opened again
    picamera2.stall_after = None
    assert camera.read() is not None and camera.health()["opens"] == 2


def test_the_pi_camera_waits_ten_frame_times_at_least_two_seconds():
    assert Picamera2Source(fps=30).frame_timeout == 2.0
    assert Picamera2Source(fps=2).frame_timeout == 5.0


def test_an_open_camera_whose_read_hangs_is_reported_stalled_not_ok():
    clock = FakeClock()
    camera = ResilientCamera(lambda: CallableSource(lambda: frame(5)), clock=clock, stall_seconds=5.0)
    for _ in range(10):
        assert camera.read() is not None
        clock.t += 0.04
    assert camera.health()["state"] == "ok" and camera.fps() == pytest.approx(25.0)
    clock.t += 6.0  # the next read has not returned for six seconds
    health = camera.health()
    assert health["state"] == "stalled" and health["status"].startswith("no frame for 6 s")
    assert health["fps"] == 0.0
    assert camera.read() is not None and camera.health()["state"] == "ok"


def fake_sysfs(root: Path) -> Path:
    """video4linux as a Pi 5 with a ribbon camera and a UVC webcam shows it: video0 the CSI
    receiver, video1 the webcam's capture node, video2 its metadata node."""
    sysfs = root / "video4linux"
    for name, device, index in (("video0", "platform/1f00110000.csi", "0"),
                                ("video1", "platform/xhci/usb1/1-1/1-1:1.0", "0"),
                                ("video2", "platform/xhci/usb1/1-1/1-1:1.0", "1")):
        (root / device).mkdir(parents=True, exist_ok=True)
        (sysfs / name).mkdir(parents=True)
        (sysfs / name / "device").symlink_to(root / device)
        (sysfs / name / "index").write_text(index + "\n")
    return sysfs


def test_usb_0_on_a_pi_5_is_the_webcam_not_the_csi_receiver(tmp_path: Path):
    from companion.live.camera import UsbSource, usb_video_nodes

    sysfs = fake_sysfs(tmp_path)
    assert usb_video_nodes(sysfs) == [1]
    with pytest.raises(CameraError, match=r"USB camera 0 \(/dev/video1\)"):  # the webcam's node (absent here)
        UsbSource(0, sysfs=sysfs).open()
    with pytest.raises(CameraError, match="no USB camera 1: 1 found"):
        UsbSource(1, sysfs=sysfs).open()
