"""The `croupier` command: a thin shell over the services."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import sys
from typing import Any


def parser() -> argparse.ArgumentParser:
    """The command line, one sub-command per job: the auditor's, the feeds', the operator's."""
    from services.commands import auditors, feeds, operations

    top = argparse.ArgumentParser(prog="croupier", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    auditors.add(commands)
    feeds.add(commands)
    operations.add(commands)
    return top


def _fault_stacks() -> None:
    """A crash in a C extension (librdkafka's clients) logs every thread's Python stack to
    stderr; not when stderr is no file (the command called in-process, its output captured)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        if not faulthandler.is_enabled():
            faulthandler.enable()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `croupier` command; a refusal of the brokers, security settings that
    cannot work, or a setting that is not valid end it with code 2 and one line of what to do."""
    args = parser().parse_args(argv)
    _fault_stacks()
    try:
        code: int = args.run(args)
    except Exception as error:
        return _failed(args.command, error)
    return code


def _failed(command: str, error: Exception) -> int:
    """The exit code and one line for an error a command ends with, or the error raised again.
    What it is told apart from is loaded only then, so that a command starts with what it uses."""
    from pydantic import ValidationError

    from services.ports import PortTaken
    from services.security.clients import SecurityConfigError
    from services.security.denied import AccessDenied

    match error:
        case AccessDenied() | SecurityConfigError():
            print(f"croupier {command}: {error}", file=sys.stderr)
            return 2
        case ValidationError():
            print(f"croupier {command}: {invalid_settings(error)}", file=sys.stderr)
            return 2
        case PortTaken():
            print(f"croupier {command}: {error}", file=sys.stderr)
            return 1
        case FileNotFoundError() | IsADirectoryError() | NotADirectoryError() | PermissionError():
            what = f"cannot open {error.filename}: {error.strerror}"
            print(f"croupier {command}: {what}", file=sys.stderr)
            return 1
    raise error


def invalid_settings(error: Any) -> str:
    """One line naming each environment variable whose value a settings class refused, and why."""
    from services.history.settings import ApiSettings, AuthSettings
    from services.settings import Settings

    kinds = (Settings, ApiSettings, AuthSettings)
    kind = {kind.__name__: kind for kind in kinds}.get(error.title)

    def variable(loc: tuple[Any, ...]) -> str:
        """A field's environment variable: the class's prefix and its name, or the alias that
        was set (pydantic reports a field read through an alias by that alias)."""
        name = "_".join(str(part) for part in loc)
        if kind is None or name not in kind.model_fields:
            return name
        return f"{kind.model_config.get('env_prefix', '')}{name.upper()}"

    found = [
        f"{variable(problem['loc'])}={problem.get('input')!r}: {problem['msg']}"
        if problem["loc"]
        else str(problem["msg"]).removeprefix("Value error, ")  # of the settings as a whole
        for problem in error.errors()
    ]
    return (
        f"invalid settings: {'; '.join(found)}. Correct or unset them "
        "(docs/reference/settings.md lists every setting)"
    )


if __name__ == "__main__":
    sys.exit(main())
