"""The image runs croupier: a worker and the API, each in a container of `make image`'s image
(podman, the host's network), settle a floor's rounds from the local broker and serve them from
the local PostgreSQL exactly as the offline fold decides them."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from services.ports import free_port
from services.settings import Settings
from services.simulation.streams import Profile, generate
from tests.database import fresh_url
from tests.e2e.support import get, offline, quote, wait_read_up
from tests.kafka import (
    OUTPUT,
    create_topics,
    environment,
    isolated_settings,
    publish,
    wait_caught_up,
)

IMAGE = os.environ.get("CROUPIER_IMAGE", "localhost/croupier:dev")


RUNTIME = os.environ.get("CROUPIER_PODMAN_RUNTIME", "runc")
"""runc: crun, podman's default on Debian, refuses a host whose cgroups are in hybrid mode
(cgroup v1 controllers beside a cgroup v2 tree), as this one's are (docs/OPERATIONS.md)."""


def _limits() -> list[str]:
    """The container's open files and processes within the host's limits: podman asks for more by
    default, which a host that lets no process raise its limits refuses."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return [f"--ulimit=nofile={soft}:{hard}", "--ulimit=nproc=4096:4096"]


def _podman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", f"--runtime={RUNTIME}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _image_is_built() -> None:
    assert shutil.which("podman"), "podman is not installed: `make image` installs it"
    found = _podman("image", "exists", IMAGE)
    assert found.returncode == 0, f"no image {IMAGE}: build it with `make image`"


def _croupier_environment(settings: Settings) -> dict[str, str]:
    """The settings as a container's environment: croupier's variables only, not the host's."""
    return {
        key: value
        for key, value in environment(settings).items()
        if key.startswith("CROUPIER_") or key in ("KAFKA_BOOTSTRAP", "DATABASE_URL")
    }


@contextmanager
def container(name: str, env: dict[str, str], *args: str) -> Iterator[str]:
    """A container of the image on the host's network running `croupier ARGS`; at the end it is
    stopped (SIGTERM, as Kubernetes does), its log kept under test-output/ and it is removed."""
    OUTPUT.mkdir(exist_ok=True)
    unique = f"croupier-test-{name}-{uuid.uuid4().hex[:8]}"
    flags = [f"--env={key}={value}" for key, value in sorted(env.items())]
    try:
        started = _podman(
            "run", "-d", "--network=host", f"--name={unique}", *_limits(), *flags, IMAGE, *args
        )
        assert started.returncode == 0, started.stderr  # a container made but not started too
        yield unique
    finally:
        _podman("stop", "--time=30", unique, timeout=60)
        logs = _podman("logs", unique)
        Path(OUTPUT / f"{unique}.log").write_text(logs.stdout + logs.stderr)
        _podman("rm", "--force", unique)


def test_a_worker_and_the_api_from_the_image_settle_and_serve_every_round(
    kafka: str, tmp_path: Path
) -> None:
    _image_is_built()
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    streams = generate(17, tables=3, rounds=4, profile=Profile(correct=0.2, void=0.1))
    publish(settings, streams, seed=17)
    expected = offline(streams)
    assert len(expected.outcomes) == 12 and expected.decisions

    worker_port, api_port = free_port(), free_port()
    worker_env = _croupier_environment(settings) | {
        "CROUPIER_WEB_HOST": "127.0.0.1",
        "CROUPIER_WEB_PORT": str(worker_port),
        "CROUPIER_DATA_DIR": "/tmp/workers",  # the image's /app is not the worker's to write
    }
    with (
        fresh_url("postgresql", tmp_path) as database,
        container("worker", worker_env, "worker", "--loglevel", "warning") as worker,
    ):
        wait_caught_up(settings, timeout=180)
        status, health = get(f"http://127.0.0.1:{worker_port}/health")
        assert status == 200, (worker, health)

        api_env = _croupier_environment(settings) | {
            "DATABASE_URL": database,
            "CROUPIER_API_HOST": "127.0.0.1",
            "CROUPIER_API_PORT": str(api_port),
            "CROUPIER_API_POLL_MS": "300",
            "CROUPIER_API_AUTH": "off",
        }
        with container("api", api_env, "api", "--loglevel", "warning") as api:
            url = f"http://127.0.0.1:{api_port}"
            health = wait_read_up(url, timeout=180)
            assert health["caught_up"] is True, (api, health)
            for (table_id, round_id), (phase, dice, discs) in expected.outcomes.items():
                status, recall = get(f"{url}/tables/{quote(table_id)}/rounds/{quote(round_id)}")
                assert status == 200, (api, recall)
                assert (recall["status"], recall["dice"], recall["discs"]) == (phase, dice, discs)
                decided = {
                    bet_id
                    for bet_id, record in expected.decisions.items()
                    if (record["table_id"], record["round_id"]) == (table_id, round_id)
                }
                assert {b["bet_id"] for b in recall["bets"]} == decided, round_id
            settled = [
                round_id
                for (_, round_id), (phase, _, _) in expected.outcomes.items()
                if phase == "result"
            ]
            assert settled  # at least one round settled, and served as the fold settled it
