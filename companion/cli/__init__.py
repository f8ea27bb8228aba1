"""The ``companion`` command. Each subcommand lives in its own module, which provides
``add_arguments(parser)`` and ``run(args) -> exit status``; modules are imported only when their
command runs, so ``companion replay`` never loads OpenCV or Flask."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from companion import __version__

# command -> (module, one-line help). Nested groups ("calibrate", "bench") map sub-names.
COMMANDS: dict[str, tuple[str, str] | dict[str, tuple[str, str]]] = {
    "serve": ("companion.cli.serve", "serve the scoreboard (and run the camera when one is configured)"),
    "demo": ("companion.cli.demo", "a rendered 21 Exact table plays itself; scoreboard on :8000"),
    "replay": ("companion.cli.replay", "apply a game log (JSON Lines) and print the final state"),
    "backup": ("companion.cli.backup", "the games, calibration and configuration in one archive, while serving"),
    "restore": ("companion.cli.restore", "put a backup back (the files it replaces are kept aside)"),
    "support": ("companion.cli.support", "a support bundle: health, configuration without secrets, calibration, log, machine"),
    "dice": ("companion.cli.dice", "read dice (value, colour, position) from images"),
    "cups": ("companion.cli.cups", "read a 21 Exact table's cups from images"),
    "calibrate": {
        "table": ("companion.cli.calibrate_table", "find the four table markers in a frame, store the table"),
        "colours": ("companion.cli.calibrate_colours", "learn die colour profiles from one frame"),
    },
    "bench": {
        "replay": ("companion.bench.replay", "replay speed on long generated logs"),
        "engines": ("companion.bench.engines", "seeded random play of every engine"),
        "dice": ("companion.bench.dice", "dice reader accuracy and speed on labelled photos"),
        "cups": ("companion.bench.cups", "cup tracker on rendered game sequences"),
        "tables": ("companion.bench.tables", "companion cups on still photos of tables of any size and layout"),
        "web": ("companion.bench.web", "streaming latency with many phones on loopback"),
        "live": ("companion.bench.live", "end-to-end delay, camera frame to scoreboard"),
    },
}


def _add(sub: argparse._SubParsersAction, name: str, module: str, help_text: str) -> None:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(_module=module)
    importlib.import_module(module).add_arguments(parser)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="companion", description="A game-table camera, a live scoreboard for "
                                     "phones, a button and a buzzer. COMMAND --help for each command.")
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only the chosen command's module is imported (to read its arguments).
    wanted = argv[0] if argv else None
    wanted_sub = argv[1] if len(argv) > 1 else None
    for name, entry in COMMANDS.items():
        if isinstance(entry, dict):
            group = sub.add_parser(name, help=f"{name}: " + ", ".join(entry))
            group_sub = group.add_subparsers(dest="subcommand", metavar="WHAT")
            for sub_name, (module, help_text) in entry.items():
                if name == wanted and sub_name == wanted_sub:
                    _add(group_sub, sub_name, module, help_text)
                else:
                    group_sub.add_parser(sub_name, help=help_text)
        else:
            module, help_text = entry
            if name == wanted:
                _add(sub, name, module, help_text)
            else:
                sub.add_parser(name, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    module = getattr(args, "_module", None)
    if module is None:
        parser.print_help()
        return 2
    try:
        return int(importlib.import_module(module).run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `companion dice *.jpg --json | head`: the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
