"""scripts/system-packages.sh decides from what is on PATH: nothing to do, install, or stop with the command.

Each case runs the real script with PATH pointing at a directory of stubs (a fresh machine has
no chromium; apt-get, sudo and id are stand-ins that record how they were called), so nothing is
installed or removed on this machine.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "system-packages.sh"
INSTALL = "apt-get install -y chromium chromium-driver"
FIRST_SECONDS = 5.0  # "stops in its first seconds"


def stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


class Machine:
    """A PATH with only what a case puts there, and a log of the stubs' calls."""

    def __init__(self, tmp_path: Path) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.calls = tmp_path / "calls"
        self.calls.touch()
        (self.bin / "env").symlink_to(shutil.which("env") or "/usr/bin/env")
        self.uid(0)

    def uid(self, value: int) -> None:
        stub(self.bin, "id", f"echo {value}")

    def has(self, *names: str, body: str = "exit 0") -> None:
        for name in names:
            stub(self.bin, name, f'echo "{name} $*" >> {self.calls}\n{body}')

    def sudo(self, allowed: bool) -> None:
        stub(
            self.bin,
            "sudo",
            f'[ "$1" = "-n" ] && exit {0 if allowed else 1}\necho "sudo $*" >> {self.calls}\nexec "$@"',
        )

    def run(self, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
        began = time.monotonic()
        result = subprocess.run(
            ["/bin/bash", str(SCRIPT), *args],
            env={"PATH": str(self.bin), **env},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return result, time.monotonic() - began

    def logged(self) -> list[str]:
        return self.calls.read_text().splitlines()


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_with_the_browser_present_nothing_is_done(machine: Machine) -> None:
    machine.has("chromium", "chromedriver", "apt-get")
    result, _ = machine.run()
    assert result.returncode == 0 and result.stderr == "" and machine.logged() == []


def test_as_root_the_missing_packages_are_installed(machine: Machine) -> None:
    machine.has("apt-get")
    result, _ = machine.run()
    assert result.returncode == 0, result.stderr
    assert machine.logged() == ["apt-get update -qq", "apt-get install -y -qq chromium chromium-driver"]


def test_otherwise_through_sudo_when_it_needs_no_password(machine: Machine) -> None:
    machine.uid(1000)
    machine.sudo(allowed=True)
    machine.has("apt-get")
    result, _ = machine.run()
    assert result.returncode == 0, result.stderr
    assert [line for line in machine.logged() if line.startswith("sudo")] == [
        "sudo apt-get update -qq",
        "sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver",
    ]


@pytest.mark.parametrize("sudo", ["absent", "asks for a password"])
def test_without_a_way_to_install_it_stops_at_once_with_the_command(machine: Machine, sudo: str) -> None:
    machine.uid(1000)
    if sudo != "absent":
        machine.sudo(allowed=False)
    machine.has("apt-get", "chromium")  # the browser without its driver
    result, seconds = machine.run()
    assert result.returncode == 1 and seconds < FIRST_SECONDS
    assert "missing: chromium-driver" in result.stderr
    assert f"sudo apt-get update && sudo {INSTALL}" in result.stderr
    assert not [line for line in machine.logged() if line.startswith(("apt-get", "sudo"))]


def test_without_apt_get_it_names_the_packages_and_the_skip(machine: Machine) -> None:
    result, seconds = machine.run()
    assert result.returncode == 1 and seconds < FIRST_SECONDS
    assert "chromium chromium-driver" in result.stderr and "SENDLEDGER_SKIP_BROWSER=1" in result.stderr


def test_a_failed_install_says_what_to_run(machine: Machine) -> None:
    machine.has("apt-get", body="exit 100")
    result, _ = machine.run()
    assert result.returncode == 1 and f"apt-get update && {INSTALL}" in result.stderr


def test_a_dry_run_says_what_it_would_run_and_only_simulates(machine: Machine) -> None:
    machine.has("apt-get")
    result, _ = machine.run("--dry-run")
    assert result.returncode == 0 and "would run: apt-get update && " in result.stderr
    assert machine.logged() == ["apt-get install --simulate chromium chromium-driver"]


def test_skipping_the_browser_test_needs_nothing(machine: Machine) -> None:
    result, _ = machine.run(SENDLEDGER_SKIP_BROWSER="1")
    assert result.returncode == 0 and machine.logged() == []
