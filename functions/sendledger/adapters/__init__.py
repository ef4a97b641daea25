"""Adapters: DynamoDB, SQS, EventBridge, Secrets Manager, AppConfig, callbacks over HTTP
(a provider's own are in its slice)."""
