"""A typed client for the sendledger API, and the `sendledger` command."""

from sendledger_client.client import Page, SendledgerClient
from sendledger_client.errors import DeadlineExceeded, ProblemError
from sendledger_client.transport import HttpTransport, Request, Response, Signer, Transport

__all__ = [
    "DeadlineExceeded",
    "HttpTransport",
    "Page",
    "ProblemError",
    "Request",
    "Response",
    "SendledgerClient",
    "Signer",
    "Transport",
]
