"""SendGrid Signed Event Webhook: ECDSA P-256 / SHA-256 over timestamp + raw body (`cryptography`).

The verification key is the one SendGrid shows for the account: base64 of a DER
SubjectPublicKeyInfo (PEM armour is accepted too). The signature header is base64 of a DER
ECDSA-Sig-Value. Verification is over the bytes as received: a parsed and re-serialised body
does not verify.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key, load_pem_public_key


def load_public_key(text: str) -> ec.EllipticCurvePublicKey:
    """A P-256 public key from SendGrid's one-line base64 DER form or from PEM."""
    text = text.strip()
    key = (
        load_pem_public_key(text.encode())
        if text.startswith("-----BEGIN")
        else load_der_public_key(base64.b64decode(text, validate=True))
    )
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("the SendGrid verification key is not a P-256 public key")
    return key


class SendGridSignatureVerifier:
    """Verifies with the configured key, read through `public_key` (a cached secret) per call."""

    def __init__(self, public_key: Callable[[], str]) -> None:
        self.public_key = public_key
        self._loaded: tuple[str, ec.EllipticCurvePublicKey] | None = None

    def verify(self, timestamp: str, body: bytes, signature: str) -> bool:
        try:
            der = base64.b64decode(signature, validate=True)
        except (binascii.Error, ValueError):
            return False
        try:
            self._key().verify(der, timestamp.encode("utf-8") + body, ec.ECDSA(hashes.SHA256()))
        except (InvalidSignature, ValueError):
            return False
        return True

    def _key(self) -> ec.EllipticCurvePublicKey:
        text = self.public_key()
        if self._loaded is None or self._loaded[0] != text:  # a rotated key is picked up with the secret
            self._loaded = (text, load_public_key(text))
        return self._loaded[1]
