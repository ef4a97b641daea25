"""Kill an invocation at its k-th AWS request, whatever client or service makes it.

The hook is botocore's ``BaseClient._make_api_call``, which every client runs once per API
call (every boto3 client; SDK retries happen inside it, so one call is one
request). Counting there does not depend on which adapter objects exist or how the ledger
builds its clients, so a rewrite of the DynamoDB layer keeps the same kill points.

A kill is a ``BaseException`` (no ``except Exception`` swallows it) and, like a timeout kill or
an OOM, it is final: once it fired, every further request of that invocation (a ``finally``
block, a cleanup) dies before it is sent. Nothing after the kill point reaches AWS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.client import BaseClient


class LambdaKilled(BaseException):
    """The invocation is dead from here on (timeout kill, OOM): nothing else it does is sent."""


@dataclass
class Kill:
    """One armed kill: the ``index``-th request, before it is sent or once its answer came back."""

    index: int
    after: bool
    fired: str | None = None  # "dynamodb.TransactWriteItems" once it fired

    @property
    def label(self) -> str:
        return f"{'after' if self.after else 'before'} request {self.index}"


@dataclass
class RequestKiller:
    """Records the requests of an invocation, or kills it at one of them (thread-safe)."""

    log: list[str] = field(default_factory=list)
    kill: Kill | None = None
    armed: bool = False
    dead: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def install(self, patch: pytest.MonkeyPatch, page_caps: dict[str, tuple[str, int]] | None = None) -> None:
        """Patch every botocore client; ``page_caps`` shrinks the pages services answer with.

        ``{"FilterLogEvents": ("limit", 2)}``: CloudWatch Logs may answer with fewer events than
        the ``limit`` and a ``nextToken``; SQS short polling may return fewer messages than
        ``MaxNumberOfMessages``. A small cap makes a handful of records span several pages.
        """
        original: Callable[..., Any] = BaseClient._make_api_call
        caps = dict(page_caps or {})

        def make_api_call(client: Any, operation: str, params: dict[str, Any]) -> Any:
            if operation in caps:
                name, cap = caps[operation]
                params = {**params, name: min(int(params.get(name) or cap), cap)}
            return self._call(original, client, operation, params)

        patch.setattr(BaseClient, "_make_api_call", make_api_call)

    @contextmanager
    def recording(self) -> Iterator[list[str]]:
        """Count what one invocation sends (the dry run): ``service.Operation`` in order."""
        with self._armed(None):
            yield self.log

    @contextmanager
    def killing(self, index: int, after: bool) -> Iterator[Kill]:
        kill = Kill(index, after)
        with self._armed(kill):
            yield kill

    @contextmanager
    def _armed(self, kill: Kill | None) -> Iterator[None]:
        with self._lock:
            self.log, self.kill, self.armed, self.dead = [], kill, True, False
        try:
            yield
        finally:
            with self._lock:
                self.armed, self.dead = False, False

    def _call(self, original: Callable[..., Any], client: Any, operation: str, params: dict[str, Any]) -> Any:
        name = f"{client.meta.service_model.service_name}.{operation}"
        with self._lock:
            if not self.armed:
                number = 0
            elif self.dead:
                raise LambdaKilled(f"{name}: the invocation was already killed")
            else:
                self.log.append(name)
                number = len(self.log)
                kill = self.kill
                if kill is not None and number == kill.index and not kill.after:
                    self.dead, kill.fired = True, name
                    raise LambdaKilled(f"killed before {name} (request {number}) was sent")
        try:
            return original(client, operation, params)
        finally:  # an error answer (a cancelled transaction) is lost on the way back just the same
            with self._lock:
                kill = self.kill
                if number and self.armed and kill is not None and number == kill.index and kill.after:
                    self.dead, kill.fired = True, name
                    raise LambdaKilled(f"killed after {name} (request {number}) was applied; its answer is lost")
