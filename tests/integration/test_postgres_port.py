"""deploy/postgres/up.sh on a port another process listens on: one line that names the port and
what to do, exit 1, before it tries to start the server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

from tests.kafka import ROOT


def test_a_taken_port_is_one_line_naming_it_and_pg_port() -> None:
    base = ROOT / ".data" / "postgres-port-test"
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()
    port = other.getsockname()[1]
    try:
        done = subprocess.run(
            ["bash", str(ROOT / "deploy" / "postgres" / "up.sh")],
            env={**os.environ, "PG_PORT": str(port), "PG_BASE": str(base)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        other.close()
        if base.is_symlink():  # a checkout the postgres user cannot reach: its cluster's place
            shutil.rmtree(base.resolve(), ignore_errors=True)
            base.unlink()
        shutil.rmtree(base, ignore_errors=True)
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"postgres: error: port {port} on 127.0.0.1 is taken by a process")
    assert line.endswith("stop it, or set PG_PORT")
