"""Where the API's token keys come from: a JWKS file, or a JWKS URL fetched and cached (a shell).

The file is read again whenever it changes (checked on every protected request: one `stat`; a
file replaced by a rename is always seen) and when a token names a `kid` it lacks. The
URL is fetched on the first protected request, again when a token names a `kid` the cached set
lacks (at most once per `cooldown` seconds), and again once the set is `refresh` seconds old, so
a key removed from the set is refused at most that long afterwards. A fetch that fails keeps the
keys held; with none held, the request is answered 503.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import aiohttp
from jwt import PyJWK

from services.history.tokens import JwksError, Keys, key_set, pick

log = logging.getLogger("croupier.api")


class KeysUnavailable(Exception):
    """No key is held and none could be fetched."""


class KeySource(Protocol):
    async def find(self, kid: str | None) -> PyJWK | None:
        """The key the token names, None when the current set lacks it."""
        ...

    async def close(self) -> None: ...


class FileKeys:
    """A JWKS file (CROUPIER_API_JWKS_FILE): read at start (an unusable one stops the start),
    again whenever it changes (inode, modification time or size), and when a token names a `kid`
    it lacks."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp = self._stat()
        try:
            self._keys = key_set(self.path.read_bytes())
        except JwksError as error:
            raise JwksError(f"{self.path}: {error}") from None

    def _stat(self) -> tuple[int, int, int]:
        found = os.stat(self.path)
        return (found.st_ino, found.st_mtime_ns, found.st_size)

    def _reload(self, *, anyway: bool = False) -> None:
        try:
            stamp = self._stat()
            if stamp == self._stamp and not anyway:
                return
            self._stamp = stamp
            keys = key_set(self.path.read_bytes())
            if keys.keys() != self._keys.keys():
                log.info("JWKS %s read again: kids %s", self.path, ", ".join(sorted(keys)))
            self._keys = keys
        except (OSError, JwksError) as error:
            log.warning("JWKS %s unreadable (%s); keeping the keys held", self.path, error)

    async def find(self, kid: str | None) -> PyJWK | None:
        self._reload()
        key = pick(self._keys, kid)
        if key is None:
            self._reload(anyway=True)  # changed within the clock's tick: same time and size
            key = pick(self._keys, kid)
        return key

    async def close(self) -> None:
        return None


class UrlKeys:
    """A JWKS URL (CROUPIER_API_JWKS_URL), fetched on demand and cached."""

    def __init__(
        self,
        url: str,
        *,
        refresh: float = 300.0,
        cooldown: float = 10.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.refresh = refresh
        self.cooldown = cooldown
        self.timeout = timeout
        self.clock = clock
        self._keys: Keys = {}
        self._tried: float | None = None
        self._lock = asyncio.Lock()
        self._session: aiohttp.ClientSession | None = None

    def _due(self, after: float) -> bool:
        return self._tried is None or self.clock() - self._tried >= after

    async def find(self, kid: str | None) -> PyJWK | None:
        if self._due(self.refresh if self._keys else self.cooldown):
            await self._fetch()
        key = pick(self._keys, kid)
        if key is None and self._due(self.cooldown):
            await self._fetch()  # a rotation: the issuer may have published a new key
            key = pick(self._keys, kid)
        if not self._keys:
            raise KeysUnavailable(f"no signing key could be fetched from {self.url}")
        return key

    async def _fetch(self) -> None:
        began = self._tried
        async with self._lock:
            if self._tried != began:
                return  # another request fetched meanwhile
            try:
                if self._session is None:
                    self._session = aiohttp.ClientSession()
                async with self._session.get(
                    self.url, timeout=aiohttp.ClientTimeout(total=self.timeout)
                ) as response:
                    if response.status != 200:
                        raise JwksError(f"HTTP {response.status}")
                    self._keys = key_set(await response.read())
            except (aiohttp.ClientError, TimeoutError, JwksError) as error:
                log.warning("JWKS %s not fetched (%s); keeping the keys held", self.url, error)
            finally:
                self._tried = self.clock()

    async def close(self) -> None:
        """Close the HTTP session (a later fetch opens another)."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()
