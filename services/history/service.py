"""`croupier api` and `croupier projector`: the processes of the read side.

`croupier api` is a faust-streaming process (logging, signals, service life cycle) running the
aiohttp server of the HTTP API over the database and, unless told otherwise, the projector beside
it. `croupier projector` runs the projector alone, on a bare asyncio loop (it starts in well under
a second, which a restart after a crash is measured by).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import shutil
import signal
import tempfile
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from services.history.access import HISTORY_READ, REPORT_READ
from services.history.migrate import upgrade
from services.history.projector import Projector
from services.history.recreated import EXIT_CODE, Recreated
from services.history.settings import ApiSettings, AuthSettings
from services.history.store import Store, connect, database_url
from services.ports import claim
from services.security import clients
from services.security.denied import AccessDenied
from services.settings import Settings

if TYPE_CHECKING:  # aiohttp is imported by `croupier api` only: the projector starts without it
    from services.history.guard import TokenChecks

log = logging.getLogger("croupier.readside")


def database(api: ApiSettings) -> Engine:
    """The read side's database, migrated to the newest schema; waits (and says so) while the
    server does not answer."""
    url = database_url(api.database_url)
    engine = connect(url)
    while True:
        try:
            upgrade(engine)
            return engine
        except OperationalError as error:
            first = str(error).splitlines()[0]
            log.warning(
                "database %s unavailable (%s); retrying in 1 s (`make db-up` starts the local "
                "one, DATABASE_URL names another)",
                engine.url.render_as_string(hide_password=True),
                first,
            )
            time.sleep(1)


def token_checks(auth: AuthSettings) -> TokenChecks | None:
    """How the API checks tokens, None when it does not (CROUPIER_API_AUTH=off). A JWKS file is
    read here, so that one that cannot be used stops the start."""
    from services.history.guard import TokenChecks
    from services.history.jwks import FileKeys, KeySource, UrlKeys

    if not auth.auth:
        return None
    keys: KeySource = (
        FileKeys(auth.jwks_file)
        if auth.jwks_file
        else UrlKeys(str(auth.jwks_url), refresh=auth.jwks_refresh_s)
    )
    return TokenChecks(keys=keys, audience=auth.audience, issuer=auth.issuer, leeway=auth.leeway_s)


def access_line(auth: AuthSettings) -> str:
    """What the API says at start about who may call it."""
    if not auth.auth:
        return (
            "access control is OFF (CROUPIER_API_AUTH=off): histories, recalls and the report "
            "answer without a token; run so only behind a gateway that checks tokens"
        )
    source = f"JWKS file {auth.jwks_file}" if auth.jwks_file else f"JWKS URL {auth.jwks_url}"
    return (
        f"bearer tokens required on histories and recalls ({HISTORY_READ}) and the report "
        f"({REPORT_READ}): EdDSA or RS256, aud {auth.audience}, keys of the {source}"
    )


def create_app(
    settings: Settings,
    api: ApiSettings,
    auth: AuthSettings,
    checks: TokenChecks | None,
    datadir: str,
) -> Any:
    """The faust app of one API process."""
    import faust  # here, not above: `croupier projector` starts without faust and aiohttp
    from aiohttp import web
    from mode import Service

    from services.history.api import application
    from services.history.lag import Lag
    from services.history.queries import Reads

    app = faust.App(
        f"{settings.group_id}-history",
        **clients.faust_broker(settings),
        store="memory://",
        web_enabled=False,
        datadir=datadir,
        topic_replication_factor=settings.replication_factor,
    )
    # No faust agents or tables here, so no faust consumer group: joining one would only create a
    # leader topic and, after a crash, hold the start until the dead member's session expires.
    app.producer_only = True
    engine = database(api)
    reads = Reads(engine)
    lag = Lag(settings, reads)
    projector = Projector(settings, Store(engine), shard=api.shard) if api.project else None
    site_app = application(reads, lag, access=checks, poll_ms=api.poll_ms)

    @app.service
    class ReadSide(Service):
        """Serves the API (and projects) for as long as the process runs."""

        async def on_start(self) -> None:
            (log.warning if checks is None else log.info)(access_line(auth))
            self._runner = web.AppRunner(site_app, access_log=None)
            await self._runner.setup()
            await web.TCPSite(self._runner, api.host, api.port).start()
            measuring = asyncio.ensure_future(lag.run())
            measuring.add_done_callback(_lag_ended)
            self._jobs = [measuring]
            if projector is not None:
                job = asyncio.ensure_future(projector.run())
                job.add_done_callback(_fatal)
                self._jobs.append(job)

        async def on_stop(self) -> None:
            lag.stop()
            if projector is not None:
                projector.stop()
            for task in getattr(self, "_jobs", []):  # none when the start failed
                with contextlib.suppress(Exception):  # each logs its own failures
                    await asyncio.wait_for(task, timeout=30)
            if hasattr(self, "_runner"):
                await self._runner.cleanup()
            engine.dispose()

    return app


def _lag_ended(job: asyncio.Future[None]) -> None:
    """The lag's reader can only end for good on a refusal of the brokers (it waits for them
    otherwise): an API whose principal may not read the topics exits with code 2 and says why,
    rather than serving as if it were caught up. Any other failure leaves the lag unknown."""
    if job.cancelled() or job.exception() is None:
        return
    if isinstance(job.exception(), AccessDenied):
        log.critical("the API was refused: %s; stopping", job.exception())
        logging.shutdown()
        os._exit(2)
    log.error("the lag can no longer be measured: %s", job.exception(), exc_info=job.exception())


def _fatal(job: asyncio.Future[None]) -> None:
    """A projector that failed for good ends its API process: serving a database that no longer
    follows the topics would hide the failure (every batch is atomic, so nothing is lost). A
    refusal of the brokers exits with code 2 and says who was refused what, a database ahead of
    the topics (they were recreated) with code 3 and what to do."""
    if job.cancelled() or job.exception() is None:
        return
    if isinstance(job.exception(), AccessDenied):
        log.critical("the projector was refused: %s; stopping", job.exception())
        logging.shutdown()
        os._exit(2)
    if isinstance(job.exception(), Recreated):
        log.critical("%s; stopping", job.exception())
        logging.shutdown()
        os._exit(EXIT_CODE)
    log.critical("the projector failed: %s; stopping", job.exception(), exc_info=job.exception())
    logging.shutdown()
    os._exit(1)


def main(settings: Settings, api: ApiSettings, auth: AuthSettings, loglevel: str = "info") -> int:
    """Run the API until interrupted."""
    import faust

    checks = token_checks(auth)
    claim(api.host, api.port, "CROUPIER_API_PORT (or --port)")
    datadir = tempfile.mkdtemp(prefix="croupier-api-")
    try:
        app = create_app(settings, api, auth, checks, datadir)
        worker = faust.Worker(app, loglevel=loglevel, quiet=True)
        worker.execute_from_commandline()
    finally:
        shutil.rmtree(datadir, ignore_errors=True)
    return 0


def project(settings: Settings, api: ApiSettings, loglevel: str = "info") -> int:
    """Run the projector alone until SIGINT or SIGTERM."""
    logging.basicConfig(
        level=loglevel.upper(), format="[%(asctime)s] [%(process)d] %(levelname)s %(message)s"
    )
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    began = time.monotonic()
    try:
        engine = database(api)
    except KeyboardInterrupt:
        return 0
    log.info("database at the newest schema in %.2f s", time.monotonic() - began)
    projector = Projector(settings, Store(engine), shard=api.shard)
    # What was built to start stays for the life of the process: frozen, no collection walks it
    # again (a batch being read holds hundreds of thousands of objects, and each collection
    # meanwhile walked these too: 3% of the instructions of reading a batch into rows).
    gc.collect()
    gc.freeze()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, projector.stop)
        await projector.run()

    try:
        asyncio.run(run())
    except AccessDenied as error:
        log.critical("croupier projector: %s", error)
        return 2
    except Recreated as error:
        log.critical("croupier projector: %s", error)
        return EXIT_CODE
    finally:
        engine.dispose()
    return 0
