"""The Mailgun webhook route's answer body (its request is Mailgun's own JSON, read raw)."""

from __future__ import annotations

from typing import Literal

from sendledger.api.models import Model


class WebhookAccepted(Model):
    """200 (Mailgun counts only 200 as delivered): what became of the event."""

    status: Literal["applied", "duplicate", "ignored"]
