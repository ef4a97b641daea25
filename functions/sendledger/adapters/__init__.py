"""Adapters: DynamoDB, SES, SNS, CloudWatch Logs, SQS."""
