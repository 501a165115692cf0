"""A local broker formatted in one security mode and started in the other: refused with one
line that says what to do, unless its owner asks for it to be wiped (`croupier run` does, for the
local broker it owns), in either direction. A base and ports of its own (.data/kafka-modes,
127.0.0.1:19096/19097, or MODES_KAFKA_PORT and MODES_CONTROLLER_PORT), wiped before and after."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.kafka import ROOT

BASE = ROOT / ".data" / "kafka-modes"


def _env(security: str, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CROUPIER_", "KAFKA_"))
    }
    return env | {
        "KAFKA_BASE": str(BASE),
        "KAFKA_PORT": os.environ.get("MODES_KAFKA_PORT", "19096"),
        "KAFKA_CONTROLLER_PORT": os.environ.get("MODES_CONTROLLER_PORT", "19097"),
        "KAFKA_SECURITY": security,
        "PYTHON": sys.executable,
        **extra,
    }


def _script(name: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ROOT / "deploy" / "kafka" / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_a_broker_of_the_other_mode_is_refused_in_one_line_or_wiped_when_its_owner_asks() -> None:
    plain, scram = _env("plaintext"), _env("scram")
    _script("down.sh", plain, "--wipe")
    try:
        assert _script("up.sh", plain).returncode == 0
        assert _script("down.sh", plain).returncode == 0  # stopped, its data kept

        refused = _script("up.sh", scram)
        assert refused.returncode == 1
        [line] = [x for x in refused.stderr.splitlines() if x.strip()]
        assert (
            line.startswith("kafka: error: ") and "formatted with KAFKA_SECURITY=plaintext" in line
        )
        assert "KAFKA_WIPE=1 bash deploy/kafka/down.sh" in line

        switched = _script("up.sh", _env("scram", KAFKA_OTHER_MODE="wipe"))
        assert switched.returncode == 0, switched.stdout + switched.stderr
        said = [x for x in switched.stdout.splitlines() if "formatted with" in x]
        assert said == [
            "kafka: its data was formatted with KAFKA_SECURITY=plaintext, not scram: wiping it "
            "and starting an empty broker (KAFKA_OTHER_MODE=wipe)"
        ]
        assert f"KAFKA_CLIENTS={BASE}/clients" in switched.stdout

        back = _script("up.sh", _env("plaintext", KAFKA_OTHER_MODE="wipe"))  # while it runs
        assert back.returncode == 0, back.stdout + back.stderr
        assert "formatted with KAFKA_SECURITY=scram, not plaintext: wiping it" in back.stdout
        assert "KAFKA_CLIENTS=" not in back.stdout
    finally:
        _script("down.sh", plain, "--wipe")


def _run(security: str, cwd: Path) -> str:
    """`croupier run` for 25 s on the local broker of this base (which it starts and stops), with
    its read side in `cwd`: its output, once it reached a live floor and stopped cleanly."""
    env = _env(security, PYTHONUNBUFFERED="1")
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "run", "--plain", "--duration", "25"],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    settled = [int(n) for n in re.findall(r"settlements (\d+) \(", output)]
    assert settled and settled[-1] > 0, output
    return output


def test_croupier_run_switches_modes_and_back_saying_in_one_line_what_it_reset(
    tmp_path: Path,
) -> None:
    plain = _env("plaintext")
    _script("down.sh", plain, "--wipe")
    try:
        first = _run("plaintext", tmp_path)
        assert "starting clean" not in first
        for security, other in (("scram", "plaintext"), ("plaintext", "scram")):
            output = _run(security, tmp_path)
            [line] = [x for x in output.splitlines() if "starting clean" in x or "wiping" in x]
            assert line.startswith("croupier run: starting clean: wiped the local broker"), output
            assert "moved the read side's .data/readside.sqlite" in line, output
            assert f"formatted with KAFKA_SECURITY={other}" not in output  # said once, above
        assert len(list((tmp_path / ".data").glob("readside-*.sqlite"))) == 2
    finally:
        _script("down.sh", plain, "--wipe")
