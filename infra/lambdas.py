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


NO_VPC = (
    "No VPC resources are reached: DynamoDB, SQS, SES, SNS, Secrets Manager and EventBridge are public "
    "AWS APIs over TLS with IAM; a VPC would add NAT or endpoint cost and nothing to isolate."
)
_NEVER_ASYNC = (
    "Never invoked asynchronously (an event source mapping polls for it, whose failures go to the "
    "source's own dead-letter queue or on-failure destination): a function DLQ would never receive anything."
)
SYNCHRONOUS = (
    "Invoked synchronously by API Gateway, which answers the caller the error: a function DLQ only "
    "receives failed asynchronous invocations and would never receive anything."
)


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
        no_dead_letter_reason: str = _NEVER_ASYNC,
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
            # Lambda's own START/END/REPORT lines (about 330 bytes an invocation, a third of a send's
            # log budget) are INFO platform events: left out. Duration, errors and throttles are
            # Lambda's metrics, alarmed (infra/monitoring.py); a platform WARN or ERROR still logs.
            # The functions' own lines are JSON already (Powertools) and keep INFO.
            logging_format=lambda_.LoggingFormat.JSON,
            system_log_level_v2=lambda_.SystemLogLevel.WARN,
            application_log_level_v2=lambda_.ApplicationLogLevel.INFO,
            tracing=lambda_.Tracing.ACTIVE,
            timeout=timeout,
            memory_size=memory_size,
            environment=env,
            dead_letter_queue=dead_letter_queue,
        )
        if dead_letter_queue is None:
            nag.acknowledge(self.function, "Serverless::Serverless-LambdaDLQ", no_dead_letter_reason)
        nag.acknowledge(self.function, "PCI.DSS.321::PCI.DSS.321-LambdaInsideVPC", NO_VPC)
        nag.acknowledge(
            self.role,
            "PCI.DSS.321::PCI.DSS.321-IAMNoInlinePolicy",
            "One role per function holding only its own least-privilege statements: a managed policy "
            "would be attached to this role alone, and could be attached elsewhere by mistake.",
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
