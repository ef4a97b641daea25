"""The `sendledger` command: the client's calls, as tables for people or JSON for scripts.

Global options come before the subcommand (`sendledger --json show ID`). Every failure is one
line on stderr saying what to do (with `--json`, one JSON object), never a traceback, and ends
the command with the exit code of its kind (EXIT_CODES; docs/cli.md has the same table).
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from sendledger_client.callers_cli import callers
from sendledger_client.cli_tables import (
    events_table,
    message_table,
    one_line,
    outbox_table,
    poll_table,
    reset_tables,
    suppression_table,
)
from sendledger_client.client import DEFAULT_ENDPOINT, SendledgerClient, View
from sendledger_client.conformance import conformance
from sendledger_client.errors import DeadlineExceeded, NoAnswer, NotConfigured, ProblemError
from sendledger_client.templates_cli import parse_params, templates
from sendledger_client.transport import checked_endpoint, is_local

CSV_COLUMNS = (
    "message_id",
    "created_at",
    "channel",
    "to",
    "template_id",
    "template_version",
    "template_locale",
    "template_sha256",
    "state",
    "provider",
    "provider_message_id",
    "reason",
)
PIPED_WIDTH = 200
EXIT_REFUSED = 1  # the API answered 4xx: the request needs changing
EXIT_NO_ANSWER = 2  # a 5xx, no answer at all, or the deadline spent waiting: try again later
EXIT_NOT_CONFIGURED = 3  # no credentials or no region to sign with
EXIT_USAGE = 64  # a bad option or argument (click's own 2 would mean "no answer" here)
EXIT_INTERNAL = 70  # a bug in the command: please report it
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_PIPE_CLOSED = 141  # the reader of stdout went away (`sendledger export | head`)
EXIT_CODES = {
    0: "success",
    EXIT_REFUSED: "the API refused the request (4xx): change it",
    EXIT_NO_ANSWER: "no usable answer (5xx, no connection, timeout, deadline spent waiting): try again later",
    EXIT_NOT_CONFIGURED: "not configured: no AWS credentials or no region to sign with",
    EXIT_USAGE: "usage: a bad option or argument",
    EXIT_INTERNAL: "an unexpected error in the command itself",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_PIPE_CLOSED: "stdout was closed before the output was written",
}


class Context:
    """What every subcommand gets; the client is made on first use, so `--help` needs no config."""

    def __init__(self, connect: Callable[[], SendledgerClient], as_json: bool) -> None:
        self._connect = connect
        self._client: SendledgerClient | None = None
        self.as_json = as_json
        self.out = Console()
        if not self.out.is_terminal:  # piped or captured: no terminal width to fit, keep rows whole
            self.out = Console(width=PIPED_WIDTH)
        self.err = Console(stderr=True)

    @property
    def client(self) -> SendledgerClient:
        if self._client is None:
            self._client = self._connect()
        return self._client

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
@click.option(
    "--sign/--no-sign",
    default=None,
    envvar="SENDLEDGER_SIGN",
    help="sign with SigV4 from the AWS credential chain (default: sign unless the endpoint is local; "
    "--sign for a local stack with SENDLEDGER_LOCAL_AUTH=sigv4)",
)
@click.option("--json", "as_json", is_flag=True, help="machine-readable output: the API's JSON")
@click.option("--deadline", default=30.0, show_default=True, help="seconds one call may wait on Retry-After")
@click.pass_context
def cli(
    ctx: click.Context,
    endpoint: str,
    region: str | None,
    profile: str | None,
    sign: bool | None,
    as_json: bool,
    deadline: float,
) -> None:
    """sendledger: send, look up and export the evidence of transactional email and SMS."""
    ctx.obj = Context(lambda: _connect(endpoint, region, profile, sign, deadline), as_json)
    ctx.meta["endpoint"], ctx.meta["sign"] = endpoint, sign


def _connect(
    endpoint: str, region: str | None, profile: str | None, sign: bool | None, deadline: float
) -> SendledgerClient:
    """A malformed --endpoint is the caller's to fix: a usage error that names it, whatever is configured."""
    try:
        checked_endpoint(endpoint)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--endpoint (or SENDLEDGER_ENDPOINT)") from None
    return SendledgerClient.connect(endpoint, region, profile, sign=sign, deadline_seconds=deadline)


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
@click.option("--locale", default=None, help="the words' language, e.g. fr-CA (falls back to fr, then the default)")
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
    locale: str | None,
) -> None:
    """Send one message (POST /v1/messages)."""
    view = ctx.client.send(
        channel,
        to,
        template_id,
        template_version,
        parse_params(params),
        category=category,
        event_id=event_id,
        idempotency_key=idempotency_key,
        locale=locale,
    )
    ctx.emit(view, message_table)


@cli.command()
@click.argument("message_id")
@pass_context
def show(ctx: Context, message_id: str) -> None:
    """A message with its history."""
    ctx.emit(ctx.client.message(message_id), message_table)


@cli.command()
@click.option("--idempotency-key", default=None)
@click.option("--event-id", default=None)
@click.option("--template-version", default=None)
@pass_context
def find(ctx: Context, idempotency_key: str | None, event_id: str | None, template_version: str | None) -> None:
    """Your message for an Idempotency-Key, or for an event id and template version."""
    if (idempotency_key is None) == (event_id is None) or (event_id is not None) != (template_version is not None):
        raise click.UsageError("give --idempotency-key K, or --event-id E with --template-version V")
    ctx.emit(ctx.client.find(idempotency_key, event_id, template_version), message_table)


@cli.command()
@click.argument("reset_id")
@pass_context
def reset(ctx: Context, reset_id: str) -> None:
    """A password reset's evidence: token versions and the messages sent (never a token)."""
    ctx.emit(ctx.client.reset(reset_id), reset_tables)


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
        "template_locale": template.get("locale"),
        # The first entry's hash of the version's words (the export carries the history).
        "template_sha256": ((view.get("history") or [{}])[0].get("template") or {}).get("sha256"),
    }


# --- suppressions --------------------------------------------------------------------------
@cli.group()
def suppression() -> None:
    """A recipient's suppression state (add/lift need the admin grant)."""


@suppression.command("show")
@click.argument("recipient")
@click.option("--admin", is_flag=True, help="the admin's view: every entry with its actor and reason (admin grant)")
@pass_context
def suppression_show(ctx: Context, recipient: str, admin: bool) -> None:
    view = ctx.client.admin_suppression(recipient) if admin else ctx.client.suppression(recipient)
    ctx.emit(view, suppression_table)


@suppression.command("add")
@click.argument("recipient")
@click.option("--reason", required=True)
@pass_context
def suppression_add(ctx: Context, recipient: str, reason: str) -> None:
    ctx.emit(ctx.client.suppress(recipient, reason), suppression_table)


@suppression.command("lift")
@click.argument("recipient")
@click.option("--reason", required=True)
@pass_context
def suppression_lift(ctx: Context, recipient: str, reason: str) -> None:
    ctx.emit(ctx.client.unsuppress(recipient, reason), suppression_table)


# --- the local stack -----------------------------------------------------------------------
@cli.command()
@pass_context
def outbox(ctx: Context) -> None:
    """What the local simulator's providers accepted, newest last (--json: every field, the HTML too)."""
    rows = ctx.client.outbox()
    ctx.emit(rows, outbox_table)
    if not ctx.as_json:
        # Below the table and never folded at the console's width: a reset link stays one string to copy.
        for row in rows:
            text = one_line(row.get("text"), limit=2000)
            ctx.out.print(f"{row.get('message_id') or ''}: {text}", soft_wrap=True, markup=False, highlight=False)


@cli.command()
@pass_context
def events(ctx: Context) -> None:
    """What reached the local event bus, oldest first."""
    ctx.emit(ctx.client.events(), events_table)


@cli.command()
@pass_context
def poll(ctx: Context) -> None:
    """Run one local poller cycle now (what it did; --json: the whole report)."""
    ctx.emit(ctx.client.poll(), poll_table)


cli.add_command(conformance)
cli.add_command(callers)
cli.add_command(templates)


# --- failures ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Failure:
    """What went wrong, said once: a title, what to do, the exit code, and the API's problem if any."""

    exit_code: int
    title: str
    detail: str
    problem: dict[str, Any] | None = None

    def line(self) -> str:
        return f"sendledger: {self.title}: {self.detail}"

    def document(self) -> dict[str, Any]:
        body = self.problem or {"type": "about:blank", "title": self.title, "detail": self.detail}
        return {**body, "exit_code": self.exit_code}


def _problem_failure(problem: ProblemError, endpoint: str, sign: bool | None) -> Failure:
    # A field error the detail already says (`since: ...` in both) is said once.
    unsaid = [error for error in problem.errors if str(error.get("message")) not in problem.detail]
    fields = "; ".join(f"{error.get('field')}: {error.get('message')}" for error in unsaid)
    detail = problem.detail + (f" ({fields})" if fields else "")
    if problem.status == 403 and is_local(endpoint) and not sign:
        detail += "; to sign requests to the local stack, pass --sign (or set SENDLEDGER_SIGN=1) with its credentials"
    document = {"type": problem.type, "title": problem.title, "status": problem.status, "detail": problem.detail}
    if problem.errors:
        document["errors"] = problem.errors
    code = EXIT_REFUSED if problem.status < 500 else EXIT_NO_ANSWER
    return Failure(code, f"{problem.status} {problem.title}", detail, document)


def _failure(error: BaseException, endpoint: str, sign: bool | None) -> Failure:
    if isinstance(error, ProblemError):
        return _problem_failure(error, endpoint, sign)
    if isinstance(error, DeadlineExceeded):
        return Failure(
            EXIT_NO_ANSWER, "gave up waiting", f"{error.detail}; try again later, or pass a longer --deadline"
        )
    if isinstance(error, NoAnswer):
        todo = (
            "is the local stack running? Start it with `make run`, or pass --endpoint URL"
            if is_local(error.url)
            else "check --endpoint (or SENDLEDGER_ENDPOINT) and the network"
        )
        return Failure(EXIT_NO_ANSWER, "no answer", f"{error.url} ({error.reason}); {todo}")
    if isinstance(error, NotConfigured):
        return Failure(EXIT_NOT_CONFIGURED, "not configured", str(error))
    if isinstance(error, click.UsageError):
        command = error.ctx.command_path if error.ctx is not None else "sendledger"
        return Failure(EXIT_USAGE, "usage", f"{error.format_message()} (see `{command} --help`)")
    if isinstance(error, click.ClickException):
        return Failure(EXIT_USAGE, "usage", error.format_message())
    return Failure(EXIT_INTERNAL, "unexpected error", f"{type(error).__name__}: {error} (please report it)")


def _report(failure: Failure, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(failure.document()), err=True)
    else:
        click.echo(click.style(failure.line(), fg="red") if sys.stderr.isatty() else failure.line(), err=True)


def main(args: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if args is None else args)
    ctx: click.Context | None = None
    try:
        ctx = cli.make_context("sendledger", list(argv))  # click consumes the list it is given
        with ctx:
            cli.invoke(ctx)
    except click.exceptions.NoArgsIsHelpError as bare:  # `sendledger` alone: the help, as a usage error
        click.echo(bare.ctx.get_help() if bare.ctx is not None else bare.format_message(), err=True)
        sys.exit(EXIT_USAGE)
    except click.exceptions.Exit as done:  # --help, --version
        sys.exit(done.exit_code)
    except click.exceptions.Abort:
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more for Python to flush
        sys.exit(EXIT_PIPE_CLOSED)
    except Exception as error:  # every failure the same way: one line (or one JSON object), its exit code
        meta = ctx.meta if ctx is not None else {}
        endpoint = meta.get("endpoint") or os.environ.get("SENDLEDGER_ENDPOINT") or DEFAULT_ENDPOINT
        failure = _failure(error, endpoint, meta.get("sign"))
        _report(failure, "--json" in argv[: _subcommand_index(argv)])
        sys.exit(failure.exit_code)
    sys.exit(0)


def _subcommand_index(argv: list[str]) -> int:
    """Global options come before the subcommand: the first word that is one of its names."""
    return next((i for i, word in enumerate(argv) if word in cli.commands), len(argv))
