"""How far the database is behind the topics: committed messages not projected yet."""

from __future__ import annotations

import asyncio
import logging

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from services import reading
from services.history.partitions import connected, partitions_of, sources
from services.history.queries import Reads
from services.history.store import Position
from services.settings import Settings

log = logging.getLogger("croupier.lag")
TIMEOUT = 5.0
"""Seconds the brokers have to tell the ends before the lag is unknown (a scrape waits for it)."""


class Lag:
    """The committed end of every partition (its last stable offset) less the stored position."""

    def __init__(self, settings: Settings, reads: Reads) -> None:
        self.settings = settings
        self.reads = reads
        self.admin: AdminClient | None = None
        self.partitions: list[Position] = []
        self.stopping = asyncio.Event()

    async def run(self) -> None:
        """Find the partitions, then keep an admin client for the end offsets until stopped."""
        s = self.settings
        admin = await connected(s, self.stopping, "api")
        found = (
            None
            if admin is None
            else await partitions_of(s, admin, list(sources(s)), self.stopping)
        )
        if found is None:
            return
        self.admin, self.partitions = admin, found
        try:
            await self.stopping.wait()
        finally:
            self.admin, self.partitions = None, []

    def stop(self) -> None:
        self.stopping.set()

    async def __call__(self) -> int | None:
        """Messages behind; None while the topics or the projector's positions are not there."""
        admin, partitions = self.admin, self.partitions
        if admin is None or not partitions:
            return None
        try:
            ends = await asyncio.to_thread(
                reading.offsets, admin, partitions, earliest=False, timeout=TIMEOUT
            )
        except KafkaException as error:
            log.info("cannot measure the lag (%s)", error)
            return None
        stored = await asyncio.to_thread(self.reads.positions)
        if any(key not in stored for key in partitions):
            return None
        return sum(max(0, ends[key] - stored[key]) for key in partitions)
