"""`sendledger conformance --provider all` against `python -m local`: four passing legs (a complaint after
delivery suppressing in each, with its measured times), and a stack
whose retry skips the lookup makes the run exit non-zero (its failing conditions named)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sendledger_client.cli import cli
from sendledger_client.complaint_leg import CONDITION as COMPLAINT_ROW
from sendledger_client.complaint_leg import TIMES
from sendledger_client.conformance import CONDITIONS, PROVIDERS, SMS_LEGS, SMS_REFUSED

from sendledger import names
from tests.local.test_local_stack_http import StackProcess, running_stack

# The test polls itself; a fast grace lets a sabotaged retry come due within the leg. The local
# callers may not text Tuvalu: each SMS leg's number of a refused country.
QUIET = {
    names.ENV_POLL_INTERVAL_SECONDS: "3600",
    "SENDLEDGER_LOCAL_CALLER_SETTINGS": json.dumps({"sms_countries": {"block": ["TV"]}}),
}
REFUSED_NUMBER = "+688901234"


def conformance(url: str, report: Path, *legs: str) -> tuple[int, str, dict[str, object]]:
    arguments = ["--endpoint", url, "conformance", "--json", str(report), "--retry-delay", "1", "--deadline", "60"]
    arguments += ["--refused-sms-number", REFUSED_NUMBER]
    for leg in legs:
        arguments += ["--provider", leg]
    result = CliRunner().invoke(cli, arguments)
    return result.exit_code, result.output, json.loads(report.read_text())


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackProcess]:
    with running_stack(tmp_path_factory, "conformance-stack", QUIET) as running:
        yield running


def test_every_provider_leg_passes_every_condition(stack: StackProcess, tmp_path: Path) -> None:
    status, output, report = conformance(stack.url, tmp_path / "report.json")
    assert status == 0, output
    legs = report["legs"]
    assert isinstance(legs, list) and [leg["provider"] for leg in legs] == list(PROVIDERS)
    for leg in legs:
        sms_row = [SMS_REFUSED] if leg["provider"] in SMS_LEGS else []
        assert [row["condition"] for row in leg["conditions"]] == [*CONDITIONS, COMPLAINT_ROW, *sms_row]
        assert all(row["passed"] for row in leg["conditions"]), leg
        assert leg["evidence"]["provider_message_id"], "the final provider id is in the record"
        times = leg["times"]
        assert set(times) == set(TIMES) and all(isinstance(times[name], float) for name in TIMES), times
        assert all(0 <= times[name] < 60 for name in TIMES), times
    assert all(provider in output for provider in PROVIDERS) and "FAIL" not in output
    assert "complaint -> suppressed" in output


def test_a_retry_that_skips_the_lookup_fails_the_run(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    sabotage = ("tests/local/sabotaged_local.py",)
    settings = {**QUIET, names.ENV_UNKNOWN_GRACE_SECONDS: "1"}
    with running_stack(tmp_path_factory, "sabotaged-stack", settings, command=sabotage) as sabotaged:
        status, output, report = conformance(sabotaged.url, tmp_path / "report.json", "ses")
    assert status != 0 and "FAIL" in output
    [leg] = report["legs"]  # type: ignore[misc]
    failed = {row["condition"] for row in leg["conditions"] if not row["passed"]}
    assert {"one_accepted_message", "no_blind_retry"} <= failed, leg
