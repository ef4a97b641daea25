"""What moto's SES and SNS backends accepted (the provider side of a send)."""

from __future__ import annotations

from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends
from moto.sns.models import sns_backends


def sent_emails() -> list[Any]:
    return list(ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages)


def sent_sms() -> list[tuple[str, str]]:
    return list(sns_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sms_messages.values())
