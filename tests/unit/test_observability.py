import json
import subprocess
import sys
from pathlib import Path

from sendledger import names
from sendledger.handlers.observability import traced

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"


def handler(event, context):
    return {"ok": True}


def test_tracer_is_opt_in(monkeypatch):
    monkeypatch.delenv(names.ENV_XRAY_SDK, raising=False)
    assert traced(capture_response=False)(handler) is handler


def test_tracer_wraps_when_enabled(monkeypatch):
    monkeypatch.setenv(names.ENV_XRAY_SDK, "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")  # no X-Ray daemon in tests
    wrapped = traced(capture_response=True)(handler)
    assert wrapped is not handler


# The api handler as a cold start builds it with SENDLEDGER_XRAY_SDK=true, its Tracer's
# provider a recorder (no X-Ray daemon): what would its answer put into the trace?
_PROBE = """
import json
from contextlib import contextmanager
from aws_lambda_powertools import Tracer

metadata = []

class Subsegment:
    def put_metadata(self, key, value, namespace=None):
        metadata.append(key)
    def put_annotation(self, key, value):
        pass

class Provider:
    @contextmanager
    def in_subsegment(self, name=None, **kwargs):
        yield Subsegment()

Tracer(provider=Provider())
from sendledger.handlers import api
from tests.support.fakes import FakeLambdaContext, api_event

answer = api.lambda_handler(api_event("GET", "/healthz"), FakeLambdaContext())
seen = {"status": answer["statusCode"], "api": list(metadata)}
# The recorder does record an answer: a handler that allows it, traced the same way.
from sendledger.handlers.observability import traced
traced(capture_response=True)(lambda event, context: {"ok": True})({}, None)
print(json.dumps({**seen, "control": metadata[len(seen["api"]):]}))
"""


def test_the_api_answer_never_goes_into_the_trace():
    env = {
        "PATH": "/usr/bin:/bin",
        names.ENV_XRAY_SDK: "true",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_SERVICE_NAME": names.METRICS_SERVICE,
        "POWERTOOLS_METRICS_NAMESPACE": names.METRICS_NAMESPACE,
        "AWS_DEFAULT_REGION": "us-east-1",
        "PYTHONPATH": f"{FUNCTIONS}:{FUNCTIONS.parent}",
    }
    result = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["status"] == 200
    assert seen["control"] == ["<lambda> response"]
    assert not any("response" in key for key in seen["api"]), seen["api"]


def test_log_lines_leave_out_what_every_line_repeats_and_keep_the_evidence():
    """About 1 KB of logs per send (issue 36): the function's name, ARN and memory, the service and
    the source location are the log group's or the code's; the request and the facts stay."""
    import io
    import logging

    from sendledger.handlers.observability import REPEATED_LOG_KEYS, lean_logger
    from tests.support.fakes import FakeLambdaContext

    context = FakeLambdaContext()
    written = io.StringIO()  # a service of its own: the handlers' logger may be configured already
    # At INFO whatever POWERTOOLS_LOG_LEVEL an earlier test of this worker set (the walks set CRITICAL)
    logger = lean_logger(service="lean-logger-test", level="INFO", logger_handler=logging.StreamHandler(written))

    @logger.inject_lambda_context(clear_state=True)
    def logging_handler(event, context):
        logger.info("provider outcome", extra={"message_id": "msg_1", "state": "accepted"})

    logging_handler({}, context)
    [line] = [json.loads(text) for text in written.getvalue().splitlines() if "provider outcome" in text]
    assert not REPEATED_LOG_KEYS & set(line)
    assert line["function_request_id"] == context.aws_request_id
    assert (line["message_id"], line["state"], line["level"]) == ("msg_1", "accepted", "INFO")
    assert "timestamp" in line and "cold_start" in line


# A handler that records no application metric, flushed by Powertools' decorator, in a fresh
# interpreter with Python's default warning filters (as in a Lambda container).
_EMPTY_FLUSH = """
import sys
if sys.argv[1] == "observed":
    import sendledger.handlers.observability
from aws_lambda_powertools import Metrics

@Metrics(namespace="sendledger", service="sendledger").log_metrics
def handler(event, context):
    return None

handler({}, None)
"""


def _stderr_of_an_empty_flush(mode: str) -> str:
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", _EMPTY_FLUSH, mode],
        cwd=FUNCTIONS,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stderr


def test_an_invocation_without_application_metrics_writes_no_warning_to_the_log():
    assert "No application metrics to publish" in _stderr_of_an_empty_flush("bare")  # what Powertools alone does
    assert "No application metrics to publish" not in _stderr_of_an_empty_flush("observed")
