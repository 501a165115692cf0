"""Key files, `croupier keys new`, and the table keys in replay, restore, audit and publisher."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from schemas.events import RoundResult
from schemas.records import Rejected, Settlement
from services.audit.compare import outputs
from services.audit.judge import judge
from services.audit.window import Kept
from services.publisher import InvalidEvent, Table, prepare
from services.settlement import capture, rebuild
from services.settlement.fold import Fold
from services.signing.command import new
from services.signing.keys import (
    KeyFileError,
    add_public_key,
    load,
    parse,
    public_text,
    read_private,
)
from services.signing.signature import Verified, verify
from services.simulation.simulate import write_keys
from services.simulation.simulator import Config, Simulation, table_key
from tests.unit.builders import bet, round_event
from tests.unit.signing import KEY_T1, KEY_T1_NEXT, KEY_T2, decoded, signed_event

ROOT = Path(__file__).resolve().parents[2]
T1 = public_text(KEY_T1.public_key())
T1_NEXT = public_text(KEY_T1_NEXT.public_key())


def keys_file(tmp_path: Path, tables: object) -> Path:
    path = tmp_path / "table-keys.json"
    path.write_text(json.dumps({"v": 1, "tables": tables}))
    return path


# The table keys file.


def test_a_keys_file_gives_each_table_its_keys_in_order() -> None:
    keys = parse(json.dumps({"tables": {"T1": [T1, T1_NEXT], "T2": [T1]}}).encode())
    assert [public_text(k) for k in keys["T1"]] == [T1, T1_NEXT]
    assert [public_text(k) for k in keys["T2"]] == [T1]


def test_no_file_means_no_table_signs() -> None:
    assert load(None) == {}
    assert load("") == {}


def test_a_missing_keys_file_says_which_and_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match=r"nowhere\.json.*cannot be read.*croupier keys new"):
        load(tmp_path / "nowhere.json")


@pytest.mark.parametrize(
    ("tables", "says"),
    [
        ({"T1": []}, r"table 'T1': Expected `array` of length >= 1"),
        ({"T2": [T1], "T1": ["short"]}, r"table 'T1': Expected `str` matching"),
        ({"T1": [T1 + "="]}, r"table 'T1': Expected `str` matching.*\$\[0\]"),
        ({"T1": "not a list"}, r"table 'T1': Expected `array`, got `str`"),
        ({"": [T1]}, r"Expected `str` of length >= 1"),
    ],
)
def test_a_malformed_keys_file_names_the_file_and_the_table(
    tmp_path: Path, tables: object, says: str
) -> None:
    path = keys_file(tmp_path, tables)
    with pytest.raises(KeyFileError, match=f"table-keys.json.*{says}.*croupier keys new"):
        load(path)


def test_a_keys_file_that_is_not_json_or_has_unknown_members_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    path.write_text("{nope")
    with pytest.raises(KeyFileError, match=r"k\.json.*not valid JSON"):
        load(path)
    path.write_text(json.dumps({"tables": {}, "table": {}}))
    with pytest.raises(KeyFileError, match=r"unknown field `table`"):
        load(path)


def test_a_key_listed_twice_for_a_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match=r"table 'T1' lists a key twice"):
        load(keys_file(tmp_path, {"T1": [T1, T1]}))


# croupier keys new


def test_keys_new_writes_a_private_file_only_its_owner_reads_and_adds_the_public_key(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    listing = tmp_path / "table-keys.json"
    assert new("SB-01", out_dir=tmp_path / "keys", keys_file=listing, out=out) == 0
    (private,) = (tmp_path / "keys").iterdir()
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    table, key = read_private(private)
    public = public_text(key.public_key())
    assert table == "SB-01"
    assert private.name == f"SB-01.{public[:8]}.key.json"
    assert json.loads(listing.read_text()) == {"v": 1, "tables": {"SB-01": [public]}}
    assert f'"SB-01": ["{public}"]' in out.getvalue()
    raw = round_event("result", "R1", "SB-01", dice=[1, 2, 3])
    signed = prepare(raw, {table: key}).value
    assert isinstance(verify(load(listing)["SB-01"], decoded(signed)), Verified)


def test_a_second_key_for_a_table_is_added_beside_the_first_for_a_rotation(tmp_path: Path) -> None:
    listing = tmp_path / "table-keys.json"
    add_public_key(listing, "T2", KEY_T2.public_key())
    for key in (KEY_T1, KEY_T1_NEXT):
        assert new("T1", out_dir=tmp_path, keys_file=listing, out=io.StringIO(), key=key) == 0
    found = json.loads(listing.read_text())["tables"]
    assert found == {"T2": [public_text(KEY_T2.public_key())], "T1": [T1, T1_NEXT]}
    assert len(list(tmp_path.glob("T1.*.key.json"))) == 2


def test_keys_new_never_overwrites_a_private_key(tmp_path: Path) -> None:
    out = io.StringIO()
    assert new("T1", out_dir=tmp_path, keys_file=None, out=out, key=KEY_T1) == 0
    assert new("T1", out_dir=tmp_path, keys_file=None, out=out, key=KEY_T1) == 1
    assert "exists already" in out.getvalue()


def test_keys_new_refuses_to_add_to_a_broken_keys_file(tmp_path: Path) -> None:
    listing = keys_file(tmp_path, {"T1": []})
    out = io.StringIO()
    assert new("T1", out_dir=tmp_path / "k", keys_file=listing, out=out, key=KEY_T1) == 1
    assert "was not added" in out.getvalue()
    assert json.loads(listing.read_text())["tables"] == {"T1": []}


def test_a_private_key_file_whose_public_key_was_edited_is_refused(tmp_path: Path) -> None:
    new("T1", out_dir=tmp_path, keys_file=None, out=io.StringIO(), key=KEY_T1)
    (path,) = tmp_path.iterdir()
    body = json.loads(path.read_text())
    body["public_key"] = T1_NEXT
    path.write_text(json.dumps(body))
    with pytest.raises(KeyFileError, match="not the private key's"):
        read_private(path)


# croupier replay --keys


def _replay(
    *args: str, stdin: bytes, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli", "replay", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        check=False,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def _forged_round() -> list[bytes]:
    """A round of T1 with one bet, closed, and an unsigned result (which T1's key must sign)."""
    return [
        round_event("opened", game="sicbo"),
        bet(1, "big", stake=100),
        round_event("betting_closed", last_seq=1),
        round_event("result", dice=[6, 6, 5], event_id="forged"),
    ]


@pytest.mark.parametrize("name", ["CROUPIER_TABLE_KEYS_FILE", "croupier_table_keys_file"])
def test_replay_checks_the_keys_the_environment_names_in_either_case(
    tmp_path: Path, name: str
) -> None:
    listing = keys_file(tmp_path, {"T1": [T1]})
    stdin = b"\n".join(_forged_round()) + b"\n"
    done = _replay("-", stdin=stdin, env={name: str(listing)})
    assert done.returncode == 0, done.stderr
    (rejected,) = map(msgspec.json.decode, done.stdout.splitlines())
    assert (rejected["type"], rejected["reason"]) == ("rejected", "bad_signature")


def test_replay_names_the_environment_s_unusable_keys_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.json")
    done = _replay("-", stdin=b"", env={"CROUPIER_TABLE_KEYS_FILE": missing})
    assert done.returncode == 2
    assert b"croupier replay: table keys file" in done.stderr
    assert b"CROUPIER_TABLE_KEYS_FILE" in done.stderr


def test_replay_with_a_keys_file_rejects_the_forged_result_and_pays_the_signed_one(
    tmp_path: Path,
) -> None:
    listing = keys_file(tmp_path, {"T1": [T1]})
    events = [*_forged_round(), signed_event("result", dice=[1, 2, 3])]
    stdin = b"\n".join(events) + b"\n"
    done = _replay("--keys", str(listing), "-", stdin=stdin)
    assert done.returncode == 0, done.stderr
    rejected, settlement = map(msgspec.json.decode, done.stdout.splitlines())
    assert (rejected["type"], rejected["reason"]) == ("rejected", "bad_signature")
    assert (settlement["type"], settlement["result"], settlement["payout"]) == (
        "settlement",
        "lose",
        0,
    )
    unkeyed = _replay("-", stdin=stdin)
    first, second = map(msgspec.json.decode, unkeyed.stdout.splitlines())
    assert (first["type"], first["payout"], second["reason"]) == (
        "settlement",
        200,
        "invalid_transition",
    )


def test_replay_with_an_unusable_keys_file_says_so_and_replays_nothing(tmp_path: Path) -> None:
    done = _replay("--keys", str(tmp_path / "none.json"), "-", stdin=b"")
    assert done.returncode == 2
    assert b"croupier replay: table keys file" in done.stderr
    assert done.stdout == b""


# The keys in the other places that fold.


def test_a_restored_fold_checks_signatures_with_the_keys_it_is_given() -> None:
    fold = Fold(journal=True)
    fold.feed("rounds", round_event("opened", game="sicbo"))
    fold.feed("bets", bet(1))
    fold.feed("rounds", round_event("betting_closed", last_seq=1))
    entries = dict(e for e in capture.Layout().changes(fold) if e[1] is not None)
    restored = rebuild.fold_of(entries, fold.horizon, keys={"T1": (KEY_T1.public_key(),)})
    (rejected,) = restored.feed("rounds", round_event("result", dice=[6, 5, 1]))
    assert isinstance(rejected, Rejected) and rejected.reason == "bad_signature"
    (settlement,) = restored.feed("rounds", signed_event("result", dice=[6, 5, 1]))
    assert isinstance(settlement, Settlement)


def test_the_audit_folds_with_the_table_keys_and_then_finds_the_pipeline_right() -> None:
    keys = {"T1": (KEY_T1.public_key(),)}
    inputs = [
        ("rounds", round_event("opened", game="sicbo")),
        ("rounds", round_event("betting_closed", last_seq=1)),
        ("rounds", round_event("result", dice=[6, 5, 1])),
        ("bets", bet(1)),
    ]
    pipeline = Fold(keys=keys)
    records = [r for topic, raw in inputs for r in pipeline.feed(topic, raw)]
    assert [type(r) for r in records] == [Rejected]
    found = outputs(records, [])
    kept = [
        Kept(kind=topic, partition=0, offset=n, value=raw)  # type: ignore[arg-type]
        for n, (topic, raw) in enumerate(inputs)
    ]
    assert judge(kept, {}, found, 200, keys).report.ok
    assert not judge(kept, {}, found, 200).report.ok


# The publisher and the simulator sign.


def test_the_publisher_signs_a_tables_money_moving_events_and_no_other() -> None:
    from datetime import UTC, datetime

    table = Table(table_id="T1", game="sicbo", clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    rnd = table.next_round()
    signers = {"T1": KEY_T1}
    opened = prepare(rnd.open(), signers)
    assert b'"sig"' not in opened.value
    prepare(rnd.close(), signers)
    result = prepare(rnd.result(dice=(1, 2, 3)), signers)
    event = decoded(result.value)
    assert isinstance(event, RoundResult)
    assert verify((KEY_T1.public_key(),), event) == Verified(0)
    assert b'"sig":null' not in prepare(rnd.void(reason="r", authorized_by="a")).value


def test_the_publisher_signs_raw_lines_by_appending_the_sig_and_keeps_a_given_sig() -> None:
    raw = round_event("result", dice=[1, 2, 3])
    sent = prepare(raw, {"T1": KEY_T1}).value
    assert sent.startswith(raw[:-1]) and sent.endswith(b'"}')
    assert prepare(sent, {"T1": KEY_T2}).value == sent
    assert prepare(raw, {"T2": KEY_T2}).value == raw


def test_the_publisher_refuses_to_sign_a_line_with_a_null_sig() -> None:
    raw = round_event("result", dice=[1, 2, 3], sig=None)
    with pytest.raises(InvalidEvent, match="sig: null"):
        prepare(raw, {"T1": KEY_T1})


def test_a_signed_simulation_is_reproducible_and_every_result_verifies(tmp_path: Path) -> None:
    config = Config(tables=3, players=12, rounds=8, seed=42, signed=True)
    first = [e.message.value for e in Simulation(config)]
    assert first == [e.message.value for e in Simulation(config)]
    listing = tmp_path / "keys.json"
    write_keys(listing, config)
    keys = load(listing)
    assert set(keys) == {"SB-01", "HL-01", "XD-01"}
    assert public_text(keys["SB-01"][0]) == public_text(table_key(42, "SB-01").public_key())
    fold = Fold(keys=keys)
    records = [r for raw in first for r in fold.feed(None, raw)]
    assert not [r for r in records if isinstance(r, Rejected) and r.reason == "bad_signature"]
    assert any(isinstance(r, Settlement) for r in records)
    assert b'"sig":"' in b"".join(first)


def test_a_publisher_given_a_tables_key_sends_its_results_signed_and_retries_the_same_bytes() -> (
    None
):
    from services.publisher import Publisher
    from tests.unit.test_publisher_sending import FakeProducer

    raw = round_event("result", dice=[6, 5, 1])
    signed = prepare(raw, {"T1": KEY_T1}).value
    producer = FakeProducer(trouble={signed: "landed"})
    sender = Publisher(
        producer, rounds="r", bets="b", backoff=lambda _: None, signers={"T1": KEY_T1}
    )
    sender.publish(raw)
    sender.publish(round_event("result", "R1", "T2", dice=[6, 5, 1]))
    sender.flush()
    assert [value for _, _, value in producer.attempts] == [
        signed,
        round_event("result", "R1", "T2", dice=[6, 5, 1]),
        signed,
    ]
