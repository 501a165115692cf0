"""The roles' ACL bindings, rendered from services/roles.py: each role exactly its job."""

from __future__ import annotations

from services.roles import Role
from services.security.acls import Binding, bindings, principal
from services.settings import Settings

S = Settings()


def _of(role: Role) -> list[Binding]:
    return [b for b in bindings(S) if b.principal == principal(role)]


def _topics(role: Role, operation: str) -> set[str]:
    return {b.name for b in _of(role) if b.resource == "topic" and b.operation == operation}


def test_the_game_role_writes_the_inputs_and_reads_nothing() -> None:
    assert _topics(Role.GAME, "Write") == {"rounds", "bets"}
    assert _topics(Role.GAME, "Read") == set()
    assert all(b.resource == "topic" for b in _of(Role.GAME))


def test_the_croupier_role_reads_the_inputs_and_writes_only_the_outputs_and_its_state() -> None:
    assert _topics(Role.CROUPIER, "Read") == {"rounds", "bets", "settlement-state"}
    assert _topics(Role.CROUPIER, "Write") == {*S.outputs, "settlement-state"}
    assert not {"rounds", "bets"} & _topics(Role.CROUPIER, "Write")
    groups = {(b.name, b.pattern, b.operation) for b in _of(Role.CROUPIER) if b.resource == "group"}
    assert groups == {
        ("croupier-settlement", "literal", "Read"),
        ("croupier-settlement", "literal", "Describe"),
    }
    ids = {(b.name, b.pattern) for b in _of(Role.CROUPIER) if b.resource == "transactional_id"}
    assert ids == {("croupier-settlement-", "prefix")}


def test_the_wallet_role_reads_what_pays_and_writes_nothing() -> None:
    assert _topics(Role.WALLET, "Read") == {"settlements", "refunds", "adjustments"}
    assert not any(b.operation == "Write" for b in _of(Role.WALLET))


def test_the_readside_role_reads_the_journals_boards_and_refusals_and_nothing_else() -> None:
    assert _topics(Role.READSIDE, "Read") == {"accepted", "table-stats", "rejected"}
    assert not {"rounds", "bets", "settlement-state", "settlements", "refunds", "adjustments"} & {
        b.name for b in _of(Role.READSIDE)
    }
    assert not any(b.operation == "Write" for b in _of(Role.READSIDE))


def test_the_auditor_role_reads_every_topic_and_writes_none() -> None:
    assert _topics(Role.AUDITOR, "Read") == {*S.inputs, *S.outputs, "settlement-state"}
    assert not any(b.operation == "Write" for b in _of(Role.AUDITOR))


def test_no_role_may_alter_the_cluster_and_groups_are_croupiers_or_prefixed_by_their_role() -> None:
    assert not any(b.resource == "cluster" for b in bindings(S))
    groups = {(b.principal, b.name, b.pattern) for b in bindings(S) if b.resource == "group"}
    assert groups == {
        ("User:croupier", S.group_id, "literal"),
        ("User:wallet", "wallet-", "prefix"),
        ("User:auditor", "auditor-", "prefix"),
    }


def test_renamed_topics_and_ids_are_what_the_bindings_name() -> None:
    renamed = Settings(topic_bets="prod-bets", group_id="g1", transactional_prefix="tx1")
    names = {b.name for b in bindings(renamed)}
    assert "prod-bets" in names and "bets" not in names
    assert {"g1", "tx1-"} <= names
