"""Adapters: DynamoDB (pynamodb), SES, SNS, CloudWatch Logs, SQS."""
