"""Shared test fixtures. ``shared/`` (the rule sheets, the spec, the real dice photos) lies
beside the checkout, as on the developers' machines and in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    assert SHARED.is_dir(), f"shared/ is expected beside the checkout at {SHARED}"
    return SHARED
