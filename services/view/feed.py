"""The view's inputs: a read_committed consumer of the topics, and the workers' /health."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Mapping

from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]

from schemas.codec import payload
from services.security import clients
from services.security.denied import partitions as readable
from services.settings import Settings
from services.view.state import Dashboard


class Feed:
    """Reads rounds, bets, settlements, refunds and rejected from their end at start (committed)."""

    def __init__(self, settings: Settings) -> None:
        self.roles = {
            settings.topic_rounds: "rounds",
            settings.topic_bets: "bets",
            settings.topic_settlements: "settlements",
            settings.topic_refunds: "refunds",
            settings.topic_adjustments: "adjustments",
            settings.topic_rejected: "rejected",
        }
        self.consumer = KafkaConsumer(
            **clients.kafka_python(settings),
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
            client_id="croupier-view",
        )
        tps = [
            TopicPartition(topic, p)
            for topic in self.roles
            for p in readable(self.consumer, settings, topic, doing="show the live view")
        ]
        self.consumer.assign(tps)
        self.consumer.seek_to_end(*tps)
        for tp in tps:
            self.consumer.position(tp)  # resolve "end" now, before anything new is written

    def poll(self, board: Dashboard, timeout: float) -> int:
        """Fold what arrived into the board; how many messages that was."""
        batch = self.consumer.poll(timeout_ms=int(timeout * 1000), max_records=20_000)
        now = time.monotonic()
        n = 0
        for tp, records in batch.items():
            role = self.roles[tp.topic]
            for r in records:
                board.read(role, payload(r.value), now)
                n += 1
        return n

    def close(self) -> None:
        self.consumer.close()


class Health(threading.Thread):
    """Polls each worker's /health every second into board.pending (None: not answering)."""

    def __init__(self, board: Dashboard, ports: Mapping[str, int], host: str = "127.0.0.1") -> None:
        super().__init__(name="health", daemon=True)
        self.board = board
        self.ports = dict(ports)
        self.host = host
        self.stopped = threading.Event()
        self.tasks: dict[str, list[int]] = {}
        for name in ports:
            board.pending[name] = None

    def run(self) -> None:
        while not self.stopped.wait(1.0):
            for name, port in self.ports.items():
                try:
                    with urllib.request.urlopen(
                        f"http://{self.host}:{port}/health", timeout=0.8
                    ) as response:
                        body = json.loads(response.read())
                    self.board.pending[name] = int(body.get("pending_bets", 0))
                    self.tasks[name] = list(body.get("tasks", []))
                except (OSError, ValueError):
                    self.board.pending[name] = None

    def stop(self) -> None:
        self.stopped.set()
