"""`python -m local` as a developer lives with it: taken ports, signals, what it prints."""

from __future__ import annotations

import ctypes
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
import requests

from local.ports import free_ports
from local.stack import STOP_WAIT_SECONDS
from tests.local.local_support import REPO, REQUEST_TIMEOUT_SECONDS, await_healthy, stack_environment, wait_until

# "At once": the interpreter and the stack's imports, nothing started. Generous for a loaded CI box.
REFUSAL_BUDGET_SECONDS = 20.0
# Gateway and moto shut down within their 0.5 s poll; a cycle in flight gets STOP_WAIT_SECONDS.
STOP_BUDGET_SECONDS = STOP_WAIT_SECONDS + 5.0


@dataclass
class Running:
    process: subprocess.Popen[bytes]
    url: str
    out: Path
    err: Path

    def text(self) -> str:
        return self.out.read_text() + self.err.read_text()


@pytest.fixture
def start(tmp_path: Path) -> Iterator[object]:
    started: list[Running] = []

    def run(**extra: str) -> Running:
        port, moto_port = free_ports(2)
        name = uuid.uuid4().hex[:8]
        out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "local"],
                cwd=REPO,
                env=stack_environment(port, moto_port, {"POLL_INTERVAL_SECONDS": "3600", **extra}),
                stdout=stdout,
                stderr=stderr,
            )
        running = Running(process, f"http://127.0.0.1:{port}", out, err)
        started.append(running)

        await_healthy(process, running.url, running.text)
        return running

    yield run
    for running in started:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()


def exit_within(process: subprocess.Popen[bytes], seconds: float, describe: object) -> tuple[int, float]:
    began = time.monotonic()
    try:
        code = process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"python -m local still ran {seconds:g} s later: {describe() if callable(describe) else describe}")
    return code, time.monotonic() - began


def send_and_poll(url: str) -> str:
    body = {
        "channel": "email",
        "to": "dev@example.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "disk full"},
    }
    sent = requests.post(
        f"{url}/v1/messages", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=REQUEST_TIMEOUT_SECONDS
    )
    assert sent.status_code == 202, sent.text
    assert requests.post(f"{url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200
    return str(sent.json()["message_id"])


@pytest.mark.parametrize(("taken", "variable"), [("moto", "SENDLEDGER_MOTO_PORT"), ("api", "SENDLEDGER_PORT")])
def test_a_taken_port_is_refused_at_once_naming_the_variable_that_moves_it(taken: str, variable: str) -> None:
    port, moto_port = free_ports(2)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", moto_port if taken == "moto" else port))
        holder.listen()
        process = subprocess.Popen(
            [sys.executable, "-m", "local"],
            cwd=REPO,
            env=stack_environment(port, moto_port, {}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = process.communicate(timeout=REFUSAL_BUDGET_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail(f"python -m local did not give up on a taken {taken} port")
    assert process.returncode == 2
    message = err.decode()
    assert variable in message
    assert str(moto_port if taken == "moto" else port) in message
    assert b"sendledger local stack\n" not in out  # no banner: nothing was started
    other = port if taken == "moto" else moto_port
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", other)) != 0  # nothing listens on the other one either


@pytest.mark.parametrize(
    ("setting", "named"),
    [("SENDLEDGER_LOCAL_AUTH=strict", "'open' or 'sigv4'"), ("UNKNOWN_GRACE_SECONDS=soon", "UNKNOWN_GRACE_SECONDS")],
)
def test_a_bad_setting_is_one_line_and_nothing_starts(setting: str, named: str) -> None:
    port, moto_port = free_ports(2)
    name, _, value = setting.partition("=")
    result = subprocess.run(
        [sys.executable, "-m", "local"],
        cwd=REPO,
        env=stack_environment(port, moto_port, {name: value}),
        capture_output=True,
        text=True,
        timeout=REFUSAL_BUDGET_SECONDS,
        check=False,
    )
    assert result.returncode == 2 and named in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.startswith("sendledger local stack: ")
    assert "sendledger local stack\n" not in result.stdout  # no banner: nothing was started
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", moto_port)) != 0


def test_sigterm_stops_every_part_within_seconds_and_the_log_is_one_line_per_request(start: object) -> None:
    running = start()  # type: ignore[operator]
    send_and_poll(running.url)
    running.process.send_signal(signal.SIGTERM)
    code, _ = exit_within(running.process, STOP_BUDGET_SECONDS, running.text)
    assert code == 0
    log = running.err.read_text()
    lines = log.splitlines()
    assert any(" POST /v1/messages 202 " in line for line in lines), log
    assert any(" poll: " in line and "ses_events_published" in line for line in lines), log
    everything = running.text()
    assert '{"_aws":' not in everything  # no EMF metric blobs
    assert "Found credentials" not in everything  # nor botocore's INFO lines
    assert not any(line.lstrip().startswith("{") for line in lines), log  # nothing at INFO from the handlers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tgkill and /proc/<pid>/task are Linux's")
def test_a_sigterm_the_kernel_hands_to_a_worker_thread_still_stops_it(start: object) -> None:
    """A process-directed signal may be taken by any thread; CPython runs the Python handler only
    in the main thread, and only once it executes bytecode again."""
    running = start()  # type: ignore[operator]
    pid = running.process.pid
    workers = sorted(int(task.name) for task in Path(f"/proc/{pid}/task").iterdir() if int(task.name) != pid)
    assert workers, "the stack runs its servers and schedulers on threads"
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(pid, workers[0], signal.SIGTERM) == 0, os.strerror(ctypes.get_errno())
    code, _ = exit_within(running.process, STOP_BUDGET_SECONDS, running.text)
    assert code == 0
    assert "SIGTERM: stopping" in running.err.read_text()


def test_sigint_stops_it_too_and_the_json_format_keeps_the_raw_stream(start: object) -> None:
    running = start(SENDLEDGER_LOCAL_LOG_FORMAT="json")  # type: ignore[operator]
    send_and_poll(running.url)
    running.process.send_signal(signal.SIGINT)
    code, _ = exit_within(running.process, STOP_BUDGET_SECONDS, running.text)
    assert code == 0
    everything = running.text()
    assert '{"_aws":' in everything  # the metrics, as a Lambda's log group gets them
    assert '"provider outcome"' in everything  # the handlers' INFO lines


def test_the_banners_aws_commands_carry_everything_they_need_when_pasted_elsewhere(start: object) -> None:
    running = start()  # type: ignore[operator]
    # Locally a timed-out send is settled in seconds, not the deployed 15 minutes, and the banner says so
    assert "Unknown grace: 20 s" in running.out.read_text()
    assert f".venv/bin/sendledger --endpoint {running.url} outbox" in running.out.read_text()
    commands = [line.strip() for line in running.out.read_text().splitlines() if " aws --endpoint-url " in line]
    assert len(commands) == 2
    for command in commands:
        words = shlex.split(command)
        assignments = dict(word.split("=", 1) for word in words[: words.index("aws")])
        arguments = words[words.index("aws") + 1 :]
        options = dict(zip(arguments[:4:2], arguments[1:4:2], strict=True))
        service, operation, *rest = arguments[4:]
        # Only what the line itself says: no environment, no profile, no config file.
        session = boto3.session.Session(
            aws_access_key_id=assignments["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=assignments["AWS_SECRET_ACCESS_KEY"],
            region_name=options["--region"],
        )
        client = session.client(service, endpoint_url=options["--endpoint-url"])
        parameters = dict(zip(rest[::2], rest[1::2], strict=True))
        if operation == "scan":
            assert "Items" in client.scan(TableName=parameters["--table-name"])
        else:
            assert any(url.endswith("/sendledger-ses-events") for url in client.list_queues()["QueueUrls"])
    cli = shutil.which("aws")
    if cli is not None:  # where the AWS CLI is installed, run the line as pasted into a bare shell
        bare = {"PATH": os.environ["PATH"], "HOME": str(running.out.parent)}
        pasted = subprocess.run(
            ["sh", "-c", commands[1]], env=bare, capture_output=True, text=True, timeout=60, check=False
        )
        assert pasted.returncode == 0, pasted.stderr
        assert "sendledger-ses-events" in pasted.stdout
    running.process.send_signal(signal.SIGTERM)
    exit_within(running.process, STOP_BUDGET_SECONDS, running.text)


OUTBOX_NAMED_SECONDS = 15  # the local stream's poll and the publisher's batch, with room for a loaded machine


def test_the_outbox_names_sendledgers_message_for_email_and_sms(start: object) -> None:
    running = start()  # type: ignore[operator]
    email_id = send_and_poll(running.url)
    sms = requests.post(
        f"{running.url}/v1/messages",
        json={
            "channel": "sms",
            "to": "+12065550100",
            "template": {"id": "alert", "version": "1"},
            "params": {"summary": "disk full"},
        },
        headers={"Idempotency-Key": uuid.uuid4().hex},
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    assert sms.status_code == 202, sms.text
    sent = {email_id, sms.json()["message_id"]}

    def named() -> dict[str, dict[str, object]]:
        outbox = requests.get(f"{running.url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()
        return {entry["message_id"]: entry for entry in outbox}

    # The SMS entry is named once the publisher has written its receipt from the ledger stream.
    by_id = wait_until(named, OUTBOX_NAMED_SECONDS, "both outbox entries named", done=lambda found: set(found) == sent)
    mail = by_id[email_id]
    assert mail["from"] and mail["html"].startswith("<") and mail["provider"] == "ses"
    assert by_id[sms.json()["message_id"]]["provider"] == "sns"
    for message_id in by_id:
        view = requests.get(f"{running.url}/v1/messages/{message_id}", timeout=REQUEST_TIMEOUT_SECONDS).json()
        assert view["provider_message_id"] == by_id[message_id]["provider_message_id"]
    running.process.send_signal(signal.SIGTERM)
    exit_within(running.process, STOP_BUDGET_SECONDS, running.text)
