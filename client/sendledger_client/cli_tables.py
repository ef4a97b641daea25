"""How the `sendledger` command shows an answer to a person: rich tables, one per kind of view.

Ids fold onto the next line rather than being cut short (they are what one copies); free text is
one line, cut with an ellipsis. `--json` bypasses all of this and prints the view itself.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.table import Table

from sendledger_client.client import View


def _table(*columns: str, title: str, show_header: bool = True) -> Table:
    """Ids fold onto the next line rather than being cut short: they are what one copies."""
    table = Table(title=title, show_header=show_header)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _history_table(history: list[dict[str, Any]]) -> Table:
    table = _table("at", "type", "state", "evidence", title="history")
    for entry in history:
        evidence = {k: v for k, v in entry.items() if k not in ("at", "type", "state")}
        table.add_row(entry.get("at"), entry.get("type"), entry.get("state") or "", json.dumps(evidence))
    return table


def _fields_table(title: str, view: View, names: tuple[str, ...]) -> Table:
    table = _table("field", "value", title=title, show_header=False)
    for name in names:
        value = view.get(name)
        table.add_row(
            name, json.dumps(value) if isinstance(value, dict | list) else str(value if value is not None else "")
        )
    return table


def message_table(view: View) -> Any:
    names = (
        "message_id",
        "state",
        "channel",
        "to",
        "template",
        "category",
        "provider",
        "provider_message_id",
        "reason",
    )
    parts: list[Any] = [_fields_table("message", view, (*names, "created_at", "updated_at"))]
    if view.get("history"):
        parts.append(_history_table(view["history"]))
    return Group(*parts)


def reset_tables(view: View) -> Any:
    names = ("reset_id", "account_id", "state", "created_at", "expires_at", "replaces", "replaced_by")
    tokens = _table("version", "minted_at", "invalidated_at", "invalidated_because", title="token versions")
    for version in view.get("token_versions", []):
        tokens.add_row(
            str(version["version"]),
            version["minted_at"],
            version.get("invalidated_at") or "",
            version.get("invalidated_because") or "",
        )
    messages = _table("message_id", "state", "to", "provider_message_id", "updated_at", title="messages")
    for message in view.get("messages", []):
        messages.add_row(
            message["message_id"],
            message["state"],
            message.get("to", ""),
            message.get("provider_message_id") or "",
            message.get("updated_at", ""),
        )
    return Group(_fields_table("reset", view, names), tokens, messages)


def suppression_table(view: View) -> Any:
    fields = ("recipient", "suppressed", "reason_class", "reason", "since", "version")  # reason: the admin's view
    parts: list[Any] = [_fields_table("suppression", view, tuple(f for f in fields if f in view))]
    if view.get("history"):
        parts.append(_history_table(view["history"]))
    return Group(*parts)


def one_line(text: Any, limit: int = 160) -> str:
    words = " ".join(str(text or "").split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


def outbox_table(rows: list[dict[str, Any]]) -> Table:
    """One row per accepted message; its text part is printed below the table (`outbox`)."""
    table = _table("sent_at", "provider", "to", "subject", "message_id", title="outbox")
    for row in rows:
        table.add_row(
            str(row.get("sent_at", "")),
            str(row.get("provider") or row.get("channel") or ""),
            str(row.get("to", "")),
            one_line(row.get("subject")),
            str(row.get("message_id") or ""),
        )
    return table


def poll_table(summary: dict[str, Any]) -> Table:
    """What one cycle did: each count that is not zero, then each message it settled."""
    found = summary.get("poller")
    poller: dict[str, Any] = found if isinstance(found, dict) else {}
    counts = {**(summary.get("flush") or {}), **poller, **(poller.get("resolved") or {})}
    table = _table("what", "count", title="poll cycle")
    for name, value in counts.items():
        if type(value) is int and value:
            table.add_row(name, str(value))
    for entry in poller.get("resolved_messages") or []:
        table.add_row(f"{entry.get('message_id')}", str(entry.get("outcome")))
    if not table.row_count:
        table.add_row("nothing to do", "0")
    return table


def _event_change(detail: dict[str, Any]) -> tuple[str, str, str]:
    """(subject, change, why) of one state-change or suppression event."""
    if "message_id" in detail:
        change = f"{detail.get('previous_state') or '-'} -> {detail.get('state')}"
        template = detail.get("template") or {}
        why = detail.get("reason") or f"{detail.get('channel')} {template.get('id')} v{template.get('version')}"
        return str(detail["message_id"]), change, str(why)
    state = "suppressed" if detail.get("suppressed") else "sendable"
    actor = f" by {detail['actor']}" if detail.get("actor") else ""
    return (
        str(detail.get("recipient", "")),
        f"{state} (v{detail.get('version')})",
        f"{detail.get('reason') or ''}{actor}",
    )


def events_table(rows: list[dict[str, Any]]) -> Table:
    table = _table("time", "event", "subject", "change", "why", title="events")
    for row in rows:
        detail = row.get("detail")
        subject, change, why = _event_change(detail if isinstance(detail, dict) else {})
        kind = str(row.get("detail-type", "")).removeprefix("sendledger.")
        table.add_row(str(row.get("time", "")), kind, subject, change, one_line(why))
    return table
