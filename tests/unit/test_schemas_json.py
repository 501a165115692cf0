"""The committed JSON Schema files match the Structs, and the examples of the tests conform."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given

from schemas.codec import Invalid, decode_bet, decode_round
from schemas.jsonschema import main, render
from tests.unit.test_codec_encoding import (
    REFUND_FIELDS,
    REJECTED_FIELDS,
    SETTLEMENT_FIELDS,
    TABLE_STATS_FIELDS,
    WORKED,
)
from tests.unit.test_codec_rejections import (
    BET,
    EXAMPLES,
    MISSING,
    OUT_OF_RANGE,
    REQUIRED,
    RESULT_DICE,
    WRONG_TYPE,
    encoded,
    near_valid_events,
    topic_of,
    without,
)

JSON_DIR = Path(__file__).resolve().parents[2] / "schemas" / "json"
FILES = {
    "rounds": "rounds.schema.json",
    "bets": "bets.schema.json",
    "settlements": "settlements.schema.json",
    "refunds": "refunds.schema.json",
    "rejected": "rejected.schema.json",
    "table-stats": "table-stats.schema.json",
    "accepted": "accepted.schema.json",
    "adjustments": "adjustments.schema.json",
    "table-keys": "table-keys.schema.json",
}
RECORD_TOPICS = {
    "settlement": "settlements",
    "refund": "refunds",
    "adjustment": "adjustments",
    "rejected": "rejected",
    "table_stats": "table-stats",
}


def committed(topic: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((JSON_DIR / FILES[topic]).read_text(encoding="utf-8"))
    return loaded


# A validator for the keywords the generated files use, so the test needs no extra package.

ANNOTATIONS = {"$schema", "$comment", "$defs", "title", "description", "default", "discriminator"}
ASSERTIONS = {
    "$ref",
    "anyOf",
    "oneOf",
    "type",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "format",
}
DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
JSON_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "integer": lambda value: (
        (isinstance(value, int) and not isinstance(value, bool))
        or (isinstance(value, float) and value.is_integer())
    ),
}


def same(a: object, b: object) -> bool:
    """JSON equality: 1 and 1.0 are equal, true and 1 are not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def matches(pattern: str, value: str) -> bool:
    """ECMA-262 semantics: `\\d` is [0-9] and a final `$` does not match before a newline."""
    found = re.search(pattern, value, re.ASCII)
    return found is not None and (not pattern.endswith("$") or found.end() == len(value))


def is_date_time(value: str) -> bool:
    if not DATE_TIME.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def violations(node: Any, value: Any, root: dict[str, Any], at: str = "$") -> Iterator[str]:
    """Every way `value` breaks `node` (a JSON Schema 2020-12 subset)."""
    if node is True:
        return
    if node is False:
        yield f"{at}: nothing is allowed here"
        return
    unknown = set(node) - ANNOTATIONS - ASSERTIONS
    assert not unknown, f"the validator does not know {unknown}: teach it before trusting it"
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        yield from violations(root["$defs"][name], value, root, at)
    if "type" in node and not JSON_TYPES[node["type"]](value):
        yield f"{at}: expected {node['type']}, got {value!r}"
        return
    if "enum" in node and not any(same(value, option) for option in node["enum"]):
        yield f"{at}: {value!r} not in {node['enum']}"
    if "anyOf" in node and all(list(violations(s, value, root, at)) for s in node["anyOf"]):
        yield f"{at}: matches none of anyOf"
    if "oneOf" in node:
        matched = sum(not list(violations(s, value, root, at)) for s in node["oneOf"])
        if matched != 1:
            yield f"{at}: matches {matched} of oneOf, not exactly one"
    if isinstance(value, str):
        if len(value) < node.get("minLength", 0) or len(value) > node.get("maxLength", len(value)):
            yield f"{at}: length {len(value)} out of range"
        if "pattern" in node and not matches(node["pattern"], value):
            yield f"{at}: {value!r} does not match {node['pattern']}"
        if node.get("format") == "date-time" and not is_date_time(value):
            yield f"{at}: {value!r} is not an RFC 3339 date-time"
    if JSON_TYPES["number"](value):
        if "minimum" in node and value < node["minimum"]:
            yield f"{at}: {value} < {node['minimum']}"
        if "maximum" in node and value > node["maximum"]:
            yield f"{at}: {value} > {node['maximum']}"
    if isinstance(value, list):
        if len(value) < node.get("minItems", 0) or len(value) > node.get("maxItems", len(value)):
            yield f"{at}: {len(value)} items out of range"
        prefix = node.get("prefixItems", [])
        for index, item in enumerate(value):
            item_schema = prefix[index] if index < len(prefix) else node.get("items", True)
            yield from violations(item_schema, item, root, f"{at}[{index}]")
    if isinstance(value, dict):
        for name in node.get("required", []):
            if name not in value:
                yield f"{at}: missing {name}"
        properties = node.get("properties", {})
        for name, item in value.items():
            item_schema = properties.get(name, node.get("additionalProperties", True))
            yield from violations(item_schema, item, root, f"{at}.{name}")


def problems(topic: str, value: object) -> list[str]:
    """Why `value` does not conform to the topic's committed schema (and per `jsonschema`, if
    that package happens to be installed)."""
    schema = committed(topic)
    found = list(violations(schema, value, schema))
    if importlib.util.find_spec("jsonschema") is not None:  # pragma: no cover - not a dependency
        checker = importlib.import_module("jsonschema").Draft202012Validator(schema)
        found += [f"jsonschema: {error.message}" for error in checker.iter_errors(value)]
    return found


def has_integral_float(value: object) -> bool:
    """JSON Schema counts 2.0 as an integer; the decoders, rightly, do not."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, list):
        return any(has_integral_float(item) for item in value)
    if isinstance(value, dict):
        return any(has_integral_float(item) for item in value.values())
    return False


def definition(topic: str, tag: str) -> dict[str, Any]:
    """The definition of the message whose `type` is `tag`."""
    defs: dict[str, dict[str, Any]] = committed(topic)["$defs"]
    [found] = [d for d in defs.values() if d.get("properties", {}).get("type") == {"enum": [tag]}]
    return found


# The files.


@pytest.mark.parametrize("name", FILES.values())
def test_the_committed_schema_file_matches_the_structs(name: str) -> None:
    path = JSON_DIR / name
    assert path.exists(), f"{path} is missing: run `make schemas` and commit schemas/json/"
    assert path.read_text(encoding="utf-8") == render()[name], (
        f"{path} is stale: run `make schemas` and commit schemas/json/"
    )


def test_there_is_one_schema_file_per_topic_and_the_table_keys_file_and_no_other() -> None:
    assert set(render()) == set(FILES.values())
    on_disk = {path.name for path in JSON_DIR.glob("*.schema.json")}
    assert on_disk == set(FILES.values()), "stale files in schemas/json/: run `make schemas`"


def test_rendering_is_deterministic_with_sorted_keys_two_space_indent_and_a_final_newline() -> None:
    first, second = render(), render()
    assert first == second
    for text in first.values():
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
        assert text.endswith("}\n")
        assert not text.endswith("\n\n")


@pytest.mark.parametrize("topic", FILES)
def test_each_schema_names_its_topic_and_the_contract_version(topic: str) -> None:
    schema = committed(topic)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert f"`{topic}`" in schema["$comment"]
    assert "contract version 1.2 (docs/CONTRACT.md" in schema["$comment"]
    assert "(contract v1.2)" in schema["title"]
    assert "make schemas" in schema["$comment"]
    assert topic in schema["title"]
    assert schema["description"]


def _anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of a markdown text."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("name", FILES.values())
def test_every_section_a_schema_cites_is_a_heading_of_the_projects_contract(name: str) -> None:
    text = (JSON_DIR / name).read_text(encoding="utf-8")
    cited = re.findall(r"docs/CONTRACT\.md#([\w-]+)", text)
    contract = (JSON_DIR.parents[1] / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    assert cited, f"{name} cites no section of docs/CONTRACT.md"
    assert set(cited) <= _anchors(contract), set(cited) - _anchors(contract)
    assert "contract section" not in text, "a section number of the upstream contract"


def test_the_generator_writes_every_file_and_removes_stale_ones(tmp_path: Path) -> None:
    (tmp_path / "roulette.schema.json").write_text("{}\n")
    (tmp_path / "README.md").write_text("kept\n")
    assert main([str(tmp_path)]) == 0
    assert {path.name for path in tmp_path.iterdir()} == {*FILES.values(), "README.md"}
    for name, text in render().items():
        assert (tmp_path / name).read_text(encoding="utf-8") == text


def test_the_generator_wants_exactly_one_directory() -> None:
    assert main([]) == 2


# What the schemas say.


def test_the_result_schema_says_exactly_one_of_dice_and_discs_is_present() -> None:
    result = definition("rounds", "round.result")
    assert "Exactly one of `dice`" in result["description"]
    assert len(result["oneOf"]) == 2
    assert "dice" not in result["required"]
    assert "discs" not in result["required"]


def test_the_rounds_schema_is_the_union_of_the_nine_round_events() -> None:
    schema = committed("rounds")
    assert set(schema["discriminator"]["mapping"]) == set(REQUIRED) - {"bet.placed"}
    assert schema["discriminator"]["propertyName"] == "type"
    assert len(schema["anyOf"]) == 9


@pytest.mark.parametrize("tag", REQUIRED)
def test_each_event_requires_exactly_the_fields_the_contract_requires(tag: str) -> None:
    event = definition("bets" if tag == "bet.placed" else "rounds", tag)
    body, fields = REQUIRED[tag]
    assert sorted(event["required"]) == sorted(["type", "v", *fields])
    assert set(body) <= set(event["properties"])
    assert event["properties"]["v"] == {"enum": [1]}


@pytest.mark.parametrize(
    ("tag", "fields"),
    [
        ("settlement", [*SETTLEMENT_FIELDS, "at"]),
        ("refund", REFUND_FIELDS),
        ("rejected", REJECTED_FIELDS),
        ("table_stats", TABLE_STATS_FIELDS),
    ],
)
def test_each_record_requires_exactly_the_fields_of_contract_section_5(
    tag: str, fields: list[str]
) -> None:
    record = definition(RECORD_TOPICS[tag], tag)
    assert sorted(record["required"]) == sorted(["type", "v", *fields])


def test_a_settlement_schema_carries_dice_or_discs_but_not_both() -> None:
    settlement = definition("settlements", "settlement")
    assert {"dice", "discs"} <= set(settlement["properties"])
    assert "Exactly one of `dice`" in settlement["description"]
    assert len(settlement["oneOf"]) == 2


# The examples of the tests conform; what the decoders reject does not.


@pytest.mark.parametrize(("body", "_struct"), EXAMPLES, ids=[b["type"] for b, _ in EXAMPLES])
def test_every_valid_example_event_conforms_to_its_topic_schema(
    body: dict[str, Any], _struct: object
) -> None:
    assert problems(topic_of(body), body) == []


@pytest.mark.parametrize(("record", "raw"), WORKED, ids=[type(r).__name__ for r, _ in WORKED])
def test_every_worked_record_conforms_to_its_topic_schema(record: object, raw: bytes) -> None:
    value = json.loads(raw)
    assert problems(RECORD_TOPICS[value["type"]], value) == []


def _rejected_bodies() -> list[Any]:
    cases = [
        pytest.param(body | {field: value}, id=f"{body['type']}-{field}-{json.dumps(value)}")
        for body, field, value in [*WRONG_TYPE, *OUT_OF_RANGE]
        if not has_integral_float(value)
    ]
    cases += [
        pytest.param(without(REQUIRED[tag][0], field), id=f"{tag}-without-{field}")
        for tag, field in MISSING
    ]
    cases += [
        pytest.param(RESULT_DICE | {"discs": ["red"] * 4}, id="result-with-both"),
        pytest.param(without(RESULT_DICE, "dice"), id="result-with-neither"),
        pytest.param(BET | {"v": 2}, id="bet-v2"),
        pytest.param(without(BET, "type"), id="bet-without-type"),
        pytest.param(BET | {"type": "round.opened"}, id="bet-typed-as-round"),
        pytest.param(RESULT_DICE | {"type": "round.ended"}, id="unknown-round-type"),
    ]
    return cases


@pytest.mark.parametrize("body", _rejected_bodies())
def test_an_event_the_decoders_reject_does_not_conform_to_its_topic_schema(
    body: dict[str, Any],
) -> None:
    topic = "bets" if "bet_id" in body else "rounds"
    decode = decode_bet if topic == "bets" else decode_round
    assert isinstance(decode(encoded(body)), Invalid)
    assert problems(topic, body) != []


@given(near_valid_events())
def test_the_schemas_and_the_decoders_agree_on_what_is_an_event(body: dict[str, Any]) -> None:
    assume(not has_integral_float(body))
    for topic, decode in (("rounds", decode_round), ("bets", decode_bet)):
        accepted = not isinstance(decode(encoded(body)), Invalid)
        assert accepted == (problems(topic, body) == []), (topic, body)
