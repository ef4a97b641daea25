"""The single ledger table (intents, messages, history, suppressions, cursors, dedupe)."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra import constants as c
from sendledger import names


class LedgerData(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, is_dev: bool) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.Table(
            self,
            "LedgerTable",
            partition_key=dynamodb.Attribute(name=names.TABLE_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=names.TABLE_SORT_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=names.TABLE_TTL_ATTRIBUTE,
            # The status publisher reads every committed change, with the item before and after it.
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            # dev stacks come and go; anywhere else the ledger is the audit trail.
            deletion_protection=not is_dev,
            removal_policy=cdk.RemovalPolicy.DESTROY if is_dev else cdk.RemovalPolicy.RETAIN,
        )
        # Sparse: only items carrying due_kind (work the poller must revisit) appear.
        self.table.add_global_secondary_index(
            index_name=names.DUE_WORK_INDEX,
            partition_key=dynamodb.Attribute(
                name=names.DUE_WORK_INDEX_PARTITION_KEY,
                type=dynamodb.AttributeType.STRING,
            ),
            sort_key=dynamodb.Attribute(name=names.DUE_WORK_INDEX_SORT_KEY, type=dynamodb.AttributeType.NUMBER),
            projection_type=dynamodb.ProjectionType.INCLUDE,
            non_key_attributes=list(names.DUE_WORK_INDEX_PROJECTION),
        )

        # Sparse: message items only, keyed by caller and day (the evidence export; KEYS_ONLY).
        self.table.add_global_secondary_index(
            index_name=names.EVIDENCE_INDEX,
            partition_key=dynamodb.Attribute(
                name=names.EVIDENCE_INDEX_PARTITION_KEY, type=dynamodb.AttributeType.STRING
            ),
            sort_key=dynamodb.Attribute(name=names.EVIDENCE_INDEX_SORT_KEY, type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )

    @property
    def evidence_index_arn(self) -> str:
        return f"{self.table.table_arn}/index/{names.EVIDENCE_INDEX}"

    def evidence_query(self) -> iam.PolicyStatement:
        """Query on the evidence index only (the api's export)."""
        return iam.PolicyStatement(actions=["dynamodb:Query"], resources=[self.evidence_index_arn])

    @property
    def due_work_index_arn(self) -> str:
        return f"{self.table.table_arn}/index/{names.DUE_WORK_INDEX}"

    def due_work_scan(self) -> iam.PolicyStatement:
        """Scan on the due-work index only (the poller reads a small index whole)."""
        return iam.PolicyStatement(actions=["dynamodb:Scan"], resources=[self.due_work_index_arn])

    def item_access(self, *, with_due_work_index: bool) -> iam.PolicyStatement:
        """Item-level read/write (TransactWriteItems is authorized per contained action)."""
        resources = [self.table.table_arn]
        if with_due_work_index:
            resources.append(self.due_work_index_arn)
        return iam.PolicyStatement(actions=list(c.LEDGER_ITEM_ACTIONS), resources=resources)
