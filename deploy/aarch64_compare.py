"""Compare the outputs of deploy/aarch64-proof.sh on x86_64 and on aarch64 and write its report.

    python deploy/aarch64_compare.py OUT PIP_SECONDS SOURCE_LINE MACHINE_LINE

OUT holds x86_64/ and one aarch64-CPU/ per emulated CPU model (aarch64-cortex-a72, ...), each
with NAME.json (a command's stdout), NAME.err and seconds.tsv (name, wall seconds, exit status).
Exit status 0 when every command gave the same answers on x86_64 and on every aarch64 CPU, 1
otherwise; OUT/report.md, one table per CPU, either way.

What "the same" means, one verdict per command:
- identical: the outputs are the same bytes once the readers' own "ms" (the time each image
  took, which is reported, not compared) is left out;
- same answers: every string, integer, flag and key is the same and every list has the same
  length, a list of objects (the dice, the cups, the balls) may come in another order, and a
  float (a centre in pixels, a confidence) may differ by at most FLOAT_TOLERANCE; the verdict
  says by how much the floats differed and whether an order did;
- DIFFERENT: anything else (a die's value, a cup's colour or side, a count, a score, a key).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# QEMU's CPU models and the Raspberry Pis with that core, in the order the report shows them.
PIS = {"cortex-a72": "Raspberry Pi 4, 400, CM4", "cortex-a76": "Raspberry Pi 5", "cortex-a53": "Raspberry Pi 3B+, Zero 2 W"}
FLOAT_TOLERANCE = 0.5  # pixels; the readers round centres to 0.1 px and confidences to 0.001
TIMING_KEYS = ("ms",)


class Differs(Exception):
    """The two outputs give different answers; the message says where."""


def without_timing(value):
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


class Comparison:
    def __init__(self) -> None:
        self.worst = 0.0          # the largest difference between two floats at the same place
        self.reordered: list[str] = []  # the lists whose objects came in another order

    def same(self, a, b, where: str = "") -> None:
        """Raise Differs unless a and b give the same answers (see the module's doc)."""
        if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str) or a is None or b is None:
            if a != b or type(a) is not type(b):
                raise Differs(f"{where or '/'}: {a!r} / {b!r}")
            return
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                raise Differs(f"{where}: {a} / {b}")
            return
        if isinstance(a, float | int) and isinstance(b, float | int):
            if isinstance(a, int) != isinstance(b, int) and float(a) != float(b):
                raise Differs(f"{where}: {a!r} / {b!r}")
            if abs(a - b) > FLOAT_TOLERANCE:
                raise Differs(f"{where}: {a} / {b} (more than {FLOAT_TOLERANCE} apart)")
            self.worst = max(self.worst, abs(a - b))
            return
        if isinstance(a, dict) and isinstance(b, dict):
            if list(a) != list(b):
                raise Differs(f"{where or '/'}: keys {list(a)} / {list(b)}")
            for key in a:
                self.same(a[key], b[key], f"{where}/{key}")
            return
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                raise Differs(f"{where}: {len(a)} / {len(b)} items")
            if a and all(isinstance(x, dict) for x in a + b):
                self._same_objects(a, b, where)
                return
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                self.same(x, y, f"{where}[{i}]")
            return
        raise Differs(f"{where}: {a!r} / {b!r}")

    def _same_objects(self, a: list, b: list, where: str) -> None:
        """Objects matched one to one in any order: each of a takes the first unmatched of b that
        gives the same answers (its own order first, so an unchanged list costs one pass)."""
        left = list(range(len(b)))
        moved = False
        for i, x in enumerate(a):
            for j in ([i] if i in left else []) + [j for j in left if j != i]:
                trial = Comparison()
                try:
                    trial.same(x, b[j], f"{where}[{i}]")
                except Differs:
                    continue
                self.worst = max(self.worst, trial.worst)
                self.reordered += trial.reordered
                moved = moved or j != i
                left.remove(j)
                break
            else:
                # Report the difference against the same position: the likeliest pairing.
                self.same(x, b[i], f"{where}[{i}]")
                raise Differs(f"{where}[{i}]: no counterpart")
        if moved:
            self.reordered.append(where)


def verdict(x86_text: str, arm_text: str) -> tuple[bool, str]:
    """(same answers?, the verdict in words) for two outputs of JSON lines."""
    xs = [without_timing(json.loads(line)) for line in x86_text.splitlines()]
    ys = [without_timing(json.loads(line)) for line in arm_text.splitlines()]
    if xs == ys:
        return True, "identical" if x86_text == arm_text else "identical but for the readers' times"
    comparison = Comparison()
    try:
        comparison.same(xs, ys)
    except Differs as error:
        return False, f"DIFFERENT: {error}"
    parts = []
    if comparison.worst:
        parts.append(f"floats apart by ≤ {comparison.worst:.3g}")
    if comparison.reordered:
        parts.append("the same objects in another order in " + ", ".join(sorted(set(comparison.reordered))))
    return True, "same answers; " + "; ".join(parts)


def reader_ms(text: str) -> float | None:
    """The readers' own time in milliseconds, added over the images (None for replay)."""
    total, seen = 0.0, False
    for line in text.splitlines():
        ms = json.loads(line).get("ms")
        if isinstance(ms, int | float):
            total, seen = total + ms, True
    return total if seen else None


def seconds(folder: Path) -> dict[str, tuple[float, int]]:
    rows = [line.split("\t") for line in (folder / "seconds.tsv").read_text().splitlines() if line]
    return {name: (float(s), int(code)) for name, s, code in rows}


def aarch64_folders(out: Path) -> list[Path]:
    """The aarch64-CPU folders, the Pis' models first (PIS's order)."""
    found = [p for p in out.glob("aarch64*") if p.is_dir()]
    rank = {f"aarch64-{cpu}": i for i, cpu in enumerate(PIS)}
    return sorted(found, key=lambda p: (rank.get(p.name, len(rank)), p.name))


def table(out: Path, arm_dir: Path) -> tuple[bool, list[str]]:
    x86, arm = seconds(out / "x86_64"), seconds(arm_dir)
    cpu = arm_dir.name.removeprefix("aarch64").lstrip("-")
    title = f"aarch64, QEMU -cpu {cpu}" + (f" ({PIS[cpu]})" if cpu in PIS else "") if cpu else "aarch64"
    lines = [
        f"### {title}",
        "",
        "| command | images | wall s x86_64 | wall s aarch64 | readers' ms x86_64 | readers' ms aarch64 | answers |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    ok = True
    for name, (xs, xcode) in x86.items():
        a_s, acode = arm.get(name, (float("nan"), -1))
        xt = (out / "x86_64" / f"{name}.json").read_text()
        at = (arm_dir / f"{name}.json").read_text() if (arm_dir / f"{name}.json").exists() else ""
        if xcode != 0 or acode != 0:
            same, words = False, f"exit status {xcode} on x86_64, {acode} on aarch64"
        else:
            same, words = verdict(xt, at)
        ok = ok and same
        xm, am = reader_ms(xt), reader_ms(at)
        ms = f"{xm:.0f} | {am:.0f}" if xm is not None and am is not None else "– | –"
        images = str(len(xt.splitlines())) if xm is not None else "–"
        lines.append(f"| {name} | {images} | {xs:.2f} | {a_s:.2f} | {ms} | {words} |")
    return ok, lines


def report(out: Path, pip_s: str, source: str, machine: str) -> tuple[bool, str]:
    lines = [
        f"Source: {source}. The arm64 venv (venv, pip install, compileall) under emulation: {float(pip_s):.0f} s.",
        f"{machine}.",
    ]
    folders = aarch64_folders(out)
    ok = bool(folders)
    if not folders:
        lines += ["", f"no aarch64 outputs in {out}"]
    for folder in folders:
        same, rows = table(out, folder)
        ok = ok and same
        lines += [""] + rows
    return ok, "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    out, pip_s, source, machine = argv
    ok, text = report(Path(out), pip_s, source, machine)
    (Path(out) / "report.md").write_text(text)
    print(text, end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
