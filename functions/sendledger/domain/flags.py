"""Feature flags as domain values: which flags exist, what they may hold, what decided a send.

The flags live in a store (AppConfig deployed, a file locally) in the Powertools Feature Flags
schema and are evaluated per caller (ports/flags.py). Nothing past the adapter sees a raw
string: a value the domain does not know is dropped there, and the deployment's setting applies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from enum import StrEnum

from sendledger.domain.callers import CallerId
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.provider import Provider
from sendledger.domain.values import value


class Flag(StrEnum):
    """The flags sendledger reads; the value `"deployment"` (their default) means "the deployment's setting"."""

    EMAIL_PROVIDER = "email_provider"  # a registered provider: a cohort's email transport (kept where enabled)
    # An allow|defer value for every category, or an object of category -> allow|defer.
    STALE_ELIGIBILITY_POLICY = "stale_eligibility_policy"


DEPLOYMENT = "deployment"  # a flag's value that defers to the deployment's setting (the schema has no null)

# The evaluation context's keys, what a rule's `key` may name.
CALLER = "caller"  # the caller id (EQUALS / IN rules name callers one by one)
CALLER_BUCKET = "caller_bucket"  # a stable integer of the caller id (MODULO_RANGE cohorts)
_BUCKET_BYTES = 8


def flag_context(caller: CallerId, extra: Mapping[str, str] | None = None) -> dict[str, object]:
    """The context every flag is evaluated with: the caller's own flag context (its settings,
    e.g. {"tier": "beta"}, for rules that name a group of callers) under the keys sendledger sets.
    The bucket is a hash, not the id's own digits, so a cohort `caller_bucket % 100 in [0, 9]`
    is ~10% of callers whatever their ids look like, and widening END only adds callers."""
    digest = hashlib.sha256(caller.encode()).digest()[:_BUCKET_BYTES]
    return {**(extra or {}), CALLER: caller, CALLER_BUCKET: int.from_bytes(digest, "big")}


@value
class FlagValues:
    """A caller's flag values as the store gave them; None: the flag defers to the deployment's setting."""

    email_provider: Provider | None = None
    stale_eligibility_policy: Mapping[str, StalePolicy] | None = None  # by category; absent: allow

    def decide(
        self,
        *,
        email: bool,
        category: str,
        default_provider: Provider,
        default_stale: StalePolicy,
    ) -> FlagDecision:
        """The values that apply to one message, with the deployment's settings where a flag is unset."""
        stale = default_stale
        flagged: list[Flag] = []
        if self.stale_eligibility_policy is not None:
            stale = self.stale_eligibility_policy.get(category, StalePolicy.ALLOW)
            flagged.append(Flag.STALE_ELIGIBILITY_POLICY)
        if email and self.email_provider is not None:
            flagged.append(Flag.EMAIL_PROVIDER)
        return FlagDecision(
            email_provider=(self.email_provider or default_provider) if email else None,
            stale_eligibility_policy=stale,
            flagged=frozenset(flagged),
        )


NO_FLAGS = FlagValues()


@value
class FlagDecision:
    """The flag values that decided one send, as its first history entry records them."""

    email_provider: Provider | None  # None for SMS (one transport)
    stale_eligibility_policy: StalePolicy
    flagged: frozenset[Flag] = frozenset()  # the values a flag set (the others are the deployment's)

    def evidence(self) -> dict[str, object]:
        """Only the values a flag set: a send decided by the deployment's settings alone records
        nothing (a typical message item is ~1000 bytes, and one past 1 KB doubles the write units
        of every write to it). The message names its provider anyway."""
        values = {
            Flag.EMAIL_PROVIDER: self.email_provider.value if self.email_provider else None,
            Flag.STALE_ELIGIBILITY_POLICY: self.stale_eligibility_policy.value,
        }
        flags = {flag.value: value for flag, value in values.items() if flag in self.flagged and value}
        return {"flags": flags} if flags else {}


def flag_values(raw: Mapping[Flag, object], categories: tuple[str, ...]) -> tuple[FlagValues, list[str]]:
    """Typed values from what the store evaluated; a value the domain does not know is dropped
    (the deployment's setting applies) and named in the returned problems."""
    problems: list[str] = []
    provider = raw.get(Flag.EMAIL_PROVIDER, DEPLOYMENT)
    email_provider = None
    if provider != DEPLOYMENT:
        if isinstance(provider, str) and provider in Provider._value2member_map_:
            email_provider = Provider(provider)
        else:
            problems.append(f"{Flag.EMAIL_PROVIDER.value}={provider!r}: not one of {[p.value for p in Provider]}")
    stale = _stale_policy(raw.get(Flag.STALE_ELIGIBILITY_POLICY, DEPLOYMENT), categories, problems)
    return FlagValues(email_provider=email_provider, stale_eligibility_policy=stale), problems


def _stale_policy(raw: object, categories: tuple[str, ...], problems: list[str]) -> Mapping[str, StalePolicy] | None:
    if raw == DEPLOYMENT or raw is None:
        return None
    choices = StalePolicy._value2member_map_
    if isinstance(raw, str) and raw in choices:
        return dict.fromkeys(categories, StalePolicy(raw))
    if (
        isinstance(raw, Mapping)
        and set(raw) <= set(categories)
        and all(isinstance(choice, str) and choice in choices for choice in raw.values())
    ):
        return {category: StalePolicy(raw.get(category, StalePolicy.ALLOW.value)) for category in categories}
    problems.append(
        f"{Flag.STALE_ELIGIBILITY_POLICY.value}={raw!r}: allow|defer, or an object of "
        f"{'|'.join(categories)} -> allow|defer"
    )
    return None
