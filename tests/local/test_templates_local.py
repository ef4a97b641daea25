"""The templates walk a newcomer takes with `make run`, automated: push an English and French
template with `sendledger templates push`, preview it, send it in fr-CA, find the French mail in
the outbox and the version's hash in the message's history and in the export; a second caller
gets 404 for that template."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from sendledger.domain.clock import iso
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.sigv4_support import APP2, signed_request
from tests.local.test_cli_local import ok, sendledger
from tests.local.test_local_stack_http import StackProcess, stack

__all__ = ["stack"]  # the module-scoped local stack (its own process for this module)

TO = "success@simulator.amazonses.com"
SHIPPING = {
    "params": ["name", "order"],
    "email": {
        "subject": "Order ${order} shipped",
        "text": "Hello ${name}, order ${order} is on its way.",
        "html": "<p>Hello ${name}, order <b>${order}</b> is on its way.</p>",
    },
    "sms": {"text": "Order ${order} shipped"},
    "locales": {
        "fr": {
            "email": {
                "subject": "Commande ${order} expédiée",
                "text": "Bonjour ${name}, la commande ${order} est en route.",
            },
            "sms": {"text": "Commande ${order} expédiée, à bientôt"},
        }
    },
}


def test_push_preview_send_in_french_and_prove_the_words(stack: StackProcess, tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    (folder / "shipping").mkdir(parents=True)
    (folder / "shipping" / "1.json").write_text(json.dumps(SHIPPING), encoding="utf-8")
    pushed = json.loads(ok(sendledger(stack, "--json", "templates", "push", str(folder))))["templates"]
    assert [(row["id"], row["version"], row["result"]) for row in pushed] == [("shipping", "1", "published")]
    again = json.loads(ok(sendledger(stack, "--json", "templates", "push", str(folder))))["templates"]
    assert again[0]["result"] == "unchanged" and again[0]["sha256"] == pushed[0]["sha256"]
    changed = {**SHIPPING, "sms": {"text": "Order ${order} sent"}}
    (folder / "shipping" / "1.json").write_text(json.dumps(changed), encoding="utf-8")
    refused = sendledger(stack, "--json", "templates", "push", str(folder))
    assert refused.returncode == 1 and json.loads(refused.stdout)["templates"][0]["result"] == "refused"

    preview = json.loads(
        ok(sendledger(stack, "--json", "templates", "preview", "shipping", "1", "--param", "name=Zoé",
                      "--param", "order=42", "--locale", "fr-CA", "--channel", "sms"))
    )  # fmt: skip
    assert preview["text"] == "Commande 42 expédiée, à bientôt" and preview["locale"] == "fr"
    assert preview["sms"] == {"encoding": "UCS-2", "units": 31, "segments": 1}

    since = datetime.now(UTC) - timedelta(seconds=1)
    sent = json.loads(
        ok(sendledger(stack, "--json", "send", "--channel", "email", "--to", TO, "--template", "shipping",
                      "--param", "name=Zoé", "--param", "order=42", "--locale", "fr-CA"))
    )  # fmt: skip
    assert sent["state"] == "accepted" and sent["template"]["locale"] == "fr"
    outbox = json.loads(ok(sendledger(stack, "--json", "outbox")))
    (mail,) = [entry for entry in outbox if entry.get("subject") == "Commande 42 expédiée"]
    assert "Bonjour Zoé" in mail["text"]

    shown = json.loads(ok(sendledger(stack, "--json", "templates", "show", "shipping", "1")))
    message = json.loads(ok(sendledger(stack, "--json", "show", sent["message_id"])))
    assert message["history"][0]["template"]["sha256"] == shown["sha256"] == pushed[0]["sha256"]
    window = ("--since", iso(since), "--until", iso(datetime.now(UTC) + timedelta(seconds=1)))
    rows = list(csv.DictReader(io.StringIO(ok(sendledger(stack, "export", *window, "--format", "csv")))))
    (row,) = [row for row in rows if row["message_id"] == sent["message_id"]]
    assert (row["template_locale"], row["template_sha256"]) == ("fr", shown["sha256"])

    other = signed_request("GET", f"{stack.url}/v1/templates/shipping/versions/1", credential=APP2)
    assert other.status_code == 404 and other.headers["Content-Type"] == "application/problem+json"
    body = json.dumps({"channel": "email", "to": TO, "template": {"id": "shipping", "version": "1"},
                       "params": {"name": "x", "order": "1"}}).encode()  # fmt: skip
    headers = {"Content-Type": "application/json", "Idempotency-Key": "app2-shipping"}
    refused_send = signed_request("POST", f"{stack.url}/v1/messages", body, headers, credential=APP2)
    assert refused_send.status_code == 422 and refused_send.json()["type"].endswith("/unknown-template")
    listed = requests.get(f"{stack.url}/v1/templates", timeout=REQUEST_TIMEOUT_SECONDS).json()["templates"]
    assert {("shipping", "caller"), ("alert", "deployment")} <= {(t["id"], t["owner"]) for t in listed}
