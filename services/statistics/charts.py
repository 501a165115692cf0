"""The integrity tests' charts: each window's counts against the fair counts, drawn by matplotlib
as SVG text, the same bytes for the same figures.

matplotlib is imported on first use (as SciPy is by `chisquare`): only `croupier integrity --html`
pays for it, never a worker. Its SVG backend alone draws, with no display and no global state:
each chart is its own `Figure`, its ids salted by its place on the page, its date left out.
"""

from __future__ import annotations

import io
import re
from typing import Final

from services.statistics.integrity import Examined, Verdict

COLOURS: Final[dict[Verdict, str]] = {
    "alarm": "#c62828",
    "watch": "#ef8f00",
    "ok": "#2f6f9f",
    "too_few": "#9e9e9e",
}
"""Each verdict's bar colour."""
SIZE: Final = (4.2, 2.4)
"""A chart's size, in inches."""
MARGINS: Final = {"left": 0.13, "right": 0.98, "bottom": 0.19, "top": 0.89}
"""The axes' place in the figure, in fractions of it: room for the title and the labels."""


def chart(examined: Examined, salt: str) -> str:
    """One test of one scope as an SVG element: a bar per class, its count over the window, and a
    dashed mark at its fair count. `salt` makes the SVG's ids its own on a page of many."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    found, d = examined.finding, examined.distribution
    places = range(len(d.classes))
    fair = [float(f) for f in d.fair]
    with rc_context({"svg.hashsalt": salt, "svg.fonttype": "none", "font.size": 8}):
        figure = Figure(figsize=SIZE)
        figure.subplots_adjust(**MARGINS)  # fixed: a layout engine would draw each chart twice
        axes = figure.add_subplot()
        bars = axes.bar(places, d.counts, width=0.7, color=COLOURS[found.verdict])
        for name, bar in zip(d.classes, bars, strict=True):
            bar.set_gid(f"bar-{name}")
        axes.hlines(
            fair,
            [p - 0.45 for p in places],
            [p + 0.45 for p in places],
            colors="black",
            linestyles="dashed",
            linewidth=1.2,
            gid="fair",
        )
        axes.set_xticks(list(places), d.classes)
        axes.set_xlabel(_axis(d.test))
        axes.set_ylabel("count")
        axes.set_title(
            f"{found.scope} {found.id} · {found.game} · {found.test}", loc="left", parse_math=False
        )
        axes.spines[["top", "right"]].set_visible(False)
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    return own_ids(text[text.index("<svg") :], salt)  # the element alone: the page is the document


_ID: Final = re.compile(r'(\bid="|url\(#|xlink:href="#)([^"()]+)')


def own_ids(svg: str, prefix: str) -> str:
    """Every id of the SVG, and every reference to one, prefixed: matplotlib numbers its groups
    from 1 in each figure (figure_1, axes_1), and many share a page."""
    return _ID.sub(lambda m: f"{m[1]}{prefix}-{m[2]}", svg)


def _axis(test: str) -> str:
    return {
        "faces": "face (every die)",
        "totals": "total of the three dice",
        "reds": "red discs (every round)",
    }.get(test, test)
