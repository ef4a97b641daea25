"""What a cold start of the api builds before its first request."""

import subprocess
import sys
from pathlib import Path

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"

_BUILT_MODELS = (
    "import sendledger.handlers.api\n"
    "from pydantic import BaseModel\n"
    "from sendledger.api import models\n"
    "classes = [v for v in vars(models).values() if isinstance(v, type)]\n"
    "found = [c for c in classes if issubclass(c, BaseModel) and c.__module__.startswith('sendledger')]\n"
    "assert len(found) >= 15, found\n"
    "print(','.join(sorted(c.__name__ for c in found if c.__pydantic_complete__)))\n"
    "{then}"
)


def _probe(then: str = "") -> list[str]:
    code = _BUILT_MODELS.format(then=then)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=FUNCTIONS)
    return result.stdout.splitlines()


def test_importing_the_api_builds_no_model_validator():
    # Each is built by its route's first request (or the OpenAPI document): a container that
    # serves sends never builds the reset, suppression or webhook models.
    assert _probe() == [""]


def test_a_deferred_model_is_built_and_validates_on_first_use():
    then = (
        "request = models.SendMessageRequest.model_validate(\n"
        "    {'channel': 'email', 'to': 'a@example.com', 'template': {'id': 't', 'version': '1'}})\n"
        "print(models.SendMessageRequest.__pydantic_complete__, request.to)\n"
    )
    assert _probe(then) == ["", "True a@example.com"]


# What only the poller and the status-out functions read: events, their parsers, their ports.
_POLLER_ONLY = (
    "sendledger.domain.events",
    "sendledger.providers.mailgun.events",
    "sendledger.providers.ses.events",
    "sendledger.providers.sns.events",
    "sendledger.ports.ingestion",
    "sendledger.ports.webhooks",
    "sendledger.ports.status_out",
)


def test_importing_the_api_loads_none_of_the_pollers_modules():
    code = "import sys, sendledger.handlers.api\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=FUNCTIONS)
    loaded = set(result.stdout.splitlines())
    assert "sendledger.handlers.api" in loaded
    assert loaded.isdisjoint(_POLLER_ONLY), sorted(loaded.intersection(_POLLER_ONLY))


HANDLERS = ("api", "poller", "publisher", "callbacks", "sms_delivery_logs", "webhooks")


def test_no_handler_imports_pynamodb_and_the_send_paths_reads_never_load_it():
    """PynamoDB costs tens of ms to import (benchmarks/README.md): the ledger's models are loaded by
    the paths that write through them, on first use; the reads of a send's cold start (caller
    settings, the watermark) stay low-level, so the api never pays it for a send."""
    code = (
        "import sys\n"
        + "".join(f"import sendledger.handlers.{name}\n" for name in HANDLERS)
        + "from datetime import UTC, datetime\n"
        "from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings\n"
        "from sendledger.adapters.dynamodb.poller_state import PollerState\n"
        "from sendledger.domain.callers import CallerId\n"
        "from sendledger.domain.clock import SystemClock\n"
        "class Table:\n"
        "    def get(self, pk, sk):\n"
        "        return {'pk': {'S': pk}, 'sk': {'S': sk}, 'test_mode': {'BOOL': True},\n"
        "                'watermark': {'S': '2026-12-06T12:00:00.000Z'}, 'version': {'N': '2'}}\n"
        "settings = DynamoCallerSettings(Table(), SystemClock()).get(CallerId('c1'))\n"
        "watermark = PollerState(Table()).recent_watermark('email', datetime.now(UTC))\n"
        "assert settings.test_mode and watermark is not None\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'pynamodb'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=FUNCTIONS)
    assert result.stdout.strip() == "[]"


# Each Lambda's composition root, as its first invocation builds it (benchmarks/cold_start.py).
_COMPOSITIONS = {
    "api": ("sendledger.handlers.api", "bootstrap.runtime().sender"),
    "poller": ("sendledger.handlers.poller", "bootstrap.runtime().poll_cycle"),
    "sms_delivery_logs": ("sendledger.handlers.sms_delivery_logs", "bootstrap.runtime().log_subscription"),
    "publisher": ("sendledger.handlers.publisher", "bootstrap.status_out()"),
}


def _in_a_lambdas_environment(code: str) -> str:
    """`code`'s output in a fresh interpreter with credentials and a region, nothing else."""
    env = {"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x"}
    env["AWS_SECRET_ACCESS_KEY"] = "x"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=FUNCTIONS, env=env
    )
    return result.stdout


def _composed(handler: str, composition: str) -> set[str]:
    code = (
        f"import sys, {handler}\nfrom sendledger import bootstrap\n{composition}\n"
        "from sendledger.adapters import callbacks_http\n"
        "print('TLS', callbacks_http._system_tls.cache_info().currsize)\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    return set(_in_a_lambdas_environment(code).splitlines())


def test_no_lambda_imports_boto3_its_clients_come_from_botocore():
    # boto3's import is about as long again as botocore's and brings S3 transfers nobody uses.
    for name, (handler, composition) in _COMPOSITIONS.items():
        loaded = _composed(handler, composition)
        assert "botocore.client" in loaded, name
        assert "boto3" not in loaded, name


# The ledger's stores only the poller, the publisher and the webhooks read, and what they import.
_NOT_THE_APIS = (
    "sendledger.adapters.dynamodb.due_work",
    "sendledger.adapters.dynamodb.escalations",
    "sendledger.adapters.dynamodb.events",
    "sendledger.adapters.dynamodb.sms_receipts",
    "sendledger.adapters.dynamodb.stream",
    "sendledger.adapters.dynamodb.webhook_tokens",
    "sendledger.domain.event_plan",
    "sendledger.ports.ingestion",
    "sendledger.ports.status_out",
    "sendledger.ports.webhooks",
)


def test_the_apis_composition_builds_none_of_the_pollers_stores():
    loaded = _composed(*_COMPOSITIONS["api"])
    assert "sendledger.adapters.dynamodb.ledger" in loaded
    assert loaded.isdisjoint(_NOT_THE_APIS), sorted(loaded.intersection(_NOT_THE_APIS))


def test_the_publisher_loads_neither_tls_nor_the_batch_utility():
    # The system CAs cost about 20 ms to load and only a callback POST needs them; the partial
    # batch response is a list of sequence numbers (Powertools' batch utility was as long again).
    loaded = _composed(*_COMPOSITIONS["publisher"])
    assert "TLS 0" in loaded
    assert "aws_lambda_powertools.utilities.batch" not in loaded


def test_a_lambdas_clients_share_one_botocore_session_after_a_library_imports_boto3():
    # Powertools' feature flags import boto3 on a send's first flag read; a client made after
    # that from boto3's own session would load the credential chain and the endpoint data again.
    code = (
        "import botocore.session\n"
        "made = []\n"
        "init = botocore.session.Session.__init__\n"
        "def counted(self, *args, **kwargs):\n"
        "    made.append(self)\n"
        "    init(self, *args, **kwargs)\n"
        "botocore.session.Session.__init__ = counted\n"
        "from sendledger.adapters import aws\n"
        "from sendledger.adapters.dynamodb.table import ledger_client\n"
        "ledger_client()\n"
        "import aws_lambda_powertools.utilities.feature_flags\n"
        "import sys\n"
        "assert 'boto3' in sys.modules\n"
        "aws.client('sesv2')\n"
        "print(len(made))\n"
    )
    assert _in_a_lambdas_environment(code).strip() == "1"


def test_no_lambda_loads_pydantic_to_start_the_settings_are_read_without_it():
    # pydantic's import and a model's validator build cost the small Lambdas about a quarter of a
    # hand-written one's whole cold start; the api loads it with its router, on the first request
    # of a route other than the send (tests/integration/test_send_route.py).
    for name, (handler, composition) in _COMPOSITIONS.items():
        loaded = _composed(handler, composition)
        assert "sendledger.settings" in loaded, name
        assert "pydantic" not in loaded, name
