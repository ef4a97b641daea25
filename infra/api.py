"""HTTP API (IAM authorization on every route but the providers' webhooks) proxying to the `api`
Lambda, plus the two execute-api policies that grant callers the client routes and the admin
routes separately.

Why an HTTP API and not REST: $1.00 against $3.50 per million requests (SPEC section 7), the
largest line of the bill a send pays at the front door (benchmarks/README.md). What it gives up is
written down in docs/operations.md: no resource policy (the admin routes keep two independent
checks: the route-level grant of the admin invoke policy and the api Lambda's ADMIN_PRINCIPALS
list), no private endpoint, no AWS WAF, no usage plans, no gateway request validation, and the
gateway's own 403/404 bodies are API Gateway's fixed JSON, not problem+json.

Integration payload format 1.0: the REST proxy event shape (plus `version` and `routeKey`), which
the api's request gate, HEAD handling and resolver read; 2.0 would rename every field they use and
drop multi-value headers in answers, for nothing a bill counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra import constants as c
from infra import nag
from infra.data import LedgerData
from infra.lambdas import SYNCHRONOUS, SendledgerFunction, xray_and_publish_reason
from infra.settings import Settings
from infra.webhooks import WebhookIntake
from sendledger import names

ADMIN_PATH = names.ADMIN_PATH_PREFIX


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # the route's path, {param} for path parameters

    @property
    def admin(self) -> bool:
        return self.path.startswith(ADMIN_PATH)

    @property
    def arn_path(self) -> str:
        """The path as it appears in an execute-api ARN (a parameter matches any segment)."""
        return "/".join("*" if p.startswith("{") else p for p in self.path.split("/"))


# Every IAM route the api Lambda serves: the HTTP API's routes and both invoke policies are
# built from it, and the local gateway routes by the same table. Provider webhooks are not IAM
# routes (the provider signs them; the Lambda verifies): each enabled provider that pushes brings
# its own, throttled on its own.
ROUTES = tuple(Route(method, path) for method, path in names.API_ROUTES if not path.startswith(names.PROVIDERS_PATH))

# One line per request, in the fields an operator reads; the caller is `userArn` alone (its user id
# repeats it) and the method is in the route key. HTTP APIs have no X-Ray trace id to log.
_ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "time": "$context.requestTimeEpoch",
    "route": "$context.routeKey",
    "status": "$context.status",
    "length": "$context.responseLength",
    "latency": "$context.integrationLatency",
    "ip": "$context.identity.sourceIp",
    "userArn": "$context.identity.userArn",
    "error": "$context.error.message",
}


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        data: LedgerData,
        code: lambda_.Code,
        environment: Mapping[str, str],
        webhooks: list[WebhookIntake],
    ) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy

        self.handler = SendledgerFunction(
            self,
            c.API_FUNCTION_ID,
            description="sendledger HTTP API (Powertools APIGatewayRestResolver, payload format 1.0)",
            handler=names.API_HANDLER,
            code=code,
            environment=environment,
            timeout=cdk.Duration.seconds(c.API_TIMEOUT_SECONDS),
            log_retention=settings.log_retention,
            removal_policy=removal,
            statements=[data.item_access(with_due_work_index=True), data.evidence_query()],
            resource_star_reason=xray_and_publish_reason("api"),
            no_dead_letter_reason=SYNCHRONOUS,
        )

        self.http_api = apigw.HttpApi(
            self,
            "HttpApi",
            api_name=f"{c.PROJECT}-{settings.stage}",
            description="sendledger: transactional email/SMS with an evidence trail",
            create_default_stage=False,
        )
        access_logs = logs.LogGroup(self, "AccessLogs", retention=settings.log_retention, removal_policy=removal)
        self.stage = apigw.HttpStage(
            self,
            "Stage",
            http_api=self.http_api,
            stage_name=settings.stage,
            auto_deploy=True,
            throttle=apigw.ThrottleSettings(rate_limit=settings.api_rate_limit, burst_limit=settings.api_burst_limit),
        )
        cfn_stage = self.stage.node.default_child
        assert isinstance(cfn_stage, apigw.CfnStage)
        cfn_stage.access_log_settings = apigw.CfnStage.AccessLogSettingsProperty(
            destination_arn=access_logs.log_group_arn, format=json.dumps(_ACCESS_LOG_FORMAT)
        )
        # The providers' webhooks are throttled on their own: a flood of them cannot starve the callers.
        cfn_stage.route_settings = {
            f"POST {intake.webhook.path}": {
                "ThrottlingRateLimit": settings.webhook_rate_limit,
                "ThrottlingBurstLimit": settings.webhook_burst_limit,
            }
            for intake in webhooks
        } or None

        iam_authorizer = authorizers.HttpIamAuthorizer()
        integration = integrations.HttpLambdaIntegration(
            "Api", self.handler.function, payload_format_version=apigw.PayloadFormatVersion.VERSION_1_0
        )
        for route in ROUTES:
            self.http_api.add_routes(
                path=route.path,
                methods=[apigw.HttpMethod(route.method)],
                integration=integration,
                authorizer=iam_authorizer,
            )
        for intake in webhooks:  # each provider's own function: the api Lambda serves no webhook
            [webhook_route] = self.http_api.add_routes(
                path=intake.webhook.path,
                methods=[apigw.HttpMethod.POST],
                integration=integrations.HttpLambdaIntegration(
                    f"{intake.node.id}Integration",
                    intake.function,
                    payload_format_version=apigw.PayloadFormatVersion.VERSION_1_0,
                ),
            )
            reason = "Called by a provider, which cannot sign with SigV4: every POST carries " + intake.webhook.auth
            nag.acknowledge(webhook_route, "AwsSolutions-APIG4", reason)
            cfn_route = webhook_route.node.default_child
            assert isinstance(cfn_route, cdk.CfnResource)
            cfn_route.add_metadata("checkov", {"skip": [{"id": "CKV_AWS_309", "comment": reason}]})

        stage = self.stage.stage_name
        self.url = self.stage.url
        self.client_policy = self._invoke_policy(
            "ClientInvokePolicy", stage, [r for r in ROUTES if not r.admin], "client routes"
        )
        # The admin routes' first check: only a principal this policy is attached to passes the
        # gateway; the api Lambda then checks ADMIN_PRINCIPALS itself (handlers/api.py).
        self.admin_policy = self._invoke_policy(
            "AdminInvokePolicy", stage, [r for r in ROUTES if r.admin], "/v1/admin/* routes"
        )
        self._acknowledge()

    def url_for_path(self, path: str) -> str:
        return self.stage.url.rstrip("/") + path

    def _invoke_policy(self, construct_id: str, stage: str, routes: list[Route], what: str) -> iam.ManagedPolicy:
        resources = [self.http_api.arn_for_execute_api(r.method, r.arn_path, stage) for r in routes]
        policy = iam.ManagedPolicy(
            self,
            construct_id,
            description=f"execute-api:Invoke on the sendledger {what}",
            statements=[iam.PolicyStatement(actions=["execute-api:Invoke"], resources=resources)],
        )
        for resource in resources:
            if "*" in resource:
                nag.acknowledge_wildcard_resource(
                    policy,
                    resource,
                    "The '*' stands for one path parameter of one method on this API's stage "
                    "(e.g. {message_id}); every route is listed explicitly.",
                )
        return policy

    def _acknowledge(self) -> None:
        pass
