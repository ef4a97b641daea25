"""`sendledger callers ...`: a caller's settings and callback secret (the admin grant needed).

A caller is named by its id, or by an IAM principal ARN (a role session's is its role's): the
command looks the id up first (GET /v1/admin/callers?principal=).
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Group
from rich.table import Table

from sendledger_client.client import SendledgerClient, View

SETTINGS_FIELDS = (
    "caller_id",
    "principal",
    "callback_url",
    "test_mode",
    "flag_context",
    "sms_countries",
    "sms_default_countries",
    "sms_daily_segments",
    "sms_segments_today",
    "updated_at",
    "updated_by",
)


@click.group()
def callers() -> None:
    """A caller's callback URL, test mode, flag context, SMS guardrails and callback secret (admin grant needed)."""


def _caller_id(client: SendledgerClient, caller: str) -> str:
    return str(client.find_caller(caller)["caller_id"]) if caller.startswith("arn:") else caller


@callers.command("show")
@click.argument("caller")
@click.pass_obj
def callers_show(obj: Any, caller: str) -> None:
    """CALLER: a caller id, or a principal ARN (its caller's settings)."""
    view = obj.client.find_caller(caller) if caller.startswith("arn:") else obj.client.caller(caller)
    obj.emit(view, _caller_tables)


@callers.command("set")
@click.argument("caller")
@click.option("--callback-url", default=None, help="https URL whose host resolves to public addresses only")
@click.option("--no-callback", is_flag=True, help="stop POSTing this caller's status events")
@click.option("--test-mode/--no-test-mode", default=None, help="simulated outcomes for this caller's sends")
@click.option("--flag-context", "flag_context", multiple=True, metavar="KEY=VALUE", help="replaces the whole context")
@click.option("--clear-flag-context", is_flag=True, help="no flag context attributes")
@click.option("--sms-allow", metavar="CC,CC", default=None, help="SMS only to these countries (ISO alpha-2)")
@click.option("--sms-block", metavar="CC,CC", default=None, help="SMS to every country but these")
@click.option("--no-sms-countries", is_flag=True, help="no rule of its own: the deployment's default applies")
@click.option("--sms-daily-segments", type=click.IntRange(min=1), default=None, help="billed segments per UTC day")
@click.option("--no-sms-cap", is_flag=True, help="no daily SMS cap")
@click.option("--reason", default=None, help="why: kept in the settings' history")
@click.pass_obj
def callers_set(
    obj: Any,
    caller: str,
    callback_url: str | None,
    no_callback: bool,
    test_mode: bool | None,
    flag_context: tuple[str, ...],
    clear_flag_context: bool,
    sms_allow: str | None,
    sms_block: str | None,
    no_sms_countries: bool,
    sms_daily_segments: int | None,
    no_sms_cap: bool,
    reason: str | None,
) -> None:
    """Change CALLER's settings; the rest keep their value. The first callback URL also makes the
    caller's callback secret: it is printed once (store it in your receiver now)."""
    if callback_url is not None and no_callback:
        raise click.UsageError("give --callback-url URL or --no-callback, not both")
    if flag_context and clear_flag_context:
        raise click.UsageError("give --flag-context KEY=VALUE or --clear-flag-context, not both")
    changes: dict[str, Any] = {}
    if callback_url is not None or no_callback:
        changes["callback_url"] = callback_url
    if test_mode is not None:
        changes["test_mode"] = test_mode
    if flag_context or clear_flag_context:
        changes["flag_context"] = _pairs(flag_context)
    rules = [given for given in (sms_allow, sms_block) if given is not None]
    if len(rules) + no_sms_countries > 1:
        raise click.UsageError("give one of --sms-allow, --sms-block or --no-sms-countries")
    if rules or no_sms_countries:
        mode = "allow" if sms_allow is not None else "block"
        changes["sms_countries"] = {mode: _countries(rules[0])} if rules else None
    if sms_daily_segments is not None and no_sms_cap:
        raise click.UsageError("give --sms-daily-segments N or --no-sms-cap, not both")
    if sms_daily_segments is not None or no_sms_cap:
        changes["sms_daily_segments"] = sms_daily_segments
    if not changes:
        raise click.UsageError(
            "nothing to change: give --callback-url, --no-callback, --test-mode, --flag-context, "
            "--sms-allow, --sms-block, --no-sms-countries, --sms-daily-segments or --no-sms-cap"
        )
    if reason is not None:
        changes["reason"] = reason
    obj.emit(obj.client.set_caller(_caller_id(obj.client, caller), changes), _caller_tables)


@callers.command("rotate-secret")
@click.argument("caller")
@click.pass_obj
def callers_rotate(obj: Any, caller: str) -> None:
    """A new callback secret, printed once; the old one stays valid beside it (every callback is
    signed with both) until `end-rotation`."""
    obj.emit(obj.client.rotate_caller_secret(_caller_id(obj.client, caller)), _caller_tables)


@callers.command("end-rotation")
@click.argument("caller")
@click.pass_obj
def callers_end_rotation(obj: Any, caller: str) -> None:
    """Drop the previous secret, once your receiver holds the new one (refused for five minutes
    after a rotation: 409 with Retry-After)."""
    obj.emit(obj.client.end_caller_rotation(_caller_id(obj.client, caller)), _caller_tables)


def _pairs(given: tuple[str, ...]) -> dict[str, str]:
    pairs = {}
    for pair in given:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--flag-context")
        pairs[key] = value
    return pairs


def _countries(given: str) -> list[str]:
    return [code.strip().upper() for code in given.split(",") if code.strip()]


def _caller_tables(view: View) -> Any:
    table = Table(title="caller", show_header=False)
    table.add_column("field", overflow="fold")
    table.add_column("value", overflow="fold")
    for name in SETTINGS_FIELDS:
        value = view.get(name)
        if name == "principal" and value is None:
            continue
        table.add_row(name, json.dumps(value) if isinstance(value, dict) else "" if value is None else str(value))
    secret = view.get("callback_secret") or {}
    state = "rotating (two valid secrets)" if secret.get("rotating") else "set" if secret.get("configured") else "none"
    table.add_row("callback secret", state + (f" since {secret['rotated_at']}" if secret.get("rotated_at") else ""))
    parts: list[Any] = [table]
    if view.get("history"):
        history = Table(title="changes")
        for column in ("at", "actor", "reason", "changed"):
            history.add_column(column, overflow="fold")
        for entry in view["history"]:
            changed = json.dumps(entry.get("changed") or {}, separators=(",", ":"))
            history.add_row(entry.get("at", ""), entry.get("actor", ""), entry.get("reason") or "", changed)
        parts.append(history)
    if view.get("new_secret"):
        parts.append(f"[bold]new callback secret (shown once, store it now):[/] {view['new_secret']}")
    return Group(*parts)
