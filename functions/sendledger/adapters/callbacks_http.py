"""The callback receiver over HTTPS (urllib: one POST, no redirects followed), and its secret."""

from __future__ import annotations

import http.client
import threading
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sendledger.settings import Settings

SECRET_MAX_AGE_SECONDS = 300  # a rotated secret is picked up within five minutes


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # a 3xx is an answer (not 2xx: retried), never a second destination


_OPENER = urllib.request.build_opener(_NoRedirects)


class UrllibEndpoint:
    def post(self, url: str, body: bytes, headers: dict[str, str], timeout_seconds: float) -> int | None:
        """The receiver's status, or None when it gave none within `timeout_seconds` in all.

        urllib's timeout bounds each socket operation, not the request: a receiver that accepts
        and trickles bytes could hold one POST for many timeouts, and with it the whole batch
        past the function's timeout. The POST runs on its own thread and is abandoned at the
        deadline (its socket timeout then ends it).
        """
        if not url.startswith(("https://", "http://")):
            raise ValueError("CALLBACK_URL must be an http(s) URL")
        answer: list[int | None] = []
        thread = threading.Thread(
            target=lambda: answer.append(_post(url, body, headers, timeout_seconds)), name="callback-post", daemon=True
        )
        thread.start()
        thread.join(timeout_seconds)
        return answer[0] if answer else None


def _post(url: str, body: bytes, headers: dict[str, str], timeout_seconds: float) -> int | None:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310 - scheme checked
    try:
        with _OPENER.open(request, timeout=timeout_seconds) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except (urllib.error.URLError, http.client.HTTPException, OSError):
        return None  # no answer, or none that HTTP can read (a malformed or cut-off status line)


def callback_secret(settings: Settings) -> str:
    """Deployed from Secrets Manager (cached by Powertools Parameters); locally the variable."""
    if not settings.callback_secret_arn:
        return settings.callback_secret
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(settings.callback_secret_arn, max_age=SECRET_MAX_AGE_SECONDS)
    if not isinstance(value, str) or not value:
        raise ValueError(f"secret {settings.callback_secret_arn} holds no callback secret")
    return value
