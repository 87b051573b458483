"""Velocities and accelerations estimated from sampled positions.

Three estimators of the positions, velocities and accelerations ``(q, v, a)`` (N, n) from
positions (N, n) sampled at a uniform ``rate``; each smooths at a ``cutoff`` (Hz) and states
what it assumes:

``"butterworth"`` (:func:`butterworth_states`)
    zero-phase Butterworth low-pass (forward and backward: gain ½ at ``cutoff``, an
    order-``2 order`` roll-off), then fourth-order central differences, twice. Assumes the
    motion lies below ``cutoff`` and the noise above it; the ends are padded by reflection,
    so the first and last few time constants carry the padding's error.
``"savgol"`` (:func:`savgol_states`)
    Savitzky–Golay: a polynomial of ``polyorder`` fitted by least squares in a sliding window
    (``scipy.signal.savgol_filter``), its value and derivatives at the window's centre.
    Assumes the motion is a polynomial of that order over one window; the window is the odd
    length whose smoothing response falls to ½ nearest ``cutoff`` (:func:`savgol_window`).
    At the ends the polynomial fitted to the first (last) window is used.
``"rts"`` (:func:`~dynid.identify.rts.rts_states`)
    Rauch–Tung–Striebel smoother (Kalman filter forward, smoother backward) per coordinate,
    on a constant-jerk model: ``q⁗ = w`` with ``w`` white of spectral density ``S``, and
    white measurement noise of variance ``r`` per sample (``resolution² / 12`` for an
    encoder's quantization, plus any other position noise). The smoother is the minimum
    mean-square estimate for that model; in the middle of a long record it filters like
    ``1 / (1 + (f / f_c)⁸)``, gain ½ at ``f_c = (S / (r dt))^(1/8) / 2π``. The process noise
    is set from the cutoff by that rule, ``S = r dt (2π cutoff)⁸``, so the states depend on
    the cutoff alone and ``r`` scales their covariance
    (:func:`~dynid.identify.rts.rts_covariance`). Velocities
    and accelerations are the smoother's own states (no differences); the ends get the
    estimate the model gives there (no padding). Assumes quantization noise is white, which
    holds when the motion moves the encoder by several increments a sample or so.

:func:`estimate_states` chooses among them by name (:data:`DIFFERENTIATIONS`, as
``Processing(differentiation=...)``; ``"auto"`` is ``"butterworth"``: in the study
``benchmarks/derivatives.py`` the smoother matches it at a higher cost and Savitzky–Golay
validates no better at 1 kHz and worse at 2 kHz).

Examples
--------
>>> t = np.arange(0, 10, 1e-3)
>>> q = np.sin(2 * np.pi * t)[:, None]
>>> q_s, v, a = estimate_states(q, 1000.0, 10.0, "rts")
>>> q_s, v, a = estimate_states(q, 1000.0, 10.0, "savgol")
"""

from __future__ import annotations

from math import factorial

import numpy as np

from .._files import excerpt
from ..errors import DataError
from .filters import _signal, check_cutoff, differentiate, lowpass

__all__ = ["DIFFERENTIATIONS", "butterworth_states", "check_differentiation",
           "estimate_states", "savgol_states", "savgol_window"]

#: Settings of ``Processing(differentiation=...)``.
DIFFERENTIATIONS = ("auto", "butterworth", "savgol", "rts")
#: What ``"auto"`` means.
AUTO = "butterworth"
States = tuple[np.ndarray, np.ndarray, np.ndarray]


def check_differentiation(value: object) -> str:
    """``value`` when it is one of :data:`DIFFERENTIATIONS`, else a
    :class:`~dynid.errors.DataError` naming it and the choices."""
    if not isinstance(value, str) or value not in DIFFERENTIATIONS:
        raise DataError(f"differentiation: expected one of "
                        f"{', '.join(map(repr, DIFFERENTIATIONS))}, found {excerpt(value)}; "
                        "e.g. Processing(differentiation='rts')")
    return value


def _positions(positions: object) -> np.ndarray:
    x = np.asarray(positions, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or not np.all(np.isfinite(x)):
        raise DataError(f"positions: expected finite values of shape (N, n), found shape "
                        f"{x.shape}" + ("" if x.ndim != 2 else " with non-finite values"))
    return x


def butterworth_states(positions: np.ndarray, rate: float, cutoff: float, order: int = 4, *,
                       time: np.ndarray | None = None, periodic: bool = False) -> States:
    """Zero-phase Butterworth low-pass, then central differences twice.

    Parameters
    ----------
    positions
        Positions (N, n) sampled at ``rate`` Hz.
    rate, cutoff, order
        As :func:`~dynid.identify.filters.lowpass`: the design cutoff (gain ½ for the two
        passes) and the order designed.
    time
        Sample times (N,) for differences over slightly uneven stamps (default: ``k / rate``).
    periodic
        ``positions`` is one period of a periodic motion.

    Returns
    -------
    q, v, a
        Filtered positions and their first and second derivatives (N, n).

    Examples
    --------
    >>> q, v, a = butterworth_states(positions, 1000.0, 10.0)      # doctest: +SKIP
    """
    x = _positions(positions)
    t = np.arange(x.shape[0]) / rate if time is None else np.asarray(time, dtype=float)
    q = lowpass(x, rate, cutoff, order, periodic=periodic)
    v = differentiate(q, t, periodic=periodic)
    return q, v, differentiate(v, t, periodic=periodic)


# Savitzky–Golay ----------------------------------------------------------------------------
def _savgol_half(window: int, polyorder: int, deriv: int) -> float | None:
    """Frequency (in cycles per sample) where the response of the Savitzky–Golay filter of
    derivative ``deriv``, relative to the exact derivative's ``(iω)^deriv``, first falls to ½
    (0.5: it does not below the Nyquist frequency); ``None`` when scipy's coefficients are
    inaccurate (at zero frequency they do not give the derivative)."""
    from scipy.optimize import brentq

    c = _signal().savgol_coeffs(window, polyorder, deriv=deriv, use="dot")
    k = np.arange(window) - window // 2
    if abs(c @ k.astype(float) ** deriv / factorial(deriv) - 1) > 1e-6:
        return None

    def relative(f: float) -> float:
        w = 2 * np.pi * f
        return float(np.real((np.exp(1j * w * k) @ c) / (1j * w) ** deriv)) - 0.5

    # The response on a grid of 1/(8 window) cycles a sample (a zero-padded FFT of the
    # coefficients, their centre brought to zero), then the first crossing refined.
    n = 8 * window
    f = np.fft.rfftfreq(n)[1:]
    H = np.conj(np.fft.rfft(c, n)[1:]) * np.exp(-2j * np.pi * f * (window // 2))
    below = np.flatnonzero(np.real(H / (2j * np.pi * f) ** deriv) <= 0.5)
    if not len(below):
        return 0.5
    j = below[0]
    return float(brentq(relative, f[j - 1] if j else 1e-6 * f[0], f[j], xtol=1e-14))


def savgol_window(rate: float, cutoff: float, polyorder: int = 3, deriv: int = 0,
                  longest: int | None = None) -> int:
    """The odd window (samples) whose Savitzky–Golay filter of ``polyorder`` and derivative
    ``deriv`` passes ½ of the exact derivative nearest ``cutoff`` Hz at ``rate`` Hz (the
    shortest window, ``polyorder + 2`` or ``polyorder + 3``, for a cutoff above its own). The
    search stops past ``longest`` samples, returning the first window longer.

    Examples
    --------
    >>> savgol_window(1000.0, 10.0)          # samples, for the positions with a cubic
    127
    """
    target = cutoff / rate

    def half(m: int) -> float:
        f = _savgol_half(2 * m + 1, polyorder, deriv)
        if f is None:
            raise DataError(f"polyorder: {polyorder} over a window of {2 * m + 1} samples "
                            f"(cutoff {cutoff:g} Hz at {rate:g} Hz) gives inaccurate "
                            "Savitzky–Golay coefficients; use polyorder=3, a higher cutoff, "
                            "or another differentiation")
        return f

    lo = (polyorder + 2) // 2  # half-widths: window = 2 m + 1 > polyorder + 1
    if half(lo) <= target:
        return 2 * lo + 1
    hi = lo
    while half(hi) > target:
        if longest is not None and 2 * hi + 1 > longest:
            return 2 * hi + 1
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # the half-gain frequency falls as the window grows
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if half(mid) > target else (lo, mid)
    return 2 * (lo if np.log(half(lo) / target) < np.log(target / half(hi)) else hi) + 1


def _check_savgol(window: int, polyorder: int, deriv: int, cutoff: float, rate: float) -> None:
    """Raise when the Savitzky–Golay coefficients of derivative ``deriv``
    (``scipy.signal.savgol_coeffs``, a least squares on powers of the sample index) are
    inaccurate for this window: they must give ``deriv!`` on ``k^deriv`` and 0 on the other
    powers up to ``polyorder``."""
    k = np.arange(window) - window // 2
    powers = k[None, :] ** np.arange(polyorder + 1)[:, None].astype(float)
    c = _signal().savgol_coeffs(window, polyorder, deriv=deriv, use="dot")
    want = np.where(np.arange(polyorder + 1) == deriv, float(factorial(deriv)), 0.0)
    worst = float(np.max(np.abs(powers @ c - want) / (np.abs(powers) @ np.abs(c) + 1e-300)))
    if worst > 1e-6:
        raise DataError(f"polyorder: {polyorder} over a window of {window} samples (cutoff "
                        f"{cutoff:g} Hz at {rate:g} Hz) gives inaccurate Savitzky–Golay "
                        f"coefficients (relative error {worst:.1e}); use polyorder=3, a "
                        "higher cutoff, or another differentiation")


def savgol_states(positions: np.ndarray, rate: float, cutoff: float, *, polyorder: int = 3,
                  periodic: bool = False) -> States:
    """Savitzky–Golay smoothing and differentiation (``scipy.signal.savgol_filter``).

    Each of the positions, velocities and accelerations has its own window,
    :func:`savgol_window`'s for its derivative: each passes half the exact derivative at the
    cutoff.

    Parameters
    ----------
    positions
        Positions (N, n) sampled at ``rate`` Hz.
    rate, cutoff
        Sample rate and cutoff (Hz).
    polyorder
        Order of the local polynomial (2 to 10; 3 by default).
    periodic
        ``positions`` is one period of a periodic motion (the windows wrap around).

    Returns
    -------
    q, v, a
        Smoothed positions and their first and second derivatives (N, n).

    Examples
    --------
    >>> t = np.arange(0, 10, 1e-3)
    >>> q, v, a = savgol_states(np.sin(2 * np.pi * t)[:, None], 1000.0, 10.0)
    """
    x = _positions(positions)
    N = x.shape[0]
    cutoff = check_cutoff(cutoff, rate, N)
    if isinstance(polyorder, bool) or not isinstance(polyorder, int | np.integer) or \
            not 2 <= polyorder <= 10:
        raise DataError(f"polyorder: expected an integer from 2 to 10 (the local polynomial's "
                        f"order; 3 is usual), found {excerpt(polyorder)}")
    p = int(polyorder)
    out = []
    for d in range(3):
        window = savgol_window(rate, cutoff, p, d, longest=N)
        if window > N:
            raise DataError(f"cutoff: {cutoff:g} Hz needs a Savitzky–Golay window of {window} "
                            f"samples, longer than the recording ({N} samples); raise the "
                            "cutoff")
        _check_savgol(window, p, d, cutoff, rate)
        out.append(_signal().savgol_filter(x, window, p, deriv=d, delta=1.0 / rate, axis=0,
                                           mode="wrap" if periodic else "interp"))
    return out[0], out[1], out[2]


def estimate_states(positions: np.ndarray, rate: float, cutoff: float | None,
                    method: str = "auto", *, order: int = 4, time: np.ndarray | None = None,
                    periodic: bool = False) -> States:
    """Positions, velocities and accelerations (N, n) by ``method`` (one of
    :data:`DIFFERENTIATIONS`; ``"auto"`` is ``"butterworth"``).

    Without a cutoff nothing is smoothed, whatever the method: the positions are
    differentiated by central differences (:func:`~dynid.identify.filters.differentiate`).

    Examples
    --------
    >>> q, v, a = estimate_states(positions, 1000.0, 12.0, "rts")   # doctest: +SKIP
    """
    method = check_differentiation(method)
    x = _positions(positions)
    t = np.arange(x.shape[0]) / rate if time is None else np.asarray(time, dtype=float)
    if cutoff is None:
        v = differentiate(x, t, periodic=periodic)
        return x, v, differentiate(v, t, periodic=periodic)
    if method in ("auto", "butterworth"):
        return butterworth_states(x, rate, cutoff, order, time=t, periodic=periodic)
    if method == "savgol":
        return savgol_states(x, rate, cutoff, periodic=periodic)
    from .rts import rts_states

    return rts_states(x, rate, cutoff, periodic=periodic)
