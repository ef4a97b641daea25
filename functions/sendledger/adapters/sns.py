"""SNS Publish straight to a phone number (transactional SMS)."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from sendledger.adapters.aws import classify_error, client
from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.templates import Rendered


class SnsSmsSender:
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse:
        try:
            response = client("sns").publish(
                PhoneNumber=to,
                Message=content.text,
                MessageAttributes={
                    "AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"},
                },
            )
        except (ClientError, BotoCoreError) as exc:
            return classify_error(exc)
        return ProviderResponse(
            CallResult.ACCEPTED,
            provider_message_id=response["MessageId"],
            request_id=response.get("ResponseMetadata", {}).get("RequestId"),
        )
