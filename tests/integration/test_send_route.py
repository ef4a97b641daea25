"""The api's entry answers a send without the router's request models and validation
(handlers/api.py, handlers/send_route.py); the router's documented route answers the same request
the same way."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sendledger.handlers import api as entry
from sendledger.handlers import api_routes
from tests.support.fakes import FakeLambdaContext, api_event

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"
GOOD = {
    "channel": "email",
    "to": "route@example.com",
    "template": {"id": "alert", "version": "1"},
    "params": {"summary": "x"},
}


def _both(body: Any = GOOD, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    first = entry.resolve(api_event("POST", "/v1/messages", body, **kwargs), FakeLambdaContext())
    second = api_routes.app.resolve(api_event("POST", "/v1/messages", body, **kwargs), FakeLambdaContext())
    return first, second


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        ({**GOOD, "channel": "fax", "unknown": 1}, {"Idempotency-Key": "k-1"}),
        ({**GOOD, "template": {"id": "a b", "version": ""}}, {"Idempotency-Key": "k-2"}),
        ({**GOOD, "params": {"a": 1}}, {"Idempotency-Key": "k-3"}),
        ({**GOOD, "escalation": {"fallback": [{"channel": "sms", "to": "+12065550100"}]}}, {"Idempotency-Key": "k"}),
        (GOOD, {"Idempotency-Key": "\u00e9"}),
        (GOOD, {"Idempotency-Key": '"unterminated\\q"'}),
        (GOOD, {}),  # neither a key nor an event_id
        (None, {"Idempotency-Key": "k-4"}),
    ],
)
def test_a_refused_send_is_the_same_answer_byte_for_byte(api, body, headers):
    ours, routers = _both(body, headers=headers)
    assert ours["statusCode"] == 400, ours
    assert ours == routers


def test_an_accepted_send_and_its_replay_have_the_routers_shape(api, warm_watermarks):
    ours, replay = _both(headers={"Idempotency-Key": "same-key"})
    assert (ours["statusCode"], replay["statusCode"]) == (202, 202)
    assert ours.keys() == replay.keys()
    assert ours["multiValueHeaders"].keys() - {"Idempotent-Replayed"} <= replay["multiValueHeaders"].keys()
    assert json.loads(ours["body"])["message_id"] == json.loads(replay["body"])["message_id"]


# The router's request models and validation: about a third of the api's cold start before.
_ROUTER_ONLY = {
    "aws_lambda_powertools.event_handler.middlewares.openapi_validation",
    "aws_lambda_powertools.event_handler.openapi.params",
    "sendledger.api.models",
    "sendledger.handlers.api_routes",
}


def test_serving_sends_loads_neither_pydantic_nor_the_routers_validation():
    code = (
        "import sys\n"
        "from sendledger.handlers import api\n"
        "api.resolve({'httpMethod': 'POST', 'path': '/v1/messages', 'body': '{\"channel\": \"fax\"}'}, None)\n"
        f"loaded = [m for m in sys.modules if m.split('.')[0] == 'pydantic' or m in {sorted(_ROUTER_ONLY)}]\n"
        "print(loaded)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=FUNCTIONS)
    assert run.stdout.strip() == "[]"


class _RunningDown(FakeLambdaContext):
    """A Lambda whose remaining time is read afresh each time: 29 s at the first read, 2 s after."""

    def get_remaining_time_in_millis(self) -> int:
        reads = getattr(self, "reads", 0)
        self.reads = reads + 1
        return 29_000 if reads == 0 else 2_000


def test_a_throttled_sends_retries_stop_when_the_lambdas_time_runs_down(api, services, simulator, healthy_watermarks):
    throttled = {**GOOD, "to": "dave+throttle@example.com"}  # the simulator throttles it twice
    event = api_event("POST", "/v1/messages", throttled, headers={"Idempotency-Key": "running-down"})
    answer = entry.lambda_handler(event, _RunningDown(), api.runtime)
    view = json.loads(answer["body"])
    # The first retry fit in the time left; the second did not, read as the Lambda had it then.
    assert (answer["statusCode"], view["state"]) == (202, "pending")
    assert len(services.sleep.slept) == 1 and simulator.outbox() == []
