"""`croupier run`: the whole system on one machine, with a live view, stopped cleanly.

Starts the local broker (deploy/kafka/up.sh) unless KAFKA_BOOTSTRAP is set, creates the topics,
starts the settlement workers and the simulator as child processes, and shows the live view until
Ctrl-C, SIGTERM or --duration. It then stops what it started, and only that: the simulator, the
workers, and the broker if this run started it.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ctypes.util
import io
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from services.ports import free_port

if TYPE_CHECKING:
    from services.settings import Settings
    from services.view.feed import Feed, Health
    from services.view.state import Dashboard

ROOT = Path(__file__).resolve().parents[1]
UP = ROOT / "deploy" / "kafka" / "up.sh"
DOWN = ROOT / "deploy" / "kafka" / "down.sh"
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child: get SIGTERM when croupier run dies, even by SIGKILL (Linux prctl)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class Child:
    """A process this run started, and its log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def state(self) -> str:
        code = self.process.poll()
        return f"pid {self.process.pid}" if code is None else f"exited {code}"


class Stopper:
    """SIGINT/SIGTERM ask to stop; a second one asks to stop now (SIGKILL what is left)."""

    def __init__(self) -> None:
        self.requests = 0

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        self.requests += 1

    @property
    def asked(self) -> bool:
        return self.requests > 0


def _port_or_free(preferred: int) -> int:
    """The preferred port when nobody listens on it, else any free one."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", preferred))
        except OSError:
            return free_port()
    return preferred


class Resilient(io.TextIOBase):
    """The run's output: the terminal or pipe it was given, then a file once that is gone.

    `make run | tee run.log` and Ctrl-C: the terminal's SIGINT ends `tee` too, and every later
    write to the pipe fails (BrokenPipeError). The run must still stop what it started, so its
    output goes on, to `<logs>/run.log`, instead of failing the shutdown half way.
    """

    def __init__(self, given: TextIO, fallback: Path) -> None:
        self.given = given
        self.fallback = fallback
        self.file: TextIO | None = None

    def write(self, text: str) -> int:
        if self.file is None:
            try:
                self.given.write(text)
                return len(text)
            except (BrokenPipeError, OSError, ValueError):
                self._switch()
        assert self.file is not None
        self.file.write(text)
        return len(text)

    def flush(self) -> None:
        if self.file is not None:
            self.file.flush()
            return
        try:
            self.given.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._switch()

    def _switch(self) -> None:
        """From now on write to the file; what the pipe still buffers goes to /dev/null, so
        that no later flush (the interpreter's at exit too) fails again."""
        self.file = open(self.fallback, "a")  # noqa: SIM115 (kept until the run ends)
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.given.fileno())
            os.close(null)

    def isatty(self) -> bool:
        return self.file is None and self.given.isatty()

    @property
    def gone(self) -> bool:
        return self.file is not None


def say(out: TextIO, text: str) -> None:
    print(f"croupier run: {text}", file=out, flush=True)


def spawn(name: str, argv: list[str], logs: Path, env: dict[str, str]) -> Child:
    """A child in its own session (a terminal's Ctrl-C reaches only us: we stop it in order)."""
    log = logs / f"{name}.log"
    with open(log, "ab") as stream:
        process = subprocess.Popen(
            argv,
            stdout=stream,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # only prctl runs in the child: no lock is taken
        )
    return Child(name, process, log)


def stop(children: list[Child], stopper: Stopper, timeout: float, out: TextIO) -> None:
    """SIGTERM, then wait up to `timeout` (a second Ctrl-C: SIGKILL at once)."""
    for child in children:
        if child.process.poll() is None:
            child.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    asked = stopper.requests
    for child in children:
        while child.process.poll() is None:
            if time.monotonic() > deadline or stopper.requests > max(asked, 1):
                say(out, f"{child.name} (pid {child.process.pid}) still running: SIGKILL")
                child.process.kill()
            time.sleep(0.1)
        say(out, f"stopped {child.name} (exit {child.process.returncode})")


WIPED = "wiping it and starting an empty broker"
"""What deploy/kafka/up.sh says when it wiped a broker formatted in the other security mode."""


@dataclass(frozen=True, kw_only=True)
class Broker:
    """The local broker deploy/kafka/up.sh runs: its bootstrap, whether this call started it,
    where a secured one's clients/<principal>.env are, and whether it was wiped first."""

    bootstrap: str
    started: bool
    clients: Path | None
    wiped: bool


def start_broker(env: dict[str, str], logs: Path, out: TextIO) -> Broker:
    """Run deploy/kafka/up.sh, its lines shown as they come (but the one about a wipe, which the
    run says itself with what else it reset)."""
    if not UP.exists():
        raise RuntimeError(
            f"{UP} not found: run from the croupier repository, or set KAFKA_BOOTSTRAP to a broker"
        )
    say(out, f"starting the local broker ({UP}; its log: {logs / 'broker-up.log'})")
    lines: list[str] = []
    with open(logs / "broker-up.log", "w") as log:
        process = subprocess.Popen(
            ["bash", str(UP)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**env, "KAFKA_OTHER_MODE": "wipe"},  # the local broker is this run's own
            text=True,
            start_new_session=True,
        )
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip())
            log.write(line)
            if WIPED not in line:
                print(f"  {line.rstrip()}", file=out, flush=True)
        code = process.wait()
    started = any("starting Kafka" in line for line in lines)
    if code != 0:
        raise RuntimeError(f"deploy/kafka/up.sh failed (exit {code}); see the lines above", started)
    bootstrap = next(
        (x.split("=", 1)[1] for x in lines if x.startswith("KAFKA_BOOTSTRAP=")), "127.0.0.1:9092"
    )
    found = next((x.split("=", 1)[1] for x in lines if x.startswith("KAFKA_CLIENTS=")), None)
    return Broker(
        bootstrap=bootstrap,
        started=started,
        clients=None if found is None else Path(found),
        wiped=any(WIPED in line for line in lines),
    )


def stop_broker(env: dict[str, str], logs: Path, out: TextIO) -> None:
    """deploy/kafka/down.sh, its output to a file (never to a pipe that may be gone)."""
    say(
        out,
        f"stopping the broker this run started (deploy/kafka/down.sh, log {logs}/broker-down.log)",
    )
    with open(logs / "broker-down.log", "ab") as log:
        done = subprocess.run(
            ["bash", str(DOWN)],
            env=env,
            check=False,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    say(out, f"broker stopped (exit {done.returncode})")


def command(args: argparse.Namespace) -> int:
    """`croupier run` from its options; the exit code."""
    if not 1 <= args.workers <= 3:
        print("croupier run: --workers must be 1, 2 or 3 (2 cores here)", file=sys.stderr)
        return 2
    stopper = Stopper()
    stopper.install()
    return Run(args, stopper, sys.stdout).main()


class Run:
    """One `croupier run`: what it started, so that it stops exactly that."""

    def __init__(self, args: argparse.Namespace, stopper: Stopper, out: TextIO) -> None:
        self.args = args
        self.stopper = stopper
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        self.logs = Path(".data/run").resolve() / f"{stamp}-{os.getpid()}"
        self.out: TextIO = Resilient(out, self.logs / "run.log")  # type: ignore[assignment]
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        self.env.setdefault("PYTHON", sys.executable)
        self.children: list[Child] = []
        self.broker_started = False
        self.bootstrap = ""
        given = os.environ.get("KAFKA_CLIENTS")
        self.clients: Path | None = Path(given) if given else None
        """A secured cluster's clients/<principal>.env: each child runs as its role."""

    def env_of(self, principal: str) -> dict[str, str]:
        """The environment of a child running as this principal (all of them alike when the
        cluster is not secured)."""
        if self.clients is None:
            return self.env
        from services.security.local import read_env

        return {**self.env, **read_env(self.clients / f"{principal}.env")}

    def settings_of(self, principal: str, bootstrap: str) -> Settings:
        from services.settings import Settings

        if self.clients is None:
            return Settings(kafka_bootstrap=bootstrap)
        from services.security.local import read_env

        found = read_env(self.clients / f"{principal}.env")
        return Settings(
            kafka_bootstrap=bootstrap,
            kafka_security_protocol=found["CROUPIER_KAFKA_SECURITY_PROTOCOL"],  # type: ignore[arg-type]
            kafka_sasl_mechanism=found["CROUPIER_KAFKA_SASL_MECHANISM"],  # type: ignore[arg-type]
            kafka_username=found["CROUPIER_KAFKA_USERNAME"],
            kafka_password_file=found["CROUPIER_KAFKA_PASSWORD_FILE"],
            kafka_ca_file=found["CROUPIER_KAFKA_CA_FILE"],
        )

    def main(self) -> int:
        self.logs.mkdir(parents=True, exist_ok=True)
        say(self.out, f"logs in {self.logs}")
        try:
            return self._run()
        finally:
            self._shutdown()
            say(self.out, f"done; logs in {self.logs}")

    def _run(self) -> int:
        from services.topics import ensure

        given = os.environ.get("KAFKA_BOOTSTRAP") or os.environ.get("CROUPIER_KAFKA_BOOTSTRAP")
        resets: list[str] = []
        if given:
            bootstrap = given
            say(self.out, f"using the broker at {bootstrap} (KAFKA_BOOTSTRAP)")
        else:
            try:
                broker = start_broker(self.env, self.logs, self.out)
                bootstrap, self.broker_started = broker.bootstrap, broker.started
                self.clients = broker.clients or self.clients
                if broker.wiped:
                    resets.append(
                        "wiped the local broker, formatted in the other security mode "
                        "(KAFKA_SECURITY)"
                    )
            except RuntimeError as error:
                self.broker_started = bool(error.args[1:] and error.args[1])
                say(self.out, f"{error.args[0]}")
                return 1
        self.env["KAFKA_BOOTSTRAP"] = bootstrap
        if self.clients is not None:
            say(self.out, f"secured broker: each process runs as its role ({self.clients}/*.env)")
        settings = self.settings_of("admin", bootstrap)
        if self.stopper.asked:
            return 0
        say(self.out, f"topics: {', '.join(settings.inputs + settings.outputs)}")
        report = io.StringIO()
        try:
            problems = ensure(settings, report)
        except Exception as error:
            say(self.out, f"cannot reach Kafka at {bootstrap} ({error}); is the broker up?")
            return 1
        if problems:
            say(self.out, "; ".join(problems))
            return 1
        if not self._readside_follows(bootstrap, resets):
            return 1
        if resets:
            say(self.out, f"starting clean: {'; '.join(resets)}")
        return self._supervise(settings)

    def _readside_follows(self, bootstrap: str, resets: list[str]) -> bool:
        """Whether the read side's database follows these topics. One that has projected past
        their ends (they were recreated: a wiped broker) is this run's own SQLite file, moved
        aside (said in `resets`), or a database the user named (DATABASE_URL), which is left
        alone: False, with a line that says what to do."""
        from kafka.errors import KafkaError  # type: ignore[import-untyped]
        from sqlalchemy.exc import DBAPIError

        from services.history.recreated import check
        from services.history.settings import ApiSettings
        from services.history.store import DEFAULT_SQLITE, Store, connect, database_url

        given = ApiSettings().database_url
        own = Path(DEFAULT_SQLITE)
        if not given and not own.exists():
            return True
        engine = connect(database_url(given))
        try:
            found = check(self.settings_of("readside", bootstrap), Store(engine))
        except (DBAPIError, KafkaError, OSError):
            return True  # not known here: the API says what it finds, and waits for it
        finally:
            engine.dispose()
        if found is None:
            return True
        if given:
            say(self.out, f"{found}")
            return False
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        aside = own.with_name(f"{own.stem}-{stamp}{own.suffix}")
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{own}{suffix}")
            if part.exists():
                part.rename(Path(f"{aside}{suffix}"))
        resets.append(f"moved the read side's {own}, ahead of the recreated topics, to {aside}")
        return True

    def _supervise(self, settings: Settings) -> int:
        from services.view.feed import Feed, Health
        from services.view.state import Dashboard

        self.bootstrap = settings.kafka_bootstrap
        python = [sys.executable, "-m", "services.cli"]
        ports: dict[str, int] = {}
        for n in range(self.args.workers):
            name = f"worker-{n}"
            ports[name] = free_port()
            self.children.append(
                spawn(
                    name,
                    [*python, "worker", "--web-port", str(ports[name])],
                    self.logs,
                    self.env_of("croupier"),
                )
            )
        api_port = _port_or_free(8080)
        access = self._api_access(api_port)
        self.children.append(
            spawn(
                "api", [*python, "api", "--port", str(api_port)], self.logs, self.env_of("readside")
            )
        )
        board = Dashboard()
        feed = Feed(self.settings_of("auditor", settings.kafka_bootstrap))
        seed = self.args.seed if self.args.seed is not None else secrets.randbelow(2**31)
        start = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        simulate = [
            *python,
            "simulate",
            f"--tables={self.args.tables}",
            f"--players={self.args.players}",
            f"--speed={self.args.speed}",
            f"--seed={seed}",
            f"--start={start}",
        ]
        self.children.append(spawn("simulator", simulate, self.logs, self.env_of("game")))
        for child in self.children:
            say(self.out, f"started {child.name} ({child.state()}), log {child.log}")
        from services.simulation.simulator import table_ids

        first_table = table_ids(self.args.tables)[0][0]
        say(self.out, f"statistics board: http://127.0.0.1:{api_port}/tables/{first_table}")
        say(self.out, f"read-side API: http://127.0.0.1:{api_port}/openapi.json (see docs/API.md)")
        for line in access:
            say(self.out, line)
        health = Health(board, ports)
        health.start()
        try:
            return self._watch(board, feed, health)
        finally:
            health.stop()
            feed.close()

    def _api_access(self, api_port: int) -> list[str]:
        """Unless the environment says how the API checks tokens (CROUPIER_API_AUTH or a JWKS),
        a local issuer: its Ed25519 key and JWKS under .data/auth (made once), the API pointed
        at that JWKS, and a 30-day token of both scopes in .data/auth/token; what to say."""
        from services.history.issuer import LOCAL_DIR, claims, local, mint
        from services.security.local import write_private

        told = [f"CROUPIER_API_{name}" for name in ("AUTH", "JWKS_FILE", "JWKS_URL")]
        if any(os.environ.get(name) for name in told):
            return [f"read-side API access as configured ({', '.join(told)})"]
        issuer = local(LOCAL_DIR)
        self.env["CROUPIER_API_JWKS_FILE"] = str(issuer.jwks_file.resolve())
        body = claims(
            scopes=["history:read", "report:read"],
            audience="croupier",
            subject="make-run",
            now=int(time.time()),
            lifetime=30 * 86400,
        )
        token = issuer.key_file.with_name("token")
        write_private(token, (mint(issuer.key, body) + "\n").encode())
        return [
            f"API token (history:read report:read, 30 days, key {issuer.key_file}): "
            f"{token.read_text().strip()}",
            f'try: curl -H "Authorization: Bearer $(cat {token})" '
            f"http://127.0.0.1:{api_port}/players/P00001/bets",
        ]

    def _watch(self, board: Dashboard, feed: Feed, health: Health) -> int:
        from services.view.live import watch

        return watch(self, board, feed)

    def _shutdown(self) -> None:
        simulator = [c for c in self.children if c.name == "simulator"]
        api = [c for c in self.children if c.name == "api"]
        workers = [c for c in self.children if c.name not in ("simulator", "api")]
        if simulator:
            stop(simulator, self.stopper, 20.0, self.out)
        if api:
            stop(api, self.stopper, 20.0, self.out)
        if workers:
            stop(workers, self.stopper, 40.0, self.out)
        if self.broker_started:
            stop_broker(self.env, self.logs, self.out)

    def failed(self) -> Child | None:
        """A child that exited although nobody asked it to."""
        return next((c for c in self.children if c.process.poll() is not None), None)

    def states(self) -> dict[str, str]:
        return {c.name: c.state() for c in self.children}

    def over(self, elapsed: float) -> bool:
        """Whether --duration has run out."""
        duration: float | None = self.args.duration
        return duration is not None and elapsed >= duration
