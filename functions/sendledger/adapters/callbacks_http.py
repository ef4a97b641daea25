"""The callback receiver over HTTPS: one POST to an address vetted beforehand, no redirects.

The connection goes to the IP address the use case vetted (domain/callback_targets.py), never
to a name resolved here: DNS that answers a public address to the check and 10.0.0.5 to the
connect (a rebind) has nothing left to answer. TLS still verifies the certificate for the
URL's host (SNI and hostname check), and the Host header names it, so a receiver behind a CDN
or a load balancer sees an ordinary request. http.client follows no redirect: a 3xx is an
answer, not 2xx, retried like any other.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from collections.abc import Sequence
from functools import cache

from sendledger.domain.callback_targets import IPAddress
from sendledger.domain.caller_settings import CallbackUrl


@cache
def _system_tls() -> ssl.SSLContext:
    """Certificate and hostname verification, the system's CAs: loaded by the first POST (about
    20 ms), so the publisher, which shares this composition root, never pays it."""
    return ssl.create_default_context()


class _PinnedHttps(http.client.HTTPSConnection):
    """An HTTPS connection to `address`, TLS and Host for the URL's host."""

    def __init__(self, url: CallbackUrl, address: IPAddress, timeout: float, tls: ssl.SSLContext) -> None:
        super().__init__(url.host, url.port, timeout=timeout, context=tls)
        self.address = address
        self.tls = tls

    def connect(self) -> None:
        raw = socket.create_connection((str(self.address), self.port), self.timeout)
        try:
            self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise


class _PinnedHttp(http.client.HTTPConnection):
    """Plain HTTP: only ever to a loopback receiver, where the local stack allows it."""

    def __init__(self, url: CallbackUrl, address: IPAddress, timeout: float) -> None:
        super().__init__(url.host, url.port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((str(self.address), self.port), self.timeout)


class UrllibEndpoint:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._tls = tls  # tests give a context that trusts their own CA

    @property
    def tls(self) -> ssl.SSLContext:
        return self._tls or _system_tls()

    def post(
        self,
        url: CallbackUrl,
        addresses: Sequence[IPAddress],
        body: bytes,
        headers: dict[str, str],
        timeout_seconds: float,
    ) -> int | None:
        """The receiver's status, or None when it gave none within `timeout_seconds` in all.

        A socket timeout bounds each socket operation, not the request: a receiver that accepts
        and trickles bytes could hold one POST for many timeouts, and with it the whole batch
        past the function's timeout. The POST runs on its own thread and is abandoned at the
        deadline (its socket timeout then ends it).
        """
        answer: list[int | None] = []
        thread = threading.Thread(
            target=lambda: answer.append(_post(url, addresses, body, headers, timeout_seconds, self.tls)),
            name="callback-post",
            daemon=True,
        )
        thread.start()
        thread.join(timeout_seconds)
        return answer[0] if answer else None


def _post(
    url: CallbackUrl,
    addresses: Sequence[IPAddress],
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    tls: ssl.SSLContext,
) -> int | None:
    for address in addresses:  # the next vetted address only when one cannot be connected to
        connection: http.client.HTTPConnection = (
            _PinnedHttps(url, address, timeout, tls) if url.secure else _PinnedHttp(url, address, timeout)
        )
        try:
            connection.connect()
        except OSError:
            connection.close()
            continue
        try:
            connection.request("POST", url.target, body=body, headers=headers)
            return int(connection.getresponse().status)
        except (http.client.HTTPException, OSError):
            return None  # no answer, or none that HTTP can read (a malformed or cut-off status line)
        finally:
            connection.close()
    return None


class SocketResolver:
    """The system resolver (getaddrinfo): every address, IPv4 and IPv6, in its order.

    getaddrinfo takes no timeout (the resolver's own retries can take tens of seconds): with a
    deadline, the lookup runs on its own thread and is abandoned at it, as a POST is.
    """

    def addresses(self, host: str, timeout_seconds: float | None = None) -> list[str]:
        if timeout_seconds is None:
            return _lookup(host)
        found: list[list[str]] = []
        thread = threading.Thread(target=lambda: found.append(_lookup(host)), name="callback-dns", daemon=True)
        thread.start()
        thread.join(timeout_seconds)
        return found[0] if found else []


def _lookup(host: str) -> list[str]:
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in found))
