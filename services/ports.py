"""A listening port a process is told to take, checked before it starts serving: one already in
use is one line that says what to do, not a traceback from deep inside the web server."""

from __future__ import annotations

import errno
import random
import socket

FREE_PORTS = range(20000, 29000)
"""Where free_port looks: below the kernel's ephemeral range (32768-60999 by default), so no
outgoing connection takes a port between its choice and its use, and clear of the fixed ports of
the project's own clusters (29192-29197 for the broker faults; 31192-31197, 31632 for the soak)."""
_given: set[int] = set()


class PortTaken(Exception):
    """The address a process was told to listen on is in use."""


def claim(host: str, port: int, setting: str) -> None:
    """Raise PortTaken if `host:port` cannot be listened on because another socket listens there
    (port 0, any free one, always can); `setting` names what chooses the port."""
    if port == 0:
        return
    probe = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the web servers do
        probe.bind((host, port))
        probe.listen()
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        raise PortTaken(
            f"{host}:{port} is already in use (another process listens there): stop it, or set "
            f"{setting} to another port (0 picks a free one)"
        ) from error
    finally:
        probe.close()


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on or connects from now, for a process told to listen there.

    Picked at random in FREE_PORTS, never twice in one process: two processes that each ask for
    a free port rarely pick the same one, where the kernel's port 0 hands out ports that outgoing
    connections share (a server then finds its port taken, or a test reaches another server)."""
    for _ in range(1000):
        port = random.choice(FREE_PORTS)
        if port in _given:
            continue
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
        _given.add(port)
        return port
    raise PortTaken(
        f"no free port on {host} in {FREE_PORTS.start}-{FREE_PORTS.stop - 1}: stop what holds them"
    )
