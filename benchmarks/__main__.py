"""Entry point: puts ``<repo>/functions`` and ``<repo>`` on sys.path, fixes the environment, runs.

python -m benchmarks               # everything: writes results.json and README.md
python -m benchmarks --only drain  # one in-process section: prints its JSON, writes nothing
"""

from __future__ import annotations

import argparse
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
    from benchmarks.runner import CHILD_SECTIONS, SECTIONS, run, run_section, smoke

    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    choices = sorted({*SECTIONS, *CHILD_SECTIONS})
    parser.add_argument("--only", choices=choices, help="run one section, print its figures as JSON")
    parser.add_argument("--smoke", action="store_true", help="every section once, tiny; writes nothing")
    arguments = parser.parse_args()
    if arguments.smoke:
        return smoke(ROOT)
    return run_section(arguments.only, ROOT) if arguments.only else run(ROOT)


if __name__ == "__main__":
    sys.exit(main())
