"""The tables in docs/ that mirror a list in the code: the same list, entry for entry."""

from __future__ import annotations

import re
from pathlib import Path

from sendledger.api.problems import STATUS, TYPE_BASE, ProblemType

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `([a-z-]+)` \| (\d{3}) \| .+\|$")


def documented() -> dict[str, int]:
    section = (REPO / "docs" / "api.md").read_text().split("## Problem types", 1)[1].split("\n## ", 1)[0]
    return {match[1]: int(match[2]) for line in section.splitlines() if (match := ROW.match(line))}


def test_every_problem_type_is_documented_with_its_status() -> None:
    assert documented() == {kind.value: STATUS[kind] for kind in ProblemType}


def test_every_problem_type_has_a_status() -> None:
    assert set(STATUS) == set(ProblemType)


def test_no_problem_type_is_spelled_outside_the_list() -> None:
    """A slug written as a string beside TYPE_BASE would bypass the list (and this table)."""
    spelled = re.compile(r"TYPE_BASE\s*\+\s*[\"']|problems/[a-z]+-[a-z-]+")
    sources = [*(REPO / "functions").rglob("*.py"), *(REPO / "local").rglob("*.py")]
    found = [str(path.relative_to(REPO)) for path in sources if spelled.search(path.read_text())]
    assert found == [], f"problem types spelled outside sendledger.api.problems: {found} ({TYPE_BASE})"


def test_the_commands_exit_codes_are_the_documented_table() -> None:
    from sendledger_client.cli import EXIT_CODES

    section = (REPO / "docs" / "cli.md").read_text().split("## When it fails", 1)[1]
    rows = re.findall(r"^\| (\d+) \| ", section, re.MULTILINE)
    assert [int(code) for code in rows] == sorted(EXIT_CODES)
