"""Bundling decisions that need no pip: what is shipped and what invalidates the asset."""

from __future__ import annotations

from infra.bundling import filtered_requirements, source_hash


def test_runtime_provided_distributions_are_not_installed() -> None:
    text = "# c\nboto3==1.0\nbotocore==1.0  # x\naws-lambda-powertools[tracer]==3.37.0\nPyNamoDB==6.1.0\n"
    assert filtered_requirements(text) == "aws-lambda-powertools[tracer]==3.37.0\nPyNamoDB==6.1.0\n"


def test_asset_hash_covers_requirements_and_platform() -> None:
    assert source_hash("req-a") != source_hash("req-b")
    assert source_hash("req-a") == source_hash("req-a")
