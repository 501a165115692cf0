"""`croupier api`: the faust-streaming process that hosts the read side.

faust runs the process (logging, signals, service life cycle); beside it run the reader, which keeps
the projection up to date from the topics, and the aiohttp server of the HTTP API and board page.
See docs/API.md for why the projection is rebuilt from the log rather than kept in faust Tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from typing import Any

import faust
from aiohttp import web
from mode import Service

from services.history.api import application
from services.history.projection import Projection
from services.history.reader import Reader
from services.history.settings import ApiSettings
from services.settings import Settings


def create_app(settings: Settings, api: ApiSettings, datadir: str) -> tuple[Any, Reader]:
    """The faust app of one read-side process, and its reader."""
    app = faust.App(
        f"{settings.group_id}-history",
        broker=f"kafka://{settings.kafka_bootstrap}",
        store="memory://",
        web_enabled=False,
        datadir=datadir,
        topic_replication_factor=settings.replication_factor,
    )
    # No faust agents or tables here, so no faust consumer group: joining one would only create a
    # leader topic and, after a crash, hold the start until the dead member's session expires.
    app.producer_only = True
    projection = Projection(horizon=settings.horizon)
    reader = Reader(settings, projection)
    site_app = application(projection, reader.lag, poll_ms=api.poll_ms)

    @app.service
    class ReadSide(Service):
        """Follows the topics and serves the API for as long as the process runs."""

        async def on_start(self) -> None:
            self._runner = web.AppRunner(site_app, access_log=None)
            await self._runner.setup()
            await web.TCPSite(self._runner, api.host, api.port).start()
            self._task = asyncio.ensure_future(reader.run())

        async def on_stop(self) -> None:
            reader.stop()
            with contextlib.suppress(Exception):  # the reader logs its own failures
                await asyncio.wait_for(self._task, timeout=30)
            await self._runner.cleanup()

    return app, reader


def main(settings: Settings, api: ApiSettings, loglevel: str = "info") -> int:
    """Run the read side until interrupted."""
    datadir = tempfile.mkdtemp(prefix="croupier-api-")
    try:
        app, _ = create_app(settings, api, datadir)
        worker = faust.Worker(app, loglevel=loglevel, quiet=True)
        worker.execute_from_commandline()
    finally:
        shutil.rmtree(datadir, ignore_errors=True)
    return 0
