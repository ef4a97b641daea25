"""Cold start as a container pays it: import, composition root and the first invocation's work.

Each sample is a fresh ``python -I`` process (the benchmark's interpreter) with a deployed
Lambda's environment (benchmarks.environment.lambda_environment; X-Ray tracing enabled as in
the stack) and ``AWS_ENDPOINT_URL`` pointing at the canned endpoint (benchmarks/canned.py), so
every AWS call is a real HTTP exchange that costs the emulator nothing. The child reads its
event first, then times with ``perf_counter`` (wall, what a cold start bills) and
``process_time``:

- the handler module's import;
- its composition root (``bootstrap.runtime()`` with the flow its first invocation runs: the
  send flow for the api, the poll cycle for the poller, the event sink for the SMS handler;
  ``bootstrap.status_out()`` for the publisher);
- its first invocation: a send (api), a poll cycle draining ten SES events (poller), a log
  batch of five records (sms_delivery_logs), a stream batch of three changes (publisher).

The baseline, what a hand-written Lambda pays: ``import boto3``, one DynamoDB client, one
``put_item``, in the same kind of process against the same endpoint. Targets are sampled
round-robin so machine noise hits all alike; one unmeasured run each first writes the bytecode
caches. The bar is the ratio of the medians of the whole (import + composition + first
invocation), wall time. The import-only ratio of v2 is kept beside it (``cold_start_ratio``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import event_samples
from benchmarks.canned import CannedEndpoint
from benchmarks.environment import lambda_environment

BASELINE = "boto3"
HANDLERS = {
    "api": "sendledger.handlers.api",
    "poller": "sendledger.handlers.poller",
    "sms_delivery_logs": "sendledger.handlers.sms_delivery_logs",
    "publisher": "sendledger.handlers.publisher",
}
COMPOSITION = {  # what the handler's first invocation builds, made explicit to time it apart
    "api": "runtime().sender",
    "poller": "runtime().poll_cycle",
    "sms_delivery_logs": "runtime().log_subscription",
    "publisher": "status_out()",
}
MEMORY_MB = {"api": 512, "poller": 512, "sms_delivery_logs": 256, "publisher": 256}
POLLER_EVENTS = 10

_CONTEXT = """
class Context:
    function_name = {function!r}
    function_version = "$LATEST"
    memory_limit_in_mb = {memory}
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:" + function_name
    aws_request_id = "00000000-0000-4000-8000-000000000001"
    log_group_name = "/aws/lambda/" + function_name
    log_stream_name = "2026/12/01/[$LATEST]0123456789abcdef"
    def get_remaining_time_in_millis(self):
        return 60000
"""

_HANDLER_CHILD = (
    """
import json, sys, time
sys.path.insert(0, {functions!r})
event = json.loads(sys.stdin.read())
"""
    + _CONTEXT
    + """
wall, cpu = time.perf_counter(), time.process_time()
import {module} as handler
imported = time.perf_counter()
from sendledger import bootstrap
bootstrap.{composition}
composed = time.perf_counter()
answer = handler.lambda_handler(event, Context())
done, cpu = time.perf_counter(), time.process_time() - cpu
files = sorted({{getattr(m, "__file__", None) or "" for m in list(sys.modules.values())}} - {{""}})
print("COLD " + json.dumps({{"import": imported - wall, "composition": composed - imported,
    "invocation": done - composed, "total": done - wall, "cpu": cpu, "answer": answer, "files": files}},
    default=str), flush=True)
"""
)

_BASELINE_CHILD = """
import json, sys, time
sys.stdin.read()
wall, cpu = time.perf_counter(), time.process_time()
import boto3
imported = time.perf_counter()
client = boto3.client("dynamodb")
composed = time.perf_counter()
client.put_item(TableName="baseline", Item={"pk": {"S": "order-1048577-paid"}, "state": {"S": "sent"}})
done, cpu = time.perf_counter(), time.process_time() - cpu
print("COLD " + json.dumps({"import": imported - wall, "composition": composed - imported,
    "invocation": done - composed, "total": done - wall, "cpu": cpu, "answer": None}), flush=True)
"""


# A hand-written Lambda doing a handler's job needs the same clients and the same operations:
# one call of each operation the handler's first invocation made (counted by the endpoint on the
# unmeasured run), so the product's extra calls still count against it.
_CALLS = {
    "Query": (
        "dynamodb",
        "query",
        {"TableName": "t", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "x"}}},
    ),
    "Scan": ("dynamodb", "scan", {"TableName": "t", "IndexName": "due-work", "Limit": 200}),
    "GetItem": ("dynamodb", "get_item", {"TableName": "t", "Key": {"pk": {"S": "x"}}}),
    "PutItem": ("dynamodb", "put_item", {"TableName": "t", "Item": {"pk": {"S": "x"}}}),
    "UpdateItem": (
        "dynamodb",
        "update_item",
        {
            "TableName": "t",
            "Key": {"pk": {"S": "x"}},
            "UpdateExpression": "SET s = :s",
            "ExpressionAttributeValues": {":s": {"S": "y"}},
        },
    ),
    "BatchGetItem": ("dynamodb", "batch_get_item", {"RequestItems": {"t": {"Keys": [{"pk": {"S": "x"}}]}}}),
    "TransactWriteItems": (
        "dynamodb",
        "transact_write_items",
        {"TransactItems": [{"Put": {"TableName": "t", "Item": {"pk": {"S": "x"}}}}]},
    ),
    "ReceiveMessage": (
        "sqs",
        "receive_message",
        {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/1/q", "MaxNumberOfMessages": 10},
    ),
    "DeleteMessageBatch": (
        "sqs",
        "delete_message_batch",
        {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/1/q", "Entries": [{"Id": "0", "ReceiptHandle": "r"}]},
    ),
    "FilterLogEvents": ("logs", "filter_log_events", {"logGroupName": "g"}),
    "SendEmail": (
        "sesv2",
        "send_email",
        {
            "FromEmailAddress": "a@example.com",
            "Destination": {"ToAddresses": ["b@example.com"]},
            "Content": {"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}}},
        },
    ),
    "Publish": ("sns", "publish", {"PhoneNumber": "+14155550100", "Message": "m"}),
    "PutEvents": ("events", "put_events", {"Entries": [{"Source": "s", "DetailType": "d", "Detail": "{}"}]}),
}

_SAME_SERVICES_CHILD = """
import json, sys, time
sys.stdin.read()
calls = {calls!r}
wall, cpu = time.perf_counter(), time.process_time()
import boto3
imported = time.perf_counter()
clients = {{service: boto3.client(service) for service in dict.fromkeys(service for service, _, _ in calls)}}
composed = time.perf_counter()
for service, method, params in calls:
    getattr(clients[service], method)(**params)
done, cpu = time.perf_counter(), time.process_time() - cpu
print("COLD " + json.dumps({{"import": imported - wall, "composition": composed - imported,
    "invocation": done - composed, "total": done - wall, "cpu": cpu, "answer": None}}), flush=True)
"""


def same_services_code(operations: dict[str, int]) -> str:
    """The hand-written Lambda of a handler: its clients, one call of each of its operations."""
    unknown = sorted(set(operations) - set(_CALLS))
    if unknown:
        raise RuntimeError(f"no hand-written call for {unknown}")
    return _SAME_SERVICES_CHILD.format(calls=[_CALLS[operation] for operation in sorted(operations)])


def _events() -> dict[str, dict[str, Any]]:
    return {
        BASELINE: {},
        "api": event_samples.send_event(),
        "poller": event_samples.scheduled_event(),
        "sms_delivery_logs": event_samples.sms_subscription_event(),
        "publisher": event_samples.stream_batch(),
    }


def _check(name: str, answer: Any) -> str:
    """Why the first invocation did not do its work, or ''."""
    if name == "api" and not (isinstance(answer, dict) and answer.get("statusCode") == 202):
        return f"the send answered {answer}"
    if name == "poller" and not (isinstance(answer, dict) and answer.get("applied") == POLLER_EVENTS):
        return f"the poll cycle applied {answer}"
    if name == "sms_delivery_logs" and not (isinstance(answer, dict) and answer.get("applied")):
        return f"the log batch applied {answer}"
    if name == "publisher" and not (isinstance(answer, dict) and not answer.get("batchItemFailures")):
        return f"the stream batch failed {answer}"
    return ""


def _run(name: str, code: str, env: dict[str, str], event: dict[str, Any], cwd: Path) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-I", "-c", code],
        cwd=str(cwd),
        env=env,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    for line in completed.stdout.splitlines():
        if line.startswith("COLD "):
            sample: dict[str, Any] = json.loads(line[5:])
            problem = _check(name, sample.pop("answer"))
            if problem:
                raise RuntimeError(f"{name}: {problem}")
            return sample
    tail = ((completed.stderr or completed.stdout).strip().splitlines() or ["no output"])[-1]
    raise RuntimeError(f"{name}: no cold start measured ({tail})")


# Provided by the Lambda runtime with their bytecode (infra/bundling.py RUNTIME_PROVIDED, by import name).
_RUNTIME_PROVIDED = frozenset(("boto3", "botocore", "s3transfer", "jmespath", "urllib3", "dateutil", "six"))


def compile_ms(files: list[str], functions: Path, rounds: int = 3) -> float:
    """What a cold start would spend compiling the asset's modules it loaded had the asset shipped
    them as sources: the package's and its bundled dependencies' (not the runtime's, nor the
    standard library's). Median of `rounds` passes."""
    sources = [Path(file) for file in files if file.endswith(".py") and _in_asset(Path(file), functions)]
    texts = [(str(path), path.read_bytes()) for path in sources]
    passes = []
    for _ in range(rounds):
        start = time.perf_counter()
        for name, text in texts:
            compile(text, name, "exec", dont_inherit=True)
        passes.append(time.perf_counter() - start)
    return _ms(statistics.median(passes))


def _in_asset(path: Path, functions: Path) -> bool:
    if path.is_relative_to(functions / "sendledger"):
        return True
    parts = path.parts
    if "site-packages" not in parts:
        return False
    top = parts[parts.index("site-packages") + 1]
    return top.removesuffix(".py") not in _RUNTIME_PROVIDED and not top.startswith(("_", "__"))


def _env(function: str, endpoint: str) -> dict[str, str]:
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "TMPDIR") if key in os.environ}
    env = {**base, **lambda_environment(f"sendledger-{function}", MEMORY_MB.get(function, 512))}
    env.update(AWS_ENDPOINT_URL=endpoint, EVENT_BUS_NAME="sendledger-bench")
    return env


def _code(name: str, functions: Path) -> str:
    if name == BASELINE:
        return _BASELINE_CHILD
    context = {"function": f"sendledger-{name}", "memory": MEMORY_MB[name]}
    return _HANDLER_CHILD.format(
        functions=str(functions), module=HANDLERS[name], composition=COMPOSITION[name], **context
    )


def measure(root: Path, runs: int, handlers: tuple[str, ...] = tuple(HANDLERS), warm: bool = True) -> dict[str, Any]:
    functions = root / "functions"
    events = _events()
    targets = [BASELINE, *handlers]
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
    with CannedEndpoint() as endpoint:
        envs = {name: _env("api" if name == BASELINE else name, endpoint.url) for name in targets}
        codes = {name: _code(name, functions) for name in targets}

        def one(name: str) -> dict[str, Any]:
            if name == "poller":
                endpoint.load(event_samples.ses_bodies(POLLER_EVENTS))
            return _run(name, codes[name], envs[name], events[name], functions)

        if warm:  # bytecode caches written, not measured
            one(BASELINE)
        operations: dict[str, dict[str, int]] = {}
        compiled: dict[str, float] = {}
        for name in handlers:  # likewise; each first invocation's AWS operations and modules counted
            before = endpoint.stats()
            compiled[name] = compile_ms(one(name)["files"], functions)
            after = endpoint.stats()
            operations[name] = {op: n - before.get(op, 0) for op, n in after.items() if n > before.get(op, 0)}
        for name in handlers:
            same = f"{BASELINE}:{name}"
            codes[same], envs[same], events[same] = same_services_code(operations[name]), envs[BASELINE], {}
            samples[same] = []
        for _ in range(runs):
            for name in list(samples):
                sample = one(name)
                sample.pop("files", None)  # counted once, above
                samples[name].append(sample)
    return {**_summary(samples, runs, operations), "compile_ms_as_sources": compiled}


def _median(samples: list[dict[str, Any]], part: str) -> float:
    return statistics.median(sample[part] for sample in samples)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _summary(
    samples: dict[str, list[dict[str, Any]]], runs: int, operations: dict[str, dict[str, int]] | None = None
) -> dict[str, Any]:
    base = samples[BASELINE]
    parts = ("import", "composition", "invocation", "total", "cpu")
    result: dict[str, Any] = {
        "runs_per_target": runs,
        "method": (
            "fresh `python -I` processes, round-robin, Lambda environment, canned AWS endpoint; median wall time "
            "of import + composition root + first invocation, against import boto3 + one client + one put_item"
        ),
        "baseline_ms": {part: _ms(_median(base, part)) for part in parts},
        "handlers": {},
        "ratio_first_invocation": {},
        "cpu_ratio_first_invocation": {},
        "ratio_import": {},
        "ratio_same_services": {},
        "same_services_ms": {},
        "operations_first_invocation": operations or {},
    }
    for name, module in HANDLERS.items():
        if name not in samples:
            continue
        found = samples[name]
        result["handlers"][name] = {
            "module": module,
            "composition": f"bootstrap.{COMPOSITION[name]}",
            **{f"{part}_ms": _ms(_median(found, part)) for part in parts},
            "total_range_ms": [_ms(min(s["total"] for s in found)), _ms(max(s["total"] for s in found))],
        }
        result["ratio_first_invocation"][name] = round(_median(found, "total") / _median(base, "total"), 3)
        result["cpu_ratio_first_invocation"][name] = round(_median(found, "cpu") / _median(base, "cpu"), 3)
        result["ratio_import"][name] = round(_median(found, "import") / _median(base, "import"), 3)
        same = samples.get(f"{BASELINE}:{name}")
        if same:
            result["same_services_ms"][name] = _ms(_median(same, "total"))
            result["ratio_same_services"][name] = round(_median(found, "total") / _median(same, "total"), 3)
    return result
