"""An AWS endpoint that answers every call at once with a valid, empty answer: no emulator.

Where a figure is the client's own work (a cold start, a drain's wall time, CPU per event), an
emulator's work would be measured with it; this endpoint does none. It runs in a child process
(``python -m benchmarks.canned``), so its CPU is never the measured process's, and clients
reach it through ``AWS_ENDPOINT_URL`` over a real local socket, as they reach AWS.

- DynamoDB: every write succeeds (``{}``), every read finds nothing.
- SQS: ``ReceiveMessage`` hands out the messages loaded with ``POST /_load`` (each once);
  ``DeleteMessageBatch`` succeeds.
- SES v2 ``SendEmail``, SNS ``Publish`` and EventBridge ``PutEvents`` accept, with fresh ids.
- Every answer waits ``--latency-ms`` first (the modelled round trip; a sleeping server thread,
  so concurrent calls overlap as they do against AWS).
- ``GET /_stats`` returns the calls answered, by operation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

# The modelled in-region round trip of one AWS call, where a figure depends on calls overlapping.
IN_REGION_ROUND_TRIP_MS = 10.0

_SNS_PUBLISH = (
    '<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>{id}'
    "</MessageId></PublishResult><ResponseMetadata><RequestId>{id}</RequestId></ResponseMetadata></PublishResponse>"
)
_EMPTY = {
    "Query": {"Items": [], "Count": 0, "ScannedCount": 0},
    "Scan": {"Items": [], "Count": 0, "ScannedCount": 0},
    "BatchGetItem": {"Responses": {}, "UnprocessedKeys": {}},
    "FilterLogEvents": {"events": [], "searchedLogStreams": []},
    "DeleteMessageBatch": {"Successful": [], "Failed": []},
}


class _State:
    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.lock = threading.Lock()
        self.queue: deque[dict[str, Any]] = deque()
        self.calls: Counter[str] = Counter()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: _State

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes: without this, Nagle's algorithm holds the body
        # until the client's delayed ACK, 40 ms per answer.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *_: Any) -> None:
        return

    def do_GET(self) -> None:
        if self.path == "/_stats":
            with self.state.lock:
                self._send(json.dumps(dict(self.state.calls)).encode(), "application/json")
            return
        self._answer(b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/_load":
            with self.state.lock:
                self.state.queue.extend(_sqs_message(text) for text in json.loads(body))
            self._send(b"{}", "application/json")
            return
        self._answer(body)

    do_PUT = do_POST

    def _answer(self, body: bytes) -> None:
        if self.state.latency:
            time.sleep(self.state.latency)
        operation = str(self.headers.get("X-Amz-Target") or "").rpartition(".")[2]
        if not operation and self.path.endswith("/outbound-emails"):
            operation = "SendEmail"
        elif not operation and b"Action=Publish" in body:
            operation = "Publish"
        with self.state.lock:
            self.state.calls[operation or "other"] += 1
        if operation == "Publish":
            self._send(_SNS_PUBLISH.format(id=uuid.uuid4()).encode(), "text/xml")
            return
        if operation == "SendEmail":
            self._send(json.dumps({"MessageId": f"0100018c{uuid.uuid4().hex}-000000"}).encode(), "application/json")
            return
        self._send(json.dumps(self._json_answer(operation, body)).encode(), "application/x-amz-json-1.0")

    def _json_answer(self, operation: str, body: bytes) -> dict[str, Any]:
        if operation == "ReceiveMessage":
            wanted = int(json.loads(body or b"{}").get("MaxNumberOfMessages", 1))
            with self.state.lock:
                messages = [self.state.queue.popleft() for _ in range(min(wanted, len(self.state.queue)))]
            return {"Messages": messages} if messages else {}
        if operation == "PutEvents":
            entries = json.loads(body or b"{}").get("Entries", [])
            return {"FailedEntryCount": 0, "Entries": [{"EventId": str(uuid.uuid4())} for _ in entries]}
        if operation == "DeleteMessageBatch":
            entries = json.loads(body or b"{}").get("Entries", [])
            return {"Successful": [{"Id": entry["Id"]} for entry in entries], "Failed": []}
        return dict(_EMPTY.get(operation, {}))

    def _send(self, payload: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.end_headers()
        self.wfile.write(payload)


def _sqs_message(body: str) -> dict[str, Any]:
    now = str(int(time.time() * 1000))
    return {
        "MessageId": str(uuid.uuid4()),
        "ReceiptHandle": uuid.uuid4().hex,
        "MD5OfBody": hashlib.md5(body.encode("utf-8")).hexdigest(),
        "Body": body,
        "Attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": now, "ApproximateFirstReceiveTimestamp": now},
    }


class CannedEndpoint:
    """The endpoint in a child process, for a `with` block: `.url`, `.load(bodies)`, `.stats()`."""

    def __init__(self, latency_ms: float = 0.0) -> None:
        root = Path(__file__).resolve().parent.parent
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.canned", "--latency-ms", str(latency_ms)],
            cwd=str(root),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if len(line) != 2 or line[0] != "PORT":
            self.process.kill()
            raise RuntimeError(f"canned endpoint did not start: {line}")
        self.url = f"http://127.0.0.1:{line[1]}"

    def __enter__(self) -> CannedEndpoint:
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)

    def load(self, bodies: list[str]) -> None:
        load_queue(self.url, bodies)

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.url}/_stats", timeout=10) as answer:
            found: dict[str, int] = json.loads(answer.read())
            return found


def load_queue(url: str, bodies: list[str]) -> None:
    """Queue SQS message bodies on the endpoint at ``url`` (a child reads it from AWS_ENDPOINT_URL)."""
    request = urllib.request.Request(f"{url}/_load", data=json.dumps(bodies).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass


def in_poller_child(module: str, args: list[str], marker: str, latency_ms: float = 0.0) -> dict[str, Any]:
    """Run ``python -m <module> <args>`` with a deployed poller's environment against a fresh
    canned endpoint; the JSON it prints after `marker` (a section measured in a process of its own)."""
    from benchmarks.environment import lambda_environment

    root = Path(__file__).resolve().parent.parent
    with CannedEndpoint(latency_ms=latency_ms) as endpoint:
        env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "TMPDIR") if key in os.environ}
        env.update(lambda_environment("sendledger-poller"))
        env.update(AWS_ENDPOINT_URL=endpoint.url, EVENT_BUS_NAME="sendledger-bench")
        env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "functions")])
        completed = subprocess.run(
            [sys.executable, "-m", module, *args],
            cwd=str(root),
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    for line in completed.stdout.splitlines():
        if line.startswith(f"{marker} "):
            found: dict[str, Any] = json.loads(line[len(marker) + 1 :])
            return found
    tail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
    raise RuntimeError(f"{module} measured nothing: {tail}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.canned")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    latency = parser.parse_args().latency_ms / 1000

    class Handler(_Handler):
        state = _State(latency)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
