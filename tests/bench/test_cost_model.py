"""The bill's model: the bar prices the stack as infra/ builds it, and each lever from the same inputs."""

from pathlib import Path

from benchmarks import cost
from infra.providers.ses import SES_EVENT_TYPES

ROOT = Path(__file__).resolve().parents[2]

INPUTS = {
    "send": {"email": {"duration_ms": 60.0, "wru_p95": 8.0, "rru_p95": 0.0, "log_bytes": 900}},
    "event": {"duration_ms": 3.0, "wru_p95": 2.0, "rru_p95": 0.0},
    "events_per_send": {"email": 2.0},
    "ses_events_per_send": {"Send": 1.0, "Delivery": 0.97, "Bounce": 0.02, "Complaint": 0.01},
    "status_events_per_send": {"email": 3.0},
    "stream_records_per_send": {"email": 5.0},
    "publisher_cpu_ms_per_record": 1.0,
    "publisher_rru_per_send": {"email": 2.0},
    "event_log_bytes": 400,
    "publisher_log_bytes_per_record": 80,
    "sms_status_record_bytes": 520,
    "access_log_bytes": 440,
}


def test_the_deployed_bill_is_the_stack_infra_builds():
    # A lever moved into infra/ must move into DEPLOYED too (and the other way round).
    assert cost.DEPLOYED.ses_events == tuple(name.title().replace("_", "") for name in SES_EVENT_TYPES)
    ses_construct = (ROOT / "infra" / "providers" / "ses.py").read_text()
    assert ("sns_topic(" in ses_construct) == (cost.DEPLOYED.ses_route is cost.SesRoute.SNS_SQS)
    rest = "apigw.RestApi(" in (ROOT / "infra" / "api.py").read_text()
    assert rest == (cost.DEPLOYED.front_door is cost.FrontDoor.REST)


def test_dropping_the_send_event_drops_its_fan_out_and_receipt_writes():
    deployed = cost.bill("email", INPUTS)
    levered = cost.bill("email", INPUTS, cost.LEVERS[2][1])
    assert deployed["events_per_send"] == 2.0
    assert levered["events_per_send"] == 1.0
    assert "sns_publish" not in levered["items_usd"]  # the lever above it routes them through EventBridge
    assert levered["items_usd"]["sqs"] == deployed["items_usd"]["sqs"] / 2
    assert levered["items_usd"]["dynamodb_events"] == deployed["items_usd"]["dynamodb_events"] / 2
    # Status events are the intent, the outcome and each event that moves the state: a Send moves none.
    assert levered["items_usd"]["eventbridge"] == deployed["items_usd"]["eventbridge"]


def test_each_levers_saving_is_over_the_row_above_and_they_add_up():
    rows = cost.levers(INPUTS)
    assert [row["lever"] for row in rows] == [name for name, _ in cost.LEVERS]
    deployed = cost.bill("email", INPUTS)["overhead"]
    assert rows[0]["saving"] == round(
        cost.PRICES["api_gateway_rest_per_million_requests"] - cost.PRICES["api_gateway_http_per_million_requests"], 2
    )
    assert abs(sum(row["saving"] for row in rows) - (deployed - rows[-1]["overhead"])) < 0.02
    assert all(row["saving"] > 0 for row in rows)
