"""The secured broker of these tests: deploy/kafka/up.sh with KAFKA_SECURITY=scram, on a base and
ports of its own (KAFKA_BASE=.data/kafka-security, 127.0.0.1:19094/19095, or SECURITY_KAFKA_PORT
and SECURITY_CONTROLLER_PORT), wiped before and after. The roles' users and ACLs are those
up.sh applies (`croupier acls`, from services/roles.py); the topics are created by the admin.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.security.local import read_env
from services.settings import Settings
from services.topics import ensure
from tests.kafka import ROOT

PARTITIONS = 2


@dataclass(frozen=True, kw_only=True)
class Secured:
    """The secured broker: its address, and each principal's client settings."""

    bootstrap: str
    base: Path

    def env(self, principal: str) -> dict[str, str]:
        """The environment of a process running as this principal (clients/<name>.env)."""
        return {
            **os.environ,
            **read_env(self.base / "clients" / f"{principal}.env"),
            "CROUPIER_PARTITIONS": str(PARTITIONS),
            "CROUPIER_OUTPUT_PARTITIONS": str(PARTITIONS),
        }

    def settings(self, principal: str, **extra: object) -> Settings:
        found = read_env(self.base / "clients" / f"{principal}.env")
        return Settings(
            kafka_bootstrap=found["KAFKA_BOOTSTRAP"],
            kafka_security_protocol=found["CROUPIER_KAFKA_SECURITY_PROTOCOL"],  # type: ignore[arg-type]
            kafka_sasl_mechanism=found["CROUPIER_KAFKA_SASL_MECHANISM"],  # type: ignore[arg-type]
            kafka_username=found["CROUPIER_KAFKA_USERNAME"],
            kafka_password_file=found["CROUPIER_KAFKA_PASSWORD_FILE"],
            kafka_ca_file=found["CROUPIER_KAFKA_CA_FILE"],
            partitions=PARTITIONS,
            output_partitions=PARTITIONS,
            **extra,  # type: ignore[arg-type]
        )


def _script(name: str, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "kafka" / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if done.returncode != 0:
        raise RuntimeError(f"deploy/kafka/{name} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


@pytest.fixture(scope="session")
def secured() -> Iterator[Secured]:
    port = os.environ.get("SECURITY_KAFKA_PORT", "19094")
    base = ROOT / ".data" / "kafka-security"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CROUPIER_") and key != "KAFKA_BOOTSTRAP"
    }
    env |= {
        "KAFKA_BASE": str(base),
        "KAFKA_PORT": port,
        "KAFKA_CONTROLLER_PORT": os.environ.get("SECURITY_CONTROLLER_PORT", "19095"),
        "KAFKA_SECURITY": "scram",
        "PYTHON": sys.executable,
    }
    _script("down.sh", env, "--wipe")
    out = _script("up.sh", env)
    assert f"KAFKA_CLIENTS={base}/clients" in out, out
    broker = Secured(bootstrap=f"127.0.0.1:{port}", base=base)
    try:
        assert ensure(broker.settings("admin"), io.StringIO()) == []
        yield broker
    finally:
        _script("down.sh", env, "--wipe")
