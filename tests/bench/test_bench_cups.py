"""``companion bench cups`` refuses numbers it cannot run with as usage errors (exit status 2,
the flag named), before rendering a single game."""

from __future__ import annotations

import pytest

from companion.cli import main


@pytest.mark.parametrize("args", [["--games", "0"], ["--games", "-1"], ["--games", "two"],
                                  ["--fps", "0"], ["--fps", "nan"], ["--fps", "1000"]])
def test_a_number_of_games_or_frame_rate_it_cannot_run_is_a_usage_error(capsys, args: list[str]) -> None:
    """--games 0 or -1 rendered nothing and ended in a StatisticsError traceback; --fps 0 in a
    ZeroDivisionError, --fps nan in a ValueError."""
    with pytest.raises(SystemExit) as leave:
        main(["bench", "cups", *args, "--json"])
    out = capsys.readouterr()
    assert leave.value.code == 2 and out.out == "" and f"argument {args[0]}" in out.err
