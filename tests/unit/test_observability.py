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
