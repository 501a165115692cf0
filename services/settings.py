"""Configuration from the environment (pydantic settings); every name is listed, with its
description, in docs/reference/settings.md (`make reference`)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Protocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
Mechanism = Literal["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"]
Codec = Literal["none", "gzip", "snappy", "lz4", "zstd"]


class Settings(BaseSettings):
    """Croupier's settings: `CROUPIER_<NAME>` environment variables, and `KAFKA_BOOTSTRAP`."""

    model_config = SettingsConfigDict(env_prefix="CROUPIER_", frozen=True, extra="ignore")

    kafka_bootstrap: str = Field(
        default="127.0.0.1:9092",
        validation_alias=AliasChoices("KAFKA_BOOTSTRAP", "CROUPIER_KAFKA_BOOTSTRAP"),
        description="host:port of the Kafka brokers, comma-separated",
    )
    kafka_security_protocol: Protocol = Field(
        default="PLAINTEXT",
        description="how clients talk to the brokers: SASL_SSL (TLS, then a SCRAM login) on a "
        "secured cluster, PLAINTEXT on an open local one",
    )
    kafka_sasl_mechanism: Mechanism = Field(
        default="SCRAM-SHA-512", description="the SASL mechanism (SASL_SSL, SASL_PLAINTEXT)"
    )
    kafka_username: str | None = Field(default=None, description="the SASL principal's name")
    kafka_password: SecretStr | None = Field(
        default=None,
        description="the SASL password (never printed); CROUPIER_KAFKA_PASSWORD_FILE is preferred",
    )
    kafka_password_file: str | None = Field(
        default=None,
        description="a file holding the SASL password (its first line), read at each client's "
        "construction, so a rotated password is picked up by the next client",
    )
    kafka_ca_file: str | None = Field(
        default=None,
        description="PEM file of the CA(s) that signed the brokers' certificates (SSL, SASL_SSL); "
        "unset: the system's trusted CAs",
    )
    topic_rounds: str = Field(default="rounds", description="the round events' topic (input)")
    topic_bets: str = Field(default="bets", description="the bet events' topic (input)")
    topic_settlements: str = Field(
        default="settlements", description="the settlement records' topic (output)"
    )
    topic_refunds: str = Field(default="refunds", description="the refund records' topic (output)")
    topic_adjustments: str = Field(
        default="adjustments", description="the adjustment records' topic (output)"
    )
    topic_table_stats: str = Field(
        default="table-stats",
        description="the statistics boards' topic (output, compacted by table_id)",
    )
    topic_rejected: str = Field(
        default="rejected",
        description="the dead letters' topic: every input not accepted, verbatim, with its reason",
    )
    topic_accepted: str = Field(
        default="accepted",
        description="every input the fold accepted, verbatim, written with what it decided",
    )
    topic_state: str = Field(
        default="settlement-state",
        description="the compacted changelog of the fold's state, one partition per task",
    )
    partitions: int = Field(
        default=12,
        ge=1,
        description="partitions of rounds and bets (always equal), and of the accepted and state "
        "topics (one per task)",
    )
    output_partitions: int = Field(
        default=12,
        ge=1,
        description="partitions of settlements, refunds, adjustments, table-stats and rejected",
    )
    replication_factor: int = Field(
        default=1, ge=1, description="replicas of every topic croupier creates (3 on a cluster)"
    )
    min_insync_replicas: int = Field(
        default=2,
        ge=1,
        description="min.insync.replicas set on every topic when replication_factor > 1: an "
        "acks=all write (every transaction of a worker) is acknowledged once this many replicas "
        "hold it; with 3 replicas and 2, one broker may be lost without losing or stopping writes",
    )
    retention_ms: int = Field(
        default=7 * 24 * 3600 * 1000,
        ge=-1,
        description="retention of the inputs and outputs (not table-stats and the state topic, "
        "which are compacted); -1 keeps for ever",
    )
    durable_state: bool = Field(
        default=True,
        description="write each task's state to the state topic in every transaction and restore "
        "from it; off, a task refolds its whole committed input (needs the input from offset 0)",
    )
    partial_history: bool = Field(
        default=False,
        description="a task whose state is lost and whose input no longer starts at offset 0 "
        "settles from the oldest input kept instead of refusing to run (loses what was deleted)",
    )
    instance_id: str | None = Field(
        default=None,
        description="static group membership (group.instance.id): a worker restarted with the same "
        "id gets its tasks back at once, without a rebalance; unique per worker",
    )
    group_id: str = Field(
        default="croupier-settlement",
        description="the workers' consumer group; also the start of every client id croupier's "
        "processes use",
    )
    transactional_prefix: str = Field(
        default="croupier-settlement",
        description="transactional.id prefix: a worker's is <prefix>-<instance id>, or "
        "<prefix>-<host>-<pid> without one",
    )
    transaction_timeout_ms: int = Field(
        default=10000,
        ge=1000,
        description="transaction.timeout.ms of a worker: how long a transaction left open by a "
        "worker that died is held before the brokers abort it (a takeover by another worker waits "
        "for it; a restart with the same instance id aborts it at once)",
    )
    compression: Codec = Field(
        default="lz4",
        description="compression.type of a worker's producer: its records, journal and state are "
        "compressed batch by batch in librdkafka's threads; every Kafka client reads them",
    )
    horizon: int = Field(default=200, ge=1, description="decided rounds kept per table")
    batch_records: int = Field(default=5000, ge=1, description="most records read per batch")
    session_timeout_ms: int = Field(
        default=10000,
        ge=1,
        description="consumer group session timeout of a worker: how long a silent worker keeps "
        "its partitions (the broker allows 6000 and up by default)",
    )
    table_keys_file: str | None = Field(
        default=None,
        description="JSON file of the Ed25519 public keys of each signing table (docs/CONTRACT.md, "
        "Signed round events); unset: no table signs. Read when a worker starts",
    )
    web_host: str = Field(
        default="127.0.0.1", description="address a worker's web server (/health, /metrics) binds"
    )
    web_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="its port (`croupier worker --web-port`); 0 picks a free one",
    )
    data_dir: str = Field(
        default=".data/workers",
        description="where each worker process keeps its faust data directory (worker-<pid>); "
        "nothing of the settlement state, which lives in Kafka",
    )

    @model_validator(mode="after")
    def _writable(self) -> Settings:
        if 1 < self.replication_factor < self.min_insync_replicas:
            raise ValueError(
                f"min_insync_replicas {self.min_insync_replicas} is more than replication_factor "
                f"{self.replication_factor}: no write could ever be acknowledged; set "
                "CROUPIER_MIN_INSYNC_REPLICAS to at most CROUPIER_REPLICATION_FACTOR"
            )
        return self

    @property
    def inputs(self) -> tuple[str, str]:
        return (self.topic_rounds, self.topic_bets)

    @property
    def projected(self) -> tuple[str, str, str]:
        """What the read side's projector reads: the workers' journals, the boards, the refusals."""
        return (self.topic_accepted, self.topic_table_stats, self.topic_rejected)

    @property
    def outputs(self) -> tuple[str, str, str, str, str, str]:
        return (
            self.topic_settlements,
            self.topic_refunds,
            self.topic_adjustments,
            self.topic_table_stats,
            self.topic_rejected,
            self.topic_accepted,
        )
