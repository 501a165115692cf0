"""`croupier publish FILE...`: JSON Lines of round and bet events to Kafka, validated first."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from typing import BinaryIO, TextIO

from services.publisher.message import InvalidEvent
from services.publisher.producer import Publisher, PublishError


def lines(files: list[str]) -> Iterator[tuple[str, int, bytes]]:
    """Each non-blank line of the files ('-' is standard input) with where it came from."""
    for name in files:
        stream: BinaryIO = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115
        try:
            for number, line in enumerate(stream, start=1):
                raw = line.rstrip(b"\r\n")
                if raw.strip():
                    yield ("stdin" if name == "-" else name), number, raw
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def publish(
    publisher: Publisher,
    files: list[str],
    *,
    skip_invalid: bool,
    err: TextIO,
    every: float = 5.0,
) -> int:
    """Send every line; stop at the first invalid one unless told to skip (each is reported)."""
    skipped = 0
    sent = 0
    shown = time.monotonic()
    try:
        for name, number, raw in lines(files):
            try:
                publisher.publish(raw)
            except InvalidEvent as error:
                if not skip_invalid:
                    publisher.flush()
                    print(
                        f"croupier publish: {name}:{number}: {error}; not sent. {sent} events "
                        "before it were sent. Fix the line and publish again (events already "
                        "sent are ignored as redeliveries), or pass --skip-invalid",
                        file=err,
                    )
                    return 1
                skipped += 1
                print(f"croupier publish: {name}:{number}: skipped, {error}", file=err)
                continue
            sent += 1
            if time.monotonic() - shown >= every:
                shown = time.monotonic()
                print(f"croupier publish: {sent} events sent...", file=err)
        publisher.flush()
    except FileNotFoundError as error:
        print(f"croupier publish: no such file: {error.filename}", file=err)
        return 2
    except PublishError as error:
        print(f"croupier publish: {error}", file=err)
        return 1
    counts = publisher.counts
    print(
        f"croupier publish: {sent} events published ({counts['rounds']} to "
        f"{publisher.topics['rounds']}, {counts['bets']} to {publisher.topics['bets']}), "
        f"{skipped} invalid lines skipped, {counts['retried']} re-sent after an unknown outcome",
        file=err,
    )
    return 0


def command(args: argparse.Namespace) -> int:
    """`croupier publish FILE... [--skip-invalid]`."""
    from services.security.denied import reraise
    from services.settings import Settings
    from services.signing.keys import KeyFileError, read_private

    settings = Settings()
    try:
        signers = dict(read_private(path) for path in args.key)
    except KeyFileError as error:
        print(f"croupier publish: --key: {error}", file=sys.stderr)
        return 2
    try:
        publisher = Publisher.from_settings(settings, signers=signers)
    except Exception as error:
        reraise(error, settings, doing="publish", resource="topics", operation="Write")
        print(
            f"croupier publish: cannot reach Kafka at {settings.kafka_bootstrap} ({error}); "
            "start it with `make kafka-up` or set KAFKA_BOOTSTRAP",
            file=sys.stderr,
        )
        return 1
    try:
        return publish(publisher, args.files, skip_invalid=args.skip_invalid, err=sys.stderr)
    finally:
        publisher.producer.close(timeout=10)
