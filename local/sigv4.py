"""AWS Signature Version 4 verification, as API Gateway's IAM authorization checks a request.

The verifier recomputes the signature from the request as received: the canonical request
(method, the path URI-encoded once more, the sorted query, the headers the client says it
signed, the payload's SHA-256), the string to sign for the credential scope it names, and the
HMAC chain keyed with that access key's secret. It answers the credential that signed, or
raises ``SignatureRejected`` saying why, in words a developer can act on.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote, unquote_plus

from botocore.utils import normalize_url_path

from local.constants import ACCOUNT_ID, SIGV4_SERVICE
from sendledger.domain.callers import PrincipalKind, principal_of
from sendledger.domain.errors import UnknownCaller

ALGORITHM = "AWS4-HMAC-SHA256"
AMZ_DATE_FORMAT = "%Y%m%dT%H%M%SZ"
MAX_CLOCK_SKEW = timedelta(minutes=5)  # what AWS allows between the signer's clock and its own
CONTENT_SHA256 = "x-amz-content-sha256"
_AUTH_PARAM = re.compile(r"\s*(Credential|SignedHeaders|Signature)=([^,\s]*)\s*")
_HEX_SHA256 = re.compile(r"[0-9a-f]{64}")
_CREDENTIAL_NAME = re.compile(r"[A-Za-z0-9_+=,.@-]{1,64}")  # an IAM user name


@dataclass(frozen=True)
class LocalCredential:
    """One access key, as the local gateway knows it: an IAM user's, or a role session's."""

    name: str
    access_key: str
    secret_key: str
    account_id: str = ACCOUNT_ID
    caller_arn: str | None = None  # what API Gateway reports as userArn; None: the IAM user <name>

    @property
    def arn(self) -> str:
        return self.caller_arn or f"arn:aws:iam::{self.account_id}:user/{self.name}"

    @property
    def user_id(self) -> str:
        """What API Gateway puts in ``caller`` and ``user`` (IAM's aws:userid): a user's unique
        id (``AIDA...``), a role session's ``AROA...:<session>``, a federated user's
        ``<account>:<name>``, the root user's account id. The unique ids are stable hashes."""
        principal = principal_of(self.arn)
        if principal.kind is PrincipalKind.ROOT:
            return principal.account_id
        if principal.kind is PrincipalKind.FEDERATED_USER:
            return f"{principal.account_id}:{principal.name}"
        digest = hashlib.sha256(principal.arn.encode()).hexdigest().upper()[:17]
        if principal.kind is PrincipalKind.ROLE:
            return f"AROA{digest}:{self.arn.rpartition('/')[2]}"
        return "AIDA" + digest


def parse_credentials(raw: str, account_id: str = ACCOUNT_ID) -> tuple[LocalCredential, ...]:
    """``name:access_key:secret[:caller ARN],...`` (split on the first three colons: an ARN has
    its own); a malformed or repeated entry is a ValueError naming it."""
    found: list[LocalCredential] = []
    for position, entry in enumerate(part.strip() for part in raw.split(",")):
        name, access_key, secret, arn = [*entry.split(":", 3), "", "", ""][:4]
        if not (_CREDENTIAL_NAME.fullmatch(name) and access_key.isalnum() and secret):
            raise ValueError(f"credential {position + 1} is not name:access_key:secret[:caller ARN]")
        if arn:
            try:
                principal_of(arn)
            except UnknownCaller as refused:
                raise ValueError(f"credential {position + 1}: {refused.detail}") from None
        if any(known.name == name or known.access_key == access_key for known in found):
            raise ValueError(f"credential {position + 1} repeats a name or an access key")
        found.append(LocalCredential(name, access_key, secret, account_id, arn or None))
    return tuple(found)


class SignatureRejected(Exception):
    """The request names a signature that does not hold; ``detail`` says which part failed."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True)
class _Authorization:
    access_key: str
    date: str
    region: str
    service: str
    terminator: str
    signed_headers: tuple[str, ...]
    signature: str


def _parse_authorization(value: str) -> _Authorization:
    algorithm, _, rest = value.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise SignatureRejected(f"the Authorization header must use {ALGORITHM}")
    params: dict[str, str] = {}
    for part in rest.split(","):
        match = _AUTH_PARAM.fullmatch(part)
        if match is None or match.group(1) in params:
            raise SignatureRejected("the Authorization header needs Credential, SignedHeaders and Signature, once each")
        params[match.group(1)] = match.group(2)
    if set(params) != {"Credential", "SignedHeaders", "Signature"}:
        raise SignatureRejected("the Authorization header needs Credential, SignedHeaders and Signature, once each")
    scope = params["Credential"].split("/")
    if len(scope) != 5 or not all(scope):
        raise SignatureRejected("Credential must be <access key>/<date>/<region>/<service>/aws4_request")
    signed = tuple(params["SignedHeaders"].split(";"))
    if not all(signed) or list(signed) != sorted(set(signed)) or signed != tuple(h.lower() for h in signed):
        raise SignatureRejected("SignedHeaders must be lower-case header names, sorted, separated by ';'")
    access_key, date, region, service, terminator = scope
    return _Authorization(access_key, date, region, service, terminator, signed, params["Signature"].lower())


def canonical_uri(path: str) -> str:
    """The path as sent, dot segments removed, URI-encoded once more (every service but S3)."""
    return quote(normalize_url_path(path), safe="/~")


def canonical_queries(query: str) -> list[str]:
    """The canonical query string, strictly re-encoded; then the forms signers also produce
    (pairs sorted as sent, and ``+`` read as a space), each tried in turn."""
    pairs = [pair.partition("=") for pair in query.split("&") if pair] if query else []
    forms = []
    for decode in (unquote, unquote_plus):
        encoded = sorted((quote(decode(k), safe="-_.~"), quote(decode(v), safe="-_.~")) for k, _, v in pairs)
        forms.append("&".join(f"{k}={v}" for k, v in encoded))
    forms.append("&".join(f"{k}={v}" for k, v in sorted((k, v) for k, _, v in pairs)))
    return list(dict.fromkeys(forms))


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = hmac.new(f"AWS4{secret}".encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


class SigV4Verifier:
    """Checks ``AWS4-HMAC-SHA256`` signatures for one region and service against known keys."""

    def __init__(
        self,
        credentials: Iterable[LocalCredential],
        *,
        region: str,
        service: str = SIGV4_SERVICE,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        max_skew: timedelta = MAX_CLOCK_SKEW,
    ) -> None:
        self.by_access_key = {credential.access_key: credential for credential in credentials}
        self.region = region
        self.service = service
        self.clock = clock
        self.max_skew = max_skew

    def verify(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> LocalCredential:
        values: dict[str, list[str]] = {}
        for name, value in headers:
            values.setdefault(name.lower(), []).append(value)
        authorizations = values.get("authorization", [])
        if len(authorizations) != 1:
            raise SignatureRejected("send exactly one Authorization header")
        auth = _parse_authorization(authorizations[0])
        credential = self.by_access_key.get(auth.access_key)
        if credential is None:
            raise SignatureRejected("the access key is not one of the local credentials")
        if (auth.region, auth.service, auth.terminator) != (self.region, self.service, "aws4_request"):
            raise SignatureRejected(
                f"the credential scope must be <date>/{self.region}/{self.service}/aws4_request, "
                f"not {auth.date}/{auth.region}/{auth.service}/{auth.terminator}"
            )
        amz_date = self._request_time(values, auth)
        missing = [name for name in ("host", "x-amz-date") if name not in auth.signed_headers]
        missing += [name for name in auth.signed_headers if name not in values]
        if missing:
            raise SignatureRejected(f"signed headers missing from the signature or the request: {', '.join(missing)}")
        payload_hash = self._payload_hash(values, body)
        split_path, _, query = target.partition("?")
        canonical_headers = "".join(
            f"{name}:{','.join(' '.join(value.split()) for value in values[name])}\n" for name in auth.signed_headers
        )
        scope = f"{auth.date}/{auth.region}/{auth.service}/aws4_request"
        key = signing_key(credential.secret_key, auth.date, auth.region, auth.service)
        for canonical_query in canonical_queries(query.partition("#")[0]):
            canonical_request = "\n".join(
                [
                    method,
                    canonical_uri(split_path or "/"),
                    canonical_query,
                    canonical_headers,
                    ";".join(auth.signed_headers),
                    payload_hash,
                ]
            )
            digest = hashlib.sha256(canonical_request.encode("utf-8")).hexdigest()
            string_to_sign = f"{ALGORITHM}\n{amz_date}\n{scope}\n{digest}"
            expected = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
            if hmac.compare_digest(expected, auth.signature):
                return credential
        raise SignatureRejected("the signature does not match the request (method, path, query, headers or body)")

    def _request_time(self, values: dict[str, list[str]], auth: _Authorization) -> str:
        dates = values.get("x-amz-date", [])
        try:
            (amz_date,) = dates
            signed_at = datetime.strptime(amz_date.strip(), AMZ_DATE_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            raise SignatureRejected("send one X-Amz-Date header as YYYYMMDDTHHMMSSZ") from None
        if amz_date.strip()[:8] != auth.date:
            raise SignatureRejected("the credential scope's date is not the X-Amz-Date's")
        skew = abs(self.clock() - signed_at)
        if skew > self.max_skew:
            raise SignatureRejected(
                f"the request was signed at {amz_date.strip()}, {int(skew.total_seconds())} s from the "
                f"gateway's clock (at most {int(self.max_skew.total_seconds())} s): sign it again"
            )
        return amz_date.strip()

    def _payload_hash(self, values: dict[str, list[str]], body: bytes) -> str:
        actual = hashlib.sha256(body).hexdigest()
        declared = values.get(CONTENT_SHA256)
        if declared is None:
            return actual
        if len(declared) != 1 or not _HEX_SHA256.fullmatch(declared[0].strip().lower()):
            raise SignatureRejected(f"{CONTENT_SHA256} must be the body's SHA-256 in hex (payloads are signed)")
        if not hmac.compare_digest(declared[0].strip().lower(), actual):
            raise SignatureRejected(f"the body does not match its {CONTENT_SHA256}")
        return declared[0].strip()
