"""A Prometheus metric family as declared once: what /metrics renders and the reference lists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

Kind = Literal["counter", "gauge", "histogram"]


class Family(NamedTuple):
    """A metric's name, type, label names and help text."""

    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...] = ()

    def header(self) -> list[str]:
        """The `# HELP` and `# TYPE` lines of the text exposition format."""
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]

    def lines(self, samples: Iterable[tuple[str, str]]) -> list[str]:
        """The header, then one line per sample of (rendered labels, value)."""
        return [*self.header(), *(f"{self.name}{labels} {value}" for labels, value in samples)]
