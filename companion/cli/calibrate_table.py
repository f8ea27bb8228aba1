"""``companion calibrate table``: the four markers in one frame → the table's calibration file and
an overlay to check it; ``--sheet DIR`` writes the printable marker sheet (PNG pages and a PDF)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from companion.vision.calibrate import DEFAULT_FOCAL_1280, CalibrationError, calibrate, overlay
from companion.vision.cups.discover import calibrate_markers, learn
from companion.vision.cups.net import CupFinder
from companion.vision.images import ImageError, jpeg_note, load_image
from companion.vision.layout import CUPS, Layout
from companion.vision.markers import DPI, marker_name, sheet_pages
from companion.vision.view import CameraView


def pdf_bytes(pages: list[np.ndarray], dpi: int = DPI) -> bytes:
    """A minimal PDF with one grey image per page, each filling an A4-sized page at ``dpi``."""
    import zlib

    objects: list[bytes] = []
    kids = []
    for page in pages:
        h, w = page.shape
        pw, ph = w * 72.0 / dpi, h * 72.0 / dpi
        img_id, content_id, page_id = len(objects) + 3, len(objects) + 4, len(objects) + 5
        data = zlib.compress(page.tobytes(), 9)
        objects.append(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                       b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % (w, h, len(data))
                       + data + b"\nendstream")
        content = b"q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q" % (pw, ph)
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Contents %d 0 R "
                       b"/Resources << /XObject << /Im0 %d 0 R >> >> >>" % (pw, ph, content_id, img_id))
        kids.append(page_id)
    head = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids) + b"] /Count %d >>" % len(kids)]
    allobj = head + objects
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(allobj, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(allobj) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(allobj) + 1, xref)
    return bytes(out)


def write_sheet(folder: str | Path) -> list[Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pages = sheet_pages()
    written = []
    for n, page in enumerate(pages, start=1):
        path = folder / f"markers-page{n}.png"
        cv2.imwrite(str(path), page, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        written.append(path)
    pdf = folder / "markers.pdf"
    pdf.write_bytes(pdf_bytes(pages))
    written.append(pdf)
    return written


FIELD_OF_VIEW = (10.0, 170.0)  # degrees across the frame that --focal may give: a long lens to a fisheye


def focal_px(text: str) -> float:
    """--focal: a positive number (nan, inf or 0 ended in a traceback after the calibration file,
    unusable, was written)."""
    try:
        focal = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(focal) or focal <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a focal length in pixels (985 suits a Pi Camera "
                                         "Module 3 at 1280 wide)")
    return focal


def made_under(image: str, frame: np.ndarray) -> tuple[CameraView, str]:
    """What the frame was taken under, and a line saying so. A frame from the running service
    (``/api/frame.jpg?raw=1``) carries the camera's model, sensor mode and crop; the service will
    not read through a calibration made under another (docs/pi.md). Another photo says only its
    size, which is all that is kept and checked then."""
    size = (frame.shape[1], frame.shape[0])
    try:
        with open(image, "rb") as f:
            note = jpeg_note(f.read(1 << 16))   # (the note sits at the file's start)
    except OSError:
        note = None
    view = CameraView.from_dict(note)
    if view is not None and view.frame == size:
        return view, f"made under: {view.describe()}"
    return CameraView(frame=size), (f"made under: {size[0]}x{size[1]} frames, the camera's sensor mode not "
                                    "known (a frame from the service's /api/frame.jpg?raw=1 says it)")


def _cups_line(cal) -> str:
    count = Counter((s.side, s.cup) for s in cal.slots)
    return "; ".join(f"side {side}: " + ", ".join(f"{count[(side, cup)]} {cup}" for cup in CUPS if count[(side, cup)])
                     for side in ("A", "B"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("image", nargs="?", help="one camera frame showing the four table markers (PNG/JPEG)")
    parser.add_argument("--sheet", metavar="DIR", help="write the printable marker sheet (PNG pages + PDF) to DIR")
    parser.add_argument("--out", help="calibration file to write (default: calibration.table of "
                        "companion.toml, else <data dir>/table.json)")
    parser.add_argument("--overlay", help="overlay image to write (default: beside --out, -overlay.png)")
    parser.add_argument("--layout", help="a calibration or layout JSON whose 'layout' to use (adjusted table)")
    parser.add_argument("--focal", type=focal_px, help="camera focal length in pixels (default: Pi Camera "
                        "Module 3, 985 px at 1280 wide)")
    parser.add_argument("--config", help="companion.toml")


def run(args: argparse.Namespace) -> int:
    from companion import config as config_mod

    try:
        cfg = config_mod.load(args.config)
    except config_mod.ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.sheet:
        for path in write_sheet(args.sheet):
            print(f"wrote {path}")
        if not args.image:
            return 0
    if not args.image:
        print("error: give a camera frame (IMAGE) or --sheet DIR", file=sys.stderr)
        return 2
    out = Path(args.out or config_mod.calibration_file(cfg, "table"))
    try:
        frame = load_image(args.image, 32)  # as `companion cups` reads it (a JPEG cut short is refused)
    except ImageError as err:
        print(f"error: cannot read image: {err.message}", file=sys.stderr)
        return 2
    if args.focal is not None:
        width = frame.shape[1]
        fov = math.degrees(2 * math.atan(width / (2 * args.focal)))
        if not FIELD_OF_VIEW[0] <= fov <= FIELD_OF_VIEW[1]:  # 1e-9 wrote a calibration that saw no cup
            print(f"error: --focal {args.focal:g} px gives a {fov:.0f}° view across this {width}-pixel-wide frame; "
                  f"a camera sees {FIELD_OF_VIEW[0]:.0f}-{FIELD_OF_VIEW[1]:.0f}° (the Pi Camera Module 3: "
                  f"{DEFAULT_FOCAL_1280 * width / 1280:.0f} px at this width)", file=sys.stderr)
            return 2
    layout = None
    if args.layout:
        try:
            data = json.loads(Path(args.layout).read_text())
            layout = Layout.from_dict(data.get("layout", data))
        except (OSError, ValueError, TypeError, AttributeError) as err:
            print(f"error: layout {args.layout}: {err}", file=sys.stderr)
            return 2
    learnt = ""
    try:
        if layout is not None or not CupFinder.available():
            cal = calibrate(frame, layout, args.focal)
        else:
            try:   # the table as set up for 21 Exact: its cups learnt from the frame
                cal = learn(frame, args.focal)
                learnt = f"{len(cal.slots)} cups learnt ({_cups_line(cal)}); "
            except CalibrationError as err:
                if err.code != "NO_CUPS":
                    raise
                # no cup on the table (set up for a dice game): the markers alone; the cups are
                # learnt when a 21 Exact game is set up
                cal = calibrate_markers(frame, args.focal)
                learnt = "no cups on the table (they are learnt when a 21 Exact game is set up); "
    except CalibrationError as err:
        print(f"calibration failed ({err.code}): {err.message}", file=sys.stderr)
        return 1
    made, said = made_under(args.image, frame)
    cal = replace(cal, made_under=made)
    try:
        cal.save(out)
    except OSError as err:
        print(f"error: {config_mod.cannot_write(out, err)}", file=sys.stderr)
        return 2
    over = Path(args.overlay) if args.overlay else out.with_name(out.stem + "-overlay.png")
    if not cv2.imwrite(str(over), overlay(frame, cal)):
        print(f"error: cannot write the overlay {over} (--overlay FILE.png to put it elsewhere)", file=sys.stderr)
        return 2
    print(f"table calibrated in {cal.ms:.0f} ms: {len(cal.markers)} markers, error {cal.error_mm:.1f} mm, "
          f"table {cal.layout.table_w:.0f} × {cal.layout.table_h:.0f} mm; {learnt}"
          f"focal length {cal.K[0, 0]:.0f} px ({cal.focal_from})")
    print(said)
    if len(cal.markers) < 4:
        unseen = ", ".join(marker_name(i) for i in range(4) if i not in cal.markers)
        print(f"{unseen} not seen: measured from the other {len(cal.markers)} (a few per cent less exact; "
              "with every marker in view, calibrate again for the surest measure)")
    print(f"wrote {out}")
    print(f"check {over}: the coloured rings must sit on the cups' rims")
    return 0
