"""deploy/aarch64-proof.sh (issue 25, "Proof on aarch64 without a Pi") and its comparison.

The comparison (deploy/aarch64_compare.py) is tested here on made-up outputs: what counts as the
same answers, what as different. The proof itself needs qemu-aarch64-static and the arm64 root
that a first run of the script made (debootstrap, as root, once), plus PyPI: it runs only where
both are present, and takes minutes (an emulated pip install and every reader under QEMU)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "aarch64-proof.sh"
CACHE = Path(os.environ.get("COMPANION_AARCH64_CACHE", Path.home() / ".cache" / "companion-aarch64"))
ARM64_ROOT = CACHE / "root"
ROOT_MARK = ARM64_ROOT / ".companion-aarch64-root"

spec = importlib.util.spec_from_file_location("aarch64_compare", REPO / "deploy" / "aarch64_compare.py")
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)


def lines(*objects: dict) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


CUPS = {"image": "t.jpg", "markers": 4, "sides": {"A": {"red": 1}, "B": {"red": 1}},
        "cups": [{"side": "A", "color": "red", "center": [490.3, 262.2]},
                 {"side": "B", "color": "silver", "center": [826.9, 357.2]}],
        "balls": [], "ms": 31.3}


def test_the_same_bytes_are_identical() -> None:
    assert compare.verdict(lines(CUPS), lines(CUPS)) == (True, "identical")


def test_the_readers_own_times_are_not_answers() -> None:
    slow = dict(CUPS, ms=2055.9)
    assert compare.verdict(lines(CUPS), lines(slow)) == (True, "identical but for the readers' times")


def test_a_tenth_of_a_pixel_and_another_order_are_the_same_answers() -> None:
    """As the cup finder gives them on aarch64: two cups of equal score swapped, a centre 0.1 px off."""
    other = json.loads(json.dumps(CUPS))
    other["cups"] = [{"side": "B", "color": "silver", "center": [826.9, 357.3]}, other["cups"][0]]
    same, words = compare.verdict(lines(CUPS), lines(other))
    assert same
    assert "floats apart by ≤ 0.1" in words and "another order in [0]/cups" in words


@pytest.mark.parametrize("change, where", [
    (lambda o: o["cups"][0].update(color="blue"), "[0]/cups[0]"),       # a cup's colour
    (lambda o: o["sides"]["A"].update(red=2), "[0]/sides/A/red"),       # a count
    (lambda o: o["cups"].pop(), "[0]/cups: 2 / 1 items"),               # a cup missed
    (lambda o: o["cups"][1]["center"].__setitem__(0, 828.0), "[0]/cups[1]"),  # more than half a pixel
    (lambda o: o.update(markers=3), "[0]/markers: 4 / 3"),
    (lambda o: o.update(extra=1), "keys"),
])
def test_any_other_change_is_different(change, where: str) -> None:
    other = json.loads(json.dumps(CUPS))
    change(other)
    same, words = compare.verdict(lines(CUPS), lines(other))
    assert not same
    assert words.startswith("DIFFERENT") and where in words


def test_a_die_value_is_never_within_tolerance() -> None:
    die = {"image": "d.jpg", "dice": [{"value": 3, "color": "red", "center": [10.0, 10.0],
                                       "box": [1, 1, 19, 19], "confidence": 0.99}], "ms": 5.0}
    other = json.loads(json.dumps(die))
    other["dice"][0]["value"] = 4
    assert compare.verdict(lines(die), lines(other))[0] is False


def test_report_says_exit_status_and_times(tmp_path: Path) -> None:
    for arch, ms, code in (("x86_64", 30.0, 0), ("aarch64-cortex-a72", 3110.3, 1)):
        folder = tmp_path / arch
        folder.mkdir()
        (folder / "dice.json").write_text(lines({"image": "d.jpg", "dice": [], "ms": ms}))
        (folder / "replay.json").write_text(lines({"scores": {"A": 5}}))
        (folder / "seconds.tsv").write_text(f"dice\t0.40\t0\nreplay\t0.05\t{code}\n")
    ok, text = compare.report(tmp_path, "171.5", "abc", "here")
    assert not ok
    assert "### aarch64, QEMU -cpu cortex-a72 (Raspberry Pi 4, 400, CM4)" in text
    assert "| dice | 1 | 0.40 | 0.40 | 30 | 3110 | identical but for the readers' times |" in text
    assert "| replay | – | 0.05 | 0.05 | – | – | exit status 0 on x86_64, 1 on aarch64 |" in text


def test_the_pis_cpus_come_first_in_the_report(tmp_path: Path) -> None:
    for name in ("aarch64-max", "aarch64-cortex-a53", "aarch64-cortex-a72", "x86_64", "aarch64-cortex-a76"):
        (tmp_path / name).mkdir()
    assert [p.name for p in compare.aarch64_folders(tmp_path)] == [
        "aarch64-cortex-a72", "aarch64-cortex-a76", "aarch64-cortex-a53", "aarch64-max"]


def test_the_script_says_what_it_needs() -> None:
    out = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True, check=True).stdout
    assert "qemu-aarch64-static" in out and "debootstrap" in out
    bad = subprocess.run(["bash", str(SCRIPT), "--no-such-option"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown option" in bad.stderr


def _why_not() -> str | None:
    if shutil.which("qemu-aarch64-static") is None:
        return "qemu-aarch64-static is not installed (apt-get install qemu-user-static)"
    if not ROOT_MARK.exists():
        return (f"no arm64 root in {ARM64_ROOT}: make it once with `sudo deploy/aarch64-proof.sh` "
                "(debootstrap; COMPANION_AARCH64_CACHE moves it)")
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return "the proof archives a commit of this checkout: needs git and .git"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")
def test_aarch64_install_and_readers_give_the_answers_of_x86_64(tmp_path: Path) -> None:
    """The whole proof on the cached arm64 root, into a temporary folder (the cached report stays)."""
    run = subprocess.run(
        ["bash", str(SCRIPT), "--cache", str(tmp_path), "--root", str(ARM64_ROOT),
         "--pip-cache", str(CACHE / "pip-cache")],
        capture_output=True, text=True, timeout=1800)
    report = tmp_path / "out" / "report.md"
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    text = report.read_text()
    assert "DIFFERENT" not in text and "exit status" not in text
    for cpu in ("cortex-a72", "cortex-a76", "cortex-a53"):   # the Pi 4's, the Pi 5's, the Pi 3B+'s cores
        assert f"### aarch64, QEMU -cpu {cpu} " in text
    for name in ("replay-smoke", "dice", "cups", "cups-calibrated"):
        assert f"| {name} |" in text
    wheels = {row.split("\t")[0].lower(): row.split("\t") for row in (tmp_path / "out" / "wheels.tsv").read_text().splitlines()}
    assert "aarch64" in wheels["opencv-python-headless"][2] and wheels["opencv-python-headless"][1].startswith("5.")
    assert "aarch64" in wheels["numpy"][2]
    assert wheels["companion"][3] == "editable"
    assert "smoke check passed" in run.stdout
    log = (tmp_path / "out" / "pip-install.log").read_text()
    assert "Building wheel for" not in log.replace("Building wheel for companion", "")
