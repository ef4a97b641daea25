"""The POST goes to the vetted address, with TLS verified for the URL's host: a real HTTPS
server on 127.0.0.1 with a certificate for `hooks.test` (a CA of the test's own), no DNS."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sendledger.adapters.callbacks_http import UrllibEndpoint
from sendledger.domain.caller_settings import CallbackUrl, parse_callback_url

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def _cert(subject: str, issuer_key: ec.EllipticCurvePrivateKey | None, issuer: x509.Name | None, ca: bool):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False)
    return key, builder.sign(issuer_key or key, hashes.SHA256())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, ssl.SSLContext, list[dict[str, str]]]]:
    folder: Path = tmp_path_factory.mktemp("tls")
    ca_key, ca = _cert("sendledger test CA", None, None, ca=True)
    key, cert = _cert("hooks.test", ca_key, ca.subject, ca=False)
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append({"host": self.headers["Host"], "path": self.path})
            self.send_response(302 if self.path == "/redirect" else 204)
            if self.path == "/redirect":
                self.send_header("Location", "https://hooks.test/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    httpd.socket = serving.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    trusting = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    yield httpd.server_address[1], trusting, seen
    httpd.shutdown()
    httpd.server_close()


def url(text: str) -> CallbackUrl:
    # The server listens on a loopback port of its own: the local stack's allowance (any port)
    parsed = parse_callback_url(text, allow_http=True)
    assert isinstance(parsed, CallbackUrl)
    return parsed


def test_the_post_reaches_the_vetted_address_verified_for_the_urls_host(server) -> None:
    port, trusting, seen = server
    status = UrllibEndpoint(trusting).post(url(f"https://hooks.test:{port}/hook?x=1"), [LOOPBACK], b"{}", {}, 5)
    assert status == 204 and seen[-1] == {"host": f"hooks.test:{port}", "path": "/hook?x=1"}


def test_a_certificate_for_another_host_or_an_untrusted_one_gets_no_answer(server) -> None:
    port, trusting, seen = server
    before = len(seen)
    assert UrllibEndpoint(trusting).post(url(f"https://other.test:{port}/hook"), [LOOPBACK], b"{}", {}, 5) is None
    assert UrllibEndpoint().post(url(f"https://hooks.test:{port}/hook"), [LOOPBACK], b"{}", {}, 5) is None
    assert len(seen) == before  # the TLS handshake failed: no request was sent


def test_a_redirect_is_an_answer_and_is_not_followed(server) -> None:
    port, trusting, seen = server
    before = len(seen)
    status = UrllibEndpoint(trusting).post(url(f"https://hooks.test:{port}/redirect"), [LOOPBACK], b"{}", {}, 5)
    assert status == 302 and len(seen) == before + 1
