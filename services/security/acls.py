"""`croupier acls`: the roles' SCRAM users and ACLs on the brokers, from `services.roles.grants`.

`bindings` (pure) turns every role's grants into ACL bindings, one per operation; `apply` (the
shell, run with the admin's credentials) creates the missing ones, removes the role principals'
bindings that the grants no longer name (a narrowed grant takes effect), and, given a directory
of `<role>.password` files, creates or rotates each role's SCRAM credential. Idempotent: a second
run prints `nothing changed`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from kafka.admin import (  # type: ignore[import-untyped]
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.admin._users import UserScramCredentialUpsertion  # type: ignore[import-untyped]

from services.roles import Grant, Role, grants
from services.security import clients
from services.settings import Settings

RESOURCE = {
    "topic": ResourceType.TOPIC,
    "group": ResourceType.GROUP,
    "transactional_id": ResourceType.TRANSACTIONAL_ID,
    "cluster": ResourceType.CLUSTER,
}
PATTERN = {"literal": ACLResourcePatternType.LITERAL, "prefix": ACLResourcePatternType.PREFIXED}
OPERATION = {
    "Read": ACLOperation.READ,
    "Write": ACLOperation.WRITE,
    "Describe": ACLOperation.DESCRIBE,
    "DescribeConfigs": ACLOperation.DESCRIBE_CONFIGS,
    "IdempotentWrite": ACLOperation.IDEMPOTENT_WRITE,
}


@dataclass(frozen=True, order=True, slots=True)
class Binding:
    """Allow `principal` the `operation` on a resource, from any host."""

    principal: str
    resource: str
    name: str
    pattern: str
    operation: str

    def __str__(self) -> str:
        match = "" if self.pattern == "literal" else f" ({self.pattern})"
        return f"{self.principal} {self.operation} {self.resource} {self.name}{match}"


def principal(role: Role) -> str:
    """A role's principal: its SCRAM user has the role's name."""
    return f"User:{role.value}"


def bindings(settings: Settings) -> list[Binding]:
    """Every ACL binding the roles need, sorted, without repeats."""
    found: set[Binding] = set()
    for role, granted in grants(settings).items():
        for grant in granted:
            found.update(_of(principal(role), grant))
    return sorted(found)


def _of(who: str, grant: Grant) -> list[Binding]:
    return [Binding(who, grant.resource, grant.name, grant.pattern, op) for op in grant.operations]


def _acl(binding: Binding) -> ACL:
    return ACL(
        principal=binding.principal,
        host="*",
        operation=OPERATION[binding.operation],
        permission_type=ACLPermissionType.ALLOW,
        resource_pattern=ResourcePattern(
            RESOURCE[binding.resource], binding.name, PATTERN[binding.pattern]
        ),
    )


def _binding(acl: ACL) -> Binding | None:
    """The binding an ACL of the cluster is, or None when it is not one croupier can make."""
    resources = {v: k for k, v in RESOURCE.items()}
    patterns = {v: k for k, v in PATTERN.items()}
    operations = {v: k for k, v in OPERATION.items()}
    pattern = acl.resource_pattern
    if (
        acl.host != "*"
        or acl.permission_type != ACLPermissionType.ALLOW
        or pattern.resource_type not in resources
        or pattern.pattern_type not in patterns
        or acl.operation not in operations
    ):
        return None
    return Binding(
        acl.principal,
        resources[pattern.resource_type],
        pattern.resource_name,
        patterns[pattern.pattern_type],
        operations[acl.operation],
    )


def _existing(admin: KafkaAdminClient, who: str) -> tuple[set[Binding], list[ACL]]:
    """The bindings a principal has now, and its ACLs that are none of croupier's kind."""
    found, error = admin.describe_acls(
        ACLFilter(
            principal=who,
            host=None,
            operation=ACLOperation.ANY,
            permission_type=ACLPermissionType.ANY,
            resource_pattern=ResourcePatternFilter(
                ResourceType.ANY, None, ACLResourcePatternType.ANY
            ),
        )
    )
    if error.errno:
        raise error
    kept: set[Binding] = set()
    foreign: list[ACL] = []
    for acl in found:
        binding = _binding(acl)
        if binding is None:
            foreign.append(acl)
        else:
            kept.add(binding)
    return kept, foreign


def _filter(binding: Binding) -> ACLFilter:
    acl = _acl(binding)
    return ACLFilter(
        principal=acl.principal,
        host=acl.host,
        operation=acl.operation,
        permission_type=acl.permission_type,
        resource_pattern=ResourcePatternFilter(
            acl.resource_pattern.resource_type,
            acl.resource_pattern.resource_name,
            acl.resource_pattern.pattern_type,
        ),
    )


def apply(
    settings: Settings,
    passwords: Path | None = None,
    *,
    rotate: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """Bring the users (given `passwords`: those missing are created, all of them with `rotate`)
    and the roles' ACLs to plan; the number of changes."""
    wanted = bindings(settings)
    admin = KafkaAdminClient(**clients.kafka_python(settings), client_id="croupier-acls")
    changed = 0
    try:
        if passwords is not None:
            changed += _users(admin, passwords, rotate, out)
        have: set[Binding] = set()
        for role in Role:
            kept, foreign = _existing(admin, principal(role))
            have |= kept
            for acl in foreign:
                print(f"left    {acl} (not one croupier makes; remove it by hand)", file=out)
        missing = [b for b in wanted if b not in have]
        extra = sorted(have - set(wanted))
        if missing:
            result = admin.create_acls([_acl(b) for b in missing])
            if result["failed"]:
                raise RuntimeError(f"the broker refused to create ACLs: {result['failed']}")
            for binding in missing:
                print(f"allowed {binding}", file=out)
        if extra:
            for _, _, error in admin.delete_acls([_filter(b) for b in extra]):
                if error.errno:
                    raise error
            for binding in extra:
                print(f"removed {binding} (no grant names it)", file=out)
        changed += len(missing) + len(extra)
        if not changed:
            print(f"nothing changed: {len(wanted)} ACLs of {len(Role)} roles, as planned", file=out)
        return changed
    finally:
        admin.close()


def _users(admin: KafkaAdminClient, passwords: Path, rotate: bool, out: TextIO) -> int:
    """Create (or, rotating, set again) each role's SCRAM credential from
    `<passwords>/<role>.password`."""
    known = admin.describe_user_scram_credentials()
    present = {user for user, found in known.items() if found["credential_infos"]}
    upserts = []
    for role in Role:
        if role.value in present and not rotate:
            continue
        path = passwords / f"{role.value}.password"
        if not path.exists():
            print(f"no password for {role.value} ({path}); its user is left as it is", file=out)
            continue
        secret = path.read_text(encoding="utf-8").splitlines()[0]
        upserts.append(UserScramCredentialUpsertion(role.value, "SCRAM-SHA-512", secret))
    if not upserts:
        return 0
    results = admin.alter_user_scram_credentials(upserts)
    failed = {user: error for user, error in results.items() if error}
    if failed:
        raise RuntimeError(f"the broker refused SCRAM credentials: {failed}")
    for user in sorted(results):
        what = "password set again" if user in present else "created"
        print(f"user    {user}: SCRAM-SHA-512 {what}", file=out)
    return len(results)
