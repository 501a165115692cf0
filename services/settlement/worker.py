"""`croupier worker`: the faust-streaming worker that hosts the settlement engine.

faust runs the process: logging, signals, the web server (health, metrics) and the service life
cycle. The settlement itself is an engine's transactional consume-fold-produce loop rather than a
faust agent (faust's exactly-once mode maps a transaction to an output record's partition, and
outputs here are keyed by player): `loop.Engine`, on confluent-kafka (librdkafka), in a thread of
its own; see docs/DESIGN.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
from typing import Any

import faust
from mode import Service

from services import collector
from services.ports import claim, free_port
from services.security import clients
from services.security.denied import AccessDenied
from services.settings import Settings
from services.settlement.loop import Engine
from services.settlement.metrics import render

log = logging.getLogger("croupier.worker")
DENIED_GRACE = 2.0
"""Seconds a refused worker stays up, its /health saying why, before it exits with code 2."""


def create_app(settings: Settings) -> tuple[Any, Engine]:
    """The faust app of one worker process, and the engine it runs."""
    port = settings.web_port or free_port(settings.web_host)
    datadir = os.path.abspath(os.path.join(settings.data_dir, f"worker-{os.getpid()}"))
    os.makedirs(datadir, exist_ok=True)
    app = faust.App(
        f"{settings.group_id}-worker",
        **clients.faust_broker(settings),
        store="memory://",
        web_host=settings.web_host,
        web_port=port,
        web_in_thread=False,
        datadir=datadir,
        topic_replication_factor=settings.replication_factor,
    )
    # No faust agents or tables, so no faust consumer group: joining one cost every takeover the
    # dead member's session (seconds) before the engine even started (docs/DESIGN.md, Recovery).
    app.producer_only = True
    engine = Engine(settings)

    @app.service
    class SettlementService(Service):
        """Runs the engine for as long as the worker runs."""

        async def on_start(self) -> None:
            self._task = asyncio.ensure_future(self._run())

        async def _run(self) -> None:
            """A failed engine takes the worker down loudly rather than leaving it idle; one the
            brokers refused exits with code 2 and the refusal (its /health says it meanwhile)."""
            try:
                async with collector.clocked(engine.metrics.collections):
                    await asyncio.get_running_loop().run_in_executor(None, engine.run)
            except AccessDenied as error:
                log.critical("croupier worker: %s", error)
                await asyncio.sleep(DENIED_GRACE)  # for /health to be read
                logging.shutdown()
                os._exit(2)
            except Exception as error:
                log.exception("settlement engine failed; stopping the worker")
                await self.crash(error)

        async def on_stop(self) -> None:
            engine.stop()
            with contextlib.suppress(Exception):  # stopping: the engine logs its own failures
                await asyncio.wait_for(self._task, timeout=30)

    @app.page("/health")
    async def health(web: Any, request: Any) -> Any:
        """200 while every task assigned here runs; 503 naming each blocked task and why, or the
        brokers' refusal of this worker's principal."""
        blocked = {str(p): reason for p, reason in sorted(dict(engine.blocked).items())}
        tasks = sorted(list(engine.tasks))
        if engine.denied is not None:
            return web.json({"status": "denied", "error": str(engine.denied)}, status=503)
        return web.json(
            {
                "status": "blocked" if blocked else "ok",
                "tasks": tasks,
                "blocked": blocked,
                "pending_bets": sum(list(engine.metrics.pending.values())),
                "transactional_ids": dict.fromkeys(map(str, tasks), engine.transactional_id),
            },
            status=503 if blocked else 200,
        )

    @app.page("/metrics")
    async def metrics(web: Any, request: Any) -> Any:
        """Prometheus text format."""
        return web.text(
            render(engine.metrics, len(engine.tasks), len(engine.blocked)),
            content_type="text/plain",
        )

    return app, engine


def main(settings: Settings, loglevel: str = "info") -> int:
    """Run one worker until interrupted."""
    claim(settings.web_host, settings.web_port, "CROUPIER_WEB_PORT (or --web-port)")
    app, _ = create_app(settings)
    worker = faust.Worker(app, loglevel=loglevel, quiet=True)
    # What was built to start is kept for good: frozen, no collection walks it again (a takeover
    # restores hundreds of thousands of objects, and each collection walked these too).
    gc.freeze()
    gc.enable()
    worker.execute_from_commandline()
    return 0
