"""``companion replay LOG.jsonl``: apply a game log's events in order, print the final state
(docs/spec/EVENTS.md, "Log files and replay"); exit 2 with ``line N: reason`` for a log that
cannot be replayed."""

from __future__ import annotations

import argparse
import io
import json
import sys

from companion.games.replay import LogError, read_jsonl, replay


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", help="a game log, JSON Lines, first event new_game ('-' for stdin)")
    parser.add_argument("--compact", action="store_true", help="print one line instead of indented JSON")


def run(args: argparse.Namespace) -> int:
    try:
        if args.log == "-":  # bytes decoded as UTF-8, as for a file, whatever the locale says
            stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape", newline="")
            result = replay(read_jsonl(stdin))
        else:  # a byte that is not UTF-8 is refused by read_jsonl, naming its line
            with open(args.log, encoding="utf-8", errors="surrogateescape", newline="") as f:
                result = replay(read_jsonl(f))
    except OSError as err:
        print(f"cannot read {args.log}: {err.strerror}", file=sys.stderr)
        return 2
    except LogError as err:
        print(str(err), file=sys.stderr)
        return 2
    if hasattr(sys.stdout, "reconfigure"):  # UTF-8 out as in, whatever the locale says (no traceback on '€')
        sys.stdout.reconfigure(encoding="utf-8")
    if args.compact:
        print(json.dumps(result, ensure_ascii=False, separators=(",", ":")))
    else:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0
