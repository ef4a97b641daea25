"""The encoding and billed segments of an SMS text, as carriers count them."""

from __future__ import annotations

import pytest

from sendledger.domain.sms_segments import SmsEncoding, sms_segments


@pytest.mark.parametrize(
    ("text", "encoding", "units", "segments"),
    [
        ("", SmsEncoding.GSM7, 0, 1),
        ("Your code is 123456", SmsEncoding.GSM7, 19, 1),
        ("a" * 160, SmsEncoding.GSM7, 160, 1),
        ("a" * 161, SmsEncoding.GSM7, 161, 2),
        ("a" * 306, SmsEncoding.GSM7, 306, 2),
        ("a" * 307, SmsEncoding.GSM7, 307, 3),
        # Accented letters of the default alphabet stay GSM-7; Greek capitals too.
        ("Réglé à Øre, ΔΣ £5", SmsEncoding.GSM7, 18, 1),
        # Extension characters cost two septets each: 80 euro signs fill one message.
        ("€" * 80, SmsEncoding.GSM7, 160, 1),
        ("€" * 81, SmsEncoding.GSM7, 162, 2),
        # One character outside the alphabet switches the whole text to UCS-2.
        ("ł" * 70, SmsEncoding.UCS2, 70, 1),
        ("ł" * 71, SmsEncoding.UCS2, 71, 2),
        ("ł" * 200, SmsEncoding.UCS2, 200, 3),
        # An emoji is a surrogate pair: two code units.
        ("😀" * 35, SmsEncoding.UCS2, 70, 1),
    ],
)
def test_encoding_and_segments(text: str, encoding: SmsEncoding, units: int, segments: int) -> None:
    counted = sms_segments(text)
    assert (counted.encoding, counted.units, counted.segments) == (encoding, units, segments)


def test_an_escape_pair_is_never_split_across_segments() -> None:
    # 306 septets would fit two segments of 153, but the euro sign at septets 153-154 cannot
    # straddle the boundary: it opens the second segment, and the last letter needs a third.
    counted = sms_segments("a" * 152 + "€" + "a" * 152)
    assert (counted.units, counted.segments) == (306, 3)


def test_a_surrogate_pair_is_never_split_across_segments() -> None:
    counted = sms_segments("ł" * 66 + "😀" + "ł" * 66)
    assert (counted.units, counted.segments) == (134, 3)
