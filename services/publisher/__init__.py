"""The upstream side: build a table's events in the contract's order and publish them to Kafka."""

from .message import InvalidEvent, Message, prepare
from .producer import Publisher, PublishError, connect
from .table import OutOfOrder, RoundBuilder, Table, derived_id, timestamp

__all__ = [
    "InvalidEvent",
    "Message",
    "OutOfOrder",
    "PublishError",
    "Publisher",
    "RoundBuilder",
    "Table",
    "connect",
    "derived_id",
    "prepare",
    "timestamp",
]
