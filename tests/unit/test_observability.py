from sendledger import names
from sendledger.handlers.observability import traced


def handler(event, context):
    return {"ok": True}


def test_tracer_is_opt_in(monkeypatch):
    monkeypatch.delenv(names.ENV_XRAY_SDK, raising=False)
    assert traced(handler) is handler


def test_tracer_wraps_when_enabled(monkeypatch):
    monkeypatch.setenv(names.ENV_XRAY_SDK, "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")  # no X-Ray daemon in tests
    wrapped = traced(handler)
    assert wrapped is not handler
