"""Callers' template versions: one ledger item per version, `TEMPLATE#<caller id>` / `V#<id>#<version>`.

Written once, with `attribute_not_exists` (two publishes of one version at once: one writes, the
other reads back what won); retiring sets `retired_at` on the same item. The send path reads a
version at most once per container (usecases/templates.py caches it), with GetItem; a listing
queries the caller's partition for the small attributes only (never the words).

A caller's reset-mail pointer, `TEMPLATE#<caller id>` / `RESET`, holds a copy of its latest
version of `password-reset` that is not retired (words included), so a reset request reads one
item; it is rewritten after every publish or retirement of such a version, conditional on its
`revision` (the last writer has read every version written before it).

The attribute names are declared here and by the model (models.py: TemplateVersionItem takes
them from here), so the send path reads the item without importing PynamoDB on a cold start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sendledger.adapters.dynamodb.expressions import Expression, Item, Update, decode, decode_item, encode_item
from sendledger.adapters.dynamodb.table import ConditionFailed, Table, dependency_guard
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.recipients import Channel
from sendledger.domain.template_rules import parse_version
from sendledger.domain.template_versions import RESET_TEMPLATE_ID
from sendledger.ports.templates import ResetMailPointer, StoredVersion, VersionSummary

TEMPLATE_PK_PREFIX, TEMPLATE_SK_PREFIX = "TEMPLATE#", "V#"
BODY, SHA256, CHANNELS, LOCALES = "body", "sha256", "channels", "locales"
PUBLISHED_AT, RETIRED_AT = "published_at", "retired_at"
VERSION, REVISION = "version", "revision"  # the reset-mail pointer's
RESET_MAIL_SK = "RESET"
SUMMARY_ATTRIBUTES = ("sk", SHA256, CHANNELS, LOCALES, PUBLISHED_AT, RETIRED_AT)


def template_pk(owner: CallerId) -> str:
    """The caller id never contains "#"; ids and versions never do either (their pattern)."""
    return f"{TEMPLATE_PK_PREFIX}{owner}"


def template_sk(template_id: str, version: str) -> str:
    return f"{TEMPLATE_SK_PREFIX}{template_id}#{version}"


@dataclass
class DynamoTemplates:
    table: Table

    def get(self, owner: CallerId, template_id: str, version: str) -> StoredVersion | None:
        item = self.table.get(template_pk(owner), template_sk(template_id, version))
        return stored_from(owner, item) if item else None

    def put_new(self, stored: StoredVersion) -> StoredVersion | None:
        item, e = version_item(stored), Expression()
        try:
            self.table.put(item, e.absent("pk"), e)
        except ConditionFailed as failed:
            if failed.old is None:  # the old image is always there when the item exists
                assert stored.owner is not None
                found = self.get(stored.owner, stored.version.id, stored.version.version)
                return found or stored
            return stored_from(CallerId(stored.owner or ""), failed.old)
        return None

    def versions(self, owner: CallerId, template_id: str | None = None) -> list[VersionSummary]:
        prefix = template_sk(template_id, "") if template_id else TEMPLATE_SK_PREFIX
        request: dict[str, Any] = {
            "TableName": self.table.name,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": template_pk(owner)}, ":prefix": {"S": prefix}},
            "ProjectionExpression": ", ".join(f"#a{n}" for n in range(len(SUMMARY_ATTRIBUTES))),
            "ExpressionAttributeNames": {f"#a{n}": name for n, name in enumerate(SUMMARY_ATTRIBUTES)},
        }
        found: list[VersionSummary] = []
        while True:
            with dependency_guard():
                page = self.table.client.query(**request)
            found += [summary_from(item) for item in page.get("Items", [])]
            if not page.get("LastEvaluatedKey"):
                return found
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def retire(self, owner: CallerId, template_id: str, version: str, at: datetime) -> StoredVersion | None:
        update = Update().set_if_absent(RETIRED_AT, iso(at))
        update.when(update.present("pk"))
        try:
            item = self.table.update(template_pk(owner), template_sk(template_id, version), update, "ALL_NEW")
        except ConditionFailed:
            return None
        return stored_from(owner, item)

    def reset_mail(self, owner: CallerId) -> ResetMailPointer:
        item = self.table.get(template_pk(owner), RESET_MAIL_SK)
        if not item:
            return ResetMailPointer(None)
        revision = int(decode(item[REVISION]))
        if VERSION not in item:
            return ResetMailPointer(None, revision)
        sk = {"S": template_sk(RESET_TEMPLATE_ID, decode(item[VERSION]))}
        return ResetMailPointer(stored_from(owner, {**item, "sk": sk}), revision)

    def point_reset_mail(self, owner: CallerId, stored: StoredVersion | None, revision: int) -> bool:
        e = Expression()
        fields: dict[str, Any] = {"pk": template_pk(owner), "sk": RESET_MAIL_SK, REVISION: revision + 1}
        if stored is not None:
            words = decode_item(version_item(stored))
            fields |= {name: words[name] for name in (BODY, SHA256, CHANNELS, LOCALES, PUBLISHED_AT) if name in words}
            fields[VERSION] = stored.version.version
        condition = e.absent("pk") if revision == 0 else e.equals(REVISION, revision)
        try:
            self.table.put(encode_item(fields), condition, e)
        except ConditionFailed:
            return False
        return True


def version_item(stored: StoredVersion) -> Item:
    version, owner = stored.version, stored.owner
    assert owner is not None, "the deployment's versions are files, never items"
    assert stored.published_at is not None
    return encode_item(
        {
            "pk": template_pk(owner),
            "sk": template_sk(version.id, version.version),
            BODY: version.canonical().decode(),
            SHA256: version.sha256,
            CHANNELS: ",".join(sorted(version.channels())),
            LOCALES: ",".join(sorted(version.locales)) or None,
            PUBLISHED_AT: iso(stored.published_at),
            RETIRED_AT: iso(stored.retired_at) if stored.retired_at else None,
        }
    )


def _id_and_version(sk: str) -> tuple[str, str]:
    template_id, _, version = sk.removeprefix(TEMPLATE_SK_PREFIX).partition("#")
    return template_id, version


def stored_from(owner: CallerId, item: Item) -> StoredVersion:
    values = {name: decode(value) for name, value in item.items()}
    template_id, version = _id_and_version(values["sk"])
    parsed = parse_version(template_id, version, json.loads(values[BODY]))
    if parsed.version is None:  # written by put_new after the same checks: never
        raise ValueError(f"stored template {template_id!r} v{version} no longer parses: {parsed.problems}")
    retired = values.get(RETIRED_AT)
    return StoredVersion(
        owner, parsed.version, parse_iso(values[PUBLISHED_AT]), parse_iso(retired) if retired else None
    )


def summary_from(item: Item) -> VersionSummary:
    values = {name: decode(value) for name, value in item.items()}
    template_id, version = _id_and_version(values["sk"])
    retired = values.get(RETIRED_AT)
    return VersionSummary(
        id=template_id,
        version=version,
        sha256=values[SHA256],
        channels=tuple(Channel(name) for name in values[CHANNELS].split(",")),
        locales=tuple(values[LOCALES].split(",")) if values.get(LOCALES) else (),
        published_at=parse_iso(values[PUBLISHED_AT]),
        retired_at=parse_iso(retired) if retired else None,
    )
