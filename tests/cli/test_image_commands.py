"""``companion dice`` and ``companion cups`` on batches with bad images in them: each bad image
gets its own error line (EVENTS.md: ``{"image", "error": {"code", "message"}}``) and the rest of
the batch is read; a photo that cannot show what is asked (no colour, no markers, another shape
than the calibration's) says so instead of a wrong reading."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.sim.render import Look, Renderer, full_table
from companion.vision.layout import Layout

PHOTO = "IMG_20191208_111228"  # a train-split photo: 22 dice, several named by the default profiles
FULL = {"blue": 4, "red": 4, "green": 4, "yellow": 4, "silver": 1}


@pytest.fixture(scope="module")
def photo(byler_dir: Path) -> Path:
    return byler_dir / "images" / f"{PHOTO}.jpg"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A rendered 21 Exact table (1280×720) and its calibration file from `calibrate table`."""
    folder = tmp_path_factory.mktemp("table")
    layout = Layout()
    image = folder / "table.png"
    cv2.imwrite(str(image), Renderer(Look(tilt_deg=12), layout, seed=3).frame(full_table(layout)))
    cal = folder / "table.json"
    assert main(["calibrate", "table", str(image), "--out", str(cal)]) == 0
    return image, cal


def odd_images(folder: Path) -> dict[str, tuple[Path, str]]:
    """name → (path, expected error code) for images no reader can use."""
    out = {}
    for name, shape in [("one", (1, 1, 3)), ("tiny", (5, 7, 3)), ("tall", (20000, 3, 3)), ("wide", (2, 30000, 3))]:
        path = folder / f"{name}.png"
        cv2.imwrite(str(path), np.full(shape, 128, np.uint8))
        out[name] = (path, "TOO_SMALL")
    (folder / "photos").mkdir()
    out["dir"] = (folder / "photos", "NOT_A_FILE")
    return out


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def cut_short(path: Path, folder: Path, keep: float) -> Path:
    """A copy of a JPEG with its end missing (a copy stopped part way)."""
    data = path.read_bytes()
    cut = folder / f"cut-{path.stem}.jpg"
    cut.write_bytes(data[:int(len(data) * keep)])
    return cut


def phone_jpeg(frame: np.ndarray, orientation: int) -> bytes:
    """A JPEG as a phone saves it: the pixels as the sensor read them and an EXIF Orientation tag
    saying how to turn them for display (6: a quarter turn clockwise)."""
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    tiff = b"MM\x00\x2a" + struct.pack(">IHHHIHHI", 8, 1, 0x0112, 3, 1, orientation, 0, 0)
    app1 = b"Exif\x00\x00" + tiff
    data = buf.tobytes()
    return data[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + data[2:]


# ------------------------------------------------------------------ companion dice
def test_dice_reads_the_whole_batch_past_images_too_small_or_a_directory(tmp_path: Path, photo: Path, capsys) -> None:
    """A 1×1, 5×7, 20000×3 or 2×30000 image killed the batch with a ValueError traceback; a
    directory was 'no such file'."""
    odd = odd_images(tmp_path)
    status = main(["dice", str(photo), *(str(p) for p, _ in odd.values()), str(photo), "--json"])
    lines = json_lines(capsys.readouterr().out)
    assert status == 1
    assert [line["image"] for line in lines] == [str(photo), *(str(p) for p, _ in odd.values()), str(photo)]
    for line, (name, (path, code)) in zip(lines[1:-1], odd.items(), strict=True):
        assert line == {"image": str(path), "error": {"code": code, "message": line["error"]["message"]}}
        assert ("too small" if code == "TOO_SMALL" else "is a directory") in line["error"]["message"], name
    assert len(lines[0]["dice"]) == 22 and lines[-1]["dice"] == lines[0]["dice"]


def test_dice_on_a_jpeg_cut_short_is_an_error_not_a_reading_of_what_is_left(
        tmp_path: Path, photo: Path, capsys) -> None:
    """OpenCV decodes a truncated JPEG with the missing rows grey and only a warning on stderr:
    the photo cut at half its bytes gave 15 of its 22 dice, exit status 0."""
    cut = cut_short(photo, tmp_path, 0.5)
    assert main(["dice", str(photo), str(cut), str(photo), "--json"]) == 1
    first, line, last = json_lines(capsys.readouterr().out)
    assert line == {"image": str(cut), "error": {"code": "NOT_AN_IMAGE", "message": line["error"]["message"]}}
    assert "cut short" in line["error"]["message"]
    assert len(first["dice"]) == 22 and last["dice"] == first["dice"]


def test_dice_in_a_phone_photo_turned_by_its_exif_tag_are_where_the_upright_photo_shows_them(
        tmp_path: Path, photo: Path, capsys) -> None:
    """The photo stored a quarter turn off, as a phone held sideways saves it, with the EXIF tag
    that turns it back: the dice are read, and placed, in the upright photo's pixels."""
    upright = cv2.resize(cv2.imread(str(photo)), (800, 600))
    (tmp_path / "phone.jpg").write_bytes(phone_jpeg(cv2.rotate(upright, cv2.ROTATE_90_COUNTERCLOCKWISE), 6))
    # the same pixels the phone stored (JPEG and all), turned upright by hand
    stored = cv2.imread(str(tmp_path / "phone.jpg"), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    (tmp_path / "upright.png").write_bytes(cv2.imencode(".png", cv2.rotate(stored, cv2.ROTATE_90_CLOCKWISE))[1].tobytes())
    assert main(["dice", str(tmp_path / "upright.png"), str(tmp_path / "phone.jpg"), "--json"]) == 0
    want, got = json_lines(capsys.readouterr().out)
    assert len(got["dice"]) == len(want["dice"]) >= 20
    for d in got["dice"]:
        x0, y0, x1, y1 = d["box"]
        assert 0 <= x0 < x1 <= 800 and 0 <= y0 < y1 <= 600
        assert any(w["value"] == d["value"] and abs(w["center"][0] - d["center"][0]) < 3
                   and abs(w["center"][1] - d["center"][1]) < 3 for w in want["dice"])


@pytest.mark.slow
@pytest.mark.parametrize("as_json", [False, True])
def test_dice_and_cups_read_files_named_with_spaces_accents_or_bytes_that_are_not_utf8(
        tmp_path: Path, photo: Path, table: tuple[Path, Path], capsys, as_json: bool) -> None:
    """A name that is not UTF-8 (b'caf\\xe9.jpg', from an old card) was a UnicodeEncodeError in the
    text output under a UTF-8 locale (the Pi's), and the images after it were never read."""
    names = ["dés du café.jpg", os.fsdecode(b"caf\xe9.jpg")]
    for name in names:
        (tmp_path / name).write_bytes(photo.read_bytes())
    (tmp_path / os.fsdecode(b"tabl\xe9.png")).write_bytes(table[0].read_bytes())
    flag = ["--json"] if as_json else []
    assert main(["dice", *(str(tmp_path / n) for n in names), str(photo), *flag]) == 0
    out = capsys.readouterr().out
    assert main(["cups", str(tmp_path / os.fsdecode(b"tabl\xe9.png")), str(table[0]), *flag]) == 0
    cups = capsys.readouterr().out
    if as_json:
        lines = json_lines(out)
        assert [line["image"] for line in lines] == [str(tmp_path / n) for n in names] + [str(photo)]
        assert all(len(line["dice"]) == 22 for line in lines)
        assert [line["sides"] for line in json_lines(cups)] == [{"A": FULL, "B": FULL}] * 2
    else:
        assert out.count(": 22 dice:") == 3 and "dés du café.jpg: 22 dice" in out and "caf\ufffd.jpg: 22 dice" in out
        assert cups.count("side A: 4 blue") == 2 and "tabl\ufffd.png: side A" in cups


@pytest.mark.parametrize("scale", ["nan", "inf", "100", "0", "-1", "half"])
def test_dice_scale_out_of_range_is_a_usage_error(photo: Path, capsys, scale: str) -> None:
    """nan, inf and 100 gave tracebacks (100 tried to allocate 45 GiB); 0 and -1 said 'no dice'."""
    with pytest.raises(SystemExit) as leave:
        main(["dice", str(photo), f"--scale={scale}", "--json"])
    out = capsys.readouterr()
    assert leave.value.code == 2 and out.out == ""
    assert "--scale" in out.err and "Traceback" not in out.err


def test_dice_in_a_greyscale_photo_have_their_values_and_an_unknown_colour(tmp_path: Path, photo: Path, capsys) -> None:
    """The greyscale photo named green and yellow dice 'black' and 'white' with confidence 0.99."""
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), cv2.cvtColor(cv2.imread(str(photo)), cv2.COLOR_BGR2GRAY))
    assert main(["dice", str(photo), str(grey), "--json"]) == 0
    colour, grey_line = json_lines(capsys.readouterr().out)
    assert {d["color"] for d in colour["dice"]} - {"unknown"}, "the colour photo names some colours"
    assert "notice" not in colour
    assert {d["color"] for d in grey_line["dice"]} == {"unknown"}
    # the values are still read, most of them alike (18 of 22 here: the reader was trained on colour);
    # a die whose value it is unsure of in grey is left out rather than proposed (20 of 22 reported)
    same = sum(any(g["value"] == c["value"] and abs(g["center"][0] - c["center"][0]) < 5
                   and abs(g["center"][1] - c["center"][1]) < 5 for c in colour["dice"]) for g in grey_line["dice"])
    assert len(grey_line["dice"]) <= len(colour["dice"]) and same >= 0.75 * len(colour["dice"])
    assert grey_line["notice"]["code"] == "NOT_COLOUR"


# ------------------------------------------------------------------ companion cups
@pytest.mark.parametrize("calibrated", [False, True])
def test_cups_reads_the_whole_batch_past_images_too_small_or_a_directory(
        tmp_path: Path, table: tuple[Path, Path], capsys, calibrated: bool) -> None:
    """A 1×1 image was a cv2.error traceback on cvtColor, and the tables after it were lost."""
    image, cal = table
    odd = odd_images(tmp_path)
    args = ["cups", str(image), *(str(p) for p, _ in odd.values()), str(image), "--json"]
    status = main(args + (["--calibration", str(cal)] if calibrated else []))
    lines = json_lines(capsys.readouterr().out)
    assert status == 1 and len(lines) == len(odd) + 2
    assert [line["error"]["code"] for line in lines[1:-1]] == [code for _, code in odd.values()]
    assert lines[0]["sides"] == {"A": FULL, "B": FULL} and lines[-1]["sides"] == lines[0]["sides"]


@pytest.mark.parametrize("calibrated", [False, True])
def test_cups_on_a_jpeg_cut_short_is_an_error(tmp_path: Path, table: tuple[Path, Path], capsys, calibrated: bool) -> None:
    """The table cut at 80 % of its bytes (its near markers grey) was read with a calibration as
    a table of two markers, every cup in place."""
    image, cal = table
    jpeg = tmp_path / "table.jpg"
    cv2.imwrite(str(jpeg), cv2.imread(str(image)))
    cut = cut_short(jpeg, tmp_path, 0.8)
    status = main(["cups", str(cut), str(jpeg), "--json"] + (["--calibration", str(cal)] if calibrated else []))
    line, good = json_lines(capsys.readouterr().out)
    assert status == 1 and line["error"]["code"] == "NOT_AN_IMAGE" and "cut short" in line["error"]["message"]
    assert "sides" not in line and good["sides"] == {"A": FULL, "B": FULL}


@pytest.mark.parametrize("calibrated", [False, True])
def test_cups_in_a_greyscale_photo_is_an_error_not_every_cup_made(
        tmp_path: Path, table: tuple[Path, Path], capsys, calibrated: bool) -> None:
    image, cal = table
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), cv2.cvtColor(cv2.imread(str(image)), cv2.COLOR_BGR2GRAY))
    status = main(["cups", str(grey), "--json"] + (["--calibration", str(cal)] if calibrated else []))
    (line,) = json_lines(capsys.readouterr().out)
    assert status == 1
    assert line["image"] == str(grey) and line["error"]["code"] == "NOT_COLOUR" and "sides" not in line


def test_cups_with_a_calibration_on_a_black_frame_says_no_marker_is_seen(
        tmp_path: Path, table: tuple[Path, Path], capsys) -> None:
    """It reported every cup as 0 (every cup made, in a game)."""
    image, cal = table
    black = tmp_path / "black.png"
    cv2.imwrite(str(black), np.zeros((720, 1280, 3), np.uint8))
    assert main(["cups", str(black), str(image), "--json", "--calibration", str(cal)]) == 1
    line, good = json_lines(capsys.readouterr().out)
    assert line["error"]["code"] == "MARKERS_NOT_FOUND" and "blank" in line["error"]["message"]
    assert good["sides"] == {"A": FULL, "B": FULL}


def test_cups_with_a_calibration_on_a_shifted_frame_says_the_camera_moved(
        tmp_path: Path, table: tuple[Path, Path], capsys) -> None:
    """The live watch's check (markers where they were calibrated), now made on each photo."""
    image, cal = table
    frame = cv2.imread(str(image))
    moved = tmp_path / "moved.png"
    cv2.imwrite(str(moved), cv2.warpAffine(frame, np.float32([[1, 0, 60], [0, 1, 25]]), (1280, 720),
                                           borderMode=cv2.BORDER_REPLICATE))
    assert main(["cups", str(moved), "--json", "--calibration", str(cal)]) == 1
    (line,) = json_lines(capsys.readouterr().out)
    assert line["error"]["code"] == "CAMERA_MOVED" and "calibrate again" in line["error"]["message"]


def test_cups_with_a_calibration_refuses_a_frame_of_another_shape(
        tmp_path: Path, table: tuple[Path, Path], capsys) -> None:
    image, cal = table
    cut = tmp_path / "cut.png"
    cv2.imwrite(str(cut), cv2.resize(cv2.imread(str(image)), (1280, 853)))
    bigger = tmp_path / "bigger.png"
    cv2.imwrite(str(bigger), cv2.resize(cv2.imread(str(image)), (1920, 1080)))
    assert main(["cups", str(cut), str(bigger), "--json", "--calibration", str(cal)]) == 1
    line, good = json_lines(capsys.readouterr().out)
    assert line["error"]["code"] == "WRONG_SIZE"
    assert "1280×853" in line["error"]["message"] and "1280×720" in line["error"]["message"]
    assert good["sides"] == {"A": FULL, "B": FULL}   # the same shape at another size is read


# ------------------------------------------------------------------ the file a whole run needs
def settings_files(folder: Path, table: tuple[Path, Path]) -> dict[str, Path]:
    """Files given where a calibration or a colour profile file belongs, none of them usable."""
    image, cal = table
    data = json.loads(cal.read_text())
    out = {"an image": image, "missing": folder / "missing.json", "not JSON": folder / "cut.json",
           "edited": folder / "edited.json", "a directory": folder}
    out["not JSON"].write_text(cal.read_text()[:100])
    out["edited"].write_text(json.dumps({**data, "image_size": [0, 0]}))
    return out


@pytest.mark.parametrize("what", ["an image", "missing", "not JSON", "edited", "a directory", "the other kind"])
@pytest.mark.parametrize("command", ["dice", "cups"])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_colour_or_calibration_file_that_cannot_be_used_stops_the_run_with_one_clear_error(
        tmp_path: Path, table: tuple[Path, Path], photo: Path, capsys, what: str, command: str, as_json: bool) -> None:
    """An image given as --calibration or --colours (the overlay PNG beside table.json, say) was a
    UnicodeDecodeError traceback, a hand-edited image_size [0, 0] a ZeroDivisionError; `dice` put
    its error as JSON on stdout without --json, `cups` on stderr even with --json."""
    image, cal = table
    files = settings_files(tmp_path, table)
    files["the other kind"] = cal if command == "dice" else Path(__file__).parents[2] / "models" / "dice-colours.json"
    flag = {"dice": "--colours", "cups": "--calibration"}[command]
    bad = files[what]
    if command == "dice" and what == "edited":
        bad.write_text(json.dumps({"format": "companion-dice-colours/1", "profiles": {"red": {"lab": [[1, 2]]}}}))
    status = main([command, str(image if command == "cups" else photo), flag, str(bad)] + (["--json"] if as_json else []))
    out = capsys.readouterr()
    assert status == 2
    if as_json:
        (line,) = json_lines(out.out)
        assert set(line) == {"error"} and str(bad) in line["error"]["message"]
        assert line["error"]["code"] == {"dice": "BAD_COLOURS", "cups": "BAD_FILE"}[command]
    else:
        assert out.out == "" and out.err.startswith("error: ") and str(bad) in out.err


# ------------------------------------------------------------------ --help and unknown flags
@pytest.mark.parametrize("command, flags", [("dice", ["--json", "--colours FILE", "--scale SCALE"]),
                                            ("cups", ["--json", "--calibration FILE"])])
def test_help_names_the_flags_and_the_exit_status(capsys, command: str, flags: list[str]) -> None:
    """`cups --help` said --json was 'the default output too'; without it the lines are text."""
    with pytest.raises(SystemExit) as leave:
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert leave.value.code == 0
    assert all(flag in text for flag in flags)
    assert "exit status 1 if any cannot be read" in text and "default output" not in text


@pytest.mark.parametrize("command", ["dice", "cups"])
def test_an_unknown_flag_is_a_usage_error(photo: Path, capsys, command: str) -> None:
    with pytest.raises(SystemExit) as leave:
        main([command, str(photo), "--jsn"])
    out = capsys.readouterr()
    assert leave.value.code == 2 and out.out == "" and "unrecognized arguments: --jsn" in out.err
