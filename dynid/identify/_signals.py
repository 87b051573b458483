"""Checks of the signals a :class:`~dynid.identify.recording.Recording` is built from.

Each signal must be numbers (text, ragged lists and objects are refused), of the shape the
recording expects (``(N,)`` for the time, ``(N, n)`` for the others, one column per
coordinate), finite, and within ±:data:`MAX_MAGNITUDE` once in SI units; the time must be
strictly increasing with a median sample interval from :data:`MIN_INTERVAL` to
:data:`MAX_INTERVAL`. Units are given per signal, as one unit for every column or one per
column. Every refusal is a :class:`~dynid.errors.DataError` naming the signal; for bad
values, also the sample and column (with its name) of the first one, and how many there are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._files import excerpt
from ..errors import DataError

__all__ = ["MAX_INTERVAL", "MAX_MAGNITUDE", "MIN_INTERVAL", "check_magnitude", "check_time",
           "floats", "per_column", "signal_array"]

#: Shortest and longest median sample interval, s (1 MHz to one sample in 1000 s): beyond
#: them the times are almost surely in another unit than the one given.
MIN_INTERVAL, MAX_INTERVAL = 1e-6, 1e3
#: Largest magnitude of a signal in SI units: beyond it a value is a scaling or unit mistake
#: (or a corrupted sample), and its squares would overflow in the identification.
MAX_MAGNITUDE = 1e12


def signal_array(x: object, name: str, shape: tuple[int | None, ...], names=None) -> np.ndarray:
    """``x`` as a finite float array of ``shape`` (``None``: any length; a 1-D array
    becomes one column); ``names`` name the columns in the messages."""
    arr = floats(x, name)
    if arr.ndim == 1 and len(shape) == 2:
        arr = arr[:, None]
    if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(
            shape, arr.shape, strict=True)):
        want = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ")"
        raise DataError(f"{name}: expected an array of shape {want}, found shape {arr.shape}")
    bad = np.argwhere(~np.isfinite(arr))
    if len(bad):
        where = f"sample {bad[0][0]}"
        if arr.ndim == 2:
            col = bad[0][1]
            where += f", column {col}" + (f" ({names[col]})" if names is not None else "")
        raise DataError(f"{name}: non-finite value {arr[tuple(bad[0])]} at {where} "
                        f"({len(bad)} in all); remove or repair those samples first")
    return arr


def floats(x: object, name: str) -> np.ndarray:
    """``x`` as a float array; text, ragged lists or objects raise naming ``name``."""
    try:
        return np.array(x, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        raise DataError(f"{name}: expected numbers, found {excerpt(x)} ({exc})") from None


def per_column(value: str | Sequence[str], n: int, what: str) -> tuple[str, ...]:
    """One unit per column of ``what``, from one unit or a list of ``n``."""
    if isinstance(value, str):
        return (value,) * n
    if not isinstance(value, Sequence) or not all(isinstance(u, str) for u in value):
        raise DataError(f"units of {what}: expected a unit or a list of units (text), found "
                        f"{excerpt(value)}")
    value = tuple(value)
    if len(value) != n:
        raise DataError(f"units of {what}: expected one unit or {n}, found {len(value)}")
    return value


def check_magnitude(arr: np.ndarray | None, name: str, names: tuple[str, ...]) -> None:
    """Raise when a signal (SI units) holds a value beyond :data:`MAX_MAGNITUDE`."""
    if arr is None:
        return
    big = np.argwhere(np.abs(arr) > MAX_MAGNITUDE)
    if len(big):
        k, j = big[0]
        raise DataError(f"{name}: value {arr[k, j]:.3g} at sample {k}, column {j} ({names[j]}) "
                        f"is beyond ±{MAX_MAGNITUDE:g} in SI units ({len(big)} such values); "
                        "check the signal's unit and scaling, or remove corrupted samples")


def check_time(t: np.ndarray) -> None:
    """Raise unless ``t`` (s) strictly increases at a plausible sample interval."""
    dt = np.diff(t)
    if np.all(dt > 0):
        step = float(np.median(dt))
        if not MIN_INTERVAL <= step <= MAX_INTERVAL:
            raise DataError(f"time: the samples are {step:.3g} s apart (median), a rate of "
                            f"{1 / step:.3g} Hz; expected {MIN_INTERVAL:g} s to "
                            f"{MAX_INTERVAL:g} s. Are the times in another unit? Give it: "
                            "units={'time': 'ms'} ('us', 'ns'; --units time=ms)")
        return
    k = int(np.flatnonzero(dt <= 0)[0])
    if dt[k] == 0:
        raise DataError(f"time: duplicated value {t[k]:.9g} s at samples {k} and {k + 1}; "
                        "remove repeated samples (or fix the time stamps)")
    raise DataError(f"time: not increasing at sample {k + 1} ({t[k + 1]:.9g} s after "
                    f"{t[k]:.9g} s); sort the samples or fix the time stamps")
