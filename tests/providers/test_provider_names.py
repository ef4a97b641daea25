"""A provider is known to its slice alone: outside `providers/<name>/`, only the registry
(domain/provider.py) and settings name it, test mode's simulated carrier included (each slice
simulates itself, providers/<name>/simulation.py). The same grep as the providers-as-slices
issue's, word by word and in any case, over every module of the product."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sendledger.domain.provider import Provider

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ROOT / "functions" / "sendledger"
EVERYWHERE = ("domain/provider.py", "settings.py")  # the registry and the settings that pick providers
# Named by AWS services outside their slice for what they are to the others, each with its reason.
BESIDES: dict[Provider, tuple[str, ...]] = {
    # SES publishes its events through an SNS topic: its parser names that envelope.
    Provider.SNS: ("providers/ses/", "handlers/sms_delivery_logs.py"),  # the SNS logs' Lambda entry
}


def naming(provider: Provider, root: Path) -> list[str]:
    word = re.compile(rf"\b{provider.value}\b", re.IGNORECASE)
    allowed = (f"providers/{provider.value}/", *EVERYWHERE, *BESIDES.get(provider, ()))
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(allowed):
            continue
        found += [f"{relative}:{n}: {line.strip()}" for n, line in enumerate(path.read_text().splitlines(), 1)
                  if word.search(line)]  # fmt: skip
    return found


@pytest.mark.parametrize("provider", list(Provider), ids=str)
def test_no_module_outside_a_providers_slice_names_it(provider: Provider) -> None:
    assert naming(provider, PRODUCT) == []


@pytest.mark.parametrize("provider", [Provider.SENDGRID, Provider.MAILGUN, Provider.INFRAI], ids=str)
def test_the_stack_and_the_local_stack_name_a_third_party_provider_in_its_own_module_only(provider: Provider) -> None:
    """CDK and the local stack have a module per provider (their SES and SNS are AWS services
    every stack uses, so only the third-party providers are counted there)."""
    own = {"infra": f"providers/{provider.value}.py", "local": f"simulator/providers/{provider.value}.py"}
    for folder, module in own.items():
        assert [hit for hit in naming(provider, ROOT / folder) if not hit.startswith(module)] == [], folder


def test_the_grep_finds_a_provider_named_outside_its_slice(tmp_path: Path) -> None:
    (tmp_path / "providers" / "simulated").mkdir(parents=True)
    (tmp_path / "providers" / "simulated" / "sender.py").write_text("if message.provider == 'MailGun':\n")
    (tmp_path / "providers" / "mailgun").mkdir()
    (tmp_path / "providers" / "mailgun" / "sender.py").write_text("NAME = 'mailgun'\n")
    assert naming(Provider.MAILGUN, tmp_path) == ["providers/simulated/sender.py:1: if message.provider == 'MailGun':"]
