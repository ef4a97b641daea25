"""Feature flags through Powertools over the file store: cohorts by MODULO_RANGE over caller ids,
per-caller rules, typed values, the store's TTL and what an unusable store or value does."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.utilities.feature_flags.schema import SchemaValidator

from sendledger.adapters.feature_flags import COMMITTED_FLAGS, FileStore, PowertoolsFlags
from sendledger.domain.callers import CallerId, hashed_id
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.flags import NO_FLAGS, Flag
from sendledger.domain.messages import CATEGORIES
from sendledger.domain.provider import Provider

TTL = 60
CALLERS = [hashed_id(f"arn:aws:iam::123456789012:role/app-{number}") for number in range(2000)]


class Ticks:
    """A monotonic clock the test moves (the stores' TTL is never slept on)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def cohort(value: str, end: int, base: int = 100) -> dict[str, Any]:
    return {
        "default": "deployment",
        "boolean_type": False,
        "rules": {
            "rollout cohort": {
                "when_match": value,
                "conditions": [
                    {"action": "MODULO_RANGE", "key": "caller_bucket", "value": {"BASE": base, "START": 0, "END": end}}
                ],
            }
        },
    }


def write(path: Path, flags: dict[str, Any]) -> Path:
    path.write_text(json.dumps(flags))
    return path


def flags_over(path: Path, ticks: Ticks | None = None) -> tuple[PowertoolsFlags, FileStore]:
    ticks = ticks or Ticks()
    store = FileStore(path, TTL, monotonic=ticks)
    return PowertoolsFlags(store, CATEGORIES, retry_after_seconds=TTL, monotonic=ticks), store


def in_cohort(flags: PowertoolsFlags) -> set[CallerId]:
    return {caller for caller in CALLERS if flags.values_for(caller).email_provider is Provider.SENDGRID}


def test_the_committed_flags_are_valid_and_defer_to_the_deployment():
    SchemaValidator(json.loads(COMMITTED_FLAGS.read_text())).validate()
    flags, _ = flags_over(COMMITTED_FLAGS)
    assert {flag.value for flag in Flag} <= set(json.loads(COMMITTED_FLAGS.read_text()))
    assert all(flags.values_for(caller) == NO_FLAGS for caller in CALLERS[:50])


def test_a_modulo_range_cohort_is_its_share_of_callers_the_same_on_every_container(tmp_path):
    path = write(tmp_path / "flags.json", {"email_provider": cohort("sendgrid", end=9)})
    first, _ = flags_over(path)
    second, _ = flags_over(path)  # another container, the same file
    chosen = in_cohort(first)
    assert 0.08 <= len(chosen) / len(CALLERS) <= 0.12
    assert in_cohort(second) == chosen
    outside = next(caller for caller in CALLERS if caller not in chosen)
    assert first.values_for(outside).email_provider is None  # the deployment's provider


def test_widening_the_range_keeps_every_caller_already_in_the_cohort(tmp_path):
    path = tmp_path / "flags.json"
    narrow, _ = flags_over(write(path, {"email_provider": cohort("sendgrid", end=9)}))
    before = in_cohort(narrow)
    wide, _ = flags_over(write(path, {"email_provider": cohort("sendgrid", end=29)}))
    after = in_cohort(wide)
    assert before < after
    assert 0.27 <= len(after) / len(CALLERS) <= 0.33


def test_one_caller_by_id_gets_its_own_stale_policy_per_category(tmp_path):
    strict, other = CALLERS[0], CALLERS[1]
    rule = {
        "when_match": {"security": "defer"},
        "conditions": [{"action": "EQUALS", "key": "caller", "value": strict}],
    }
    path = write(
        tmp_path / "flags.json",
        {"stale_eligibility_policy": {"default": "deployment", "boolean_type": False, "rules": {"strict": rule}}},
    )
    flags, _ = flags_over(path)
    assert flags.values_for(strict).stale_eligibility_policy == {
        "transactional": StalePolicy.ALLOW,
        "alert": StalePolicy.ALLOW,
        "security": StalePolicy.DEFER,
    }
    assert flags.values_for(other).stale_eligibility_policy is None
    decided = flags.values_for(strict).decide(
        email=False, category="security", default_provider=Provider.SES, default_stale=StalePolicy.ALLOW
    )
    assert decided.stale_eligibility_policy is StalePolicy.DEFER and decided.email_provider is None
    assert decided.evidence() == {"flags": {"stale_eligibility_policy": "defer"}}


def test_a_rule_on_a_callers_flag_context_names_the_callers_that_set_it(tmp_path):
    # Given a cohort defined by a key of the callers' own flag context (their settings), not by id
    beta, plain = CALLERS[0], CALLERS[1]
    rule = {"when_match": "sendgrid", "conditions": [{"action": "EQUALS", "key": "tier", "value": "beta"}]}
    path = write(
        tmp_path / "flags.json",
        {"email_provider": {"default": "deployment", "boolean_type": False, "rules": {"beta tier": rule}}},
    )
    flags, _ = flags_over(path)
    # Then the caller whose context says tier=beta is in it, one without that context is not,
    assert flags.values_for(beta, {"tier": "beta"}).email_provider is Provider.SENDGRID
    assert flags.values_for(plain, {"tier": "ga"}).email_provider is None
    assert flags.values_for(beta).email_provider is None
    # and a context cannot pose as another caller: sendledger's own keys win
    by_id = {"when_match": "sendgrid", "conditions": [{"action": "EQUALS", "key": "caller", "value": beta}]}
    write(path, {"email_provider": {"default": "deployment", "boolean_type": False, "rules": {"one": by_id}}})
    flags, _ = flags_over(path)
    assert flags.values_for(plain, {"caller": beta}).email_provider is None


def test_an_unknown_value_is_dropped_and_logged_the_other_flag_still_applies(tmp_path, caplog):
    path = write(
        tmp_path / "flags.json",
        {
            "email_provider": {"default": "sendgird", "boolean_type": False},
            "stale_eligibility_policy": {"default": "defer", "boolean_type": False},
        },
    )
    flags, _ = flags_over(path)
    with caplog.at_level(logging.ERROR):
        values = flags.values_for(CALLERS[0])
    assert values.email_provider is None
    assert set((values.stale_eligibility_policy or {}).values()) == {StalePolicy.DEFER}
    assert any("sendgird" in str(getattr(record, "flag", "")) for record in caplog.records)


def test_the_file_is_read_once_per_ttl_and_a_change_applies_after_it(tmp_path):
    ticks = Ticks()
    path = write(tmp_path / "flags.json", {"email_provider": {"default": "deployment", "boolean_type": False}})
    flags, store = flags_over(path, ticks)
    for caller in CALLERS[:100]:
        flags.values_for(caller)
    assert store.reads == 1
    write(path, {"email_provider": {"default": "mailgun", "boolean_type": False}})
    ticks.now += TTL - 1
    assert flags.values_for(CALLERS[0]).email_provider is None and store.reads == 1
    ticks.now += 1
    assert flags.values_for(CALLERS[0]).email_provider is Provider.MAILGUN and store.reads == 2


UNUSABLE = [None, "{not json", '{"email_provider": {"rules": 3}}']


@pytest.mark.parametrize("content", UNUSABLE, ids=["missing", "json", "schema"])
def test_an_unusable_store_means_the_deployment_settings_and_is_not_asked_again_before_the_ttl(
    tmp_path, caplog, content
):
    ticks = Ticks()
    path = tmp_path / "flags.json"
    if content is not None:
        path.write_text(content)
    flags, store = flags_over(path, ticks)
    with caplog.at_level(logging.ERROR):
        assert flags.values_for(CALLERS[0]) == NO_FLAGS
    assert "feature flags unavailable" in caplog.text
    write(path, {"email_provider": {"default": "mailgun", "boolean_type": False}})
    ticks.now += TTL - 1
    assert flags.values_for(CALLERS[0]) == NO_FLAGS  # not asked again: an outage costs no request per send
    ticks.now += 1
    assert flags.values_for(CALLERS[0]).email_provider is Provider.MAILGUN
