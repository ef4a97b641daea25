"""Signed Event Webhook verification on the reference vector (sendgrid-webhook-signature-vector.json)."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from sendledger.providers.sendgrid.signature import SendGridSignatureVerifier, load_public_key
from tests.providers.formats import provider_format

VECTOR = provider_format("sendgrid-webhook-signature-vector.json")


def verifier(key: str = VECTOR["public_key"]) -> SendGridSignatureVerifier:
    return SendGridSignatureVerifier(lambda: key)


def test_the_reference_signature_verifies_over_timestamp_and_raw_body() -> None:
    assert verifier().verify(VECTOR["timestamp"], VECTOR["body"].encode(), VECTOR["signature"])


def test_the_key_is_accepted_in_pem_form_too() -> None:
    assert verifier(VECTOR["public_key_pem"]).verify(VECTOR["timestamp"], VECTOR["body"].encode(), VECTOR["signature"])


@pytest.mark.parametrize("case", VECTOR["negative_cases"], ids=lambda case: case["case"])
def test_every_negative_case_fails(case: dict[str, str]) -> None:
    timestamp = VECTOR["timestamp"] if case["timestamp"] == "same as timestamp" else case["timestamp"]
    body = VECTOR["body"] if case["body"] == "same as body" else case["body"]
    signature = VECTOR["signature"] if case["signature"] == "same as signature" else case["signature"]
    assert not verifier().verify(timestamp, body.encode(), signature)


@pytest.mark.parametrize(
    "signature",
    ["", "not base64!", VECTOR["signature_p1363_base64"], "AAAA"],
    ids=["empty", "not-base64", "raw-r-s-form", "garbage-der"],
)
def test_unreadable_signatures_fail_without_raising(signature: str) -> None:
    assert not verifier().verify(VECTOR["timestamp"], VECTOR["body"].encode(), signature)


def test_a_key_that_is_not_p256_is_refused() -> None:
    other = ec.generate_private_key(ec.SECP384R1()).public_key()
    der = other.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    with pytest.raises(ValueError, match="P-256"):
        load_public_key(der)
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    pem = rsa_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    with pytest.raises(ValueError, match="P-256"):
        load_public_key(pem)
