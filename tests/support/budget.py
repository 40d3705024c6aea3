"""A budget for one in-process CLI run: CPU time, memory (the process's peak) and a wall-clock hang guard,
so a hang or a blow-up fails the test instead of stalling the suite.

SIGALRM interrupts a blocking system call (an open() of a FIFO) and a long pure-Python loop alike; the
handler raises, so the run stops where it was and the test names the case. Main thread only (pytest's).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time
from collections.abc import Iterator
from typing import Any

from tests.support.cli import Result, run_cli

# CPU seconds one command may use ("a few"), and the wall-clock time after which it counts as hung (a
# blocked open() of a FIFO uses no CPU; a loaded 2-core CI runner stretches wall time, not CPU time)
BUDGET_S = float(os.environ.get("RECIPEGEN_CASE_BUDGET_S", "10"))  # CPU s; a loaded CI machine needs the margin
MAX_RSS_MB = float(os.environ.get("RECIPEGEN_CASE_RSS_MB", "512"))  # the test process's peak, all cases
GROWTH_MB = 64.0
HUNG_S = float(os.environ.get("RECIPEGEN_CASE_HUNG_S", "60"))


class TookTooLong(BaseException):  # not an Exception: the CLI turns those into exit 70
    pass


@contextlib.contextmanager
def budget(seconds: float = HUNG_S) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise TookTooLong(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed_cli(*args: str, seconds: float = BUDGET_S, env: dict[str, str] | None = None) -> Result:
    """run_cli within the budget: too slow past `seconds` of CPU, hung after HUNG_S of wall time."""
    shown = " ".join(a if len(a) < 80 else a[:60] + "…" for a in args)
    start, before = time.process_time(), _peak_mb()
    try:
        with budget(max(HUNG_S, seconds)):
            result = run_cli(*args, env=env)
    except TookTooLong as exc:
        raise AssertionError(f"`recipegen {shown}` {exc}") from None
    used = time.process_time() - start
    assert used <= seconds, f"`recipegen {shown}` used {used:.1f} s of CPU (budget {seconds:g} s)"
    peak = _peak_mb()  # an earlier test of the same process may have peaked higher: only a new peak counts
    # a long test process has peaked higher before: then a case may add at most GROWTH_MB (allocator slack)
    assert peak <= max(MAX_RSS_MB, before + GROWTH_MB), f"after `recipegen {shown}` the process peaked at {peak:.0f} MB"
    return result


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
