"""Replay a game log: apply its events in order and give the final state (``companion replay``).

The contract is ``docs/spec/EVENTS.md`` ("Log files and replay"). Three extensions, all optional:
an ``{"type": "undo"}`` event takes back the last accepted event (that is how the table's
append-only log records an undo), a ``{"type": "resume"}`` event changes nothing (the table's
raw log marks where play came back to a game that had been left), and a later ``new_game``
starts a fresh game (the final state is then that game's).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from companion.games.base import EventError, Game, NotJson, RuleError, no_json_constant, not_text


class LogError(Exception):
    """A log that cannot be replayed: ``line N: reason`` (just the reason when no line is to
    blame, as for an empty log). Exit status 2."""

    def __init__(self, line: int | None, reason: str):
        super().__init__(reason if line is None else f"line {line}: {reason}")
        self.line = line
        self.reason = reason


JSON_WHITESPACE = " \t\r\n"  # RFC 8259's whitespace; str.strip() would also take \f, \x1c, \xa0, \u2028...


def read_jsonl(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, event) for each non-blank line; LogError on malformed JSON. The lines
    are read with ``errors="surrogateescape"`` (see :func:`run`), so a byte that is not UTF-8 is
    named with its line like any other fault of it, not as a whole file's read error."""
    for number, text in enumerate(lines, start=1):
        if number == 1:
            text = text.removeprefix("\ufeff")  # a byte-order mark some editors put first
        if not text.strip(JSON_WHITESPACE):  # only JSON's own: a line of no-break spaces is not blank
            continue
        try:
            event = _event(number, text)
        except LogError:
            _not_utf8(number, text)  # a byte that is not UTF-8 is the first thing wrong with its line
            raise
        yield number, event


def _event(number: int, text: str) -> dict[str, Any]:
    try:
        event = json.loads(text, parse_constant=no_json_constant)
    except json.JSONDecodeError as err:
        hint = " (truncated line?)" if not text.endswith("\n") else ""
        raise LogError(number, f"not valid JSON: {err.msg} at column {err.colno}{hint}") from None
    except NotJson as err:
        raise LogError(number, f"not valid JSON: {err}") from None
    except RecursionError:
        raise LogError(number, "not a game event: arrays or objects nested too deeply to read") from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        raise LogError(number, "not a game event: a number of thousands of digits") from None
    if not isinstance(event, dict):
        raise LogError(number, "an event must be a JSON object")
    bad = not_text(event)  # a lone \ud800 escape: valid JSON, but the log is UTF-8 text (EVENTS.md)
    if bad is not None:
        raise LogError(number, f"not valid UTF-8 text: the string {ascii(bad)} holds a lone surrogate "
                               "escape (half of a character)")
    return event


def _not_utf8(number: int, text: str) -> None:
    """LogError naming the first byte of the line that was not UTF-8 (``surrogateescape`` read it
    as U+DC80-U+DCFF; an escape such as ``\\udcff`` in the JSON is six ASCII characters)."""
    for i, char in enumerate(text):
        if "\udc80" <= char <= "\udcff":
            at = len(text[:i].encode("utf-8", "surrogateescape")) + 1
            raise LogError(number, f"not UTF-8 text: byte 0x{ord(char) - 0xdc00:02x} at byte {at} of the line")


def replay(numbered_events: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The final state of a log in the replay format. LogError if the log cannot be replayed."""
    game: Game | None = None
    rejected: list[dict[str, Any]] = []
    for number, event in numbered_events:
        try:
            if event.get("type") == "new_game":
                game = Game.start(event)
            elif game is None:
                raise LogError(number, f"a log starts with a 'new_game' event, not '{event.get('type')}'")
            else:
                game.play(event)
        except EventError as err:
            raise LogError(number, str(err)) from None
        except RuleError as err:
            if game is None or event.get("type") == "new_game":
                raise LogError(number, f"{err.code}: {err.message} (the game does not start)") from None
            rejected.append({"line": number, "code": err.code, "message": err.message})
    if game is None:
        raise LogError(None, "the log holds no events (it is empty or only blank lines)")
    view = game.view()
    detail = view.pop("detail")
    return {**view, "rejected": rejected, "detail": detail}
