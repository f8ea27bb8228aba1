"""Loading the small ONNX networks the vision runs, alike on every OpenCV 5 the project takes.

OpenCV 5.0 has two engines: its classic one runs these networks about twice as fast as the new
one (0.9 vs 1.6 ms for 8 dice-reader crops, one thread) with the same outputs to 1e-5; OpenCV 5.1
has only the new one (``ENGINE_CLASSIC`` is gone), so there the default is taken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2

ENGINE = getattr(cv2.dnn, "ENGINE_CLASSIC", cv2.dnn.ENGINE_AUTO)


def read_onnx(path: str | Path) -> Any:
    """A ``cv2.dnn`` network read from an ONNX file with the quicker engine where there is one."""
    return cv2.dnn.readNetFromONNX(str(path), ENGINE)
