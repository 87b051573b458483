"""Shared settings and limits of the fuzzing harnesses (property tests of the file readers).

Harness tests take :data:`FUZZ_SETTINGS` and are marked ``@pytest.mark.fuzz``::

    from fuzzing import FUZZ_SETTINGS, bounded

    @pytest.mark.fuzz
    @FUZZ_SETTINGS
    @given(st.binary())
    def test_reader(data):
        bounded(lambda: read(data), seconds=2, megabytes=50)

Two Hypothesis profiles are registered here (the global ``default`` and ``ci`` profiles are left
alone, so other property tests keep their settings):

``fuzz-short``  the normal run: a few seconds per test;
``fuzz``        a long run, selected by setting the environment variable ``DYNID_FUZZ``
                (``DYNID_FUZZ=1``; a number sets the examples per test, ``DYNID_FUZZ=20000``).

``pytest -m fuzz`` runs the harnesses alone, ``pytest -m "not fuzz"`` skips them.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

from hypothesis import HealthCheck, settings

__all__ = ["FUZZ_SETTINGS", "LONG_RUN", "bounded"]

T = TypeVar("T")

_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

# No Hypothesis deadline: the harnesses bound each call's time and memory themselves
# (:func:`bounded`), generously, so a loaded machine does not fail them.
settings.register_profile("fuzz-short", max_examples=60, deadline=None, derandomize=False,
                          suppress_health_check=_SLOW, print_blob=True)
_requested = os.environ.get("DYNID_FUZZ", "").strip()
settings.register_profile("fuzz", max_examples=int(_requested) if _requested.isdigit()
                          and int(_requested) > 1 else 5000, deadline=None,
                          suppress_health_check=_SLOW, print_blob=True)

#: True when the long run was asked for (``DYNID_FUZZ`` set).
LONG_RUN = bool(_requested) and _requested.lower() not in ("0", "false", "no")

#: Settings for harness tests: the ``fuzz`` profile with ``DYNID_FUZZ`` set, else ``fuzz-short``.
FUZZ_SETTINGS = settings.get_profile("fuzz" if LONG_RUN else "fuzz-short")


class BoundExceeded(AssertionError):
    """An input took more time or memory than its harness allows."""


def bounded(fn: Callable[[], T], *, seconds: float, megabytes: float) -> T:
    """Call ``fn()`` and fail when it runs longer than ``seconds`` or its Python allocations
    (numpy arrays included) peak above ``megabytes``.

    The time bound is enforced with ``SIGALRM`` when called from the main thread on a POSIX
    system (the call is interrupted at its next Python bytecode); elsewhere it is checked after
    the call returns. An exception raised by ``fn`` propagates unchanged once the bounds are
    checked (an input that exhausts the bounds before it is refused still fails).
    """
    alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    started_tracing = not tracemalloc.is_tracing()
    if started_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()

    def expire(signum, frame):
        raise BoundExceeded(f"input took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire) if alarm else None
    if alarm:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        result, error = fn(), None
    except BoundExceeded:
        raise
    except BaseException as exc:  # checked against the bounds, then raised again
        result, error = None, exc
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        elapsed = time.perf_counter() - start
        peak = (tracemalloc.get_traced_memory()[1] - before) / 2 ** 20
        if started_tracing:
            tracemalloc.stop()
    if elapsed > seconds:
        raise BoundExceeded(f"input took {elapsed:.3g} s, more than {seconds:g} s") from error
    if peak > megabytes:
        raise BoundExceeded(f"input allocated {peak:.3g} MB at its peak, more than "
                            f"{megabytes:g} MB") from error
    if error is not None:
        raise error
    return result


def tree_paths(tree, prefix: tuple = (), *, width: int | None = None):
    """Every path (tuple of keys and indices) into a tree of dicts and lists, the root's ``()``
    first; of each list, its first ``width`` entries only (all without)."""
    yield prefix
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from tree_paths(value, (*prefix, key), width=width)
    elif isinstance(tree, list):
        for i, value in enumerate(tree[:width]):
            yield from tree_paths(value, (*prefix, i), width=width)
