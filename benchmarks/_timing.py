"""Best-of timing shared by the benchmark scripts."""

from __future__ import annotations

import time


def best_of(fn, repeat: int = 3) -> float:
    """Shortest wall time of ``repeat`` calls of ``fn``, seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
