"""What a call can fail with: the API's problem document, or a deadline spent waiting."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ProblemError(Exception):
    """A 4xx/5xx answer: RFC 9457 problem details (or what stood in for them)."""

    status: int
    title: str
    detail: str
    type: str = "about:blank"
    errors: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(f"{self.status} {self.title}: {self.detail}")

    @classmethod
    def from_answer(cls, status: int, body: Any) -> ProblemError:
        if isinstance(body, dict):
            return cls(
                status=status,
                title=str(body.get("title") or status),
                detail=str(body.get("detail") or ""),
                type=str(body.get("type") or "about:blank"),
                errors=list(body.get("errors") or []),
            )
        return cls(status=status, title=str(status), detail=str(body or "")[:500])


@dataclass
class DeadlineExceeded(Exception):
    """The caller's deadline passed while the API still asked to wait (409, 503 or pending)."""

    detail: str
    last_status: int
    last_body: Any = None

    def __post_init__(self) -> None:
        super().__init__(self.detail)


class NotConfigured(Exception):
    """What signing needs is missing (credentials, a region); the message says what to set."""


@dataclass
class NoAnswer(Exception):
    """No HTTP answer at all: connection refused, name not resolved, a timeout."""

    url: str
    reason: str

    def __post_init__(self) -> None:
        super().__init__(f"no answer from {self.url} ({self.reason})")
