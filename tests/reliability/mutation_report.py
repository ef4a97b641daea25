"""`make mutation`: mutmut over the domain, the named sabotages, and their section of docs/reliability.md.

1. mutmut 3 over functions/sendledger/domain with the unit tests. mutmut names each mutant
   after its file path (only a leading `src/` is dropped) and matches it against the module the
   tests imported; the tests import `sendledger.*` from functions/ (pytest's pythonpath), so run
   from the repository root every mutant would be "no tests". It runs instead from a staging
   root, mutants/mutmut/, where functions/sendledger is laid out as src/sendledger: the layout
   mutmut maps. `[tool.mutmut]` in pyproject.toml is written relative to that root.
2. The named sabotages against the reliability suite (tests/reliability/sabotage.py); those that
   name their own fast killers against those tests only.
3. The section between MARK_START and MARK_END of docs/reliability.md is replaced (appended
   when absent); tests/reliability/report.py regenerates the rest and keeps it verbatim.

Exit status: non-zero when a named sabotage survived or errored, or mutmut failed to run.
The domain score is reported, not gated.

    python -m tests.reliability.mutation_report                  # everything (make mutation)
    python -m tests.reliability.mutation_report --skip-mutmut    # reuse mutants/mutmut.json
    python -m tests.reliability.mutation_report --skip-sabotage  # reuse mutants/sabotage.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

from tests.reliability import sabotage

ROOT = sabotage.ROOT
RESULTS_DIR = sabotage.RESULTS_DIR
STAGE = RESULTS_DIR / "mutmut"
MUTMUT_JSON = RESULTS_DIR / "mutmut.json"
MUTMUT_LOG = RESULTS_DIR / "mutmut.log"
TOTAL_JSON = RESULTS_DIR / "mutation.json"  # wall time of the last full run
MUTMUT = ROOT / ".venv" / "bin" / "mutmut"
DOCS = ROOT / "docs" / "reliability.md"
MARK_START, MARK_END = "<!-- mutation:start -->", "<!-- mutation:end -->"
PACKAGE = "functions/sendledger/"

# Hand-written notes on surviving domain mutants, by mutant name (see them with
# `cd mutants/mutmut && ../../.venv/bin/mutmut show NAME`). A note whose mutant no longer
# survives is simply not shown.
D = "sendledger.domain."
SURVIVOR_NOTES: dict[str, str] = {
    f"{D}messages.x_can_transition__mutmut_13": "test gap: `>` → `>=` lets an outcome move to an equal rank "
    "(bounced → failed, delivered → delivered); no unit test refuses an equal-rank move",
    f"{D}suppression_rules.x_verdict_for__mutmut_2": "test gap: the bounce type is dropped, so a permanent bounce "
    "only counts as transient; the unit tests call classify_ses_bounce directly, never verdict_for on a Bounce",
    f"{D}suppression_rules.x_verdict_for__mutmut_21": "test gap: `is` → `is not` stops every SMS failure from "
    "suppressing; verdict_for is not unit-tested on an SmsFailure event",
    f"{D}eligibility.x_decide__mutmut_13": "test gap: decide() never sees the last send, so nothing is ever "
    "eligible_stale; is_stale is unit-tested, decide's stale branch is not",
    f"{D}suppression_rules.xǁTransientPolicyǁreached__mutmut_2": "test gap: with a transient limit of 0 "
    "(transient bounces never suppress) every transient bounce would suppress; limit 0 is untested",
    f"{D}outcomes.x_allowed_from__mutmut_9": "test gap: an SES Reject can no longer land while the message is still "
    "`sending` (outcome write not yet recorded); only Reject after `accepted` is tested",
    f"{D}provider.xǁBackoffǁdelay__mutmut_8": "test gap: `2 ** (n - 1)` → `2 * (n - 1)` agrees for attempts 2 and 3; "
    "the tests never check the first attempt's delay (0 instead of base) or attempt 4+",
    f"{D}tokens.x_mint_token__mutmut_4": "equivalent mutant: secrets.token_bytes(None) uses its default, 32 bytes",
    f"{D}tokens.x_mint_token__mutmut_6": "equivalent in behaviour: the same (shorter) string is mailed and hashed; "
    "it only drops a trailing `X` now and then",
    f"{D}suppression_rules.x_classify_sms_failure__mutmut_4": "equivalent mutant: a missing providerResponse "
    "normalises to `xxxx` instead of an empty string; neither is listed, so the verdict is the same",
    f"{D}errors.xǁDomainErrorǁ__post_init____mutmut_1": "equivalent for the API: answers use `.detail`, "
    "never str(exception)",
}


# --- 1. mutmut -------------------------------------------------------------------------------


def stage_for_mutmut(files: list[str], source: Path) -> None:
    """A fresh staging root: pyproject.toml, src/sendledger (from functions/), tests/, local/.

    Fresh every run, so the score is that of the code as it is now, not a cached mix.
    """
    shutil.rmtree(STAGE, ignore_errors=True)
    STAGE.mkdir(parents=True)

    def place(path: str) -> str | None:
        if path.startswith(PACKAGE):
            return "src/sendledger/" + path.removeprefix(PACKAGE)
        if path.startswith(("tests/", "local/")) or path == "pyproject.toml":  # tests import local/ helpers
            return path
        return None

    sabotage.copy_project(files, STAGE, root=source, rename=place)


_RESULT_LINE = re.compile(r"^\s+(\S+): (.+)$")


def run_mutmut(files: list[str], source: Path) -> dict[str, object]:
    stage_for_mutmut(files, source)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    started = time.monotonic()
    with MUTMUT_LOG.open("w") as log:
        code = subprocess.run(
            [str(MUTMUT), "run"], check=False, cwd=STAGE, env=env, stdout=log, stderr=subprocess.STDOUT
        ).returncode
    seconds = round(time.monotonic() - started, 1)
    listed = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"], check=False, cwd=STAGE, env=env, capture_output=True, text=True
    ).stdout
    status = {m.group(1): m.group(2) for m in map(_RESULT_LINE.match, listed.splitlines()) if m}
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "exit_code": code,
        "seconds": seconds,
        "status": status,
    }


def score(mutmut: dict[str, object]) -> tuple[Counter[str], int]:
    status: dict[str, str] = mutmut["status"]  # type: ignore[assignment]
    counts = Counter(status.values())
    return counts, len(status)


def survivors_by_function(status: dict[str, str]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for name, state in status.items():
        if state == "survived":
            function, _, number = name.rpartition("__mutmut_")
            grouped[function].append(int(number))
    return {function: sorted(numbers) for function, numbers in sorted(grouped.items())}


# --- 3. the docs section ---------------------------------------------------------------------


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def section(mutmut: dict[str, object], run: sabotage.Run, total_seconds: float) -> str:
    counts, total = score(mutmut)
    status: dict[str, str] = mutmut["status"]  # type: ignore[assignment]
    killed = counts["killed"]
    percent = f"{100 * killed / total:.1f} %" if total else "n/a"
    results = run.results
    sabotage_killed = sum(r.result == sabotage.KILLED for r in results)
    survived = [r.name for r in results if r.result == sabotage.SURVIVED]
    errors = [r.name for r in results if r.result == sabotage.ERROR]
    baseline = run.baseline
    lines = [
        MARK_START,
        "## Mutation gate (`make mutation`)",
        "",
        "Generated by `make mutation` (`python -m tests.reliability.mutation_report`); do not edit by hand.",
        "",
        f"- date (UTC): {run.date}",
        "- command: `make mutation` — (1) mutmut 3.8.1 over `functions/sendledger/domain` with the unit tests "
        "(`pytest tests/unit`, staged in `mutants/mutmut/`), (2) each named sabotage applied to a scratch copy "
        f"of the project and `{run.command}` run there (or, for a sabotage that names its killers, those "
        "tests), expecting it to fail",
        f"- wall time: {total_seconds:.0f} s in total; mutmut {float(mutmut['seconds']):.0f} s "  # type: ignore[arg-type]
        f"(run of {mutmut['date']}), named sabotages {run.seconds:.0f} s "
        f"(baseline included) on {os.cpu_count()} CPU(s), Python {platform.python_version()}",
        f"- named sabotages killed: **{sabotage_killed} of {len(sabotage.SABOTAGES)}**"
        + (f"; survived: {', '.join(survived)}" if survived else "")
        + (f"; errors: {', '.join(errors)}" if errors else ""),
        "",
        "### Domain mutants (mutmut)",
        "",
        "| mutants | killed | survived | no tests | timeout | suspicious | score (killed / total) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {total} | {killed} | {counts['survived']} | {counts['no tests']} | {counts['timeout']} "
        f"| {counts['suspicious']} | {killed}/{total} = {percent} |",
        "",
    ]
    if int(mutmut["exit_code"]) != 0:  # type: ignore[call-overload]
        lines += [f"mutmut exited {mutmut['exit_code']} (see mutants/mutmut.log): the figures are incomplete.", ""]
    grouped = survivors_by_function(status)
    if grouped:
        lines += [
            "Surviving mutants, by function (a mutant's name is `<function>__mutmut_<n>`; "
            "`cd mutants/mutmut && ../../.venv/bin/mutmut show <name>` prints its diff). "
            "`no tests` are functions no unit test calls.",
            "",
            "| function | survived | mutant numbers |",
            "|---|---:|---|",
        ]
        lines += [f"| `{f}` | {len(n)} | {', '.join(map(str, n))} |" for f, n in grouped.items()]
        lines.append("")
    notes = [(name, note) for name, note in SURVIVOR_NOTES.items() if status.get(name) == "survived"]
    if notes:
        lines += ["Why some survive:", ""]
        lines += [f"- `{name}`: {note}" for name, note in notes]
        lines.append("")
    lines += ["### Named sabotages (reliability suite)", ""]
    if baseline is not None:
        lines += [
            f"Baseline (the suite on the unsabotaged code, run to the end): {baseline.result} "
            f"in {baseline.seconds:.0f} s."
        ]
    if run.deselected:
        lines += [
            "These tests fail without any sabotage, so they were deselected from every sabotaged run "
            "(a kill by them would prove nothing): " + ", ".join(f"`{node}`" for node in run.deselected) + "."
        ]
    if not run.baseline_ok and baseline is not None:
        lines += [f"The baseline could not run ({_cell(baseline.detail)}), so no sabotage was run."]
    lines.append("")
    named = {s.name: s.killers for s in sabotage.SABOTAGES if s.killers}
    suite_runs = [r for r in results if r.name not in named]
    killer_runs = [r for r in results if r.name in named]
    if suite_runs:
        lines += [
            "| sabotage | invariant it breaks | file | result | killed by (first failing test) | seconds |",
            "|---|---|---|---|---|---:|",
        ]
        for r in suite_runs:
            file = r.file.removeprefix(PACKAGE)
            by = f"`{_cell(r.killed_by)}`" if r.killed_by else _cell(r.detail)
            lines.append(f"| `{r.name}` | {_cell(r.why)} | `{file}` | {r.result} | {by} | {r.seconds:.0f} |")
        lines.append("")
    if killer_runs:
        lines += killers_table(killer_runs, named, run.killers_baseline)
    lines += [MARK_END]
    return "\n".join(lines) + "\n"


def killers_table(
    results: list[sabotage.Result], named: dict[str, tuple[str, ...]], baseline: sabotage.Result | None
) -> list[str]:
    """The sabotages that name their own fast killers: killed when every one of them failed."""
    lines = ["#### Sabotages with their own killers", ""]
    lines += [
        "Each runs only the tests it names (`pytest -q -n 0 <killers>` in the scratch copy, every one to "
        "the end), not the reliability suite: it is killed when every named test failed. `seconds` is the "
        "whole kill: copy, sabotage, the killers' run."
    ]
    if baseline is not None:
        lines += [f"The named killers on the unsabotaged code: {baseline.result} in {baseline.seconds:.0f} s."]
    lines += [
        "",
        "| sabotage | invariant it breaks | file | result | killed by (every named test failed) | seconds |",
        "|---|---|---|---|---|---:|",
    ]
    for r in results:
        file = r.file.removeprefix(PACKAGE)
        killers = "<br>".join(f"`{_cell(killer)}`" for killer in named[r.name])
        by = killers if r.result == sabotage.KILLED else _cell(r.detail)
        lines.append(f"| `{r.name}` | {_cell(r.why)} | `{file}` | {r.result} | {by} | {r.seconds:.0f} |")
    return [*lines, ""]


def write_section(text: str, path: Path = DOCS) -> None:
    current = path.read_text() if path.exists() else ""
    start, end = current.find(MARK_START), current.find(MARK_END)
    if start != -1 and end > start:
        updated = current[:start] + text + current[end + len(MARK_END) :].lstrip("\n")
    else:
        updated = current.rstrip("\n") + ("\n\n" if current else "") + text
    path.write_text(updated)


# --- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.reliability.mutation_report", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--skip-mutmut", action="store_true", help=f"reuse {MUTMUT_JSON.relative_to(ROOT)}")
    parser.add_argument("--skip-sabotage", action="store_true", help=f"reuse {sabotage.RESULTS_JSON.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    started = time.monotonic()
    RESULTS_DIR.mkdir(exist_ok=True)
    problems = sabotage.check_all(sabotage.SABOTAGES)
    if problems and not args.skip_sabotage:
        print("stale sabotages, fix them before running:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    files = sabotage.project_files()
    # Both halves measure one snapshot of the work tree, taken now.
    with sabotage.snapshot(files) as source:
        if args.skip_mutmut:
            mutmut = json.loads(MUTMUT_JSON.read_text())
        else:
            print("mutmut over the domain (unit tests) ...", flush=True)
            mutmut = run_mutmut(files, source)
            MUTMUT_JSON.write_text(json.dumps(mutmut, indent=2, ensure_ascii=False) + "\n")
        counts, total = score(mutmut)
        print(f"mutmut: {counts['killed']}/{total} killed, {counts['survived']} survived in {mutmut['seconds']} s")
        if args.skip_sabotage:
            run = sabotage.Run.from_json(json.loads(sabotage.RESULTS_JSON.read_text()))
        else:
            print("named sabotages (reliability suite) ...", flush=True)
            run = sabotage.run_all(list(sabotage.SABOTAGES), source=source)
            sabotage.write_json(run)
    print(sabotage.table(run))
    total_seconds = time.monotonic() - started
    if args.skip_mutmut and args.skip_sabotage and TOTAL_JSON.exists():
        total_seconds = float(json.loads(TOTAL_JSON.read_text())["seconds"])  # only the section is rewritten
    elif not (args.skip_mutmut or args.skip_sabotage):
        TOTAL_JSON.write_text(json.dumps({"seconds": round(total_seconds, 1)}) + "\n")
    write_section(section(mutmut, run, total_seconds))
    print(f"wrote {DOCS.relative_to(ROOT)} ({MARK_START} … {MARK_END}) after {total_seconds:.0f} s")
    mutmut_ok = int(mutmut["exit_code"]) == 0 and total > 0
    return 0 if run.passed and mutmut_ok else 1


if __name__ == "__main__":
    sys.exit(main())
