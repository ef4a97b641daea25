"""What the README and the docs state about the build and the local stack, checked against the
Makefile and the code that make it true (the cost line is checked with the other benchmark
figures, tests/docs/test_bench_figures.py)."""

from __future__ import annotations

import re
from pathlib import Path

from local.stack import handler_defaults
from sendledger import names
from sendledger.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def recipe(target: str) -> list[str]:
    """The commands of one Makefile target, in order."""
    makefile = (ROOT / "Makefile").read_text()
    block = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert block, f"no {target} target"
    return [line.strip() for line in block.group(1).splitlines()]


def test_make_deploy_bootstraps_then_deploys_as_operations_md_says() -> None:
    commands = recipe("deploy")
    bootstrap = [i for i, line in enumerate(commands) if re.search(r"aws-cdk@2 bootstrap\b", line)]
    deploy = [i for i, line in enumerate(commands) if re.search(r"aws-cdk@2 deploy\b", line)]
    assert bootstrap and deploy and bootstrap[0] < deploy[0], commands
    section = (ROOT / "docs/operations.md").read_text().split("## Deploy", 1)[1].split("\n## ", 1)[0]
    assert "`make deploy`\nruns the two steps below" in section
    assert "aws-cdk@2 bootstrap" in section and "aws-cdk@2 deploy --app cdk.out --all" in section


def test_the_readme_says_how_long_make_test_takes_on_the_machine_its_workers_fit() -> None:
    readme = (ROOT / "README.md").read_text()
    stated = re.search(r"On a (\d+)-core machine `make test` takes about (\d+) minutes .*?about (\d+) of them pytest "
                       r"on its (\d+) workers", readme, re.DOTALL)  # fmt: skip
    assert stated, "the README states make test's duration"
    cores, whole, pytest_minutes, workers = (int(group) for group in stated.groups())
    assert pytest_minutes < whole
    # The figure holds for the worker count the Makefile runs pytest with, one per core
    assert f"-n {workers}" in " ".join(recipe("unit")) and workers == cores


def test_cli_md_says_when_a_loopback_callback_url_is_accepted() -> None:
    cli_md = (ROOT / "docs/cli.md").read_text()
    assert f"`{names.ENV_CALLBACK_ALLOW_LOOPBACK}=true`" in cli_md
    # The local stack sets it for its handlers; a deployment gets the default, which refuses
    assert handler_defaults({})[names.ENV_CALLBACK_ALLOW_LOOPBACK] == "true"
    assert Settings.default("callback_allow_loopback") is False
    infra = "\n".join(path.read_text() for path in (ROOT / "infra").rglob("*.py"))
    assert names.ENV_CALLBACK_ALLOW_LOOPBACK not in infra and "ENV_CALLBACK_ALLOW_LOOPBACK" not in infra
