"""The read side's front page: every table with its game and last result, linking to its board."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any, Final

from services.history.models import StatRoundOut, TableOut

_PAGE: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>croupier: tables</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; background: #10241b; color: #f3efe0; }}
a {{ color: #f5c542; }}
table {{ border-collapse: collapse; }}
th, td {{ padding: .4rem 1rem; border-bottom: 1px solid #2e4a3c; text-align: left; }}
</style>
</head>
<body>
<h1>Tables</h1>
{body}
<p>JSON: <a href="/tables">/tables</a> · API: <a href="/openapi.json">/openapi.json</a> ·
<a href="/health">/health</a> · <a href="/metrics">/metrics</a></p>
</body>
</html>
"""


def _result(last: StatRoundOut | None) -> str:
    if not last:
        return "no result yet"
    outcome: list[Any] = last.dice or last.discs or []
    return f"{html.escape(last.round_id)}: {html.escape(' '.join(map(str, outcome)))}"


def index_page(tables: Sequence[TableOut]) -> str:
    """The HTML of the front page (every value escaped)."""
    if not tables:
        body = "<p>No table has been read yet: start the workers and the projector.</p>"
    else:
        rows = "\n".join(
            f'<tr><td><a href="{html.escape(t.board)}">{html.escape(t.table_id)}</a></td>'
            f"<td>{html.escape(t.game or '')}</td><td>{_result(t.last_result)}</td></tr>"
            for t in tables
        )
        body = (
            "<table><thead><tr><th>table</th><th>game</th><th>last result</th></tr></thead>"
            f"<tbody>\n{rows}\n</tbody></table>"
        )
    return _PAGE.format(body=body)
