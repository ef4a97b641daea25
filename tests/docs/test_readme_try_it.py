"""Every command of the README's "Try it" block, run as a reader runs it, against `make run`.

The stack is `python -m local` (what `make run` starts) on free ports, with nothing else set. The
block is read from the README itself; the reader's placeholders are filled from the answers before
them, as the README says, and each command must succeed: exit 0, and for curl an HTTP status
below 400.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.test_local_stack_http import StackProcess, running_stack

REPO = Path(__file__).resolve().parents[2]
STATUS_MARK = "\nsendledger-readme-status:"


def try_it_commands() -> list[str]:
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Try it", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    joined = block.replace("\\\n", " ")  # continuation lines
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.fixture(scope="module")
def make_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackProcess]:
    with running_stack(tmp_path_factory, "readme", {}) as running:  # make run's own defaults
        yield running


def run(command: str, stack: StackProcess, state: dict[str, str], prelude: list[str]) -> str:
    """``command`` in a shell that first ran ``prelude`` (the block's variable assignments)."""
    host = stack.url.removeprefix("http://")
    command = command.replace("localhost:8080", host)
    for placeholder, found in state.items():
        command = command.replace(placeholder, found)
    unfilled = re.findall(r"<[a-z_ ]+>", command.split("#")[0])
    assert not unfilled, f"{unfilled} not known yet when the README uses them: {command}"
    if command.startswith("curl "):
        command = command.replace("curl ", f"curl -w '{STATUS_MARK}%{{http_code}}' ", 1)
    result = subprocess.run(
        ["bash", "-c", "\n".join([*prelude, command])],
        cwd=REPO,
        env={"PATH": f"{REPO / '.venv' / 'bin'}:/usr/bin:/bin", "SENDLEDGER_ENDPOINT": stack.url, "HOME": "/tmp"},
        capture_output=True,
        text=True,
        timeout=REQUEST_TIMEOUT_SECONDS * 2,
        check=False,
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    output = result.stdout
    if STATUS_MARK in output:
        output, _, status = output.rpartition(STATUS_MARK)
        assert int(status) < 400, f"{command} answered {status}:\n{output}"
    return output


def test_every_try_it_command_runs_against_make_run(make_run: StackProcess) -> None:
    commands = try_it_commands()
    assert len(commands) >= 10 and any(c.startswith(".venv/bin/sendledger") for c in commands)
    state: dict[str, str] = {}
    shell_variables = [command for command in commands if re.match(r"^\w+=", command)]
    for command in commands:
        if command in shell_variables:
            continue
        output = run(command, make_run, state, shell_variables)
        body = output.split("\n\n")[-1]  # curl -si: the body after the headers (newlines read as text)
        if "/v1/messages -H" in command and "<message_id>" not in state:
            state["<message_id>"] = json.loads(body)["message_id"]
        elif "/v1/password-resets -H" in command:
            state["<reset_id>"] = json.loads(body)["reset_id"]
        elif command.endswith("/local/outbox") or "/local/outbox " in command:
            token = re.search(r"reset\?token=([A-Za-z0-9_-]+)", output)
            if token:
                state["<token>"] = token[1]
    assert set(state) == {"<message_id>", "<reset_id>", "<token>"}
