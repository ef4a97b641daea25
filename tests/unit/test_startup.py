"""A Lambda container collects no cyclic garbage until its first invocation returns (handlers/startup.py)."""

import subprocess
import sys
from pathlib import Path

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"

# Imports the publisher as the Lambda runtime does, then invokes it with an event it cannot read:
# the start ends on a raise as on a return.
_CONTAINER = """
import gc, sys
import sendledger.handlers.publisher as handler
print("imported", gc.isenabled(), gc.get_freeze_count() > 0)
class Context:
    function_name, memory_limit_in_mb, aws_request_id = "publisher", 256, "r-1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:publisher"
try:
    handler.lambda_handler(None, Context(), runtime=object())
except AttributeError:
    pass
else:
    sys.exit("the unreadable event was served")
print("first", gc.isenabled(), gc.get_freeze_count() > 0)
"""


def _container(**env: str) -> list[str]:
    base = {"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_SERVICE_NAME": "sendledger"}
    result = subprocess.run(
        [sys.executable, "-c", _CONTAINER],
        capture_output=True,
        text=True,
        check=True,
        cwd=FUNCTIONS,
        env={**base, **env},
    )
    return [line for line in result.stdout.splitlines() if line.startswith(("imported", "first"))]


def test_a_lambda_container_collects_nothing_until_its_first_invocation_ends_then_freezes_its_start():
    assert _container(AWS_LAMBDA_FUNCTION_NAME="sendledger-publisher") == [
        "imported False False",
        "first True True",
    ]


def test_outside_lambda_collection_never_stops():
    assert _container() == ["imported True False", "first True False"]
