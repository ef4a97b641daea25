"""What ``make run`` prints: one readable line per request and per poll cycle that did something.

``SENDLEDGER_LOCAL_LOG_FORMAT=json`` keeps the raw stream instead: the handlers' Powertools JSON
lines, their EMF metric blobs and every library's INFO lines, as a Lambda's log group gets them.
In the default text format the handlers log warnings and errors only (still as JSON, with their
context), metrics are not printed, and the local stack's own lines read as plain text.
"""

from __future__ import annotations

import io
import logging
import sys
import threading
from collections.abc import MutableMapping
from enum import StrEnum
from typing import TextIO

ENV_LOG_FORMAT = "SENDLEDGER_LOCAL_LOG_FORMAT"
ENV_LOG_LEVEL = "SENDLEDGER_LOCAL_LOG_LEVEL"
LOCAL_LOGGER = "sendledger.local"
ACCESS_LOGGER = "local.access"  # the gateway's access line (local/access_log.py)


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


def log_format(environ: MutableMapping[str, str]) -> LogFormat:
    raw = (environ.get(ENV_LOG_FORMAT) or LogFormat.TEXT.value).strip().lower()
    try:
        return LogFormat(raw)
    except ValueError:
        choices = ", ".join(member.value for member in LogFormat)
        raise SystemExit(f"{ENV_LOG_FORMAT}={raw!r} is not one of: {choices}") from None


class WithoutMetrics(io.TextIOBase):
    """A stdout that drops EMF metric lines: Powertools' single_metric prints them even with
    POWERTOOLS_METRICS_DISABLED set. Everything else passes through, a line at a time."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self._target = target
        self._partial = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            *lines, self._partial = (self._partial + text).split("\n")
            kept = [line + "\n" for line in lines if not line.startswith('{"_aws":')]
            if kept:
                self._target.write("".join(kept))
                self._target.flush()
        return len(text)

    def flush(self) -> None:
        self._target.flush()


class _TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(message)s", datefmt="%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        return line if record.levelno == logging.INFO else f"{line} [{record.levelname}]"


def configure(environ: MutableMapping[str, str]) -> LogFormat:
    """Before any handler module is imported: Powertools reads its level and switches at import."""
    chosen = log_format(environ)
    level = environ.get(ENV_LOG_LEVEL) or "INFO"
    raw = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    handler = logging.StreamHandler(sys.stderr)
    if chosen is LogFormat.JSON:
        logging.basicConfig(level=level, format=raw)
        handler.setFormatter(logging.Formatter(raw))
    else:
        environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
        environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        sys.stdout = WithoutMetrics(sys.stdout)  # Powertools binds sys.stdout when a handler module imports
        logging.basicConfig(level=logging.WARNING, format=raw)  # botocore's INFO lines stay out
        handler.setFormatter(_TextFormatter())
    for name in (LOCAL_LOGGER, ACCESS_LOGGER):
        local = logging.getLogger(name)
        local.setLevel(level)
        local.addHandler(handler)
        # "sendledger.local" sits under the handlers' Powertools logger "sendledger": without this
        # its lines would be formatted as if a Lambda had written them (and the root logger stays
        # at WARNING in the text format, for botocore's INFO lines).
        local.propagate = False
    return chosen
