"""`sendledger templates ...`: your template versions (and the deployment's), push, preview, retire.

`push DIR` publishes a folder of `<id>/<version>.json`: what is new is published, what is
there with the same body is reported unchanged, and a changed version is refused (versions
never change: publish a new one). The exit status is 1 when anything was refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from sendledger_client.client import View
from sendledger_client.errors import ProblemError

PUSHED, UNCHANGED, REFUSED = "published", "unchanged", "refused"


@click.group()
def templates() -> None:
    """Your templates and the deployment's: push a folder, list, show, preview, retire."""


@templates.command("push")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.pass_obj
def push(obj: Any, folder: Path) -> None:
    """Publish FOLDER's `<id>/<version>.json` files that are new; refuse changed ones."""
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*/*.json")):
        template_id, version = path.parent.name, path.stem
        row: dict[str, Any] = {"id": template_id, "version": version}
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            status, view = obj.client.publish_template(template_id, version, body)
        except json.JSONDecodeError as exc:
            row.update(result=REFUSED, detail=f"not JSON: {exc}")
        except ProblemError as problem:
            if problem.status >= 500:
                raise
            errors = [f"{e.get('field')}: {e.get('message')}" for e in problem.errors]
            row.update(result=REFUSED, detail="; ".join([problem.detail, *errors]))
        else:
            row.update(result=PUSHED if status == 201 else UNCHANGED, sha256=view["sha256"])
            if view.get("notes"):
                row["detail"] = "; ".join(view["notes"])
        rows.append(row)
    if not rows:
        raise click.UsageError(f"{folder} has no <id>/<version>.json file")
    obj.emit({"templates": rows}, _push_table)
    if any(row["result"] == REFUSED for row in rows):
        raise SystemExit(1)


@templates.command("list")
@click.argument("template_id", required=False)
@click.pass_obj
def list_templates(obj: Any, template_id: str | None) -> None:
    """Your versions and the deployment's (of TEMPLATE_ID, or all)."""
    obj.emit(obj.client.templates(template_id), _list_table)


@templates.command("show")
@click.argument("template_id")
@click.argument("version")
@click.pass_obj
def show(obj: Any, template_id: str, version: str) -> None:
    """The version a send of yours would use, its body and its SHA-256."""
    obj.emit(obj.client.template_version(template_id, version), _show)


@templates.command("preview")
@click.argument("template_id")
@click.argument("version")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE")
@click.option("--locale", default=None, help="e.g. fr-CA (falls back to fr, then the default)")
@click.option("--channel", type=click.Choice(["email", "sms"]), default="email", show_default=True)
@click.pass_obj
def preview(
    obj: Any, template_id: str, version: str, params: tuple[str, ...], locale: str | None, channel: str
) -> None:
    """Render as a send would (SMS: its encoding and billed segments); nothing is sent."""
    obj.emit(obj.client.preview_template(template_id, version, parse_params(params), channel, locale), _preview)


@templates.command("retire")
@click.argument("template_id")
@click.argument("version")
@click.pass_obj
def retire(obj: Any, template_id: str, version: str) -> None:
    """New sends of the version are refused (422 template-retired); resends still render it."""
    obj.emit(obj.client.retire_template(template_id, version), _show)


def parse_params(params: tuple[str, ...]) -> dict[str, str]:
    """`--param NAME=VALUE` options (a send's, a preview's) as the params object."""
    values = {}
    for param in params:
        name, sep, value = param.partition("=")
        if not sep:
            raise click.BadParameter(f"{param!r} is not NAME=VALUE", param_hint="--param")
        values[name] = value
    return values


def _push_table(view: View) -> Table:
    table = Table("id", "version", "result", "sha256 / detail", title="push")
    for row in view["templates"]:
        table.add_row(row["id"], row["version"], row["result"], row.get("detail") or row.get("sha256", ""))
    return table


def _list_table(view: View) -> Table:
    table = Table("id", "version", "owner", "channels", "locales", "retired_at", "sha256", title="templates")
    for found in view["templates"]:
        table.add_row(
            found["id"],
            found["version"],
            found["owner"],
            ",".join(found["channels"]),
            ",".join(found["locales"]),
            found.get("retired_at") or "",
            found["sha256"][:16],
        )
    return table


def _show(view: View) -> Table:
    table = Table("field", "value", title=f"{view['id']} v{view['version']}", show_header=False)
    for name in ("owner", "sha256", "channels", "locales", "published_at", "retired_at"):
        table.add_row(name, json.dumps(view.get(name)) if isinstance(view.get(name), list) else str(view.get(name)))
    table.add_row("body", json.dumps(view["body"], indent=2, ensure_ascii=False))
    return table


def _preview(view: View) -> Table:
    table = Table("field", "value", title=f"{view['id']} v{view['version']} ({view['channel']})", show_header=False)
    for name in ("owner", "locale", "subject", "text", "html"):
        if view.get(name) is not None:
            table.add_row(name, str(view[name]))
    if view.get("sms"):
        sms = view["sms"]
        table.add_row("sms", f"{sms['encoding']}, {sms['units']} units, {sms['segments']} segment(s) billed")
    return table
