"""`croupier acls`: the shell of services.security.acls."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from services.security.acls import apply, bindings
from services.security.denied import AccessDenied, explain
from services.settings import Settings


def acls(args: argparse.Namespace) -> int:
    settings = Settings()
    if args.list:
        for binding in bindings(settings):
            print(binding)
        return 0
    passwords = Path(args.passwords) if args.passwords else None
    try:
        apply(settings, passwords, rotate=args.rotate)
    except Exception as error:
        denied = (
            error
            if isinstance(error, AccessDenied)
            else explain(
                error,
                settings,
                doing="manage users and ACLs",
                resource="cluster kafka-cluster",
                operation="Alter (an admin principal: one of the brokers' super.users)",
            )
        )
        if denied is None:
            raise
        print(f"croupier acls: {denied}", file=sys.stderr)
        return 2
    return 0
