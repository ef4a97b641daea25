"""The bill's model: the bar prices the stack as infra/ builds it, and each lever from the same inputs."""

from pathlib import Path

from benchmarks import cost
from infra.providers.ses import SES_EVENT_TYPES

ROOT = Path(__file__).resolve().parents[2]

INPUTS = {
    "send": {
        "email": {
            "duration_ms": 60.0,
            "wru_p95": 11.0,
            "rru_p95": 0.0,
            "wru_mean": 8.5,
            "rru_mean": 0.0,
            "log_bytes": 900,
        }
    },
    "event": {"duration_ms": 3.0, "wru_p95": 2.0, "rru_p95": 0.0, "wru_mean": 1.5, "rru_mean": 0.0},
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
    api = (ROOT / "infra" / "api.py").read_text()
    assert ("apigw.HttpApi(" in api) == (cost.DEPLOYED.front_door is cost.FrontDoor.HTTP)
    assert "RestApi(" not in api
    # The lever rows say which of them the stack builds.
    assert [lever.deployed for lever in cost.LEVERS][:3] == [
        cost.DEPLOYED.front_door is cost.FrontDoor.HTTP,
        not cost.DEPLOYED.lambda_platform_lines,
        cost.DEPLOYED.ses_route is cost.SesRoute.EVENTBRIDGE_SQS,
    ]
    quiet = "system_log_level_v2=lambda_.SystemLogLevel.WARN" in (ROOT / "infra" / "lambdas.py").read_text()
    assert quiet == (not cost.DEPLOYED.lambda_platform_lines)


def test_the_bill_is_volume_times_the_mean_units_and_p95_is_shown_beside_it():
    mean = cost.bill("email", INPUTS)
    p95 = cost.bill("email", INPUTS, units=cost.Units.P95)
    write = cost.PRICES["dynamodb_write_request_unit_per_million"]
    assert mean["items_usd"]["dynamodb_send"] == round(8.5 * write, 4)
    assert p95["items_usd"]["dynamodb_send"] == round(11.0 * write, 4)
    assert mean["items_usd"]["dynamodb_events"] == round(2.0 * 1.5 * write, 4)
    tail = (11.0 - 8.5) * write + 2.0 * (2.0 - 1.5) * write
    assert abs((p95["overhead"] - mean["overhead"]) - tail) < 0.011  # each overhead is rounded to the cent
    # A run recorded before means were kept is priced at its p95, not at zero.
    old = {**INPUTS, "send": {"email": {k: v for k, v in INPUTS["send"]["email"].items() if "mean" not in k}}}
    assert cost.bill("email", old)["items_usd"]["dynamodb_send"] == p95["items_usd"]["dynamodb_send"]


def test_dropping_the_send_event_drops_its_fan_out_and_receipt_writes():
    deployed = cost.bill("email", INPUTS, cost.LEVERS[2].deployment)  # all six types, through EventBridge
    levered = cost.bill("email", INPUTS, cost.LEVERS[3].deployment)
    assert deployed["events_per_send"] == 2.0
    assert levered["events_per_send"] == 1.0
    assert "sns_publish" not in levered["items_usd"]  # the lever above it routes them through EventBridge
    assert levered["items_usd"]["sqs"] == deployed["items_usd"]["sqs"] / 2
    assert levered["items_usd"]["dynamodb_events"] == deployed["items_usd"]["dynamodb_events"] / 2
    # Status events are the intent, the outcome and each event that moves the state: a Send moves none.
    assert levered["items_usd"]["eventbridge"] == deployed["items_usd"]["eventbridge"]


def test_each_levers_saving_is_over_the_row_above_and_they_add_up():
    rows = cost.levers(INPUTS)
    assert [row["lever"] for row in rows] == [lever.name for lever in cost.LEVERS]
    before = cost.bill("email", INPUTS, cost.BEFORE)["overhead"]
    assert rows[0]["saving"] == round(
        cost.PRICES["api_gateway_rest_per_million_requests"] - cost.PRICES["api_gateway_http_per_million_requests"], 2
    )
    assert abs(sum(row["saving"] for row in rows) - (before - rows[-1]["overhead"])) < 0.02
    assert all(row["saving"] > 0 for row in rows)
