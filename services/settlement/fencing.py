"""What keeps a worker from writing what is no longer its own: its group generation, checked
before each transaction, and its producer's transactions the brokers left open, aborted after each
registration of its transactional id (docs/DESIGN.md, "Fencing zombies").
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException

from services.settlement import dangling, group

if TYPE_CHECKING:
    from services.settlement.loop import Engine

log = logging.getLogger("croupier.engine")


def member(engine: Engine) -> Any | None:
    """The consumer's group metadata for a transaction's offsets; None when the consumer is no
    longer of the generation whose assignment the tasks follow.

    librdkafka moves the generation as soon as the group does (to -1 when this worker's session
    expires), while the rebalance callbacks wait for the next `consume`: a worker stuck in a commit
    meanwhile still holds tasks another worker may own by now. The group coordinator accepts
    transactional offsets sent with generation -1 and no member id from anyone, so such a worker
    must not send any."""
    assert engine.consumer is not None
    metadata = engine.consumer.consumer_group_metadata()
    if engine.generation is None or group.generation(metadata) != engine.generation:
        return None
    return metadata


def outdated(engine: Engine, partitions: list[int]) -> None:
    """Drop tasks folded past what was committed by a worker the group has moved on from: they
    are built again from what was committed if the group gives them back."""
    log.warning(
        "tasks %s: the group moved on from this worker's generation (its session expired, or a "
        "rebalance began) before their transaction was sent: nothing of it is written, and they "
        "are built again from what was committed if they are assigned here",
        sorted(partitions),
    )
    engine.drop(partitions, wait=1.0)


def register(engine: Engine) -> None:
    """Register the transactional id (which ends its earlier transactions), then abort those the
    brokers left open (`dangling`), before anything is written; retried each second while the
    brokers do not answer."""
    assert engine.transactions is not None
    began = time.monotonic()
    engine.retrying("transactions", engine.transactions.start, KafkaException)
    if not engine.dangling_unchecked:
        engine.retrying("open transactions", lambda: _close_dangling(engine), dangling.errors())
    log.info(
        "transactional id registered, open transactions looked for: %.2f s",
        time.monotonic() - began,
    )


def _close_dangling(engine: Engine) -> None:
    s = engine.settings
    written = (*s.outputs, s.topic_state, *s.inputs)
    try:
        dangling.close_dangling(s, engine.transactional_id, written)
    except dangling.AuthorizationError as error:
        engine.dangling_unchecked = True
        log.warning(
            "cannot look for transactions the brokers left open (%s): the principal needs "
            "Read on the topics it writes and on __transaction_state, and Alter on the cluster; "
            "without them, run "
            "kafka-transactions.sh find-hanging after a broker restarts "
            "(docs/BROKER-FAULTS.md)",
            error,
        )
