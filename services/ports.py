"""A listening port a process is told to take, checked before it starts serving: one already in
use is one line that says what to do, not a traceback from deep inside the web server."""

from __future__ import annotations

import errno
import socket


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
