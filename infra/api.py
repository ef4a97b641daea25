"""REST API (IAM/SigV4 on every method) proxying to the `api` Lambda, plus the two
execute-api policies that grant callers the client routes and the admin routes separately,
and a resource policy that refuses `/v1/admin/*` to every principal but the admin ones."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
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
from sendledger.domain.callers import PrincipalKind, principal_of

ADMIN_PATH = names.ADMIN_PATH_PREFIX


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # API Gateway resource path, {param} for path parameters

    @property
    def admin(self) -> bool:
        return self.path.startswith(ADMIN_PATH)

    @property
    def arn_path(self) -> str:
        """The path as it appears in an execute-api ARN (a parameter matches any segment)."""
        return "/".join("*" if p.startswith("{") else p for p in self.path.split("/"))


# Every IAM route the api Lambda serves: the API Gateway resources and both invoke policies are
# built from it, and the local gateway routes by the same table. Provider webhooks are not IAM
# routes (the provider signs them; the Lambda verifies): each enabled provider that pushes brings
# its own, throttled on its own.
ROUTES = tuple(Route(method, path) for method, path in names.API_ROUTES if not path.startswith(names.PROVIDERS_PATH))

# Errors API Gateway answers itself, rendered as RFC 9457 problem details like the Lambda's.
_GATEWAY_PROBLEMS = {
    apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN: "403",  # also: no such route
    apigw.ResponseType.ACCESS_DENIED: "403",
    apigw.ResponseType.INVALID_SIGNATURE: "403",
    apigw.ResponseType.EXPIRED_TOKEN: "403",
    apigw.ResponseType.THROTTLED: "429",
    apigw.ResponseType.REQUEST_TOO_LARGE: "413",
}


def principal_arn_patterns(admin_principals: tuple[str, ...]) -> list[str]:
    """`aws:PrincipalArn` patterns (ArnLike) of the admin principals, as normalised in settings.

    For a role session `aws:PrincipalArn` is the role's ARN *with* its path, for a user the
    user's; a name is unique in its account whatever the path, so `role/<name>` and
    `role/*/<name>` match exactly that role (IAM names contain no `*` or `?`).
    """
    patterns = []
    for arn in admin_principals:
        principal = principal_of(arn)
        patterns.append(arn)
        if principal.kind in (PrincipalKind.ROLE, PrincipalKind.USER):
            prefix = f"arn:{principal.partition}:iam::{principal.account_id}:{principal.kind.value}"
            patterns.append(f"{prefix}/*/{principal.name}")
    return patterns


def admin_only_policy(admin_principals: tuple[str, ...]) -> iam.PolicyDocument:
    """Deny `/v1/admin/*` to anyone but the admins (no admins: to everyone). Deny only: the
    caller's own IAM policy still grants every route, so nothing here widens access."""
    statement = iam.PolicyStatement(
        sid="AdminRoutesOnlyForAdminPrincipals",
        effect=iam.Effect.DENY,
        principals=[iam.AnyPrincipal()],
        actions=["execute-api:Invoke"],
        resources=[f"execute-api:/*/*{ADMIN_PATH}*"],  # every stage and method (the API's own ARN is circular here)
    )
    if admin_principals:
        statement.add_condition("ArnNotLike", {"aws:PrincipalArn": principal_arn_patterns(admin_principals)})
    return iam.PolicyDocument(statements=[statement])


_ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTime",
    "httpMethod": "$context.httpMethod",
    "resourcePath": "$context.resourcePath",
    "status": "$context.status",
    "responseLength": "$context.responseLength",
    "integrationLatency": "$context.integrationLatency",
    "ip": "$context.identity.sourceIp",
    "caller": "$context.identity.caller",
    "userArn": "$context.identity.userArn",
    "errorMessage": "$context.error.message",
    "xrayTraceId": "$context.xrayTraceId",
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
            description="sendledger HTTP API (Powertools APIGatewayRestResolver)",
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

        webhook_throttle = apigw.MethodDeploymentOptions(
            throttling_rate_limit=settings.webhook_rate_limit, throttling_burst_limit=settings.webhook_burst_limit
        )
        access_logs = logs.LogGroup(self, "AccessLogs", retention=settings.log_retention, removal_policy=removal)
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"{c.PROJECT}-{settings.stage}",
            description="sendledger: transactional email/SMS with an evidence trail",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Execution logging needs the account's API Gateway CloudWatch role (AWS::ApiGateway::Account,
            # one per account and region): set here and kept when the stack goes (another stage may use it).
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=cdk.RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=settings.stage,
                throttling_rate_limit=settings.api_rate_limit,
                throttling_burst_limit=settings.api_burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(_ACCESS_LOG_FORMAT)),
                tracing_enabled=True,
                metrics_enabled=True,
                # Execution logs: errors only, never a request or response body (they carry
                # recipients, tokens of resets being consumed, and histories).
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                method_options={f"{intake.webhook.path}/POST": webhook_throttle for intake in webhooks} or None,
            ),
            default_method_options=apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM),
            policy=admin_only_policy(settings.admin_principals),
        )
        # API Gateway writes its execution logs here; created first, with the stack's retention and key.
        execution_logs = logs.LogGroup(
            self,
            "ExecutionLogs",
            log_group_name=f"API-Gateway-Execution-Logs_{self.rest_api.rest_api_id}/{settings.stage}",
            retention=settings.log_retention,
            removal_policy=removal,
        )
        self.rest_api.deployment_stage.node.add_dependency(execution_logs)
        # Parameters are checked at the gateway; bodies have no gateway model (the Lambda's
        # Powertools/pydantic validation answers problem+json), so body validation is a no-op.
        validator = self.rest_api.add_request_validator(
            "RequestValidator", validate_request_parameters=True, validate_request_body=True
        )
        # Each method's invoke permission is scoped to that method and path.
        integration = apigw.LambdaIntegration(self.handler.function, allow_test_invoke=False)
        for route in ROUTES:
            resource = self.rest_api.root.resource_for_path(route.path)
            params = {f"method.request.path.{p.strip('{}')}": True for p in route.path.split("/") if p.startswith("{")}
            resource.add_method(
                route.method,
                integration,
                authorization_type=apigw.AuthorizationType.IAM,
                request_validator=validator,
                request_parameters=params or None,
            )
        for intake in webhooks:  # each provider's own function: the api Lambda serves no webhook
            method = self.rest_api.root.resource_for_path(intake.webhook.path).add_method(
                "POST",
                apigw.LambdaIntegration(intake.function, allow_test_invoke=False),
                authorization_type=apigw.AuthorizationType.NONE,
            )
            reason = "Called by a provider, which cannot sign with SigV4: every POST carries " + intake.webhook.auth
            nag.acknowledge(method, "AwsSolutions-APIG4", reason)
            nag.acknowledge(method, "AwsSolutions-COG4", reason)
            cfn_method = method.node.default_child
            assert isinstance(cfn_method, cdk.CfnResource)
            cfn_method.add_metadata("checkov", {"skip": [{"id": "CKV_AWS_59", "comment": reason}]})
        for response_type, status in _GATEWAY_PROBLEMS.items():
            self.rest_api.add_gateway_response(
                f"Problem{status}{response_type.response_type}",
                type=response_type,
                status_code=status,
                response_headers={"Content-Type": "'application/problem+json'"},
                templates={
                    "application/json": (
                        f'{{"type":"about:blank","title":$context.error.messageString,"status":{status}}}'
                    )
                },
            )

        stage = self.rest_api.deployment_stage.stage_name
        self.client_policy = self._invoke_policy(
            "ClientInvokePolicy", stage, [r for r in ROUTES if not r.admin], "client routes"
        )
        self.admin_policy = self._invoke_policy(
            "AdminInvokePolicy", stage, [r for r in ROUTES if r.admin], "/v1/admin/* routes"
        )
        self._acknowledge()

    def _invoke_policy(self, construct_id: str, stage: str, routes: list[Route], what: str) -> iam.ManagedPolicy:
        resources = [self.rest_api.arn_for_execute_api(r.method, r.arn_path, stage) for r in routes]
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
        nag.acknowledge(
            self.rest_api,
            "AwsSolutions-APIG3",
            "Every method requires SigV4 (AWS_IAM) and the stage is throttled; a WAF web ACL "
            "adds nothing for IAM-only callers and can be attached per account if required.",
        )
        waf = (
            "Every method requires SigV4 (AWS_IAM) but the providers' signed webhooks, and the stage is "
            "throttled (the webhooks on their own); a WAF web ACL can be attached per account if required."
        )
        nag.acknowledge(self.rest_api, "PCI.DSS.321::PCI.DSS.321-APIGWAssociatedWithWAF", waf)
        nag.acknowledge(
            self.rest_api,
            "PCI.DSS.321::PCI.DSS.321-APIGWCacheEnabledAndEncrypted",
            "No API cache: every answer is per caller and must reflect the ledger as it is now "
            "(a cached message view or idempotent replay would be wrong), so nothing is cached to encrypt.",
        )
        nag.acknowledge(
            self.rest_api,
            "PCI.DSS.321::PCI.DSS.321-APIGWSSLEnabled",
            "The integrations are Lambda proxies invoked by API Gateway over AWS's signed API, not HTTP "
            "backends: there is no backend to present a client certificate to.",
        )
        role = self.rest_api.node.try_find_child("CloudWatchRole")
        if role is not None:
            nag.acknowledge(
                role,
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AmazonAPIGatewayPushToCloudWatchLogs]",
                "API Gateway's account-level logging role: AWS's managed policy is the documented one "
                "and covers the execution log groups API Gateway names itself.",
            )
        nag.acknowledge(
            self.rest_api,
            "AwsSolutions-COG4",
            "Callers are AWS principals: every method uses AWS_IAM (SigV4) authorization, with "
            "separate policies for client and admin routes.",
        )
