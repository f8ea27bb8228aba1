"""`companion replay` on bad logs: the documented error naming the line, exit 2, never a
traceback (docs/spec/EVENTS.md "Log files and replay")."""

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


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_valid_json_and_are_refused_naming_their_line(tmp_path, constant):
    """EVENTS.md: a line that is not valid JSON exits 2 with `line N: …`. Python's reader takes
    NaN and Infinity (JSON has neither); even in a field every engine ignores, the log is refused."""
    text = lines(NEW, DICE_A, '{"type": "dice", "side": "B", "values": {"blue": 6, "red": 4, "green": 3, '
                              '"yellow": 1}, "at": ' + constant + '}')
    assert_error(run(tmp_path, text), 3, "not valid JSON", constant)


@pytest.mark.parametrize("junk", ["\u00a0", "\f", "\u2028", "\x1c"])
def test_a_line_of_characters_that_are_not_json_whitespace_is_not_blank(tmp_path, junk):
    """Blank lines are skipped, but only JSON's whitespace (space, tab, CR, LF) makes a line
    blank: a line of no-break spaces or form feeds is not valid JSON (EVENTS.md: exit 2,
    `line N: …`); str.strip() used to take it for a blank line and skip it."""
    assert_error(run(tmp_path, lines(NEW, junk, DICE_A)), 2, "not valid JSON")


def test_blank_lines_of_json_whitespace_and_crlf_endings_replay(tmp_path):
    out = run(tmp_path, lines(NEW, " \t", DICE_A).replace("\n", "\r\n") + "\r\n" + json.dumps(DICE_B))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["to_act"] == ["A"]


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_the_state_is_printed_as_utf8_whatever_the_locale(tmp_path, encoding):
    """exactly's WRONG_VALUE sentence names a '€1 trophy', which latin-1 cannot encode: printing
    the state once ended in a traceback (and no state) under such a locale. Logs are read as UTF-8
    whatever the locale says; the state is written the same way."""
    log = tmp_path / "g.jsonl"
    log.write_text(lines({"type": "new_game", "game": "exactly", "players": ["Zoë", "Ann"]},
                         {"type": "roll", "player": "Zoë", "face": "?"},
                         {"type": "move", "player": "Zoë", "value": 100, "from": "center", "to": "Ann"}),
                   encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "companion", "replay", str(log)], capture_output=True,
                         timeout=60, env={**os.environ, "PYTHONIOENCODING": encoding})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.decode("utf-8"))
    assert result["players"] == ["Zoë", "Ann"]
    assert "€1" in result["rejected"][0]["message"] and result["rejected"][0]["code"] == "WRONG_VALUE"


def test_a_byte_that_is_not_utf8_is_refused_naming_its_line_far_into_the_file(tmp_path):
    """EVENTS.md: a malformed line exits 2 with `line N: …`. A bad byte used to fail the whole
    file's read ('not UTF-8 text (… at byte 4918)'): no line, and the byte counted from the start
    of an 8 KB read buffer, not of the file."""
    roll = {"type": "throw", "side": "A", "cup": "miss", "note": "x" * 40}
    text = lines(NEW, DICE_A, DICE_B, *[roll, {**roll, "side": "B"}] * 150).encode()
    text += b'{"type": "throw", "side": "A", "cup": "miss", "note": "caf\xe9"}\n'
    assert len(text) > 3 * 8192
    assert_error(run(tmp_path, text), 304, "not UTF-8", "0xe9", "byte 59 of the line")


def test_stdin_that_is_not_utf8_names_its_line(tmp_path):
    text = lines(NEW, DICE_A).encode() + b'{"type": "dice", "side": "\xff"}\n'
    out = subprocess.run([sys.executable, "-m", "companion", "replay", "-"], input=text,
                         capture_output=True, timeout=60)
    assert out.returncode == 2 and out.stdout == b"" and b"Traceback" not in out.stderr
    assert out.stderr.startswith(b"line 3: not UTF-8"), out.stderr


TWENTY_ONE = {"type": "new_game", "game": "twentyone",
              "players": [{"name": "Ann", "sheet": "A"}, {"name": "Bea", "sheet": "B"}]}
STACK_21 = {"type": "new_game", "game": "stack21", "players": ["Ann", "Bob"]}
STACK_DEAL = {"type": "deal", "dealer": "Bob", "hands": {"Ann": ["10", "5", "6", "2"], "Bob": ["9", "8", "7", "3"]},
              "upcard": "4", "stock": ["10", "A", "10", "A", "9"]}
EXACTLY = {"type": "new_game", "game": "exactly", "players": ["P1", "P2"]}
# (a log, an event whose number is not whole, the code to expect) per game
NOT_WHOLE = [
    ([NEW], {"type": "dice", "side": "A", "values": {"blue": 3.5, "red": 4, "green": 2, "yellow": 5}}),
    ([NEW], {"type": "dice", "side": "A", "values": {"blue": 3.0, "red": 4, "green": 2, "yellow": 5}}),
    ([TWENTY_ONE], {"type": "roll", "player": "Ann",
                    "dice": {"white": 6, "black": 4, "red": 2.5, "blue": 3, "yellow": 1, "green": 1}}),
    ([EXACTLY, {"type": "start_roll", "faces": {"P1": "50", "P2": "10"}}, {"type": "roll", "player": "P1", "face": "50"}],
     {"type": "move", "player": "P1", "value": 50.5, "from": "center", "to": "P1"}),
    ([STACK_21, STACK_DEAL, {"type": "draw", "player": "Ann"}], {"type": "keep", "player": "Ann", "stack": 1.5}),
    ([STACK_21, STACK_DEAL], {"type": "deal", "dealer": "Bob", "seed": 7.25}),
]


@pytest.mark.parametrize(("log", "event"), NOT_WHOLE, ids=lambda v: v.get("type") if isinstance(v, dict) else v[0]["game"])
def test_a_number_that_is_not_whole_is_a_bad_value_not_a_malformed_line(tmp_path, log, event):
    """EVENTS.md: 'a field of the wrong JSON type' is malformed, but 'a well-typed value out of range is
    BAD_VALUE'. JSON has one number type, so a die of 3.5 (or 3.0) is refused as BAD_VALUE, replay
    goes on (exit 0), and the same number in a string is still a malformed line."""
    out = run(tmp_path, lines(*log, event))
    assert out.returncode == 0, out.stderr
    rejected = json.loads(out.stdout)["rejected"]
    assert [(r["line"], r["code"]) for r in rejected] == [(len(log) + 1, "BAD_VALUE")]
    as_text = json.loads(json.dumps(event).replace(": 3.5", ': "3.5"').replace(": 3.0", ': "3.0"')
                         .replace(": 2.5", ': "2.5"').replace(": 50.5", ': "50.5"').replace(": 1.5", ': "1.5"')
                         .replace(": 7.25", ': "7.25"'))
    assert_error(run(tmp_path, lines(*log, as_text)), len(log) + 1, "must be a number, not a string")


def test_a_number_that_is_not_whole_from_an_unknown_player_is_unknown_player(tmp_path):
    """The codes' order (GAME_OVER, UNKNOWN_PLAYER, BAD_VALUE, ...) holds for such a number too."""
    out = run(tmp_path, lines(NEW, {"type": "dice", "side": "C", "values": {"blue": 3.5, "red": 4, "green": 2, "yellow": 5}}))
    assert [r["code"] for r in json.loads(out.stdout)["rejected"]] == ["UNKNOWN_PLAYER"]
