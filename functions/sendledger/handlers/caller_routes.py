"""The admin routes of caller settings: `/v1/admin/callers/...` (callback URL, test mode, flag
context, SMS guardrails, the callback secret's rotation). Admins only: the api Lambda refuses anyone else before
a route runs (api.admin_refusal), as deployed only the admin invoke policy's route grant lets a
request through the gateway first. The use
cases are imported by the routes: a container that serves sends never loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from sendledger.api.caller_models import CALLER_ID_PATTERN, CallerSettingsRequest, CallerView
from sendledger.api.openapi import documented
from sendledger.api.problems import ProblemType, problem
from sendledger.api.responses import json_response
from sendledger.domain import callers, errors
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import iso
from sendledger.handlers.invocation import current_runtime, identity_arn

if TYPE_CHECKING:
    from sendledger.usecases.callers import CallerAdmin
    from sendledger.usecases.callers import CallerView as Caller

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves Router.__init__ unannotated
CALLER_ID = Path(pattern=CALLER_ID_PATTERN, description="a caller id (GET /v1/admin/callers?principal= finds it)")
PRINCIPAL = Query(
    min_length=20,
    max_length=2048,
    description="an IAM user, role, role session or root ARN (a federated user only as CALLER_TENANTS names it)",
)
NO_STORE = {"Cache-Control": "no-store"}  # an answer may carry a new secret


def _admin() -> CallerAdmin:
    return current_runtime().callers()


def _actor() -> str:
    return identity_arn(router.current_event.raw_event)


@router.get("/v1/admin/callers", responses=documented(200, CallerView, 400, 403, 503))
def find_caller(principal: Annotated[str, PRINCIPAL]) -> Response[str]:
    """The caller a principal signs for (a role session: its role; a mapped principal: its tenant)."""
    from sendledger.usecases import callers as admin

    try:
        caller = callers.caller_of(principal.strip(), current_runtime().settings.caller_tenants)
    except errors.UnknownCaller as exc:
        return problem(ProblemType.VALIDATION_ERROR, exc.detail, [{"field": "principal", "message": exc.detail}])
    return _view(admin.show_caller(_admin(), caller.id), principal=caller.principal.arn)


@router.get("/v1/admin/callers/<caller_id>", responses=documented(200, CallerView, 400, 403, 503))
def get_caller(caller_id: Annotated[str, CALLER_ID]) -> Response[str]:
    from sendledger.usecases import callers as admin

    return _view(admin.show_caller(_admin(), CallerId(caller_id)))


@router.put("/v1/admin/callers/<caller_id>", responses=documented(200, CallerView, 400, 403, 413, 415, 503))
def put_caller(caller_id: Annotated[str, CALLER_ID], body: CallerSettingsRequest) -> Response[str]:
    """Change a caller's settings (fields left out keep their value)."""
    from sendledger.usecases import callers as admin
    from sendledger.usecases.callers import KEEP, Invalid, SettingsChange

    given = body.model_fields_set
    change = SettingsChange(
        callback_url=body.callback_url if "callback_url" in given else KEEP,
        test_mode=body.test_mode if "test_mode" in given and body.test_mode is not None else KEEP,
        flag_context=(body.flag_context or {}) if "flag_context" in given else KEEP,
        sms_countries=body.sms_countries if "sms_countries" in given else KEEP,
        sms_daily_segments=body.sms_daily_segments if "sms_daily_segments" in given else KEEP,
        reason=body.reason,
    )
    result = admin.change_caller(_admin(), CallerId(caller_id), change, _actor())
    if isinstance(result, Invalid):
        errors_ = [{"field": result.field, "message": message} for message in result.messages]
        return problem(ProblemType.VALIDATION_ERROR, f"{result.field} cannot be used", errors_)
    return _view(result)


@router.post("/v1/admin/callers/<caller_id>/secret", responses=documented(200, CallerView, 400, 403, 503))
def rotate_secret(caller_id: Annotated[str, CALLER_ID]) -> Response[str]:
    """A new callback secret (in this answer only); the current one stays valid beside it until
    the rotation is ended. A caller without a secret gets its first."""
    from sendledger.usecases import callers as admin

    return _view(admin.rotate_secret(_admin(), CallerId(caller_id), _actor()))


@router.delete(
    "/v1/admin/callers/<caller_id>/secret/previous", responses=documented(200, CallerView, 400, 403, 404, 409, 503)
)
def end_rotation(caller_id: Annotated[str, CALLER_ID]) -> Response[str]:
    """Drop the previous secret: callbacks carry the current one's signature only. Refused (409,
    Retry-After) until every callbacks container has the current secret."""
    from sendledger.usecases import callers as admin
    from sendledger.usecases.callers import NoSecret, RotationTooRecent

    result = admin.end_rotation(_admin(), CallerId(caller_id), _actor())
    if isinstance(result, NoSecret):
        return problem(ProblemType.NOT_FOUND, f"caller {caller_id} has no callback secret")
    if isinstance(result, RotationTooRecent):
        detail = "the callbacks Lambda may still sign with the previous secret alone: end the rotation later"
        return problem(ProblemType.ROTATION_TOO_RECENT, detail, retry_after=result.retry_after_seconds)
    return _view(result)


def _view(view: Caller, principal: str | None = None) -> Response[str]:
    settings, secret = view.settings, view.secret
    body: dict[str, Any] = {
        "caller_id": settings.caller_id,
        "principal": principal,
        "callback_url": settings.callback_url,
        "test_mode": settings.test_mode,
        "flag_context": dict(settings.flag_context),
        "sms_countries": settings.sms_countries.as_json() if settings.sms_countries else None,
        "sms_default_countries": view.sms_default_countries.as_json() if view.sms_default_countries else None,
        "sms_daily_segments": settings.sms_daily_segments,
        "sms_segments_today": view.sms_segments_today,
        "history": [
            {"at": iso(entry.at), "actor": entry.actor, "reason": entry.reason, "changed": dict(entry.changed)}
            for entry in settings.history
        ],
        "updated_at": iso(settings.updated_at) if settings.updated_at else None,
        "updated_by": settings.updated_by,
        "version": settings.version,
        "callback_secret": {
            "configured": secret.configured,
            "rotating": secret.rotating,
            "rotated_at": iso(secret.rotated_at) if secret.rotated_at else None,
        },
        "new_secret": view.new_secret,
    }
    return json_response(200, body, NO_STORE)
