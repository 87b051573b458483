"""Small dense linear algebra on one BLAS thread.

dynid factorizes many small matrices (base-parameter QR, compressed identification systems,
design criteria). Threaded BLAS splits even these, and its synchronization then costs far more
than the arithmetic: up to hundreds of times more on a busy machine.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from threadpoolctl import threadpool_limits

__all__ = ["single_thread", "single_threaded"]

F = TypeVar("F", bound=Callable)


def single_thread() -> threadpool_limits:
    """Context manager: numpy's and scipy's BLAS use one thread within the block."""
    return threadpool_limits(limits=1, user_api="blas")


def single_threaded(fn: F) -> F:
    """Decorator: ``fn`` runs within :func:`single_thread`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with single_thread():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
