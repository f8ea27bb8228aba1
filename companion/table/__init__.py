"""The running game: event log (SQLite), apply/undo, pending proposals, subscribers."""

from companion.table.log import EventLog
from companion.table.table import Proposal, Table, replay_rows

__all__ = ["EventLog", "Proposal", "Table", "replay_rows"]
