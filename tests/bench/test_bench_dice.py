"""``companion bench dice`` on labelled folders set up wrong, as one copied by hand is: a missing or
malformed label, a class beyond 5, a photo that is not one, a split that is not there. Each is one
clear error naming the file (exit status 2), never a traceback and never figures quietly taken
on other dice than the labels say. Built from two train-split photos of tests/data/dice/byler."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from companion.cli import main

PHOTOS = ["IMG_20191208_111228", "IMG_20191208_111246"]  # train split: 22 dice each


@pytest.fixture()
def folder(tmp_path: Path, byler_dir: Path) -> Path:
    """A labelled folder as the byler one is laid out: images/, labels/, annotations.csv."""
    byler = byler_dir
    root = tmp_path / "labelled"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    for name in PHOTOS:
        shutil.copy(byler / "images" / f"{name}.jpg", root / "images")
        shutil.copy(byler / "labels" / f"{name}.txt", root / "labels")
    with open(byler / "annotations.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if Path(r["image"]).stem in PHOTOS]
    assert {r["upstream_split"] for r in rows} == {"train"}
    with open(root / "annotations.csv", "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=list(rows[0]))
        out.writeheader()
        out.writerows(rows)
    return root


def bench(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["bench", "dice", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def add_line(folder: Path, line: str) -> Path:
    lab = folder / "labels" / f"{PHOTOS[0]}.txt"
    lab.write_text(lab.read_text().rstrip("\n") + "\n" + line + "\n")
    return lab


@pytest.mark.parametrize("line", ["6 0.5 0.5 0.1 0.1", "-1 0.5 0.5 0.1 0.1", "x 0.5 0.5 0.1 0.1",
                                  "2 0.5 0.5 0.1", "2 0.5 0.5 0.1 0.1 0.3", "2 320 240 40 40", "2 nan 0.5 0.1 0.1"])
def test_a_label_line_that_is_not_class_0_to_5_and_a_normalised_box_is_an_error_naming_its_line(
        folder: Path, capsys, line: str) -> None:
    """Class 6 (a die of 7) was a KeyError traceback, a non-number class a ValueError; a line of
    four or six fields was dropped without a word, a box in pixels counted as a die off the photo."""
    lab = add_line(folder, line)
    n = len(lab.read_text().splitlines())
    status, out, err = bench(capsys, str(folder), "--json")
    assert status == 2 and out == ""
    assert err.startswith("error: ") and f"{lab}:{n}:" in err and "class 0-5" in err and "Traceback" not in err


def test_an_empty_label_file_is_a_photo_without_dice_and_a_missing_one_is_left_out_and_named(
        folder: Path, capsys) -> None:
    (folder / "labels" / f"{PHOTOS[0]}.txt").write_text("")
    status, out, _ = bench(capsys, str(folder), "--json")
    r = json.loads(out)
    assert status == 0 and r["images"] == 2 and r["dice"] == 22 and r["extra"] >= 20 and r["unlabelled"] == []
    (folder / "labels" / f"{PHOTOS[0]}.txt").unlink()
    status, out, _ = bench(capsys, str(folder), "--json")
    r = json.loads(out)
    assert status == 0 and r["images"] == 1 and r["unlabelled"] == [f"{PHOTOS[0]}.jpg"]
    status, out, _ = bench(capsys, str(folder))
    assert status == 0 and f"left out 1 images without a label file: {PHOTOS[0]}.jpg" in out


def test_a_folder_of_one_photo_gives_every_figure(folder: Path, capsys) -> None:
    (folder / "images" / f"{PHOTOS[1]}.jpg").unlink()
    (folder / "labels" / f"{PHOTOS[1]}.txt").unlink()
    status, out, _ = bench(capsys, str(folder), "--split", "train", "--json")
    r = json.loads(out)
    assert status == 0 and r["images"] == 1 and r["dice"] == 22
    assert r["ms_median"] > 0 and r["ms_p90"] == r["ms_median"] and "cores" in r["machine"]
    assert isinstance(r["images_right_pct"], float) and set(r["per_value"]) == {"1", "2", "3", "4", "5", "6"}
    status, out, _ = bench(capsys, str(folder), "--split", "train")
    assert status == 0
    for words in ("machine:", "precision:", "per value (precision/recall %)", "images entirely right:", "median", "p90"):
        assert words in out


@pytest.mark.parametrize("case", ["unknown split", "no annotations", "no split column", "no labels dir",
                                  "not a photo", "photo cut short", "no photo at all"])
def test_a_folder_the_bench_cannot_use_is_one_clear_error(folder: Path, capsys, case: str) -> None:
    """An unknown --split or a folder without labels/ gave '0 images' and figures of None with exit
    status 0; a photo OpenCV cannot read an AttributeError traceback, an annotations.csv without
    upstream_split a KeyError; a JPEG cut short was benchmarked on its top half."""
    args = [str(folder), "--json"]
    photo = folder / "images" / f"{PHOTOS[0]}.jpg"
    if case == "unknown split":
        args += ["--split", "val"]
        words = "no split 'val'"
    elif case == "no annotations":
        (folder / "annotations.csv").unlink()
        args += ["--split", "train"]
        words = "annotations.csv"
    elif case == "no split column":
        (folder / "annotations.csv").write_text("image,value\nimages/a.jpg,3\n")
        args += ["--split", "train"]
        words = "upstream_split"
    elif case == "no labels dir":
        shutil.rmtree(folder / "labels")
        words = "expected images/ and labels/"
    elif case == "not a photo":
        photo.write_text("not a photo\n")
        words = f"{photo} is not an image"
    elif case == "photo cut short":
        photo.write_bytes(photo.read_bytes()[:5000])
        words = f"{photo} is a JPEG cut short"
    else:
        for p in (folder / "images").iterdir():
            p.unlink()
        words = "no labelled images"
    status, out, err = bench(capsys, *args)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and words in err and "Traceback" not in err


@pytest.mark.parametrize("flag, value, words", [("--scale", "nan", "--scale"), ("--colours", "CORRUPT", "not JSON"),
                                                ("--enlarge", "9", "0.25 to 4"), ("--enlarge", "nan", "--enlarge"),
                                                ("--colour-labels", "CORRUPT", "--colour-labels"),
                                                ("--models", "NOWHERE", "dice-finder.onnx")])
def test_a_bad_option_is_an_error_not_a_traceback(folder: Path, tmp_path: Path, capsys, flag: str, value: str,
                                                  words: str) -> None:
    (tmp_path / "corrupt.json").write_text("{not json")
    value = {"CORRUPT": str(tmp_path / "corrupt.json"), "NOWHERE": str(tmp_path / "nowhere")}.get(value, value)
    try:
        status, out, err = bench(capsys, str(folder), flag, value)
    except SystemExit as leave:  # argparse
        status, out, err = leave.code, *capsys.readouterr()
    assert status == 2 and out == "" and words in err and "Traceback" not in err


def test_label_fixes_correct_a_value_and_add_a_die_and_a_fix_that_misses_is_an_error(folder: Path, capsys,
                                                                                     tmp_path: Path) -> None:
    """--label-fixes scores against labels corrected where the die shows another value, or where no
    label covers a die: one label is made wrong and another removed, and the fixes give back the
    figures of the true labels."""
    keys = ("dice", "found_right_pct", "wrong_value", "missed", "extra", "images_right_pct")
    status, out, _ = bench(capsys, str(folder), "--json")
    truth = json.loads(out)
    lab = folder / "labels" / f"{PHOTOS[0]}.txt"
    lines = lab.read_text().splitlines()
    c, cx, cy, _, _ = lines[0].split()
    c2, cx2, cy2, w2, h2 = lines[1].split()
    lab.write_text("\n".join([f"{(int(c) + 1) % 6} {cx} {cy} {lines[0].split()[3]} {lines[0].split()[4]}",
                              *lines[2:]]) + "\n")
    status, out, _ = bench(capsys, str(folder), "--json")
    broken = json.loads(out)
    assert broken["dice"] == truth["dice"] - 1 and broken["found_right_pct"] < truth["found_right_pct"]
    px = [float(v) * 640 for v in (cx, cy, cx2, cy2, w2, h2)]
    fixes = tmp_path / "fixes.json"
    fixes.write_text(json.dumps({"fixes": [
        {"image": f"{PHOTOS[0]}.jpg", "center": [px[0], px[1]], "value": int(c) + 1},
        {"image": f"{PHOTOS[0]}.jpg", "add": [px[2] - px[4] / 2, px[3] - px[5] / 2, px[2] + px[4] / 2,
                                              px[3] + px[5] / 2], "value": int(c2) + 1}]}))
    status, out, _ = bench(capsys, str(folder), "--json", "--label-fixes", str(fixes))
    fixed = json.loads(out)
    assert status == 0 and fixed["label_fixes"] == 2 and truth["label_fixes"] == 0
    assert {k: fixed[k] for k in keys} == {k: truth[k] for k in keys}
    fixes.write_text(json.dumps({"fixes": [{"image": f"{PHOTOS[0]}.jpg", "center": [1, 1], "value": 3}]}))
    status, _, err = bench(capsys, str(folder), "--json", "--label-fixes", str(fixes))
    assert status == 2 and "0 labelled dice there" in err


def test_enlarged_photos_are_read_with_their_labels_scaled_alike(folder: Path, capsys) -> None:
    """--enlarge 2: every photo twice the size (a phone's larger photo) and its labels with it: the
    same 44 dice are all there to be matched, and the report says how it read them."""
    status, out, _ = bench(capsys, str(folder), "--split", "train", "--enlarge", "2", "--json")
    r = json.loads(out)
    assert status == 0 and r["dice"] == 44 and r["enlarged"] == 2.0 and r["image_size"] == "2.0x as stored"
    assert r["found_right_pct"] >= 95.0, r["failures"]
