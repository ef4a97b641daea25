"""Alarms on the SLO metrics, DLQs, API and Lambdas; an alarm topic and a dashboard."""

from __future__ import annotations

import math
from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.settings import Settings
from sendledger import names

_PERIOD = cdk.Duration.minutes(5)


def slo_metric(name: str, statistic: str) -> cw.Metric:
    """An EMF metric of the functions (namespace + the Powertools `service` dimension)."""
    return cw.Metric(
        namespace=names.METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": names.METRICS_SERVICE},
        statistic=statistic,
        period=_PERIOD,
    )


class Monitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        topic_key: kms.IKey,
        rest_api: apigw.RestApi,
        functions: Sequence[lambda_.Function],
        dead_letter_queues: dict[str, sqs.IQueue],
        event_queues: dict[str, sqs.IQueue],
        escalation_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.alarm_topic = sns.Topic(self, "AlarmTopic", master_key=topic_key, enforce_ssl=True)
        topic_key.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:GenerateDataKey", "kms:Decrypt"],
                resources=["*"],  # in a key policy "*" is this key
                conditions={"StringEquals": {"aws:SourceAccount": cdk.Aws.ACCOUNT_ID}},
            )
        )
        # The SSL-only topic policy replaces SNS's default one: let CloudWatch publish.
        self.alarm_topic.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.alarm_topic.topic_arn],
                conditions={"StringEquals": {"aws:SourceAccount": cdk.Aws.ACCOUNT_ID}},
            )
        )
        if settings.alarm_email:
            self.alarm_topic.add_subscription(subs.EmailSubscription(settings.alarm_email))
        self.alarms: list[cw.Alarm] = []
        slo_ms = settings.suppression_lag_slo_seconds * 1000

        lag = slo_metric(names.METRIC_EVENT_TO_SUPPRESSION_LAG_MS, "p99")
        self._alarm(
            "SuppressionLagSlo",
            lag,
            threshold=slo_ms,
            description=f"p99 event->suppression lag above the {slo_ms} ms SLO",
        )
        watermark = slo_metric(names.METRIC_WATERMARK_AGE_SECONDS, "Maximum")
        self._alarm(
            "WatermarkAge",
            watermark,
            threshold=settings.suppression_lag_slo_seconds,
            evaluation_periods=2,
            # The poller reports every cycle: silence means the pipeline stopped.
            missing=cw.TreatMissingData.BREACHING,
            description="A source watermark is older than the SLO (poller stuck or failing)",
        )
        backlog = slo_metric(names.METRIC_UNKNOWN_BACKLOG, "Minimum")
        grace_periods = math.ceil(
            (settings.unknown_grace_seconds + settings.poll_interval_seconds) / _PERIOD.to_seconds()
        )
        self._alarm(
            "UnknownBacklog",
            backlog,
            threshold=0,
            evaluation_periods=grace_periods,
            description="Sends stayed unknown for longer than UNKNOWN_GRACE_SECONDS + one poll",
        )

        refused = slo_metric(names.METRIC_SMS_REFUSED, "Sum")
        self._alarm(
            "SmsRefusedSpike",
            refused,
            threshold=settings.sms_refused_alarm_threshold,
            description=f"more than {settings.sms_refused_alarm_threshold} SMS refused in 5 minutes by a caller's "
            "country rule or daily cap (pumping, or a rule set wrong): the api's 'sms refused' log lines name them",
        )

        queue_widgets: list[cw.IMetric] = []
        for queue_id, queue in dead_letter_queues.items():
            depth = queue.metric_approximate_number_of_messages_visible(period=_PERIOD, statistic="Maximum")
            self._alarm(f"{queue_id}Depth", depth, threshold=0, description=f"{queue_id} not empty")
            queue_widgets.append(depth.with_(label=queue_id))
        escalations = escalation_queue.metric_approximate_number_of_messages_visible(
            period=_PERIOD, statistic="Maximum"
        )
        self._alarm("EscalationsPending", escalations, threshold=0, description="Escalations wait")
        oldest_events: list[cw.IMetric] = []
        for queue_id, queue in event_queues.items():  # each provider's queue of events (SES, webhooks)
            oldest = queue.metric_approximate_age_of_oldest_message(period=_PERIOD, statistic="Maximum")
            self._alarm(
                f"{queue_id}Waiting",
                oldest,
                threshold=settings.suppression_lag_slo_seconds,
                description=f"{queue_id} older than the SLO wait in the queue",
            )
            oldest_events.append(oldest.with_(label=queue_id))

        api_5xx = rest_api.metric_server_error(period=_PERIOD, statistic="Sum")
        self._alarm("Api5xx", api_5xx, threshold=0, description="API answered 5xx")

        fn_errors: list[cw.IMetric] = []
        fn_throttles: list[cw.IMetric] = []
        for fn in functions:
            short = fn.node.scope.node.id if fn.node.scope else fn.node.id
            errors = fn.metric_errors(period=_PERIOD, statistic="Sum")
            throttles = fn.metric_throttles(period=_PERIOD, statistic="Sum")
            self._alarm(f"{short}Errors", errors, threshold=0, description=f"{short} errors")
            self._alarm(f"{short}Throttles", throttles, threshold=0, description=f"{short} throttled")
            fn_errors.append(errors.with_(label=short))
            fn_throttles.append(throttles.with_(label=short))

        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=f"sendledger-{settings.stage}")
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Event -> suppression lag (ms)",
                left=[lag, lag.with_(statistic="p50", label="p50")],
                left_annotations=[cw.HorizontalAnnotation(value=slo_ms, label="SLO")],
            ),
            cw.GraphWidget(title="Watermark age (s)", left=[watermark]),
            cw.GraphWidget(title="Unknown backlog", left=[backlog.with_(statistic="Maximum")]),
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(title="Dead-letter queues", left=queue_widgets),
            cw.GraphWidget(title="Escalations and queued event age", left=[escalations], right=oldest_events),
            cw.GraphWidget(
                title="API",
                left=[rest_api.metric_count(period=_PERIOD), api_5xx],
                right=[rest_api.metric_latency(period=_PERIOD, statistic="p99")],
            ),
        )
        self.dashboard.add_widgets(*_sms_widgets(refused))
        self.dashboard.add_widgets(
            cw.GraphWidget(title="Lambda errors", left=fn_errors),
            cw.GraphWidget(title="Lambda throttles", left=fn_throttles),
            cw.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms), width=12),
        )

    def _alarm(
        self,
        construct_id: str,
        metric: cw.IMetric,
        *,
        threshold: float,
        description: str,
        evaluation_periods: int = 1,
        missing: cw.TreatMissingData = cw.TreatMissingData.NOT_BREACHING,
    ) -> cw.Alarm:
        alarm = cw.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=evaluation_periods,
            treat_missing_data=missing,
            alarm_description=f"sendledger: {description}",
        )
        action = cw_actions.SnsAction(self.alarm_topic)
        alarm.add_alarm_action(action)
        alarm.add_ok_action(action)
        self.alarms.append(alarm)
        return alarm


def _sms_widgets(refused: cw.Metric) -> list[cw.IWidget]:
    """Segments per caller per day (the publisher's SmsSegments, one series per caller that
    texts) and the refusals by reason beside their total."""
    day = cdk.Duration.days(1)
    per_caller = _sum_by(names.METRIC_SMS_SEGMENTS, "caller", day)
    by_reason = _sum_by(names.METRIC_SMS_REFUSED, "reason", _PERIOD)
    return [
        cw.GraphWidget(title="SMS segments per caller per day", left=[per_caller], period=day, width=12),
        cw.GraphWidget(title="SMS refused (by reason, and total)", left=[by_reason, refused.with_(label="total")]),
    ]


def _sum_by(metric: str, dimension: str, period: cdk.Duration) -> cw.MathExpression:
    """One series per value of `dimension` (a SEARCH: whichever values the functions emitted)."""
    schema = f"{{{names.METRICS_NAMESPACE},{dimension},service}}"
    return cw.MathExpression(
        expression=f"SEARCH('{schema} MetricName=\"{metric}\"', 'Sum', {int(period.to_seconds())})",
        label="",
        period=period,
        using_metrics={},
    )
