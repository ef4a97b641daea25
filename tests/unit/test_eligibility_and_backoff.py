from datetime import UTC, datetime, timedelta

from sendledger.domain.eligibility import Eligibility, SuppressionState, decide, is_stale
from sendledger.domain.provider import Backoff, CallResult, ProviderResponse, call_with_backoff

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
GRACE = timedelta(seconds=900)


def test_suppression_wins():
    decision = decide(SuppressionState(True, 3, "complaint"), None, NOW, NOW, GRACE)
    assert decision.result is Eligibility.SUPPRESSED and decision.suppression_version == 3


def test_stale_when_last_send_is_newer_than_watermark_minus_grace():
    watermark = NOW - timedelta(seconds=10)
    assert is_stale(NOW - timedelta(seconds=60), watermark, GRACE)
    assert not is_stale(watermark - GRACE - timedelta(seconds=1), watermark, GRACE)
    assert not is_stale(None, watermark, GRACE)
    assert is_stale(NOW - timedelta(days=1), None, GRACE)  # no watermark: nothing is known


def test_the_optimistic_last_send_bound_is_exactly_the_stale_boundary():
    # The send asserts "no last send after watermark - grace": exactly the sends that are not stale.
    watermark = NOW - timedelta(seconds=150)
    bound = watermark - GRACE
    assert not is_stale(bound, watermark, GRACE)
    assert is_stale(bound + timedelta(milliseconds=1), watermark, GRACE)
    # An older (cached) watermark only widens what counts as stale.
    assert is_stale(bound, watermark - timedelta(seconds=30), GRACE)


def response(result, retry_after=None):
    return ProviderResponse(result, retry_after_seconds=retry_after)


def test_backoff_retries_only_proven_non_acceptance():
    for result in (CallResult.AMBIGUOUS, CallResult.REJECTED, CallResult.ACCEPTED):
        calls = []

        def call(result=result, calls=calls):
            calls.append(1)
            return response(result)

        assert call_with_backoff(call, Backoff(), lambda s: None, lambda: 30).result is result
        assert len(calls) == 1


def test_backoff_is_bounded_and_honours_retry_after():
    slept = []
    results = iter([response(CallResult.THROTTLED, 2.5), response(CallResult.THROTTLED), response(CallResult.ACCEPTED)])
    final = call_with_backoff(lambda: next(results), Backoff(rng=lambda: 1.0), slept.append, lambda: 30)
    assert final.result is CallResult.ACCEPTED and final.attempts == 3
    assert slept[0] == 2.5 and slept[1] == 0.4


def test_backoff_stops_before_the_lambda_runs_out():
    slept = []
    final = call_with_backoff(lambda: response(CallResult.THROTTLED, 5), Backoff(), slept.append, lambda: 6)
    assert final.result is CallResult.THROTTLED and slept == [] and final.message_state.value == "pending"


def test_backoff_gives_up_after_max_attempts():
    calls = []

    def call():
        calls.append(1)
        return response(CallResult.UNAVAILABLE)

    assert call_with_backoff(call, Backoff(max_attempts=3, rng=lambda: 0), lambda s: None, lambda: 60).attempts == 3
    assert len(calls) == 3
