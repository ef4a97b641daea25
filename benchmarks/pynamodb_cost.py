"""What PynamoDB costs where the ledger's models are used (adapters/dynamodb/models.py): the
import in a fresh process, and the client CPU of one item's serialization and deserialization
and of one conditional update's expressions through a model (adapters/dynamodb/modelled.py),
side by side in one run with the low-level path the send and ingest paths keep."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ITEMS = 5_000
IMPORT_RUNS = 7


def measure(root: Path, items: int = ITEMS, import_runs: int = IMPORT_RUNS) -> dict[str, Any]:
    from sendledger.adapters.dynamodb import models
    from sendledger.adapters.dynamodb.caller_settings import settings_from
    from sendledger.adapters.dynamodb.expressions import encode_item
    from sendledger.domain.callers import CallerId

    at = "2026-12-06T12:00:00+00:00"
    values = {
        "pk": "CALLER#c1",
        "sk": "SETTINGS",
        "callback_url": "https://receiver.example.com/hook",
        "test_mode": True,
        "flag_context": {"tier": "beta"},
        "updated_at": at,
        "updated_by": "arn:aws:iam::123456789012:user/admin",
        "version": 3,
    }
    raw = encode_item(values)
    caller = CallerId("c1")

    def model_write() -> object:
        return models.CallerSettingsItem(**values).serialize()

    def model_read() -> object:
        return models.CallerSettingsItem.from_raw_data(raw)

    def low_level_write() -> object:
        return encode_item(values)

    def low_level_read() -> object:
        return settings_from(caller, raw)

    from sendledger.adapters.dynamodb.expressions import Update
    from sendledger.adapters.dynamodb.modelled import expressions

    stored, moment = models.WatermarkItem, "2026-12-06T12:00:00.000Z"

    def model_update() -> object:  # the poller's watermark write: two sets and a never-backwards condition
        actions = [stored.watermark.set(moment), stored.updated_at.set(moment)]
        return expressions(actions, stored.watermark.does_not_exist() | (stored.watermark < moment))

    def low_level_update() -> object:
        update = Update().set("watermark", moment).set("updated_at", moment)
        update.when(update.absent("watermark") | update.below("watermark", moment))
        return update.request()

    cpu = {name: _cpu_us(call, items) for name, call in (
        ("model_write", model_write), ("low_level_write", low_level_write),
        ("model_read", model_read), ("low_level_read", low_level_read),
        ("model_update", model_update), ("low_level_update", low_level_update),
    )}  # fmt: skip
    return {
        "method": (
            f"one caller-settings item, {items} times each way in one process (time.process_time); "
            f"the import: median of {import_runs} fresh interpreters, perf_counter around the import statement"
        ),
        "import_ms": {
            name: _import_ms(root, statement, import_runs, before)
            for name, statement, before in (
                ("pynamodb.models", "import pynamodb.models", "pass"),
                # In a Lambda the adapters have loaded boto3 (botocore) already: the import's own share.
                ("pynamodb.models after boto3", "import pynamodb.models", "import boto3"),
                ("the ledger's models after boto3", "import sendledger.adapters.dynamodb.models", "import boto3"),
            )
        },
        "cpu_us_per_item": cpu,
        "write_ratio_model_over_low_level": round(cpu["model_write"] / cpu["low_level_write"], 2),
        "read_ratio_model_over_low_level": round(cpu["model_read"] / cpu["low_level_read"], 2),
        "update_ratio_model_over_low_level": round(cpu["model_update"] / cpu["low_level_update"], 2),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_1m": round(os.getloadavg()[0], 1),
        "cpus": os.cpu_count(),
    }


def _cpu_us(call: Callable[[], object], items: int) -> float:
    for _ in range(min(items, 200)):  # warm caches and lazy imports first
        call()
    started = time.process_time()
    for _ in range(items):
        call()
    return round((time.process_time() - started) / items * 1e6, 2)


def _import_ms(root: Path, statement: str, runs: int, before: str = "pass") -> float:
    functions = str(root / "functions")
    probe = (
        f"import sys, time; sys.path[:0] = [{functions!r}]; {before}; started = time.perf_counter(); {statement}; "
        "print((time.perf_counter() - started) * 1000)"
    )
    found = sorted(
        float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    )
    return round(found[len(found) // 2], 1)


if __name__ == "__main__":
    import json

    print(json.dumps(measure(Path(__file__).resolve().parents[1]), indent=2))
