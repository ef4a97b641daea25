#!/usr/bin/env python3
"""CDK app: `python app.py [-c key=value ...]` synthesizes cdk.out/ without the CDK CLI.

Settings come from CDK context (-c overrides; cdk.json "context" holds only feature flags), with
defaults from sendledger.settings / infra/settings.py.
cdk-nag (AwsSolutions, Serverless, PCI DSS 3.2.1) runs as policy-validation plugins: unacknowledged
findings fail synth.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "functions"))

import aws_cdk as cdk  # noqa: E402
from cdk_nag import AwsSolutionsChecks, PCIDSS321Checks, ServerlessChecks  # noqa: E402

from infra import constants as c  # noqa: E402
from infra.settings import Settings, SettingsError  # noqa: E402
from infra.stack import SendledgerStack  # noqa: E402


def cli_context(argv: list[str]) -> dict[str, str]:
    """`-c key=value` / `--context key=value` pairs, as the CDK CLI accepts them."""
    ctx: dict[str, str] = {}
    args = iter(argv)
    for arg in args:
        if arg in ("-c", "--context"):
            pair = next(args, "")
        elif arg.startswith("--context="):
            pair = arg.split("=", 1)[1]
        else:
            raise SystemExit(f"usage: python app.py [-c key=value ...] (unexpected {arg!r})")
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"context must be key=value, not {pair!r}")
        ctx[key] = value
    return ctx


def build_context(argv: list[str]) -> dict[str, Any]:
    # Run by the CDK CLI, cdk.json and -c already arrive via CDK_CONTEXT_JSON; run directly,
    # load cdk.json ourselves so feature flags are identical either way.
    base: dict[str, Any] = {}
    if "CDK_CONTEXT_JSON" not in os.environ:
        base = dict(json.loads((ROOT / "cdk.json").read_text()).get("context", {}))
    return {**base, **cli_context(argv)}


def main(argv: list[str]) -> int:
    context = build_context(argv)
    outdir = None if "CDK_OUTDIR" in os.environ else str(ROOT / "cdk.out")
    app = cdk.App(context=context, outdir=outdir)
    try:
        settings = Settings.from_context({k: app.node.try_get_context(k) for k in Settings.context_keys()})
    except SettingsError as err:
        print(f"sendledger: synthesis refused: {err}", file=sys.stderr)
        return 2
    for line in settings.slo_arithmetic():
        print(f"sendledger: {line}")
    env = cdk.Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION"))
    SendledgerStack(app, f"{c.STACK_ID_PREFIX}-{settings.stage}", settings=settings, env=env)
    # The packs a fintech reviewer runs: AWS Solutions, serverless practice and PCI DSS 3.2.1.
    cdk.Validations.of(app).add_plugins(
        AwsSolutionsChecks(app, verbose=True), ServerlessChecks(app, verbose=True), PCIDSS321Checks(app, verbose=True)
    )
    try:
        app.synth()
    except RuntimeError as err:
        if "ValidationFailed" not in str(err):
            raise
        # The findings were printed above; the JS stack trace adds nothing.
        print(f"sendledger: synthesis failed cdk-nag/policy validation: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
