"""`croupier run` for real: settlements flow and the view updates; at --duration, SIGINT or SIGTERM
it stops everything it started, the broker too when it started it, and leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from services.settings import Settings
from tests.kafka import ROOT, environment, isolated_settings

LINE = re.compile(r"settlements (\d+) \(")
STARTED = re.compile(r"started (\S+) \(pid (\d+)\)")


def _env(settings: Settings) -> dict[str, str]:
    env = environment(settings)
    env["PYTHONUNBUFFERED"] = "1"
    env["DATABASE_URL"] = f"sqlite:///{ROOT / 'test-output' / f'{settings.group_id}.sqlite'}"
    return env


def _tagged(tag: str) -> list[int]:
    """Processes whose environment or command line carries this test's unique tag."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            seen = (entry / "environ").read_bytes() + (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in seen and state != "Z":
            found.append(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _run(env: dict[str, str], *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", "run", "--plain", *options],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _until_settled(process: subprocess.Popen[str], seen: list[str], timeout: float) -> int:
    """Read the output until a view line shows settlements; how many."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    for line in process.stdout:
        seen.append(line)
        match = LINE.search(line)
        if match and int(match.group(1)) > 0:
            return int(match.group(1))
        assert time.monotonic() < deadline, "no settlement within the time allowed:\n" + "".join(
            seen
        )
    raise AssertionError("croupier run ended before any settlement:\n" + "".join(seen))


def _check_clean(output: str, tag: str) -> None:
    pids = [int(pid) for _, pid in STARTED.findall(output)]
    assert {name for name, _ in STARTED.findall(output)} >= {"worker-0", "worker-1", "simulator"}
    assert all(_gone(pid) for pid in pids), output
    assert _tagged(tag) == [], output


def test_run_for_a_duration_settles_bets_and_leaves_no_process_behind(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=4)
    process = _run(_env(settings), "--duration", "45")
    seen: list[str] = []
    first = _until_settled(process, seen, timeout=120)
    rest, _ = process.communicate(timeout=150)
    output = "".join(seen) + rest
    assert process.returncode == 0, output
    counts = [int(n) for n in LINE.findall(output)]
    assert first > 0 and counts[-1] > first  # the view kept updating
    assert "duration reached" in output
    assert "logs in " in output
    _check_clean(output, settings.group_id)


def test_sigint_and_sigterm_stop_everything_it_started(kafka: str) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        settings = isolated_settings(kafka, partitions=4)
        process = _run(_env(settings))
        seen: list[str] = []
        _until_settled(process, seen, timeout=120)
        process.send_signal(sig)
        rest, _ = process.communicate(timeout=120)
        output = "".join(seen) + rest
        assert process.returncode == 0, output
        assert "stop requested" in output
        assert "stopped worker-0" in output and "stopped simulator" in output
        _check_clean(output, settings.group_id)


def _free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def _own_broker(port: int, controller: int) -> tuple[dict[str, str], Path]:
    """The environment of a run that starts a broker of its own on these ports, and its folder."""
    assert _free(port) and _free(controller), f"ports {port}/{controller} are taken; free them"
    settings = isolated_settings(f"127.0.0.1:{port}", partitions=2)
    env = _env(settings)
    del env["KAFKA_BOOTSTRAP"]
    env.pop("CROUPIER_KAFKA_BOOTSTRAP", None)
    base = ROOT / ".data" / f"kafka-runtest-{uuid.uuid4().hex[:6]}"
    env.update(KAFKA_BASE=str(base), KAFKA_PORT=str(port), KAFKA_CONTROLLER_PORT=str(controller))
    return env, base


def test_ctrl_c_stops_the_broker_it_started_even_when_its_output_pipe_is_gone() -> None:
    """`make run | tee run.log`, then Ctrl-C: tee dies with the run's SIGINT, every later write
    to the pipe fails, and the run must still stop everything, its broker too."""
    port, controller = 29192, 29193
    env, base = _own_broker(port, controller)
    process = _run(env)
    seen: list[str] = []
    _until_settled(process, seen, timeout=180)
    assert process.stdout is not None
    process.stdout.close()  # the reader of the pipe is gone, as tee after Ctrl-C
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=180) == 0
    assert _free(port) and _free(controller)
    assert not (base / "kafka.pid").exists()
    pids = [int(pid) for _, pid in STARTED.findall("".join(seen))]
    assert pids and all(_gone(pid) for pid in pids)
    assert _tagged(str(base)) == []
    [log] = (ROOT / ".data" / "run").glob(f"*-{process.pid}/run.log")
    assert "broker stopped (exit 0)" in log.read_text()
    subprocess.run(["rm", "-rf", str(base)], check=True)


def test_a_broker_it_starts_is_stopped_at_the_end(tmp_path: Path) -> None:
    """Without KAFKA_BOOTSTRAP it starts its own broker (here a second one, on other ports and
    in its own folder), and stops it at the end."""
    port, controller = 29092, 29093
    assert _free(port) and _free(controller), "ports 29092/29093 are taken; free them and retry"
    settings = isolated_settings(f"127.0.0.1:{port}", partitions=2)
    env = _env(settings)
    del env["KAFKA_BOOTSTRAP"]
    env.pop("CROUPIER_KAFKA_BOOTSTRAP", None)
    base = ROOT / ".data" / f"kafka-runtest-{uuid.uuid4().hex[:6]}"
    env.update(KAFKA_BASE=str(base), KAFKA_PORT=str(port), KAFKA_CONTROLLER_PORT=str(controller))
    process = _run(env, "--duration", "30")
    seen: list[str] = []
    _until_settled(process, seen, timeout=180)
    rest, _ = process.communicate(timeout=180)
    output = "".join(seen) + rest
    assert process.returncode == 0, output
    assert "starting Kafka" in output and f"KAFKA_BOOTSTRAP=127.0.0.1:{port}" in output
    assert "stopping the broker this run started" in output
    assert _free(port) and _free(controller)
    assert not (base / "kafka.pid").exists()
    _check_clean(output, str(base))
    subprocess.run(["rm", "-rf", str(base)], check=True)
