"""Reliability tests (issue #5): fault schedules, DynamoDB faults, fuzzing, secrets, concurrency."""
