"""Status out: the ledger's stream → publisher → the sendledger bus → signed callbacks.

The publisher is a Lambda on the stream (not EventBridge Pipes): deciding whether a record is a
state change needs the message item for a receipt's change, which a Pipes filter or input
transformer cannot read; an enrichment Lambda would be the same code with one hop more.
"""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.data import LedgerData
from infra.lambdas import SendledgerFunction
from infra.queues import dead_letter_queue, only_producers, queue_with_dlq
from infra.settings import Settings
from sendledger import names
from sendledger.adapters.dynamodb.keys import MESSAGE_PK_PREFIX, RECEIPT_PK_PREFIX

PUBLISHER_TIMEOUT_SECONDS = 30
STREAM_BATCH_SIZE = 100
STREAM_RETRY_ATTEMPTS = 10  # then bisected down to the failing record, then the DLQ
PUBLISHER_ONLY_SID = "OnlyThePublisherPutsEvents"
# Stream records live 24 h; an iterator this old means the publisher is falling behind.
ITERATOR_AGE_ALARM_MS = 5 * 60 * 1000


class StatusOut(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        data: LedgerData,
        code: lambda_.Code,
        environment: Mapping[str, str],
    ) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy
        bus_name = f"{names.EVENT_BUS_PREFIX}-{settings.stage}"
        self.bus = events.EventBus(self, "Bus", event_bus_name=bus_name)
        env = {**environment, names.ENV_EVENT_BUS_NAME: self.bus.event_bus_name}
        assert data.table.table_stream_arn is not None

        # Stream batches that still fail after retries and bisection: their stream coordinates.
        self.publisher_dlq = dead_letter_queue(self, "PublisherDlq")
        self.publisher = SendledgerFunction(
            self,
            "PublisherFunction",
            description="Publishes committed ledger state changes to the sendledger bus",
            handler=names.PUBLISHER_HANDLER,
            code=code,
            environment=env,
            timeout=cdk.Duration.seconds(PUBLISHER_TIMEOUT_SECONDS),
            memory_size=256,
            log_retention=settings.log_retention,
            removal_policy=removal,
            statements=[
                # A receipt's change is completed from its message item.
                iam.PolicyStatement(actions=["dynamodb:GetItem"], resources=[data.table.table_arn]),
                # An `allow` send's eligibility label is appended to its message item: message items only.
                iam.PolicyStatement(
                    actions=["dynamodb:UpdateItem"],
                    resources=[data.table.table_arn],
                    conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{MESSAGE_PK_PREFIX}*"]}},
                ),
                # An accepted SMS's receipt (SNS's message id to ours), from its outcome's change: those items only.
                iam.PolicyStatement(
                    actions=["dynamodb:UpdateItem"],
                    resources=[data.table.table_arn],
                    conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{RECEIPT_PK_PREFIX}*"]}},
                ),
                iam.PolicyStatement(actions=["events:PutEvents"], resources=[self.bus.event_bus_arn]),
                # The SMS day counts (ADD per caller and day): those items alone, by their key.
                iam.PolicyStatement(
                    actions=["dynamodb:UpdateItem"],
                    resources=[data.table.table_arn],
                    conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["CALLER#*"]}},
                ),
            ],
            resource_star_reason="publisher: Resource '*' only for X-Ray PutTraceSegments/PutTelemetryRecords and "
            f"{c.LIST_STREAMS_ACTION} (granted by the stream event source); neither takes a resource ARN. "
            "Reading the stream itself is granted on the stream's ARN.",
        )
        self._only_the_publisher_puts_events(bus_name)
        self.publisher.function.add_event_source(
            sources.DynamoEventSource(
                data.table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=STREAM_BATCH_SIZE,
                bisect_batch_on_error=True,
                retry_attempts=STREAM_RETRY_ATTEMPTS,
                report_batch_item_failures=True,
                on_failure=sources.SqsDlq(self.publisher_dlq),
            )
        )

        # Callbacks go to each caller's own URL (caller settings): always deployed, idle while no
        # caller has one (an event nobody receives is deleted without a POST).
        self._callbacks(settings, code, env, removal)

    def _callbacks(
        self, settings: Settings, code: lambda_.Code, env: Mapping[str, str], removal: cdk.RemovalPolicy
    ) -> None:
        # Backoff is the visibility timeout the function sets; this one covers an attempt in flight.
        self.callback_queue, self.callback_dlq = queue_with_dlq(
            self,
            "CallbackQueue",
            visibility_timeout=cdk.Duration.seconds(settings.callback_queue_visibility_seconds),
            max_receive_count=settings.callback_max_attempts,
        )
        rule = events.Rule(
            self,
            "CallbackRule",
            event_bus=self.bus,
            description="Every sendledger status event (this account's publisher) to the callback queue",
            event_pattern=events.EventPattern(source=[names.EVENT_SOURCE], account=[cdk.Aws.ACCOUNT_ID]),
        )
        rule.add_target(targets.SqsQueue(self.callback_queue, dead_letter_queue=self.callback_dlq, retry_attempts=185))
        self.callbacks = SendledgerFunction(
            self,
            "CallbacksFunction",
            description="POSTs signed status events to the callback URL of the caller that owns each, with backoff",
            handler=names.CALLBACKS_HANDLER,
            code=code,
            environment=dict(env),
            timeout=cdk.Duration.seconds(settings.callbacks_timeout_seconds),
            memory_size=256,
            log_retention=settings.log_retention,
            removal_policy=removal,
            statements=[
                # The caller's settings item and secrets: granted by infra/callers.py.
                # The next attempt's delay; the queue URL is looked up from the record's ARN.
                # A record's next attempt (or a wait for its caller's receiver) is a new message
                # carrying its attempt count; a spent or foreign one goes to the DLQ. The queues'
                # URLs and the DLQ's ARN (the redrive policy) are looked up from the record's ARN.
                iam.PolicyStatement(
                    actions=["sqs:SendMessage", "sqs:GetQueueUrl"],
                    resources=[self.callback_queue.queue_arn, self.callback_dlq.queue_arn],
                ),
                iam.PolicyStatement(actions=["sqs:GetQueueAttributes"], resources=[self.callback_queue.queue_arn]),
            ],
        )
        # A callback is signed with its owner's secret and POSTed: only the bus's rule and the
        # callbacks function itself (a retry carries its attempt count; a spent record goes to the DLQ).
        for queue in (self.callback_queue, self.callback_dlq):
            only_producers(queue, roles=[self.callbacks.role], sources=[rule.rule_arn])
        self.callbacks.function.add_event_source(
            sources.SqsEventSource(
                self.callback_queue,
                batch_size=c.CALLBACKS_BATCH_SIZE,
                report_batch_item_failures=True,
                max_concurrency=2,  # a slow receiver is not hammered
            )
        )

    def _only_the_publisher_puts_events(self, bus_name: str) -> None:
        """The bus signs nothing it did not get from the publisher: an explicit deny for every
        other principal (an IAM user or role of this account with events:PutEvents included;
        no identity policy overrides a resource policy's deny)."""
        deny_others = iam.PolicyStatement(
            sid=PUBLISHER_ONLY_SID,
            effect=iam.Effect.DENY,
            principals=[iam.AnyPrincipal()],
            actions=["events:PutEvents"],
            # The bus's own ARN, spelled out: its GetAtt inside its own Policy would be circular.
            resources=[cdk.Stack.of(self).format_arn(service="events", resource="event-bus", resource_name=bus_name)],
            conditions={"ArnNotEquals": {"aws:PrincipalArn": self.publisher.role.role_arn}},
        )
        bus = self.bus.node.default_child
        assert isinstance(bus, events.CfnEventBus)
        bus.policy = iam.PolicyDocument(statements=[deny_others]).to_json()

    @property
    def functions(self) -> list[lambda_.Function]:
        return [self.publisher.function, self.callbacks.function]

    @property
    def dead_letter_queues(self) -> dict[str, sqs.IQueue]:
        return {"PublisherDlq": self.publisher_dlq, "CallbackDlq": self.callback_dlq}

    def alarm_iterator_age(self, topic: sns.ITopic) -> cw.Alarm:
        age = self.publisher.function.metric("IteratorAge", period=cdk.Duration.minutes(5), statistic="Maximum")
        alarm = cw.Alarm(
            self,
            "PublisherIteratorAge",
            metric=age,
            threshold=ITERATOR_AGE_ALARM_MS,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            alarm_description="sendledger: the status publisher is more than 5 minutes behind the ledger",
        )
        action = cw_actions.SnsAction(topic)
        alarm.add_alarm_action(action)
        alarm.add_ok_action(action)
        return alarm
