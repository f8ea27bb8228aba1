"""``companion dice`` and ``companion cups`` on batches with bad images in them: each bad image
gets its own error line (EVENTS.md: ``{"image", "error": {"code", "message"}}``) and the rest of
the batch is read."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.layout import Layout
from companion.vision.render import Look, Renderer, full_table

PHOTO = "IMG_20191208_111228"  # a train-split photo: 22 dice, several named by the default profiles
FULL = {"blue": 4, "red": 4, "green": 4, "yellow": 4, "silver": 1}


@pytest.fixture(scope="module")
def photo(shared_dir: Path) -> Path:
    return shared_dir / "data" / "dice" / "byler" / "images" / f"{PHOTO}.jpg"


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


@pytest.mark.parametrize("scale", ["nan", "inf", "100", "0", "-1", "half"])
def test_dice_scale_out_of_range_is_a_usage_error(photo: Path, capsys, scale: str) -> None:
    """nan, inf and 100 gave tracebacks (100 tried to allocate 45 GiB); 0 and -1 said 'no dice'."""
    with pytest.raises(SystemExit) as leave:
        main(["dice", str(photo), f"--scale={scale}", "--json"])
    out = capsys.readouterr()
    assert leave.value.code == 2 and out.out == ""
    assert "--scale" in out.err and "Traceback" not in out.err


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
