"""The JSON Schema files of the wire contract, one per topic, generated from the Structs.

`python -m schemas.jsonschema OUTDIR` (`make schemas`) writes them; the committed copies live in
`schemas/json/` and a unit test fails when they no longer match the Structs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

import msgspec

from schemas.events import BetPlaced, RoundEvent
from schemas.journal import Journal
from schemas.keys import TableKeysFile
from schemas.records import Adjustment, Refund, Rejected, Settlement, TableStats

CONTRACT_VERSION: Final = "1.2"
"""The version of the contract the schemas follow; `v` stays 1 on every event and record."""
CONTRACT: Final = "docs/CONTRACT.md"
"""Where the contract is read: the descriptions cite its sections by their anchors."""
DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
SUFFIX: Final = ".schema.json"

TOPICS: Final[dict[str, tuple[Any, str]]] = {
    "rounds": (
        RoundEvent,
        "Round events a table's game service publishes, keyed by table_id, one per message "
        f"({CONTRACT}#3-events-in; their order: {CONTRACT}#4-round-life-cycle). Unknown extra "
        "fields are ignored.",
    ),
    "bets": (
        BetPlaced,
        "Bet events a table's game service publishes, keyed by table_id, one per message "
        f"({CONTRACT}#3-events-in). Unknown extra fields are ignored; `pick` absent means [].",
    ),
    "settlements": (
        Settlement,
        f"Settlement records croupier writes, keyed by player_id ({CONTRACT}#7-records-out). "
        "`settlement_id` is derived from `bet_id` alone: wallets use it as the idempotency key.",
    ),
    "refunds": (
        Refund,
        f"Refund records croupier writes, keyed by player_id ({CONTRACT}#7-records-out). "
        "`refund_id` is derived from `bet_id` alone: wallets use it as the idempotency key.",
    ),
    "adjustments": (
        Adjustment,
        "Adjustment records croupier writes, keyed by player_id "
        f"({CONTRACT}#corrections-and-voids-after-a-result, {CONTRACT}#7-records-out): a "
        "settled bet decided again after a correction or a void of its round. `delta` is what "
        "the wallet credits (negative: a debit), never 0; `adjustment_id` "
        "(`adjustment:<n>:<bet_id>`) is its idempotency key. `dice`/`discs` are the new outcome, "
        "absent for a void.",
    ),
    "rejected": (
        Rejected,
        "Dead letters croupier writes, keyed by the input's key: every input it could not "
        "accept, verbatim in `raw` (invalid UTF-8 bytes shown as \\xNN), with the reason "
        f"(the reasons: {CONTRACT}#6-rejections; the record: {CONTRACT}#7-records-out).",
    ),
    "accepted": (
        Journal,
        "The journal of croupier's worker transactions, for the read side: each record holds "
        "inputs the fold accepted (a round event that moved its round's life cycle, a bet read for "
        "the first time; never a rejected input or a redelivery), verbatim as upstream sent them, "
        "then the settlements, refunds and adjustments the transaction commits, as on their own "
        "topics; written to the partition of the inputs in that transaction, so a bet's decision "
        "is never before its placement. A journal over 512 KiB is cut into several records. "
        "Records written before journals hold one input alone (the `rounds`/`bets` schemas). "
        f"The topic: {CONTRACT}#2-topics.",
    ),
    "table-stats": (
        TableStats,
        "The statistics of a table over its last 50 rounds with a result, keyed by table_id, "
        f"log-compacted ({CONTRACT}#7-records-out).",
    ),
}

FILES: Final[dict[str, tuple[Any, str]]] = {
    "table-keys": (
        TableKeysFile,
        "The table keys file croupier reads (CROUPIER_TABLE_KEYS_FILE, `croupier replay --keys`): "
        "per signing table, every Ed25519 public key that may sign its round.result, "
        "round.corrected, round.voided and round.cancelled events "
        f"({CONTRACT}#signed-round-events); several while a key is rotated. A table not listed "
        "is read without signatures.",
    ),
}
"""The files croupier reads besides the topics, by name."""

_OUTCOME_RULE: Final = (
    " Exactly one of `dice` (sicbo, thai-hilo) and `discs` (xocdia) is present and not null."
)
_ONE_OUTCOME: Final = {
    "oneOf": [
        {"required": ["dice"], "properties": {"dice": {"type": "array"}}},
        {"required": ["discs"], "properties": {"discs": {"type": "array"}}},
    ]
}
_ONE_OUTCOME_DEFS: Final = ("RoundResult", "RoundCorrected", "Settlement", "StatRound")
_CURRENCY: Final = {
    "type": "string",
    "pattern": "^[A-Z]{3}$",
    "description": "ISO 4217 code: three capital letters A-Z.",
}


def _with_post_init_rules(defs: dict[str, Any]) -> dict[str, Any]:
    """Add the rules the Structs check in `__post_init__`, which msgspec cannot express."""
    rules = dict(defs)
    for name in _ONE_OUTCOME_DEFS:
        if name in rules:
            rules[name] = {
                **rules[name],
                **_ONE_OUTCOME,
                "description": rules[name]["description"] + _OUTCOME_RULE,
            }
    if "BetPlaced" in rules:
        bet = rules["BetPlaced"]
        rules["BetPlaced"] = {**bet, "properties": {**bet["properties"], "currency": _CURRENCY}}
    return rules


def schema(topic: str) -> dict[str, Any]:
    """The JSON Schema of one topic's messages, or of one file croupier reads."""
    kind, description = TOPICS[topic] if topic in TOPICS else FILES[topic]
    what = "Topic" if topic in TOPICS else "File"
    (root,), defs = msgspec.json.schema_components([kind], ref_template="#/$defs/{name}")
    defs = _with_post_init_rules(defs)
    return {
        "$schema": DIALECT,
        "$comment": (
            f"{what} `{topic}`, croupier contract version {CONTRACT_VERSION} ({CONTRACT}; `v` "
            "is 1 on every event and record). Generated from the msgspec Structs in schemas/ by "
            "`make schemas`: do not edit by hand."
        ),
        "title": f"croupier {topic} (contract v{CONTRACT_VERSION})",
        "description": description,
        **root,
        "$defs": defs,
    }


def render() -> dict[str, str]:
    """Each schema file's name and exact text: sorted keys, 2-space indent, final newline."""
    return {
        f"{topic}{SUFFIX}": json.dumps(schema(topic), indent=2, sort_keys=True) + "\n"
        for topic in (*TOPICS, *FILES)
    }


def write(outdir: Path) -> list[Path]:
    """Write every schema file into `outdir` and remove schema files no topic has any more."""
    outdir.mkdir(parents=True, exist_ok=True)
    files = render()
    for stale in sorted(outdir.glob(f"*{SUFFIX}")):
        if stale.name not in files:
            stale.unlink()
    written = []
    for name, text in files.items():
        path = outdir / name
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """`python -m schemas.jsonschema OUTDIR`."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m schemas.jsonschema OUTDIR", file=sys.stderr)
        return 2
    for path in write(Path(args[0])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
