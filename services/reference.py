"""The references under docs/reference/, generated from the code: every setting, every command
and flag, every metric.

`python -m services.reference docs/reference` (`make reference`) writes them; a unit test fails
when a committed copy differs from what this writes now.
"""

from __future__ import annotations

import argparse
import re
import sys
import types
import typing
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from services.metric import Family

GENERATED: Final = (
    "<!-- Generated from the code by `make reference` (python -m services.reference\n"
    "docs/reference): do not edit by hand. -->"
)
WIDTH: Final = 100
"""Characters a line of prose may take (a word longer than that has a line of its own)."""
BLOCK_START: Final = re.compile(r"([-+*]|[-=]+|\d{1,9}[.)]|#{1,6}|>.*|\|.*|<.*|`{3,}.*|~{3,}.*)$")
"""A word that, first on a line, would start a block (a list, a heading, a quote, a table, code)
instead of going on with the paragraph."""


def _text(text: object) -> str:
    """Prose as markdown shows it: one paragraph, a `<name>` outside code kept (not read as an
    HTML tag)."""
    parts = " ".join(str(text).split()).split("`")
    return "`".join(p if n % 2 else p.replace("<", "&lt;") for n, p in enumerate(parts))


def paragraph(text: object) -> str:
    """`_text` wrapped at WIDTH; a line never starts with a word that would start a block."""
    lines: list[list[str]] = [[]]
    for word in _text(text).split(" "):
        line = lines[-1]
        if line and len(" ".join(line)) + 1 + len(word) > WIDTH:
            moved = [word]
            while len(line) > 1 and BLOCK_START.match(moved[0]):
                moved.insert(0, line.pop())
            lines.append(moved)
        else:
            line.append(word)
    return "\n".join(" ".join(line) for line in lines)


def _cell(text: object) -> str:
    """Text fit for one cell of a markdown table."""
    return _text(text).replace("|", "\\|")


def _table(header: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in rows]
    return lines


# Settings.


def _settings_classes() -> list[tuple[type[BaseSettings], str]]:
    from services.history.settings import ApiSettings, AuthSettings
    from services.settings import Settings

    return [
        (
            Settings,
            "every command that talks to Kafka (the read side's too); `croupier replay`, "
            "`report` and `keys new` read `CROUPIER_TABLE_KEYS_FILE` from it",
        ),
        (ApiSettings, "`croupier api` and `croupier projector`"),
        (AuthSettings, "`croupier api`"),
    ]


def variables(kind: type[BaseSettings], name: str, field: FieldInfo) -> list[str]:
    """The environment variables that set a field: its aliases, else the class's prefix and
    its name."""
    if isinstance(field.validation_alias, AliasChoices):
        return [str(choice) for choice in field.validation_alias.choices]
    return [f"{kind.model_config.get('env_prefix', '')}{name.upper()}"]


def _type(annotation: Any) -> str:
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(f"`{value}`" for value in typing.get_args(annotation))
    if isinstance(annotation, types.UnionType):
        given = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return " or ".join(map(_type, given))
    name = str(annotation.__name__)
    return {"SecretStr": "secret str"}.get(name, name)


def _bounds(field: FieldInfo) -> str:
    names = {"ge": "min", "le": "max", "gt": "above", "lt": "below", "min_length": "min length"}
    return ", ".join(
        f"{sign} {getattr(rule, name)}"
        for rule in field.metadata
        for name, sign in names.items()
        if hasattr(rule, name)
    )


def _default(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def settings() -> str:
    lines = [
        "# Settings reference",
        "",
        GENERATED,
        "",
        "Every setting croupier reads from the environment, class by class (pydantic settings; a",
        "value that is not valid stops the command with exit code 2 naming the variable). A",
        "boolean takes `true`/`false`, `1`/`0`, `on`/`off` or `yes`/`no`.",
    ]
    for kind, used_by in _settings_classes():
        lines += [
            "",
            f"## {kind.__name__}",
            "",
            paragraph(f"{kind.__doc__ or ''} Read by {used_by}."),
        ]
        lines += [""]
        rows = []
        for name, field in kind.model_fields.items():
            names = ", ".join(f"`{variable}`" for variable in variables(kind, name, field))
            rule = ", ".join(filter(None, [_type(field.annotation), _bounds(field)]))
            rows.append((names, _default(field.default), rule, field.description or ""))
        lines += _table(("variable", "default", "type", "meaning"), rows)
    return "\n".join(lines) + "\n"


# The command line.


def _commands(
    parser: argparse.ArgumentParser, path: str
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """Each command under `parser`, depth first: its full name, its help, its parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{path} {name}", helps.get(name, ""), sub
                yield from _commands(sub, f"{path} {name}")


def _argument(action: argparse.Action) -> tuple[str, str, str]:
    """An argument's name (flags, or its metavar), its default and its help."""
    metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    if action.option_strings:
        takes = action.nargs != 0
        name = ", ".join(
            f"`{flag}{f' {metavar}' if takes else ''}`" for flag in action.option_strings
        )
    else:
        name = f"`{metavar}`" + (" ..." if action.nargs in ("+", "*") else "")
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        name += " (" + ", ".join(f"`{choice}`" for choice in action.choices) + ")"
    unset = action.default is None or action.default is False or action.default == []
    shown = not unset and action.default != argparse.SUPPRESS and action.nargs != 0
    return name, f"`{action.default}`" if shown else "", str(action.help or "")


def _wide(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=100)


def cli() -> str:
    from services.cli import parser

    top = parser()
    lines = [
        "# Command line reference",
        "",
        GENERATED,
        "",
        paragraph(f"`croupier COMMAND ...`: {top.description}"),
        "",
    ]
    for name, help_, sub in _commands(top, "croupier"):
        lines += [f"## `{name}`", "", paragraph(help_), ""]
        if sub.description:
            lines += [paragraph(sub.description), ""]
        sub.formatter_class = _wide  # the same usage lines in any terminal
        lines += ["```", sub.format_usage().strip(), "```", ""]
        arguments = [
            _argument(action)
            for action in sub._actions
            if action.help != argparse.SUPPRESS
            and not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
        ]
        if arguments:
            lines += [*_table(("argument", "default", "meaning"), arguments), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# Metrics.


def _processes() -> list[tuple[str, str, tuple[Family, ...]]]:
    from services.history import tally
    from services.settlement import metrics

    return [
        (
            "Worker (`croupier worker`)",
            "Served at `/metrics` on `CROUPIER_WEB_HOST`:`CROUPIER_WEB_PORT`, values of this "
            "worker process alone (sum them over workers).",
            metrics.FAMILIES,
        ),
        (
            "Read side (`croupier api`)",
            "Served at `/metrics` of the API. The projector's counters live in the database, "
            "moved in each batch's transaction: every API process over one database shows the "
            "same values (take `max` over replicas, not `sum`). `croupier_read_lag_messages` is "
            "absent while the positions are not known; the histogram's buckets are "
            + ", ".join(f"{ms / 1000:g}" for ms in tally.LATENCY_BUCKETS_MS)
            + " seconds and `+Inf`.",
            tally.FAMILIES,
        ),
    ]


def metrics() -> str:
    lines = [
        "# Metrics reference",
        "",
        GENERATED,
        "",
        "Every metric croupier's processes export, in the Prometheus text format (version 0.0.4).",
        "What to alert on and the dashboards: [OPERATIONS.md](../OPERATIONS.md#metrics).",
    ]
    for title, where, families in _processes():
        lines += ["", f"## {title}", "", paragraph(where), ""]
        rows = [
            (f"`{f.name}`", f.kind, ", ".join(f"`{label}`" for label in f.labels), f.help)
            for f in families
        ]
        lines += _table(("metric", "type", "labels", "help"), rows)
    return "\n".join(lines) + "\n"


def render() -> dict[str, str]:
    """Each reference file's name and exact text."""
    return {"settings.md": settings(), "cli.md": cli(), "metrics.md": metrics()}


def main(argv: list[str] | None = None) -> int:
    """`python -m services.reference OUTDIR`."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m services.reference OUTDIR", file=sys.stderr)
        return 2
    outdir = Path(args[0])
    outdir.mkdir(parents=True, exist_ok=True)
    for name, text in render().items():
        (outdir / name).write_text(text, encoding="utf-8", newline="\n")
        print(outdir / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
