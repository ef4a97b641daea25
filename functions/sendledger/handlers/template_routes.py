"""The template routes: `/v1/templates...`, scoped to the caller (SigV4 like every route).

A caller sees its own versions and the deployment's; another caller's are not found (404, never
403: whether another caller has a template is not the caller's business). The use cases are
imported by the routes: a container that serves sends never loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from sendledger.api.openapi import documented
from sendledger.api.problems import ProblemType, problem
from sendledger.api.responses import json_response
from sendledger.api.template_models import (
    TEMPLATE_ID_PATTERN,
    PreviewRequest,
    PreviewView,
    TemplateListView,
    TemplateVersionView,
)
from sendledger.domain import callers, errors
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import iso
from sendledger.domain.recipients import Channel
from sendledger.domain.template_versions import TemplateOwner
from sendledger.handlers.invocation import current_runtime, identity_arn

if TYPE_CHECKING:
    from sendledger.ports.templates import StoredVersion, VersionSummary
    from sendledger.usecases.templates import Listed, TemplateLibrary

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves Router.__init__ unannotated
TEMPLATE_ID = Path(pattern=TEMPLATE_ID_PATTERN, description="a template id")
VERSION = Path(pattern=TEMPLATE_ID_PATTERN, description="a version name (immutable once published)")
VERSION_BODY = Body(
    description="params (declared names), email {subject, text, html?} and/or sms {text}, locales "
    '{"fr": {...}, "pt-BR": {...}} of the same shape, tracking (default true)',
)


def _library() -> TemplateLibrary:
    return current_runtime().template_library()


def _caller() -> CallerId:
    settings = current_runtime().settings
    return callers.caller_of(identity_arn(router.current_event.raw_event), settings.caller_tenants).id


def _not_found(template_id: str, version: str | None = None) -> Response[str]:
    what = f"template {errors.echo(template_id)}" + (f" version {errors.echo(version)}" if version else "")
    return problem(ProblemType.NOT_FOUND, f"no {what} of yours or of this deployment")


@router.get("/v1/templates", responses=documented(200, TemplateListView, 503))
def list_templates() -> Response[str]:
    """Your versions and the deployment's, by id then version (never their words)."""
    return _listing(_library().versions(_caller()))


@router.get("/v1/templates/<template_id>", responses=documented(200, TemplateListView, 404, 503))
def get_template(template_id: Annotated[str, TEMPLATE_ID]) -> Response[str]:
    listed = _library().versions(_caller(), template_id)
    if not listed:
        return _not_found(template_id)
    return _listing(listed)


@router.get("/v1/templates/<template_id>/versions/<version>", responses=documented(200, TemplateVersionView, 404, 503))
def get_version(template_id: Annotated[str, TEMPLATE_ID], version: Annotated[str, VERSION]) -> Response[str]:
    """The version a send of yours would use (yours, else the deployment's), with its hash."""
    shown = _library().show(_caller(), template_id, version)
    if shown is None:
        return _not_found(template_id, version)
    return json_response(200, _version(shown.stored))


@router.put(
    "/v1/templates/<template_id>/versions/<version>",
    # 201 written; 200 the same body was published before (nothing written).
    responses=documented(201, TemplateVersionView, 400, 409, 413, 415, 503) | documented(200, TemplateVersionView),
)
def put_version(
    template_id: Annotated[str, TEMPLATE_ID],
    version: Annotated[str, VERSION],
    body: Annotated[dict[str, Any], VERSION_BODY],
) -> Response[str]:
    """Publish a version: 201 when written, 200 when the same body was published before, 409
    `template-version-exists` for another body, 422 `template-invalid` naming every problem."""
    from sendledger.usecases.templates import Invalid, PublishOutcome

    result = _library().publish(_caller(), template_id, version, body)
    if isinstance(result, Invalid):
        detail = f"template {template_id!r} v{version} cannot be published: {len(result.problems)} problem(s)"
        return problem(ProblemType.TEMPLATE_INVALID, detail, [p.as_json() for p in result.problems])
    if result.outcome is PublishOutcome.CONFLICT:
        detail = (
            f"version {version!r} of {template_id!r} exists with another body: versions never change, publish a new one"
        )
        return problem(ProblemType.TEMPLATE_VERSION_EXISTS, detail)
    view = _version(result.stored) | {"outcome": result.outcome.value, "notes": list(result.notes) or None}
    return json_response(201 if result.outcome is PublishOutcome.CREATED else 200, view)


@router.post(
    "/v1/templates/<template_id>/versions/<version>/preview",
    responses=documented(200, PreviewView, 400, 404, 413, 415, 503),
)
def preview_version(
    template_id: Annotated[str, TEMPLATE_ID], version: Annotated[str, VERSION], body: PreviewRequest
) -> Response[str]:
    """Render as a send would (the SMS encoding and billed segments too); nothing is sent or stored."""
    found = _library().preview(_caller(), template_id, version, Channel(body.channel), body.params, body.locale)
    if found is None:
        return _not_found(template_id, version)
    rendered, segments = found.rendered, found.segments
    view: dict[str, Any] = {
        "id": template_id,
        "version": version,
        "owner": found.owner.value,
        "channel": found.channel.value,
        "locale": rendered.locale,
        "subject": rendered.subject,
        "text": rendered.text,
        "html": rendered.html,
        "tracking": rendered.tracking,
        "sms": {"encoding": segments.encoding.value, "units": segments.units, "segments": segments.segments}
        if segments
        else None,
    }
    return json_response(200, view)


@router.post(
    "/v1/templates/<template_id>/versions/<version>/retire",
    responses=documented(200, TemplateVersionView, 404, 503),
)
def retire_version(template_id: Annotated[str, TEMPLATE_ID], version: Annotated[str, VERSION]) -> Response[str]:
    """Retire your version: new sends get 422 `template-retired`; resends, escalations and the
    evidence of earlier sends still render it. There is no DELETE."""
    retired = _library().retire(_caller(), template_id, version)
    if retired is None:
        return _not_found(template_id, version)
    return json_response(200, _version(retired))


def _listing(listed: list[Listed]) -> Response[str]:
    return json_response(200, {"templates": [_summary(found.owner, found.summary) for found in listed]})


def _summary(owner: TemplateOwner, summary: VersionSummary) -> dict[str, Any]:
    return {
        "id": summary.id,
        "version": summary.version,
        "owner": owner.value,
        "sha256": summary.sha256,
        "channels": [channel.value for channel in summary.channels],
        "locales": list(summary.locales),
        "published_at": iso(summary.published_at) if summary.published_at else None,
        "retired_at": iso(summary.retired_at) if summary.retired_at else None,
    }


def _version(stored: StoredVersion) -> dict[str, Any]:
    owner = TemplateOwner.CALLER if stored.owner is not None else TemplateOwner.DEPLOYMENT
    return _summary(owner, stored.summary()) | {"body": stored.version.body()}
