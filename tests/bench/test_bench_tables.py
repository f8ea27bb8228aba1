"""``companion bench tables``: still photos of tables of random sizes and arrangements, read as
``companion cups IMAGE`` reads them; the figures and the machine in one JSON object."""

from __future__ import annotations

import json

import pytest

from companion.cli import main


@pytest.mark.slow
def test_bench_tables_reads_random_tables_and_prints_its_figures(capsys) -> None:
    assert main(["bench", "tables", "--tables", "2", "--seed", "7000", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["tables"] == 2 and r["tables_right"] == 2 and r["failures"] == []
    assert r["cups_true"] > 20 and r["cups_missed"] == 0 and r["cups_extra"] == 0
    assert r["ms_per_photo_median"] > 0 and "cores" in r["machine"]
