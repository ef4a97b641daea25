"""SNS Publish straight to a phone number (transactional SMS)."""

from __future__ import annotations

from sendledger.adapters.aws import client, provider_call
from sendledger.domain.provider import ProviderResponse
from sendledger.domain.templates import Rendered


class SnsSmsSender:
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse:
        return provider_call(
            lambda: client("sns").publish(
                PhoneNumber=to,
                Message=content.text,
                MessageAttributes={"AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"}},
            )
        )
