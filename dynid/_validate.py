"""Input checks shared by the whole package: every public function validates through here."""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from .errors import DataError


def is_number(value: object) -> bool:
    """A finite real number: not a bool, not text, and not an integer too large for a float."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def batch(x: object, name: str, width: int) -> np.ndarray:
    """Return ``x`` as a C-contiguous float array of shape (N, width).

    A single sample of shape (width,) becomes (1, width). Raises :class:`DataError`
    naming ``name`` on a wrong shape or a non-finite value.
    """
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1 and arr.shape[0] == width:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != width:
        raise DataError(
            f"{name}: expected an array of shape (N, {width}) or ({width},), "
            f"found shape {np.shape(x)}"
        )
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise DataError(f"{name}: non-finite value {arr[tuple(bad)]} at sample {bad[0]}, "
                        f"column {bad[1]}; remove or repair such samples first")
    return np.ascontiguousarray(arr)


def states(q: object, v: object, a: object, width: int) -> tuple[np.ndarray, ...]:
    """Validate positions, velocities and accelerations of one batch of N samples."""
    out = (batch(q, "q", width), batch(v, "v", width), batch(a, "a", width))
    lengths = {x.shape[0] for x in out}
    if len(lengths) != 1:
        raise DataError(
            "q, v, a: expected the same number of samples, found "
            f"{out[0].shape[0]}, {out[1].shape[0]}, {out[2].shape[0]}"
        )
    return out


def vector(x: object, name: str, length: int) -> np.ndarray:
    """Return ``x`` as a finite float vector of the given length."""
    arr = np.asarray(x, dtype=float)
    if arr.shape != (length,):
        raise DataError(f"{name}: expected a vector of length {length}, found shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{name}: expected finite values, found {arr}")
    return arr


def whitener(covariance: object, name: str, n: int,
             error: type[Exception] = DataError) -> np.ndarray:
    """``L⁻¹`` (n, n) with ``L Lᵀ = covariance``: whitened noise has unit covariance.

    Raises ``error`` naming ``name`` unless the covariance is a finite, symmetric, positive
    definite (n, n) matrix."""
    S = np.asarray(covariance, dtype=float)
    if S.shape != (n, n) or not np.all(np.isfinite(S)) or not np.allclose(S, S.T):
        raise error(f"{name}: expected a finite symmetric ({n}, {n}) covariance, found shape "
                    f"{S.shape}")
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        raise error(f"{name}: the covariance is not positive definite; give variances > 0 on "
                    "its diagonal and correlations below 1") from None
    return scipy.linalg.solve_triangular(L, np.eye(n), lower=True)
