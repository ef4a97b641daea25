"""Run the reliability suite and write docs/reliability.md with what that run measured.

    python -m tests.reliability.report [extra pytest args]      (make reliability-report)
    SENDLEDGER_SOAK=1 python -m tests.reliability.report        (the long Hypothesis run)

pytest runs in a subprocess (``-n 2`` unless the extra arguments choose otherwise). Every test
process adds what it did to ``tests.reliability.faults.FIGURES``; the suite's conftest writes
those counters to ``SENDLEDGER_RELIABILITY_FIGURES`` at session end, one file per process, and
the JUnit XML gives the outcomes. Nothing in the document is a constant: each figure is summed
from this run's files, and the command exits with pytest's status.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"
SUITE = "tests/reliability"
SEED_VARIABLE = "SENDLEDGER_HYPOTHESIS_SEED"
MUTATION_START, MUTATION_END = "<!-- mutation:start -->", "<!-- mutation:end -->"


def run_suite(extra: list[str], workdir: Path) -> tuple[int, float, Path]:
    junit = workdir / "junit.xml"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", SUITE]
    if not any(a == "-n" or a.startswith("-n") for a in extra):
        args[3:3] = ["-n", "2"]
    os.environ.setdefault(SEED_VARIABLE, str(secrets.randbelow(2**32)))  # known here, shared by the run
    env = {**os.environ, "SENDLEDGER_RELIABILITY_FIGURES": str(workdir)}
    started = time.monotonic()
    completed = subprocess.run([*args, *extra], cwd=ROOT, env=env, check=False)
    return completed.returncode, time.monotonic() - started, junit


def figures(workdir: Path) -> Counter[str]:
    total: Counter[str] = Counter()
    for path in workdir.glob("figures-*.json"):
        total.update(json.loads(path.read_text()))
    return total


def outcomes(junit: Path) -> dict[str, object]:
    cases = ET.parse(junit).getroot().iter("testcase") if junit.exists() else iter(())
    counts: Counter[str] = Counter()
    known_bugs: list[tuple[str, str]] = []
    failures: list[str] = []
    for case in cases:
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            counts["failed"] += 1
            failures.append(name)
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            counts["xfailed"] += 1
            known_bugs.append((name, skipped.get("message", "")))
        elif skipped is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return {"counts": counts, "known_bugs": known_bugs, "failures": failures}


WHAT_IT_PROVES = [
    "## What these figures prove, and what they do not",
    "",
    "Checked after every schedule, stateful step and concurrent request, against the real table",
    "(moto) and the provider's own record of what it accepted, by one watch per run:",
    "",
    "- no provider call for a recipient whose suppression was in force when the send was decided",
    "  (each SendEmail/Publish is seen at the call and judged against the suppression item's",
    "  version and the message's last send decision);",
    "- each source event applied at most once (one history entry per event id), and none lost once",
    "  the poller is quiescent (the poller-kill and concurrency tests count them);",
    "- a message's state only moves along the contract's lifecycle (a hand-written table, not the",
    "  product's): never backwards in the outcome order;",
    "- a poll cursor is never ahead of what is persisted, and no queue message is deleted before",
    "  its event is: the poller is killed at every request of a cycle and rerun;",
    "- history is append-only across the whole run; never two accepted sends per intent; never two",
    "  valid tokens per account (and only the one the model saw mailed last can work); no intent",
    "  lost (a defined state, unsettled rows on due work, idempotency record and message together);",
    "- every schedule ends with the poller run to quiescence: settled means terminal or unresolved;",
    "- status out (ledger stream → publisher → bus → rule → SQS → callbacks → receiver, Lambda's",
    "  event sources emulated): every change the stream holds reaches the bus with its event_id (or",
    "  its record the publisher's on-failure destination), nothing is published or called back that",
    "  the ledger does not hold, and every event on the bus reaches a receiver that verifies its",
    "  signature, or waits in the callback DLQ after the documented backoff.",
    "",
    "Secrets: no reset token outside the mail (logs, metrics, answers, histories, every table",
    "item), no raw address in logs, constant-time comparison on hashes, lockout after",
    "RESET_MAX_FAILED_ATTEMPTS.",
    "",
    "What they do not prove: behaviour against real AWS (moto emulates DynamoDB's conditions and",
    "transactions, not its partitions, throttling or eventual consistency of GSIs); concurrency",
    "beyond what the serialized moto server interleaves (requests are atomic there); paths the",
    "model did not reach in this run (the hard-path rows above say how often each was reached);",
    "provider behaviour beyond the simulator's mailbox addresses and labels. A green run is",
    "evidence for the examples drawn with this seed, not for every sequence.",
]


def render(figs: Counter[str], result: dict[str, object], runtime: float, status: int, extra: list[str]) -> str:
    counts: Counter[str] = result["counts"]  # type: ignore[assignment]
    known_bugs: list[tuple[str, str]] = result["known_bugs"]  # type: ignore[assignment]
    failures: list[str] = result["failures"]  # type: ignore[assignment]
    soak = os.environ.get("SENDLEDGER_SOAK") == "1"
    outcomes_line = ", ".join(
        f"{k.removeprefix('concurrency_outcome ')}: {v}"
        for k, v in sorted(figs.items())
        if k.startswith("concurrency_outcome ")
    )
    command = (
        " ".join(["pytest -n 2", SUITE, *extra])
        if not any(a.startswith("-n") for a in extra)
        else " ".join(["pytest", SUITE, *extra])
    )
    lines = [
        "# Reliability and security proof — measured run",
        "",
        "Generated by `python -m tests.reliability.report` (`make reliability-report`); every figure",
        "below was counted during this run. Do not edit by hand (the mutation section at the end is",
        "written by `make mutation` and kept as it is).",
        "",
        f"- date (UTC): {datetime.now(UTC).strftime('%Y-%m-%d %H:%M:%S')}",
        f"- command: `{command}`{' with SENDLEDGER_SOAK=1' if soak else ''}",
        f"- runtime: {runtime:.1f} s on {os.cpu_count()} CPU(s), Python {platform.python_version()}",
        f"- pytest exit status: {status}",
        f"- Hypothesis seed: {os.environ.get(SEED_VARIABLE)} (rerun with `{SEED_VARIABLE}=<seed>`)",
        "",
        "## Outcomes",
        "",
        "| tests passed | failed (violations) | known product bugs (strict xfail) | skipped |",
        "|---:|---:|---:|---:|",
        f"| {counts['passed']} | {counts['failed']} | {counts['xfailed']} | {counts['skipped']} |",
        "",
        "## Figures",
        "",
        "| what | count |",
        "|---|---:|",
        f"| fault schedules run (named matrix + random multi-fault, messages and resets) | {figs['fault_schedules']} |",
        f"| of which random multi-fault schedules (Hypothesis examples) | {figs['random_fault_schedules']} |",
        f"| stateful model: Hypothesis examples | {figs['stateful_examples']} |",
        f"| stateful model: steps (rules run) | {figs['stateful_steps']} |",
        f"| stateful model: poll cycles / poll cycles killed mid-way | {figs['stateful_poll_cycles']} / "
        f"{figs['stateful_poll_kills']} |",
        f"| stateful model: SES acceptances / SES events published | {figs['stateful_ses_acceptances']} / "
        f"{figs['stateful_events_published']} |",
        f"| concurrency: runs / threads (containers or pollers at once) | {figs['concurrency_runs']} / "
        f"{figs['concurrency_threads']} |",
        f"| concurrency: outcomes | {outcomes_line or '—'} |",
        f"| concurrency: event applies redelivered after a lost race | {figs['concurrency_event_redeliveries']} |",
        f"| requests fuzzed by schemathesis (no 5xx allowed) | {figs['fuzzed_requests']} |",
        f"| faults injected in schedules: armed / fired | {figs['faults_armed']} / {figs['faults_fired']} |",
        f"| schedules recovered by the poller to quiescence | {figs['recoveries_to_quiescence']} |",
        f"| poller killed at every request of a cycle: kill points / kills | {figs['poller_kill_points']} / "
        f"{figs['poller_kills']} |",
        f"| stateful model: provider faults / suppressions between intent and send | "
        f"{figs['stateful_provider_faults']} / {figs['stateful_suppressed_between_intent_and_send']} |",
        f"| stateful model: tokens consumed (the model's own oracle said they work) | "
        f"{figs['stateful_tokens_consumed']} |",
        f"| hard paths reached (all tests): lease expiries / proven absences / resends / unresolved | "
        f"{figs['reached_lease_expiries']} / {figs['reached_proven_absences']} / {figs['reached_resends']} / "
        f"{figs['reached_unresolved']} |",
        f"| regressions refused (a late event recorded, state kept) | {figs['reached_regressions_refused']} |",
        f"| status out: fault schedules run / checks (ledger → bus → receiver) | {figs['status_out_schedules']} / "
        f"{figs['status_out_checks']} |",
        f"| status out: PutEvents entries refused in a 200 / publisher kills | {figs['status_out_entries_refused']} / "
        f"{figs['status_out_publisher_kills']} |",
        f"| status out: events put twice (same id) / callbacks received twice (dropped by id) | "
        f"{figs['status_out_duplicates_on_bus']} / {figs['status_out_duplicate_callbacks']} |",
        f"| status out: callbacks dead-lettered / never answered (backoff to the DLQ) / killed after the POST | "
        f"{figs['status_out_dead_lettered']} / {figs['status_out_blackholed_callbacks']} / "
        f"{figs['status_out_callbacks_killed_after_post']} |",
        f"| stateful model: publisher batches / entries refused / publisher kills / batches redelivered | "
        f"{figs['stateful_publisher_batches']} / {figs['stateful_put_entries_refused']} / "
        f"{figs['stateful_publisher_kills']} / {figs['stateful_stream_redeliveries']} |",
        f"| stateful model: callback batches / with a failing receiver / killed after a POST / retries expired / "
        f"dead-lettered | {figs['stateful_callback_batches']} / {figs['stateful_callbacks_failed']} / "
        f"{figs['stateful_callbacks_killed_after_post']} / {figs['stateful_callback_retries_expired']} / "
        f"{figs['stateful_callbacks_dead_lettered']} |",
        f"| provider calls judged against the recipient's suppression | {figs['provider_calls_judged']} |",
        f"| invariant checks performed (whole-ledger scans) | {figs['invariant_checks']} |",
        f"| invariant violations found | {counts['failed']} |",
        "",
        *WHAT_IT_PROVES,
        "",
        "## Known product bugs (failing tests marked `xfail(strict=True)`)",
        "",
    ]
    if known_bugs:
        seen: set[str] = set()
        for name, message in known_bugs:
            reason = message.removeprefix("reason: ")
            if reason in seen:
                lines.append(f"- `{name}` (same bug)")
                continue
            seen.add(reason)
            lines.append(f"- `{name}`: {reason}")
        observed = {k: v for k, v in figs.items() if k.startswith("known_bug_")}
        if observed:
            lines += ["", "Times the stateful model and matrix met a known bug's signature (tolerated, counted):", ""]
            lines += [f"- {k.removeprefix('known_bug_')}: {v}" for k, v in sorted(observed.items())]
    else:
        lines.append("None.")
    if failures:
        lines += ["", "## Failures in this run", ""] + [f"- `{name}`" for name in failures]
    return "\n".join(lines) + "\n"


def kept_mutation_section() -> str:
    """`make mutation` owns the part of the document between its markers: carried over as it is."""
    text = DOC.read_text() if DOC.exists() else ""
    start, end = text.find(MUTATION_START), text.find(MUTATION_END)
    if start < 0 or end < start:
        return ""
    return "\n" + text[start : end + len(MUTATION_END)] + "\n"


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="sendledger-reliability-") as tmp:
        workdir = Path(tmp)
        status, runtime, junit = run_suite(argv, workdir)
        figs, result = figures(workdir), outcomes(junit)
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(render(figs, result, runtime, status, argv) + kept_mutation_section())
    print(f"wrote {DOC.relative_to(ROOT)} (pytest exit status {status}, {runtime:.1f} s)")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
