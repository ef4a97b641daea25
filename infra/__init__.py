"""CDK constructs, stack and stage for sendledger.

The Lambda code's shared names live in ``functions/sendledger/names.py``; make that package
importable for anything that imports ``infra`` (app.py, tests, a pipeline app).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS_DIR = ROOT / "functions"

if str(FUNCTIONS_DIR) not in sys.path:
    sys.path.insert(0, str(FUNCTIONS_DIR))
