"""Run the design's small dense linear algebra on one BLAS thread.

A design does thousands of factorizations of small matrices (a 62 × 62 Gram matrix, a few
hundred rows by 62 columns). OpenBLAS splits even these over its threads, and on a busy machine
the threads' synchronization costs far more than the arithmetic: an eigendecomposition that
takes 0.3 ms on one thread was measured at 30 ms inside a design on two shared cores.
:func:`single_thread_blas` sets the thread count of the OpenBLAS libraries that numpy and scipy
load to one for the duration of a block and restores it afterwards, as ``threadpoolctl`` does;
it does nothing where no such library is found.
"""

from __future__ import annotations

import ctypes
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

__all__ = ["single_thread_blas"]

# (get, set) symbol pairs of the OpenBLAS builds shipped in numpy and scipy wheels, and plain.
_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


@cache
def _controls() -> tuple:
    found = []
    for package in ("numpy", "scipy"):
        try:
            root = Path(importlib.import_module(package).__file__).parent.parent
        except ImportError:
            continue
        for path in sorted((root / f"{package}.libs").glob("*openblas*")):
            try:
                lib = ctypes.CDLL(str(path))
            except OSError:
                continue
            for get, set_ in _SYMBOLS:
                if hasattr(lib, get) and hasattr(lib, set_):
                    getter, setter = getattr(lib, get), getattr(lib, set_)
                    getter.restype, setter.argtypes = ctypes.c_int, [ctypes.c_int]
                    found.append((getter, setter))
                    break
    return tuple(found)


@contextmanager
def single_thread_blas() -> Iterator[None]:
    """Within the block, numpy's and scipy's OpenBLAS use one thread."""
    controls = _controls()
    before = [get() for get, _ in controls]
    for _, set_ in controls:
        set_(1)
    try:
        yield
    finally:
        for (_, set_), count in zip(controls, before, strict=True):
            set_(count)
