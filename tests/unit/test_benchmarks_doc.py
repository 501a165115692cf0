"""docs/BENCHMARKS.md's current figures are what the committed result files say
(benchmarks/results/*.json): a new result without `make benchmarks-doc`, or a figure edited by
hand, fails here; and the generator prints each figure with its baseline, ratio and target."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from tests.bench.report import BEGIN, DOCUMENT, END, generated_part, main, render, replaced
from tests.bench.results import RESULTS, Machine, Result, Run, figure, git, load, load_all, write


def test_the_committed_figures_are_what_the_generator_makes_of_the_committed_results() -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    assert generated_part(text) == render(load_all(RESULTS)), (
        f"{DOCUMENT}'s current figures differ from benchmarks/results/: run "
        "`make benchmarks-doc` and commit both"
    )


def test_every_committed_result_file_reads_as_a_result_of_its_own_name() -> None:
    paths = sorted(RESULTS.glob("*.json"))
    assert paths, "no result files under benchmarks/results/"
    for path in paths:
        assert load(path).bench == path.stem


def _result(bench: str = "bench-kafka", source: str = "run") -> Result:
    return Result(
        bench=bench,
        command="python -m tests.bench.kafka",
        started="2026-12-05T03:00:00Z",
        finished="2026-12-05T03:07:30Z",
        commit="0123456789abcdef0123456789abcdef01234567",
        dirty=False,
        machine=Machine(
            cores=2,
            model="AMD EPYC",
            memory_mib=24576,
            load_start=(0.5, 1.0, 1.5),
            load_end=(2.0, 1.5, 1.25),
        ),
        figures=(
            figure(
                "worker_vs_librdkafka",
                "croupier worker, events decided/s",
                12_000,
                "events/s",
                baseline=("librdkafka transactional copy loop", 20_000),
                target=("ratio", "at least", 0.8),
            ),
            figure("settled_bets", "croupier, settled bets/s", 9_876.5, "bets/s"),
            figure(
                "round_read_p99",
                "last settlement read, p99",
                164.4,
                "ms",
                target=("value", "at most", 100.0),
            ),
            figure("takeover", "takeover", 1.5, "s", baseline=("the code before", 3.0)),
        ),
        notes=("a note",),
        source=source,
    )


def test_a_figure_is_printed_with_its_baseline_ratio_and_judged_target() -> None:
    text = render([_result()])
    assert (
        "| croupier worker, events decided/s | 12,000 events/s | 20,000 (librdkafka transactional"
        " copy loop) | 0.60 | ratio at least 0.80 (**missed**) |" in text
    )
    assert "| croupier, settled bets/s | 9,876 bets/s |  |  |  |" in text
    assert (
        "| last settlement read, p99 | 164 ms |  |  | value at most 100 ms (**missed**) |" in text
    )


def test_a_time_below_its_baseline_is_a_ratio_above_one() -> None:
    assert "| takeover | 1.50 s | 3.00 (the code before) | 2.00 |  |" in render([_result()])


def test_the_run_says_its_date_commit_command_machine_and_load() -> None:
    text = " ".join(render([_result()]).split())  # its lines wrapped
    assert (
        "Run ending 2026-12-05 03:07:30 UTC, commit `0123456789`; `python -m tests.bench.kafka`. "
        "Machine: 2 cores (AMD EPYC), 24.0 GiB; load average (1, 5, 15 min) 0.50 1.00 1.50 at "
        "the start, 2.00 1.50 1.25 at the end." in text
    )
    assert "- a note" in text
    assert "Not a fresh run" not in text


def test_a_transcribed_result_says_so_above_its_table_and_in_the_targets() -> None:
    text = render([_result(source="transcribed from docs/BENCHMARKS.md, run of 2026-12-01")])
    assert "**Not a fresh run: transcribed from docs/BENCHMARKS.md, run of 2026-12-01.**" in text
    assert "| 2026-12-05 (transcribed) |" in text


def test_the_targets_table_holds_the_figures_with_targets_only() -> None:
    targets = render([_result()]).split("### ")[0]
    assert "events decided/s" in targets and "p99" in targets
    assert "settled bets/s" not in targets


def test_the_benchmarks_come_in_the_documents_order() -> None:
    text = render([_result("bench-ab"), _result("zzz"), _result("bench")])
    found = [text.index(f"### Current: `make {name}`") for name in ("bench", "bench-ab", "zzz")]
    assert found == sorted(found)


def test_only_the_part_between_the_markers_is_replaced() -> None:
    text = f"# Title\n\nbefore\n\n{BEGIN}\nold figures\n{END}\n\nafter\n"
    new = replaced(text, [_result()])
    assert new.startswith("# Title\n\nbefore\n\n") and new.endswith("\n\nafter\n")
    assert "old figures" not in new and "12,000 events/s" in new
    with pytest.raises(ValueError):
        generated_part("no markers")


def test_a_result_file_round_trips_and_refuses_unknown_fields(tmp_path: Path) -> None:
    path = write(_result(), tmp_path)
    assert path.name == "bench-kafka.json"
    assert load(path) == _result()
    path.write_bytes(path.read_bytes().replace(b'"dirty"', b'"extra":1,"dirty"'))
    with pytest.raises(msgspec.ValidationError):
        load(path)


def test_check_fails_on_a_stale_document_and_passes_once_written(tmp_path: Path) -> None:
    document = tmp_path / "BENCHMARKS.md"
    document.write_text(f"{BEGIN}\nstale\n{END}\n", encoding="utf-8")
    assert main(["--check"], document) == 1
    assert main([], document) == 0
    assert main(["--check"], document) == 0
    assert main(["--what"], document) == 2


def test_a_result_without_its_load_recorded_says_so() -> None:
    r = _result(source="transcribed")
    r = msgspec.structs.replace(
        r, machine=msgspec.structs.replace(r.machine, load_start=None, load_end=None)
    )
    text = " ".join(render([r]).split())
    assert "load average (1, 5, 15 min) not recorded at the start, not recorded at the end" in text


def test_a_run_saves_its_figures_with_this_machine_commit_and_command(tmp_path: Path) -> None:
    run = Run("bench-test")
    path = run.save([figure("x", "a figure", 1.23456, "s")], ["a note"], tmp_path)
    saved = load(path)
    assert path == tmp_path / "bench-test.json"
    assert saved.figures == (figure("x", "a figure", 1.2346, "s"),)
    assert saved.notes == ("a note",) and saved.source == "run"
    assert saved.commit == git("rev-parse", "HEAD") and len(saved.commit) == 40
    assert saved.machine.cores >= 1 and saved.machine.memory_mib > 0
    assert saved.machine.load_start is not None and len(saved.machine.load_start) == 3
    assert saved.started <= saved.finished
