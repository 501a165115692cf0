"""`croupier integrity --html FILE`: a row and a chart per test, worked by hand, and the same bytes
for the same inputs, in any process."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from scipy.stats import chi2  # type: ignore[import-untyped]

from services.settlement.fold import DEFAULT_HORIZON
from services.statistics.command import examined
from services.statistics.integrity import DEFAULT, REDS, TOTALS, CountedRound, examine
from services.statistics.page import page
from tests.unit.test_integrity import sicbo, xocdia

ROOT = Path(__file__).resolve().parents[2]


class Parsed(HTMLParser):
    """The page's title, its rows' cells, and each figure's bars and fair marks."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.title = ""
        self.rows: list[list[str]] = []
        self.bars: dict[str, list[str]] = {}
        self.fair: dict[str, int] = {}
        self._in: list[str] = []
        self._figure = ""
        self._fair_at = -1
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        self._in.append(tag)
        if tag == "tr" and "data-scope" in named:
            self.rows.append([])
        elif tag == "figure":
            self._figure = str(named["id"])
            self.bars[self._figure] = []
        elif tag == "g" and self._figure:
            gid = str(named.get("id", ""))
            if gid.startswith(f"{self._figure}-bar-"):
                self.bars[self._figure].append(gid.removeprefix(f"{self._figure}-bar-"))
            elif gid == f"{self._figure}-fair":
                self.fair[self._figure] = 0
                self._fair_at = len(self._in)
        elif tag == "path" and len(self._in) == self._fair_at + 1:
            self.fair[self._figure] += 1

    def handle_endtag(self, tag: str) -> None:
        if len(self._in) == self._fair_at:
            self._fair_at = -1
        self._in.pop()
        if tag == "figure":
            self._figure = ""

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self._in[-1:] == ["title"] and not self._figure:
            self.title += data
        elif self._in[-1:] == ["td"] or self._in[-2:] == ["td", "a"]:
            self.rows[-1].append(data)


def floor() -> list[CountedRound]:
    """102 Sic Bo rounds, (1, 2, 3) and (4, 5, 6) in turn: 51 of each face, the fair count (chi2
    0), but totals 6 and 15 only (an alarm); 10 Xoc Dia rounds of 2 reds (too few)."""
    dice = [sicbo(n, (1, 2, 3) if n % 2 else (4, 5, 6), dealer_id="<D&1$x$>") for n in range(102)]
    return dice + [xocdia(n, 2) for n in range(10)]


def test_the_page_has_a_row_and_a_chart_per_test_with_a_bar_per_class() -> None:
    text = page(examine(floor()), window=2000, thresholds=DEFAULT)
    parsed = Parsed(text)
    assert parsed.title == "Outcome integrity"
    # Totals: 51 rounds of 6 and 51 of 15, each expected 102 * 10/216: chi2 = 2 * 51^2 * 216 /
    # 1020 - 102 = 999.6. Reds: 10 rounds of 2 reds, expected 10 * 6/16: 100 / 3.75 - 10 = 50/3.
    totals = ["102", "999.60", "11", f"{chi2.sf(999.6, 11):.3g}", "alarm"]
    reds = ["10", "16.67", "4", f"{chi2.sf(50 / 3, 4):.3g}", "too_few"]
    assert parsed.rows == [
        ["dealer", "<D&1$x$>", "sicbo", "faces", "102", "0.00", "5", "1", "ok"],
        ["dealer", "<D&1$x$>", "sicbo", "totals", *totals],
        ["table", "SB-1", "sicbo", "faces", "102", "0.00", "5", "1", "ok"],
        ["table", "SB-1", "sicbo", "totals", *totals],
        ["table", "XD-1", "xocdia", "reds", *reds],
    ]
    assert '<p id="summary">5 tests: 2 alarm, 2 ok, 1 too_few.</p>' in text
    faces = [str(face) for face in range(1, 7)]
    totals = ["3-5", *(str(t) for t in range(6, 16)), "16-18"]
    reds = ["0", "1", "2", "3", "4"]
    assert parsed.bars == {
        "chart-1": faces,
        "chart-2": totals,
        "chart-3": faces,
        "chart-4": totals,
        "chart-5": reds,
    }
    assert parsed.fair == {"chart-1": 6, "chart-2": 12, "chart-3": 6, "chart-4": 12, "chart-5": 5}
    assert "&lt;D&amp;1$x$&gt;" in text and "<D&1" not in text  # the id as text, in the chart too


def rounds_file(path: Path, outcomes: dict[str, list[list[int] | list[str]]]) -> Path:
    """Each table's rounds, opened, closed and with its result, as a table's service sends them."""
    lines = []
    for table_id, results in outcomes.items():
        game = "xocdia" if isinstance(results[0][0], str) else "sicbo"
        for n, result in enumerate(results):
            at = f"2026-12-01T20:{n // 60:02d}:{n % 60:02d}Z"
            base = {"v": 1, "table_id": table_id, "round_id": f"R{n}", "at": at}
            outcome = {"discs": result} if game == "xocdia" else {"dice": result}
            for k, body in enumerate(
                [
                    {"type": "round.opened", "game": game},
                    {"type": "round.betting_closed", "last_seq": 0},
                    {"type": "round.result", **outcome},
                ]
            ):
                lines.append(json.dumps(base | body | {"event_id": f"{table_id}-{n}-{k}"}))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_same_inputs_give_the_same_bytes_in_another_process(tmp_path: Path) -> None:
    path = rounds_file(
        tmp_path / "floor.jsonl",
        {
            "SB-1": [[n % 6 + 1, (n * 5) % 6 + 1, 6] for n in range(120)],
            "XD-1": [["red"] * (n % 5) + ["white"] * (4 - n % 5) for n in range(110)],
        },
    )
    mine = examined(path.read_bytes().splitlines(), horizon=DEFAULT_HORIZON)
    expected = page(mine, window=2000, thresholds=DEFAULT)
    assert page(mine, window=2000, thresholds=DEFAULT) == expected
    written = tmp_path / "integrity.html"
    subprocess.run(
        [sys.executable, "-m", "services.cli", "integrity", str(path), "--html", str(written)],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    assert written.read_bytes() == expected.encode()
    parsed = Parsed(expected)
    assert [row[:4] for row in parsed.rows] == [
        ["table", "SB-1", "sicbo", "faces"],
        ["table", "SB-1", "sicbo", "totals"],
        ["table", "XD-1", "xocdia", "reds"],
    ]
    assert [row[4] for row in parsed.rows] == ["120", "120", "110"]
    assert list(parsed.bars.values()) == [
        [str(f) for f in range(1, 7)],
        list(TOTALS.labels),
        list(REDS.labels),
    ]


def test_a_page_that_cannot_be_written_is_an_error_and_no_finding_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "floor.jsonl"
    path.write_bytes(b"")
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "integrity", str(path), "--html", str(tmp_path)],
        capture_output=True,
        cwd=ROOT,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == f"croupier integrity: --html {tmp_path}: Is a directory\n"


def test_only_the_page_imports_matplotlib_so_no_worker_pays_for_it() -> None:
    probe = (
        "import sys\n"
        "import services.cli\n"
        "from services.settlement import worker\n"
        "from services.history import api, service\n"
        "from services.statistics import command, page\n"
        "services.cli.parser()\n"
        "print('matplotlib' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, cwd=ROOT, text=True, check=True
    )
    assert done.stdout == "False\n"
