"""How a carrier encodes an SMS text and how many segments it bills (3GPP TS 23.038 / 23.040).

A text made only of the GSM 03.38 default alphabet and its extension table travels as GSM-7:
160 septets in one message, 153 per segment once concatenated (the user-data header takes 7),
and each extension character costs two septets (escape + character), which a carrier never
splits across segments. Anything else travels as UCS-2: 70 UTF-16 code units in one message,
67 per segment, a surrogate pair (an emoji) never split. Templates preview with it; the SMS
guardrails count the daily cap in these segments.
"""

from __future__ import annotations

from enum import StrEnum

from sendledger.domain.values import value

GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
) - {"\x1b"}  # the escape itself is how the extension table is reached, not a character to send
GSM7_EXTENSION = frozenset("^{}\\[~]|€\f")

GSM7_SINGLE = 160
GSM7_CONCATENATED = 153
UCS2_SINGLE = 70
UCS2_CONCATENATED = 67


class SmsEncoding(StrEnum):
    GSM7 = "GSM-7"
    UCS2 = "UCS-2"


@value
class SmsSegments:
    encoding: SmsEncoding
    units: int  # septets (GSM-7) or UTF-16 code units (UCS-2)
    segments: int  # what a carrier bills: 1 for an empty text, as for any message


def sms_segments(text: str) -> SmsSegments:
    """The encoding a carrier chooses for `text` and the segments it bills."""
    if all(ch in GSM7_BASIC or ch in GSM7_EXTENSION for ch in text):
        costs = [2 if ch in GSM7_EXTENSION else 1 for ch in text]
        return _count(SmsEncoding.GSM7, costs, GSM7_SINGLE, GSM7_CONCATENATED)
    costs = [2 if ord(ch) > 0xFFFF else 1 for ch in text]
    return _count(SmsEncoding.UCS2, costs, UCS2_SINGLE, UCS2_CONCATENATED)


def _count(encoding: SmsEncoding, costs: list[int], single: int, per_segment: int) -> SmsSegments:
    units = sum(costs)
    if units <= single:
        return SmsSegments(encoding=encoding, units=units, segments=1)
    # Concatenated: fill each segment with whole characters; a two-unit character (an escape
    # pair, a surrogate pair) that does not fit starts the next segment.
    segments, used = 1, 0
    for cost in costs:
        if used + cost > per_segment:
            segments, used = segments + 1, 0
        used += cost
    return SmsSegments(encoding=encoding, units=units, segments=segments)
