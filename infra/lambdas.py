"""One Lambda function with its own log group and its own hand-written IAM role."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra import nag
from sendledger import names

# Newest Python runtime in aws-cdk-lib 2.275 (the code also runs on 3.11, see pyproject).
RUNTIME = lambda_.Runtime.PYTHON_3_14
ARCHITECTURE = lambda_.Architecture.ARM_64


class SendledgerFunction(Construct):
    """Function + log group + role that holds only what `statements` grant."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        description: str,
        handler: str,
        code: lambda_.Code,
        environment: Mapping[str, str],
        statements: Sequence[iam.PolicyStatement],
        timeout: cdk.Duration,
        log_retention: logs.RetentionDays,
        removal_policy: cdk.RemovalPolicy,
        memory_size: int = 512,
        dead_letter_queue: sqs.IQueue | None = None,
        resource_star_reason: str = "",
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(self, "Logs", retention=log_retention, removal_policy=removal_policy)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"sendledger {construct_id}: {description}",
        )
        # Instead of AWSLambdaBasicExecutionRole: write to this function's log group only.
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[self.log_group.log_group_arn],
            )
        )
        for statement in statements:
            self.role.add_to_policy(statement)

        env = {
            "POWERTOOLS_SERVICE_NAME": names.METRICS_SERVICE,
            "POWERTOOLS_METRICS_NAMESPACE": names.METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            # No pydantic plugins are used; without this, the first model class built at cold
            # start reads the entry points of every distribution on sys.path to look for one.
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
            **environment,
        }
        self.function = lambda_.Function(
            self,
            "Function",
            description=description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=handler,
            code=code,
            role=self.role,
            log_group=self.log_group,
            tracing=lambda_.Tracing.ACTIVE,
            timeout=timeout,
            memory_size=memory_size,
            environment=env,
            dead_letter_queue=dead_letter_queue,
        )
        # tracing=ACTIVE adds xray:PutTraceSegments/PutTelemetryRecords on "*".
        nag.acknowledge(
            self,
            "AwsSolutions-IAM5[Resource::*]",
            resource_star_reason
            or "Only X-Ray PutTraceSegments/PutTelemetryRecords use Resource '*': X-Ray has no "
            "resource-level permissions for them.",
        )


def xray_and_publish_reason(function_name: str) -> str:
    return (
        f"{function_name}: Resource '*' only for X-Ray PutTraceSegments/PutTelemetryRecords and "
        f"{c.SMS_PUBLISH_ACTION} to phone numbers; neither has resource-level permissions "
        "(an SMS destination is not an ARN)."
    )
