"""`croupier integrity --html FILE`: the integrity tests as one HTML page an auditor can keep and
open anywhere: the figures of every test (a row each, as the text lines show them), then each
test's chart, inline SVG (no script, no file beside it, nothing fetched).

The same inputs give the same bytes: no clock, no path, no randomness reaches the page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape
from typing import Final

from services.statistics.charts import chart
from services.statistics.integrity import MIN_ROUNDS, Examined, Finding, Thresholds

TITLE: Final = "Outcome integrity"
HEAD: Final = ("Scope", "Id", "Game", "Test", "Rounds", "Chi-square", "df", "p-value", "Verdict")
NUMBERS: Final = frozenset({"Rounds", "Chi-square", "df", "p-value"})
STYLE: Final = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 70rem; color: #222; }
h1 { font-size: 1.5rem; margin: 0 0 .3rem; } h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #ddd; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.alarm td { background: #fde2e2; } tr.watch td { background: #fff1d6; }
.verdict { font-weight: 600; } tr.alarm .verdict, tr.watch .verdict { text-transform: uppercase; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(21rem, 1fr)); gap: 1rem; }
figure { margin: 0; } figure svg { width: 100%; height: auto; }
figcaption { font-size: .85rem; color: #555; }
""".strip()


def page(examined: Sequence[Examined], *, window: int, thresholds: Thresholds) -> str:
    """The whole page, in the findings' order (scope, id, test, then game)."""
    verdicts = Counter(e.finding.verdict for e in examined)
    summary = ", ".join(
        f"{verdicts[v]} {v}" for v in ("alarm", "watch", "ok", "too_few") if verdicts[v]
    )
    parts = [
        "<!doctype html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>{TITLE}</title>",
        f"<style>\n{STYLE}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{TITLE}</h1>",
        f"<p id=\"terms\">Each table's, dealer's and shaker's last {window} counted rounds of "
        "each game against the fair distribution (Pearson's chi-square): faces and totals of the "
        f"dice, red discs. Verdict too_few under {MIN_ROUNDS} rounds, alarm when p &lt; "
        f"{thresholds.alarm:g}, watch when p &lt; {thresholds.watch:g}, else ok.</p>",
        f'<p id="summary">{len(examined)} tests: {summary or "no round with a result"}.</p>',
        '<h2>Figures</h2>\n<table id="findings">',
        "<thead><tr>" + "".join(_heading(h) for h in HEAD) + "</tr></thead>",
        "<tbody>",
        *(row(e.finding, f"chart-{n}") for n, e in enumerate(examined, 1)),
        "</tbody>\n</table>",
        "<h2>Counts against the fair counts</h2>\n<p>Bars: each class's count over the window; "
        "dashed: its fair count. Bars red for an alarm, orange for a watch.</p>",
        '<div class="charts">',
        *(figure(e, f"chart-{n}") for n, e in enumerate(examined, 1)),
        "</div>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def row(f: Finding, anchor: str) -> str:
    """A finding's row, figures as the text lines show them, linking to its chart."""
    cells = [
        (f.scope, ""),
        (f'<a href="#{anchor}">{escape(f.id)}</a>', ""),
        (escape(f.game), ""),
        (f.test, ""),
        (str(f.rounds), "n"),
        (f"{f.statistic:.2f}", "n"),
        (str(f.df), "n"),
        (f"{f.p_value:.3g}", "n"),
        (f.verdict, "verdict"),
    ]
    keys = f'data-scope="{f.scope}" data-id="{escape(f.id)}" data-test="{f.test}"'
    return (
        f'<tr class="{f.verdict}" {keys}>'
        + "".join(
            f'<td class="{cls}">{text}</td>' if cls else f"<td>{text}</td>" for text, cls in cells
        )
        + "</tr>"
    )


def figure(e: Examined, anchor: str) -> str:
    """A test's chart with its caption."""
    f, d = e.finding, e.distribution
    counted = (
        f"{sum(d.counts)} dice of {f.rounds} rounds" if f.test == "faces" else f"{f.rounds} rounds"
    )
    caption = (
        f"{f.scope} {escape(f.id)}, {escape(f.game)}, {f.test}: {counted}; chi-square "
        f"{f.statistic:.2f}, df {f.df}, p {f.p_value:.3g}: {f.verdict}"
    )
    return (
        f'<figure id="{anchor}" data-test="{f.test}">\n{chart(e, anchor)}'
        f"<figcaption>{caption}</figcaption>\n</figure>"
    )


def _heading(name: str) -> str:
    return f'<th class="n">{name}</th>' if name in NUMBERS else f"<th>{name}</th>"
