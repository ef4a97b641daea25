"""The named-sabotage runner's judgement of a sabotage's own killers (tests/reliability/sabotage.py)."""

from __future__ import annotations

from tests.reliability import sabotage
from tests.reliability.sabotage import KILLED, SURVIVED, killers_verdict

SUMMARY = "=========================== short test summary info ============================\n"


def output(*failing: str) -> str:
    return SUMMARY + "".join(f"FAILED {node} - AssertionError\n" for node in failing)


def test_killed_only_when_every_named_killer_failed() -> None:
    killers = ("tests/unit/test_a.py::test_one", "tests/integration/test_b.py")
    both = output("tests/unit/test_a.py::test_one[x]", "tests/integration/test_b.py::test_two")
    assert killers_verdict(killers, 1, both) == (KILLED, None)
    one = output("tests/unit/test_a.py::test_one[x]")
    assert killers_verdict(killers, 1, one) == (SURVIVED, "still green: tests/integration/test_b.py")
    assert killers_verdict(killers, 0, SUMMARY)[0] == SURVIVED


def test_a_killer_is_matched_by_node_id_not_by_prefix_of_another_test() -> None:
    assert not sabotage.failed("tests/unit/test_a.py::test_one", ["tests/unit/test_a.py::test_one_more"])
    assert sabotage.failed("tests/unit/test_a.py::test_one", ["tests/unit/test_a.py::test_one[sendgrid]"])


def test_every_named_killer_is_a_test_file_of_the_project() -> None:
    for killer in sabotage.all_killers(sabotage.SABOTAGES):
        path = killer.split("::", 1)[0]
        assert (sabotage.ROOT / path).is_file(), killer
