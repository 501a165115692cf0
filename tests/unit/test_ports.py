"""A process told to listen on a port another process holds says so in one line and exits 1,
before its web server starts."""

from __future__ import annotations

import itertools
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli import main
from services.ports import FREE_PORTS, PortTaken, claim, free_port


@pytest.fixture
def held() -> Iterator[int]:
    """A port another socket listens on."""
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()
    try:
        yield other.getsockname()[1]
    finally:
        other.close()


def test_a_port_another_socket_listens_on_is_refused_naming_the_setting(held: int) -> None:
    with pytest.raises(PortTaken, match=f"127.0.0.1:{held} is already in use.*set CROUPIER_X"):
        claim("127.0.0.1", held, "CROUPIER_X")


def test_a_free_port_and_port_zero_are_claimed_and_left_free() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    claim("127.0.0.1", port, "CROUPIER_X")
    claim("127.0.0.1", port, "CROUPIER_X")  # the check itself leaves it free
    claim("127.0.0.1", 0, "CROUPIER_X")


def test_croupier_api_on_a_taken_port_exits_1_with_one_line(
    held: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CROUPIER_API_PORT", str(held))
    monkeypatch.setenv("CROUPIER_API_AUTH", "off")  # else it stops first, asking for a JWKS
    assert main(["api", "--serve-only"]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"croupier api: 127.0.0.1:{held} is already in use")
    assert "CROUPIER_API_PORT (or --port)" in line


def test_free_ports_are_below_the_ephemeral_range_never_repeated_and_listenable() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == 200
    assert all(p in FREE_PORTS and p < low for p in ports)
    for port in ports[:20]:
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
            server.listen()


def test_a_port_someone_listens_on_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    picks = itertools.chain([port, port], itertools.repeat(free))
    monkeypatch.setattr("services.ports.random.choice", lambda _: next(picks))
    try:
        assert free_port() == free
    finally:
        taken.close()
