"""SES v2 SendEmail with the configuration set and the sendledger message-id tag."""

from __future__ import annotations

from typing import Any

from sendledger.adapters.aws import client, provider_call
from sendledger.domain.provider import ProviderResponse
from sendledger.domain.templates import Rendered
from sendledger.providers.ses import ESCALATES_TAG, MESSAGE_ID_TAG


class SesEmailSender:
    def __init__(self, sender: str, configuration_set: str) -> None:
        self.sender = sender
        self.configuration_set = configuration_set

    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        body: dict[str, Any] = {"Text": {"Data": content.text, "Charset": "UTF-8"}}
        if content.html:
            body["Html"] = {"Data": content.html, "Charset": "UTF-8"}
        return provider_call(
            lambda: client("sesv2").send_email(
                FromEmailAddress=self.sender,
                Destination={"ToAddresses": [to]},
                Content={"Simple": {"Subject": {"Data": content.subject or "", "Charset": "UTF-8"}, "Body": body}},
                ConfigurationSetName=self.configuration_set,
                # The tags come back on every SES event: the id proves acceptance of a timed-out call.
                EmailTags=[
                    {"Name": MESSAGE_ID_TAG, "Value": message_id},
                    {"Name": ESCALATES_TAG, "Value": "1" if escalates else "0"},
                ],
            )
        )
