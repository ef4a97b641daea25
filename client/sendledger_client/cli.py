"""The `sendledger` command: the client's calls, as tables for people or JSON for scripts.

Global options come before the subcommand (`sendledger --json show ID`). Any 4xx/5xx exits
non-zero with the problem's title and detail on stderr.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from sendledger_client.client import DEFAULT_ENDPOINT, SendledgerClient, View
from sendledger_client.conformance import conformance
from sendledger_client.errors import DeadlineExceeded, ProblemError

CSV_COLUMNS = (
    "message_id",
    "created_at",
    "channel",
    "to",
    "template_id",
    "template_version",
    "state",
    "provider",
    "provider_message_id",
    "reason",
)
PIPED_WIDTH = 200
EXIT_CLIENT_ERROR = 1  # a 4xx: the request needs changing
EXIT_SERVER_ERROR = 2  # a 5xx, a deadline spent waiting, or no answer at all


class Context:
    def __init__(self, client: SendledgerClient, as_json: bool) -> None:
        self.client = client
        self.as_json = as_json
        self.out = Console()
        if not self.out.is_terminal:  # piped or captured: no terminal width to fit, keep rows whole
            self.out = Console(width=PIPED_WIDTH)
        self.err = Console(stderr=True)

    def emit(self, value: Any, render: Callable[[Any], Any] | None = None) -> None:
        if self.as_json or render is None:
            click.echo(json.dumps(value, indent=2))
        else:
            self.out.print(render(value))


pass_context = click.make_pass_decorator(Context)


@click.group()
@click.option("--endpoint", envvar="SENDLEDGER_ENDPOINT", default=DEFAULT_ENDPOINT, show_default=True)
@click.option("--region", default=None, help="for SigV4 (default: from the endpoint or the AWS config)")
@click.option("--profile", default=None, help="AWS profile for the credential chain")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output: the API's JSON")
@click.option("--deadline", default=30.0, show_default=True, help="seconds one call may wait on Retry-After")
@click.pass_context
def cli(
    ctx: click.Context, endpoint: str, region: str | None, profile: str | None, as_json: bool, deadline: float
) -> None:
    """sendledger: send, look up and export the evidence of transactional email and SMS."""
    try:
        client = SendledgerClient.connect(endpoint, region, profile, deadline_seconds=deadline)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None
    ctx.obj = Context(client, as_json)


# --- messages ------------------------------------------------------------------------------
@cli.command()
@click.option("--channel", type=click.Choice(["email", "sms"]), required=True)
@click.option("--to", "to", required=True)
@click.option("--template", "template_id", required=True, help="template id, e.g. alert")
@click.option("--template-version", default="1", show_default=True)
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE")
@click.option("--category", type=click.Choice(["transactional", "alert", "security"]), default=None)
@click.option("--event-id", default=None)
@click.option("--idempotency-key", default=None, help="default: a new key for this call (reused on its retries)")
@pass_context
def send(
    ctx: Context,
    channel: str,
    to: str,
    template_id: str,
    template_version: str,
    params: tuple[str, ...],
    category: str | None,
    event_id: str | None,
    idempotency_key: str | None,
) -> None:
    """Send one message (POST /v1/messages)."""
    values = {}
    for param in params:
        name, sep, value = param.partition("=")
        if not sep:
            raise click.BadParameter(f"{param!r} is not NAME=VALUE", param_hint="--param")
        values[name] = value
    view = ctx.client.send(
        channel,
        to,
        template_id,
        template_version,
        values,
        category=category,
        event_id=event_id,
        idempotency_key=idempotency_key,
    )
    ctx.emit(view, _message_table)


@cli.command()
@click.argument("message_id")
@pass_context
def show(ctx: Context, message_id: str) -> None:
    """A message with its history."""
    ctx.emit(ctx.client.message(message_id), _message_table)


@cli.command()
@click.option("--idempotency-key", default=None)
@click.option("--event-id", default=None)
@click.option("--template-version", default=None)
@pass_context
def find(ctx: Context, idempotency_key: str | None, event_id: str | None, template_version: str | None) -> None:
    """Your message for an Idempotency-Key, or for an event id and template version."""
    if (idempotency_key is None) == (event_id is None) or (event_id is not None) != (template_version is not None):
        raise click.UsageError("give --idempotency-key K, or --event-id E with --template-version V")
    ctx.emit(ctx.client.find(idempotency_key, event_id, template_version), _message_table)


@cli.command()
@click.argument("reset_id")
@pass_context
def reset(ctx: Context, reset_id: str) -> None:
    """A password reset's evidence: token versions and the messages sent (never a token)."""
    ctx.emit(ctx.client.reset(reset_id), _reset_tables)


# --- export --------------------------------------------------------------------------------
@cli.command()
@click.option("--since", required=True, help="RFC 3339, inclusive")
@click.option("--until", required=True, help="RFC 3339, exclusive (at most 31 days after --since)")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True)
@click.option("--out", "out", type=click.File("w", encoding="utf-8"), default="-", help="default: stdout")
@click.option("--limit", type=click.IntRange(1, 1000), default=None, help="messages per page")
@pass_context
def export(ctx: Context, since: str, until: str, fmt: str, out: IO[str], limit: int | None) -> None:
    """Every message you created in [since, until), oldest first, each with its history."""
    writer: csv.DictWriter[str] | None = None
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
    with _progress(ctx, out) as advance:
        for page in ctx.client.export_pages(since, until, limit):
            for view in page.messages:
                if writer is not None:
                    writer.writerow(_csv_row(view))
                else:
                    out.write(json.dumps(view, separators=(",", ":")) + "\n")
            advance(len(page.messages))
    out.flush()


@contextmanager
def _progress(ctx: Context, out: IO[str]) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr when it is a terminal; never mixed into the exported lines."""
    if not ctx.err.is_terminal:
        yield lambda _: None
        return
    columns = (SpinnerColumn(), TextColumn("exported {task.completed} messages"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=ctx.err, transient=out is sys.stdout) as progress:
        task = progress.add_task("export", total=None)
        yield lambda count: progress.advance(task, count)


def _csv_row(view: View) -> dict[str, Any]:
    template = view.get("template") or {}
    return {
        **{name: view.get(name) for name in CSV_COLUMNS},
        "template_id": template.get("id"),
        "template_version": template.get("version"),
    }


# --- suppressions --------------------------------------------------------------------------
@cli.group()
def suppression() -> None:
    """A recipient's suppression state (add/lift need the admin grant)."""


@suppression.command("show")
@click.argument("recipient")
@pass_context
def suppression_show(ctx: Context, recipient: str) -> None:
    ctx.emit(ctx.client.suppression(recipient), _suppression_table)


@suppression.command("add")
@click.argument("recipient")
@click.option("--reason", required=True)
@pass_context
def suppression_add(ctx: Context, recipient: str, reason: str) -> None:
    ctx.emit(ctx.client.suppress(recipient, reason), _suppression_table)


@suppression.command("lift")
@click.argument("recipient")
@click.option("--reason", required=True)
@pass_context
def suppression_lift(ctx: Context, recipient: str, reason: str) -> None:
    ctx.emit(ctx.client.unsuppress(recipient, reason), _suppression_table)


# --- the local stack -----------------------------------------------------------------------
@cli.command()
@pass_context
def outbox(ctx: Context) -> None:
    """What the local simulator's SES/SNS accepted."""
    ctx.emit(ctx.client.outbox(), lambda rows: _rows_table("outbox", rows))


@cli.command()
@pass_context
def events(ctx: Context) -> None:
    """What reached the local event bus."""
    ctx.emit(ctx.client.events(), lambda rows: _rows_table("events", rows))


@cli.command()
@pass_context
def poll(ctx: Context) -> None:
    """Run one local poller cycle now."""
    ctx.emit(ctx.client.poll())


cli.add_command(conformance)


# --- rendering -----------------------------------------------------------------------------
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


def _message_table(view: View) -> Any:
    from rich.console import Group

    names = ("message_id", "state", "channel", "to", "template", "category", "provider_message_id", "reason")
    parts: list[Any] = [_fields_table("message", view, (*names, "created_at", "updated_at"))]
    if view.get("history"):
        parts.append(_history_table(view["history"]))
    return Group(*parts)


def _reset_tables(view: View) -> Any:
    from rich.console import Group

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


def _suppression_table(view: View) -> Any:
    from rich.console import Group

    parts: list[Any] = [_fields_table("suppression", view, ("recipient", "suppressed", "reason", "since", "version"))]
    if view.get("history"):
        parts.append(_history_table(view["history"]))
    return Group(*parts)


def _rows_table(title: str, rows: Any) -> Any:
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        return json.dumps(rows, indent=2)
    columns = list(rows[0])
    table = _table(*columns, title=title)
    for row in rows:
        table.add_row(*(str(row.get(column, "")) for column in columns))
    return table


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except ProblemError as problem:
        Console(stderr=True).print(f"[bold red]{problem.status} {problem.title}[/]: {problem.detail}", highlight=False)
        for error in problem.errors:
            Console(stderr=True).print(f"  {error.get('field')}: {error.get('message')}", highlight=False)
        sys.exit(EXIT_CLIENT_ERROR if problem.status < 500 else EXIT_SERVER_ERROR)
    except DeadlineExceeded as exc:
        Console(stderr=True).print(f"[bold red]gave up waiting[/]: {exc.detail}", highlight=False)
        sys.exit(EXIT_SERVER_ERROR)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except OSError as exc:  # no answer at all (connection refused, DNS, timeout)
        Console(stderr=True).print(f"[bold red]no answer[/]: {exc}", highlight=False)
        sys.exit(EXIT_SERVER_ERROR)
