"""What the OpenAPI document says about responses: success bodies and problem documents."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from sendledger import names
from sendledger.api.models import Problem
from sendledger.api.problems import JSON, PROBLEM_JSON

# Routes whose domain can answer 422 (unknown template, Idempotency-Key reused).
ANSWERS_422 = {
    ("/v1/messages", "post"),
    ("/v1/password-resets", "post"),  # the caller's reset template: retired, or the deployment's missing
    ("/v1/templates/{template_id}/versions/{version}", "put"),
    ("/v1/templates/{template_id}/versions/{version}/preview", "post"),
}


def documented(status: int, model: type[BaseModel], *errors: int, media_type: str = JSON) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of a route: its success body and the problem documents it can answer.

    `media_type`: of the success body (NDJSON: each line one `model`)."""
    responses: dict[int, OpenAPIResponse] = {
        status: {"description": HTTPStatus(status).phrase, "content": {media_type: {"model": model}}}
    }
    for code in errors:
        responses[code] = {"description": HTTPStatus(code).phrase, "content": {PROBLEM_JSON: {"model": Problem}}}
    return responses


def problems_everywhere(document: dict[str, Any]) -> dict[str, Any]:
    """Powertools documents request validation as its own 422 body; ours is a 400 problem.

    Keep a 422 (as a problem) only where the domain answers one, drop the stock 200 where a
    route answers 202, and drop the schemas only the stock 422 used.
    """
    problem_ref = {"schema": {"$ref": "#/components/schemas/Problem"}}
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.get("responses", {})
            if responses.get("422", {}).get("description") == "Validation Error":
                if (path, method) in ANSWERS_422:
                    responses["422"] = {"description": "Unprocessable Content", "content": {PROBLEM_JSON: problem_ref}}
                else:
                    del responses["422"]
            if "202" in responses:
                responses.pop("200", None)
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        document.get("components", {}).get("schemas", {}).pop(name, None)
    # Deployed, API Gateway authorizes every route with IAM (SigV4); /v1/admin/* needs its own grant.
    document.setdefault("components", {})["securitySchemes"] = {
        "sigv4": {"type": "apiKey", "name": "Authorization", "in": "header", "x-amazon-apigateway-authtype": "awsSigv4"}
    }
    document["security"] = [{"sigv4": []}]
    for path, operations in document.get("paths", {}).items():
        if path.startswith(names.PROVIDERS_PATH):
            # Provider webhooks carry the provider's own signature instead (verified in the Lambda).
            for operation in operations.values():
                operation["security"] = []
    return document


def document_json(app: APIGatewayRestResolver, *beside: APIGatewayRestResolver) -> str:
    """The api's OpenAPI document (served at /openapi.json, committed as docs/openapi.json), with the
    routes of the resolvers `beside` it (the webhooks Lambda's: one API Gateway, several functions)."""
    document = _schema(app)
    for other in beside:
        extra = _schema(other)
        document["paths"].update(extra["paths"])
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        schemas.update(extra.get("components", {}).get("schemas", {}))
    return json.dumps(problems_everywhere(document), indent=2)


def _schema(app: APIGatewayRestResolver) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        app.get_openapi_json_schema(
            title="sendledger",
            version="1.0.0",
            openapi_version="3.1.0",
            summary="At-most-once transactional email and SMS with an evidence trail",
        )
    )
    return document
