"""`companion replay` on bad logs: the documented error naming the line, exit 2, never a
traceback (spec/EVENTS.md "Log files and replay")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NEW = {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}
DICE_A = {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}}
DICE_B = {"type": "dice", "side": "B", "values": {"blue": 6, "red": 4, "green": 3, "yellow": 1}}


def run(tmp_path: Path, text: str | bytes) -> subprocess.CompletedProcess:
    log = tmp_path / "game.jsonl"
    log.write_bytes(text if isinstance(text, bytes) else text.encode())
    return subprocess.run([sys.executable, "-m", "companion", "replay", str(log)],
                          capture_output=True, text=True, timeout=60)


def lines(*events) -> str:
    return "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events)


def assert_error(out: subprocess.CompletedProcess, line: int, *words: str) -> None:
    assert out.returncode == 2
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith(f"line {line}: "), out.stderr
    for word in words:
        assert word in out.stderr


def test_truncated_last_line(tmp_path):
    text = lines(NEW, DICE_A) + json.dumps(DICE_B)[:30]
    assert_error(run(tmp_path, text), 3, "not valid JSON")


def test_unknown_event_type(tmp_path):
    assert_error(run(tmp_path, lines(NEW, {"type": "teleport", "side": "A"})), 2, "unknown event type", "teleport")


def test_wrong_field_type(tmp_path):
    assert_error(run(tmp_path, lines(NEW, DICE_A, DICE_B, {"type": "throw", "side": "A", "cup": 3})), 4, "'cup'")


def test_missing_field(tmp_path):
    assert_error(run(tmp_path, lines(NEW, {"type": "dice", "side": "A"})), 2, "values")


def test_event_that_is_not_an_object(tmp_path):
    assert_error(run(tmp_path, lines(NEW, "[1, 2, 3]")), 2, "object")


def test_unknown_game(tmp_path):
    assert_error(run(tmp_path, lines({**NEW, "game": "chess"})), 1, "unknown game")


def test_log_must_start_with_new_game(tmp_path):
    assert_error(run(tmp_path, lines(DICE_A)), 1, "new_game")


def test_new_game_breaking_a_rule_exits_2_naming_the_code(tmp_path):
    bad = {**NEW, "sides": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}
    assert_error(run(tmp_path, lines(bad, DICE_A)), 1, "BAD_VALUE")
    bad = {**NEW, "options": {"silver_rule": "never"}}
    assert_error(run(tmp_path, lines(bad)), 1, "BAD_VALUE")


def test_not_utf8(tmp_path):
    out = run(tmp_path, lines(NEW).encode() + b'{"type": "dice", "side": "\xff"}\n')
    assert out.returncode == 2 and "Traceback" not in out.stderr and "UTF-8" in out.stderr


def test_missing_file(tmp_path):
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(tmp_path / "nope.jsonl")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "nope.jsonl" in out.stderr


def test_rejected_events_exit_0_and_are_listed_with_their_line(tmp_path):
    out = run(tmp_path, lines(NEW, DICE_A, {"type": "throw", "side": "A", "cup": "red"}, "", DICE_B,
                              {"type": "throw", "side": "B", "cup": "red"}))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert [(r["line"], r["code"]) for r in result["rejected"]] == [(3, "DICE_NOT_SET"), (6, "NOT_YOUR_TURN")]
    assert all(r["message"] for r in result["rejected"])
    assert result["to_act"] == ["A"] and result["scores"] == {"A": 0, "B": 0}


def test_undo_event_takes_back_the_last_accepted_event(tmp_path):
    out = run(tmp_path, lines(NEW, DICE_A, DICE_B, {"type": "throw", "side": "A", "cup": "red"}, {"type": "undo"}))
    result = json.loads(out.stdout)
    assert result["scores"]["A"] == 0 and result["to_act"] == ["A"]


@pytest.mark.parametrize("flag", [[], ["--compact"]])
def test_output_is_one_json_object(tmp_path, flag):
    log = tmp_path / "g.jsonl"
    log.write_text(lines(NEW))
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log), *flag],
                         capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout)["to_act"] == ["A", "B"]


def test_a_log_saved_with_a_byte_order_mark_replays(tmp_path):
    """Some Windows editors start a UTF-8 file with a byte-order mark; the log is still good."""
    out = run(tmp_path, b"\xef\xbb\xbf" + lines(NEW, DICE_A, DICE_B, {"type": "throw", "side": "A", "cup": "red"}).encode())
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["scores"]["A"] == 4


def test_an_array_nested_a_hundred_thousand_deep_is_refused_naming_its_line(tmp_path):
    """A corrupt line of '[' characters once overflowed the JSON reader's stack (a traceback)."""
    assert_error(run(tmp_path, lines(NEW, "[" * 100_000)), 2, "nested too deeply")


def test_a_number_of_five_thousand_digits_is_refused_naming_its_line(tmp_path):
    """Python refuses to convert integers over 4300 digits; that was a traceback, exit 1."""
    dice = json.dumps(DICE_A).replace('"blue": 3', '"blue": ' + "7" * 5000)
    assert_error(run(tmp_path, lines(NEW, dice)), 2, "digits")


def test_a_lone_surrogate_escape_is_not_utf8_text_and_is_refused(tmp_path):
    r"""'\ud800' escapes half of a UTF-16 pair: no character, so no UTF-8 text either. The game
    replayed and then printing it failed (a traceback, exit 1)."""
    new = '{"type": "new_game", "game": "exact21", "sides": [{"name": "\\ud800"}, {"name": "B"}]}'
    assert_error(run(tmp_path, lines(new, DICE_A)), 1, "UTF-8", "surrogate")
    out = subprocess.run([sys.executable, "-m", "companion", "replay", "-"], input=lines(new).encode(),
                         capture_output=True, timeout=60)
    assert out.returncode == 2 and out.stdout == b""
    assert out.stderr.decode().startswith("line 1: ") and b"Traceback" not in out.stderr


def test_an_escaped_surrogate_pair_is_one_character_and_replays(tmp_path):
    new = '{"type": "new_game", "game": "exact21", "sides": [{"name": "\\ud83c\\udfb2"}, {"name": "B"}]}'
    out = run(tmp_path, lines(new))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["players"] == ["\U0001f3b2", "B"]


def test_stdin_that_is_not_utf8_is_refused_whatever_the_locale(tmp_path):
    """Under the C locale Python reads stdin with 'surrogateescape': a Latin-1 byte became a lone
    surrogate, the game replayed, and printing it failed."""
    text = lines(NEW).replace('"A"', '"\xe9"', 1).encode("latin-1")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    out = subprocess.run([sys.executable, "-m", "companion", "replay", "-"], input=text, env=env,
                         capture_output=True, timeout=60)
    assert out.returncode == 2 and out.stdout == b"" and b"Traceback" not in out.stderr
    assert b"not UTF-8" in out.stderr


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_an_empty_log_says_so_without_naming_a_line_0(tmp_path, text):
    out = run(tmp_path, text)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert "holds no events" in out.stderr and "line 0" not in out.stderr


@pytest.mark.parametrize("sides, message", [
    ([{"name": ""}, {"name": "B"}], "a side's name may not be empty"),          # was "a player of side  name …"
    ([{"name": "A", "players": ["Ann", " "]}, {"name": "B"}], "side A: a player's name may not be empty"),
    ([{"name": "A", "players": ["Ann", "Ann"]}, {"name": "B"}], "side A: two players are called 'Ann'"),
])
def test_a_side_or_player_without_a_proper_name_is_refused_in_plain_words(tmp_path, sides, message):
    assert_error(run(tmp_path, lines({**NEW, "sides": sides})), 1, "BAD_VALUE", message)


@pytest.mark.parametrize("stdin", [False, True])
def test_a_line_that_is_not_utf8_is_named(tmp_path, stdin):
    """EVENTS.md: a line that is not valid JSON (JSON text is UTF-8) makes replay print `line N: …`
    and exit 2. A Latin-1 'é' on line 3 of a Twenty One log was reported by its byte offset in the
    file, naming no line."""
    new = {"type": "new_game", "game": "twentyone",
           "players": [{"name": "Ann", "sheet": "A"}, {"name": "Bea", "sheet": "C"}]}
    roll = {"type": "roll", "player": "Ann",
            "dice": {"white": 6, "black": 4, "red": 3, "blue": 3, "yellow": 1, "green": 1}}
    text = (lines(new, roll) + '{"type": "strike", "player": "B\xe9a"}\n').encode("latin-1")
    if stdin:
        out = subprocess.run([sys.executable, "-m", "companion", "replay", "-"], input=text.decode("latin-1"),
                             capture_output=True, text=True, encoding="latin-1", timeout=60)
    else:
        out = run(tmp_path, text)
    assert_error(out, 3, "not UTF-8", "column 32")
