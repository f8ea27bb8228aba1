"""The running game: event log (SQLite), apply/undo, pending proposals, subscribers."""

from companion.table.log import EventLog, LogUnreadable, NotStored
from companion.table.table import Proposal, Table, replay_rows

__all__ = ["EventLog", "LogUnreadable", "NotStored", "Proposal", "Table", "replay_rows"]
