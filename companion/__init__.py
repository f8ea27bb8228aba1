"""companion: reads dice and cups from a camera above a game table, keeps score, serves a live
scoreboard. See README.md and the design notes it links."""

__version__ = "0.1.0"
