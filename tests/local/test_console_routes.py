"""The console's routes on the local gateway: static files served safely, the inspection reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from local.console_files import CONSOLE_DIR
from local.constants import LOCAL_PRINCIPAL
from local.gateway import Gateway
from sendledger import names
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.test_local_gateway import FakeHandler, assert_problem, raw_request


class FakeInspector:
    def __init__(self) -> None:
        self.views = {"msg_1": {"message_id": "msg_1", "state": "delivered", "history": [{"type": "intent"}]}}
        self.known = ["bob@example.com", "+12065550100"]
        self.fail = False

    def message(self, message_id: str, *, with_history: bool = True) -> dict[str, Any] | None:
        if self.fail:
            raise ConnectionError("moto is gone")
        view = self.views.get(message_id)
        return None if view is None else {k: v for k, v in view.items() if with_history or k != "history"}

    def messages(self, message_ids: list[str]) -> list[dict[str, Any]]:
        return [view for i in message_ids if (view := self.message(i, with_history=False))]

    def recipients(self) -> list[str]:
        return self.known


@pytest.fixture
def fake() -> FakeHandler:
    return FakeHandler()


@pytest.fixture
def inspector() -> FakeInspector:
    return FakeInspector()


@pytest.fixture
def gateway(fake: FakeHandler, inspector: FakeInspector) -> Iterator[Gateway]:
    gw = Gateway(fake, principal=LOCAL_PRINCIPAL, routes=names.API_ROUTES, port=0, inspector=inspector)
    gw.start()
    yield gw
    gw.stop()


def get(gateway: Gateway, path: str) -> requests.Response:
    return requests.get(f"{gateway.url}{path}", timeout=REQUEST_TIMEOUT_SECONDS, allow_redirects=False)


def test_root_redirects_to_the_console_which_is_its_index_page(gateway: Gateway) -> None:
    root = get(gateway, "/")
    assert (root.status_code, root.headers["Location"]) == (302, "/local/console")
    page = get(gateway, "/local/console")
    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert page.content == (CONSOLE_DIR / "index.html").read_bytes()
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    ("name", "content_type"),
    [("console.js", "text/javascript; charset=utf-8"), ("console.css", "text/css; charset=utf-8")],
)
def test_assets_have_their_content_type(gateway: Gateway, name: str, content_type: str) -> None:
    response = get(gateway, f"/local/console/{name}")
    assert (response.status_code, response.headers["Content-Type"]) == (200, content_type)
    assert response.content == (CONSOLE_DIR / name).read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/local/console/../gateway.py",
        "/local/console/%2e%2e%2fgateway.py",
        "/local/console/..%2Fgateway.py",
        "/local/console/%2E%2E/constants.py",
        "/local/console/console.js/",
        "/local/console/console.js%00.css",
        "/local/console/nothing.js",
        "/local/console/",
        "/local/console//etc/passwd",
        "/local/console/index.html.bak",
    ],
)
def test_no_other_file_is_served(gateway: Gateway, fake: FakeHandler, path: str) -> None:
    status, headers, body = raw_request(gateway, "GET", path)
    assert status == 404
    assert_problem(headers, body, 404)
    assert b"import" not in body and fake.calls == []


def test_console_routes_take_only_get_and_head(gateway: Gateway) -> None:
    status, headers, _ = raw_request(gateway, "POST", "/local/console/console.js")
    assert (status, headers["allow"]) == (405, "GET, HEAD")
    status, headers, body = raw_request(gateway, "HEAD", "/local/console")
    assert (status, body) == (200, b"")
    assert int(headers["content-length"]) == len((CONSOLE_DIR / "index.html").read_bytes())


def test_message_views_of_any_caller(gateway: Gateway, inspector: FakeInspector) -> None:
    assert get(gateway, "/local/messages/msg_1").json() == inspector.views["msg_1"]
    assert_problem(*_parts(get(gateway, "/local/messages/msg_2")), 404)
    assert get(gateway, "/local/messages?ids=msg_2,msg_1").json() == [{"message_id": "msg_1", "state": "delivered"}]
    assert get(gateway, "/local/messages").json() == []
    inspector.fail = True
    failed = get(gateway, "/local/messages/msg_1")
    assert failed.headers["Retry-After"] == "1"
    assert "ConnectionError" in assert_problem(*_parts(failed), 503)["detail"]


def test_suppressions_are_the_apis_answers_for_each_known_recipient(gateway: Gateway, fake: FakeHandler) -> None:
    fake.response = {"statusCode": 200, "headers": {}, "body": json.dumps({"recipient": "r", "suppressed": True})}
    response = get(gateway, "/local/suppressions")
    assert response.json() == [{"recipient": "r", "suppressed": True}] * 2
    assert [(event["httpMethod"], event["path"]) for event, _ in fake.calls] == [
        ("GET", "/v1/admin/suppressions/bob%40example.com"),
        ("GET", "/v1/admin/suppressions/%2B12065550100"),
    ]
    fake.response = {"statusCode": 503, "headers": {}, "body": "{}"}
    assert get(gateway, "/local/suppressions").status_code == 503


def test_without_an_inspector_the_reads_are_404(fake: FakeHandler) -> None:
    gw = Gateway(fake, principal=LOCAL_PRINCIPAL, routes=names.API_ROUTES, port=0)
    gw.start()
    try:
        for path in ("/local/messages/msg_1", "/local/suppressions"):
            assert_problem(*_parts(get(gw, path)), 404)
        assert get(gw, "/local/console").status_code == 200
    finally:
        gw.stop()


def test_the_consoles_reads_are_logged_below_info(gateway: Gateway, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="local.access")
    for path in ("/local/console", "/local/outbox", "/local/messages/msg_1", "/local/console/nothing.js"):
        get(gateway, path)
    requests.post(f"{gateway.url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS)
    levels = [(r.levelname, r.getMessage().split(" ms ")[0]) for r in caplog.records if r.name == "local.access"]
    assert [(level, line.rsplit(" ", 1)[0]) for level, line in levels] == [
        ("DEBUG", "GET /local/console 200"),
        ("DEBUG", "GET /local/outbox 200"),
        ("DEBUG", "GET /local/messages/{message_id} 200"),
        ("INFO", "GET /local/console/{file} 404"),
        ("INFO", "POST /local/poll 404"),
    ]


def _parts(response: requests.Response) -> tuple[dict[str, str], bytes]:
    return {k.lower(): v for k, v in response.headers.items()}, response.content
