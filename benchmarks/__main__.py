"""Entry point: puts ``<repo>/functions`` and ``<repo>`` on sys.path, fixes the environment, runs."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for entry in (str(ROOT), str(ROOT / "functions")):
    if entry not in sys.path:
        sys.path.insert(0, entry)


def main() -> int:
    # The environment must be in place before any sendledger / Powertools module is imported,
    # and the request counter before any botocore client exists.
    from benchmarks import environment

    environment.configure_in_process()
    from benchmarks import counting

    counting.install()
    from benchmarks.runner import run

    return run(ROOT)


if __name__ == "__main__":
    sys.exit(main())
