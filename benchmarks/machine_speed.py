"""How fast this machine runs Python right now, to read an absolute CPU figure against.

On a shared VM the CPU time of the same code swings with the host's load: a fixed pure-Python
loop measured here took 13 ms and 23 ms within one second. Every other CPU bar of the bench is
a ratio taken on interleaved samples, so the swing cancels; the ingestion bar is absolute
(ms per applied event), so each measured round is bracketed by samples of a fixed reference
workload, and the round is also reported as it would have run at the fastest speed the
reference showed in the whole run (its CPU times the ratio of the fastest reference sample to
the round's own). Both figures are reported; the spread of the reference says how noisy the
run was.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import statistics
import time
from dataclasses import dataclass, field

SAMPLES_PER_BRACKET = 5
# The kind of work the Lambda does between AWS calls: JSON both ways, dict building, hashing.
_DOCUMENT = {
    "pk": {"S": "MSG#msg_01JEXAMPLE0000000000000000"},
    "h:e.C4SA23MV8T7TYNMV": {"S": json.dumps({"a": 1796159506850, "s": "delivered", "t": "event:Delivery"})},
    "values": [{"S": f"state-{i}"} for i in range(12)],
}


def reference_workload(rounds: int = 600) -> int:
    size = 0
    for i in range(rounds):
        text = json.dumps(_DOCUMENT, separators=(",", ":"), sort_keys=True)
        parsed = json.loads(text)
        renamed = {f"#n{j}": name for j, name in enumerate(sorted(parsed))}
        digest = hmac.new(b"reference", text.encode(), hashlib.sha256).hexdigest()
        size += len(renamed) + len(digest) + i
    return size


def sample() -> float:
    """CPU seconds of one reference workload on the calling thread."""
    start = time.thread_time()
    reference_workload()
    return time.thread_time() - start


@dataclass
class SpeedLog:
    """Reference samples around each measured round; the fastest of all is the run's full speed."""

    brackets: list[list[float]] = field(default_factory=list)

    def bracket(self) -> None:
        self.brackets.append([sample() for _ in range(SAMPLES_PER_BRACKET)])

    @property
    def fastest(self) -> float:
        return min(value for bracket in self.brackets for value in bracket)

    def slowdown(self, round_index: int) -> float:
        """How much slower than full speed the machine ran around round `round_index` (>= 1)."""
        around = self.brackets[round_index] + self.brackets[round_index + 1]
        return max(statistics.median(around) / self.fastest, 1.0)

    def spread(self) -> float:
        every = [value for bracket in self.brackets for value in bracket]
        return max(every) / min(every)
