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
``"rts"`` (:func:`rts_states`)
    Rauch–Tung–Striebel smoother (Kalman filter forward, smoother backward) per coordinate,
    on a constant-jerk model: ``q⁗ = w`` with ``w`` white of spectral density ``S``, and
    white measurement noise of variance ``r`` per sample (``resolution² / 12`` for an
    encoder's quantization, plus any other position noise). The smoother is the minimum
    mean-square estimate for that model; in the middle of a long record it filters like
    ``1 / (1 + (f / f_c)⁸)``, gain ½ at ``f_c = (S / (r dt))^(1/8) / 2π``. The process noise
    is set from the cutoff by that rule, ``S = r dt (2π cutoff)⁸``, so the states depend on
    the cutoff alone and ``r`` scales their covariance (:func:`rts_covariance`). Velocities
    and accelerations are the smoother's own states (no differences); the ends get the
    estimate the model gives there (no padding). Assumes quantization noise is white, which
    holds when the motion moves the encoder by several increments a sample or so.

:func:`estimate_states` chooses among them by name (:data:`DIFFERENTIATIONS`, as
``Processing(differentiation=...)``; ``"auto"`` is ``"butterworth"``).

Examples
--------
>>> t = np.arange(0, 10, 1e-3)
>>> q = np.sin(2 * np.pi * t)[:, None]
>>> q_s, v, a = rts_states(q, 1000.0, 10.0)
>>> q_s, v, a = estimate_states(q, 1000.0, 10.0, "savgol")
"""

from __future__ import annotations

from math import factorial

import numpy as np

from .._files import excerpt
from ..errors import DataError
from .filters import _signal, differentiate, lowpass

__all__ = ["DIFFERENTIATIONS", "butterworth_states", "check_differentiation",
           "estimate_states", "rts_covariance", "rts_states", "savgol_states", "savgol_window"]

#: Settings of ``Processing(differentiation=...)``.
DIFFERENTIATIONS = ("auto", "butterworth", "savgol", "rts")
#: What ``"auto"`` means.
AUTO = "butterworth"
#: Lowest ``cutoff / rate`` the smoother accepts: below it its process noise is a fraction
#: ``(2π · 1e-4)⁸ ≈ 1e-26`` of the measurement noise per sample, and its covariance loses
#: positive definiteness in double precision.
MIN_RTS_RATIO = 1e-4
# Prior variance of the smoother's first state, in units of the measurement noise, about
# a cubic fitted to the first samples (wide enough to be uninformative).
_PRIOR = 1e8
# The smoother's gains count as settled when the predicted covariance changes by less than
# this (relative) from one sample to the next.
_SETTLED = 1e-13
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


def _check_cutoff(cutoff: object, rate: float, N: int) -> float:
    if isinstance(cutoff, bool) or not isinstance(cutoff, int | float | np.floating) or \
            not 0 < cutoff < rate / 2:
        raise DataError(f"cutoff: expected a frequency between 0 and the Nyquist frequency "
                        f"{rate / 2:g} Hz, found {excerpt(cutoff)}")
    if cutoff * N / rate < 1:
        raise DataError(f"cutoff: {cutoff:g} Hz is less than one cycle over the recording "
                        f"({N} samples at {rate:g} Hz); a smoother that slow removes the "
                        "motion itself. Raise the cutoff")
    return float(cutoff)


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
    cutoff = _check_cutoff(cutoff, rate, N)
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


# Rauch–Tung–Striebel -----------------------------------------------------------------------
def _jerk_model(h: float) -> tuple[np.ndarray, np.ndarray]:
    """Transition and process noise covariance of the constant-jerk model over one sample,
    for the state ``z = [q, v/ω, a/ω², j/ω³]`` with ``h = ω dt`` (ω = 2π cutoff), the
    measurement noise variance taken as 1 and ``S = dt ω⁸``: ``F = exp(h N)`` with ``N`` the
    shift, ``Q_ij = h^(8−i−j) / ((7−i−j) (3−i)! (3−j)!)``."""
    F = np.eye(4)
    Q = np.empty((4, 4))
    for i in range(4):
        for j in range(4):
            if j > i:
                F[i, j] = h ** (j - i) / factorial(j - i)
            p = 6 - i - j
            Q[i, j] = h ** (p + 2) / ((p + 1) * factorial(3 - i) * factorial(3 - j))
    return F, Q


def _gains(F: np.ndarray, Q: np.ndarray, N: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Kalman gains (k, 4), predicted and filtered covariances (k, 4, 4) for the first ``k``
    samples until they settle (the last entry holds for every later sample), with the prior
    ``_PRIOR · I`` and unit measurement noise (Joseph form); ``None`` when a covariance
    loses positive definiteness."""
    Ks, Pps, Pfs = [], [], []
    Pp = _PRIOR * np.eye(4)
    for k in range(N):
        if k:
            Pp = F @ Pfs[-1] @ F.T + Q
            Pp = 0.5 * (Pp + Pp.T)
        K = Pp[:, 0] / (Pp[0, 0] + 1.0)
        IKH = np.eye(4)
        IKH[:, 0] -= K
        Pf = IKH @ Pp @ IKH.T + np.outer(K, K)
        if not (np.all(np.isfinite(Pf)) and np.all(np.diag(Pf) > 0)):
            return None
        Ks.append(K)
        Pps.append(Pp)
        Pfs.append(0.5 * (Pf + Pf.T))
        if k > 1 and np.abs(Pp - Pps[-2]).max() <= _SETTLED * np.abs(Pp).max():
            break
    return np.array(Ks), np.array(Pps), np.array(Pfs)


def _rts(y: np.ndarray, h: float) -> np.ndarray:
    """Smoothed states (N, 4, n) of ``y`` (N, n) on the constant-jerk model (see
    :func:`_jerk_model`)."""
    N, n = y.shape
    F, Q = _jerk_model(h)
    gains = _gains(F, Q, N)
    if gains is None:
        raise DataError(f"cutoff: the smoother's covariance lost positive definiteness at "
                        f"cutoff / rate = {h / (2 * np.pi):.3g}; raise the cutoff or use "
                        "differentiation='butterworth'")
    K, Pp, Pf = gains
    settled = len(K) - 1
    # Backward gains C_k = Pf_k Fᵀ Pp_{k+1}⁻¹, the last one for every later sample.
    nxt = np.concatenate([Pp[1:], Pp[-1:]])
    C = np.linalg.solve(nxt, np.einsum("ij,kjl->kil", F, Pf)).transpose(0, 2, 1)
    # The prior's mean: a cubic fitted to the first samples (a quarter time constant).
    L = min(N, max(8, int(np.ceil(0.25 / h))))
    t = np.arange(L) * h
    basis = np.column_stack([t ** d / factorial(d) for d in range(4)])
    x = np.linalg.lstsq(basis, y[:L], rcond=None)[0]
    xf = np.empty((N, 4, n))
    for k in range(N):
        if k:
            x = F @ x
        x = x + np.outer(K[min(k, settled)], y[k] - x[0])
        xf[k] = x
    pred = np.einsum("ij,kjn->kin", F, xf)
    xs = np.empty_like(xf)
    xs[-1] = xf[-1]
    for k in range(N - 2, -1, -1):
        xs[k] = xf[k] + C[min(k, settled)] @ (xs[k + 1] - pred[k])
    return xs


def rts_states(positions: np.ndarray, rate: float, cutoff: float, *,
               periodic: bool = False) -> States:
    """Rauch–Tung–Striebel smoother on a constant-jerk model per coordinate.

    The model (see the module docstring): ``q⁗`` is white noise of spectral density
    ``S = r dt (2π cutoff)⁸`` for a measurement noise of variance ``r`` per sample, so the
    smoother is the minimum mean-square estimator whose response in the middle of a long
    record is ``1 / (1 + (f / cutoff)⁸)``. The states do not depend on ``r``; their
    covariance is :func:`rts_covariance`. The first state's prior is a cubic fitted to the
    first samples with a variance ``1e8 r``; the filter runs over the samples, vectorised
    over the coordinates.

    Parameters
    ----------
    positions
        Positions (N, n) sampled at ``rate`` Hz.
    rate, cutoff
        Sample rate and cutoff (Hz), ``MIN_RTS_RATIO · rate ≤ cutoff < rate / 2``.
    periodic
        ``positions`` is one period of a periodic motion (smoothed as the middle of three).

    Returns
    -------
    q, v, a
        Smoothed positions, velocities and accelerations (N, n).

    Examples
    --------
    >>> t = np.arange(0, 10, 1e-3)
    >>> q, v, a = rts_states(np.sin(2 * np.pi * t)[:, None], 1000.0, 10.0)
    """
    x = _positions(positions)
    N = x.shape[0]
    cutoff = _check_cutoff(cutoff, rate, N)
    if cutoff < MIN_RTS_RATIO * rate:
        raise DataError(f"cutoff: {cutoff:g} Hz at {rate:g} Hz is below {MIN_RTS_RATIO:g} "
                        f"times the rate, where the smoother's process noise is too small "
                        "against its measurement noise for double precision; use a cutoff "
                        f"≥ {MIN_RTS_RATIO * rate:g} Hz, resample the recording to a lower "
                        "rate first, or differentiation='butterworth'")
    w = 2 * np.pi * cutoff
    y = np.concatenate([x, x, x]) if periodic else x
    xs = _rts(y, w / rate)
    if periodic:
        xs = xs[N:2 * N]
    return xs[:, 0], w * xs[:, 1], w * w * xs[:, 2]


def rts_covariance(rate: float, cutoff: float, *, resolution: float | np.ndarray | None = None,
                   position_std: float | np.ndarray = 0.0) -> np.ndarray:
    """Covariance (n, 3, 3) of the errors of :func:`rts_states`' positions, velocities and
    accelerations, in the middle of a long record, where its model holds.

    The measurement noise per sample is ``r = resolution² / 12 + position_std²``: an
    encoder's quantization (``resolution``, per coordinate, e.g. a recording's
    :attr:`~dynid.identify.recording.Recording.resolution`) and any other white position noise;
    the process noise follows from it and the cutoff. The steady-state predicted covariance is
    the solution of the discrete algebraic Riccati equation
    (``scipy.linalg.solve_discrete_are``), the smoothed one that of a discrete Lyapunov
    equation (``scipy.linalg.solve_discrete_lyapunov``).

    Examples
    --------
    >>> cov = rts_covariance(1000.0, 10.0, resolution=2 * np.pi / 4096)
    >>> print(f"{np.sqrt(cov[0, 1, 1]):.2g} rad/s")  # σ of the velocity
    0.0026 rad/s
    """
    from scipy.linalg import solve_discrete_are, solve_discrete_lyapunov

    from .quantization import check_resolution

    std = np.atleast_1d(np.asarray(position_std, dtype=float))
    if std.ndim != 1 or not np.all(np.isfinite(std)) or not np.all(std >= 0):
        raise DataError(f"position_std: expected the σ ≥ 0 (rad or m) of white position noise, "
                        f"one or one per coordinate, found {excerpt(position_std)}")
    n = max(len(std), np.size(resolution) if resolution is not None else 1)
    res = check_resolution(resolution, n)
    r = (0.0 if res is None else res ** 2 / 12) + np.broadcast_to(std, (n,)) ** 2
    if not np.all(r > 0):
        raise DataError("resolution, position_std: the smoother's measurement noise is zero, "
                        "so its covariance is; give the encoder's resolution (rad or m) or the "
                        "position noise's σ, e.g. rts_covariance(1000.0, 10.0, "
                        "resolution=2 * np.pi / 4096)")
    _check_cutoff(cutoff, rate, int(np.ceil(rate / cutoff)))
    w = 2 * np.pi * cutoff
    F, Q = _jerk_model(w / rate)
    H = np.array([[1.0, 0.0, 0.0, 0.0]])
    Pp = solve_discrete_are(F.T, H.T, Q, np.eye(1))
    Pf = Pp - np.outer(Pp[:, 0], Pp[0]) / (Pp[0, 0] + 1.0)
    C = np.linalg.solve(Pp, F @ Pf).T
    Ps = Pf + solve_discrete_lyapunov(C, C @ (Pf - Pp) @ C.T)
    scale = np.array([1.0, w, w * w])
    return r[:, None, None] * (Ps[:3, :3] * np.outer(scale, scale))


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
    return rts_states(x, rate, cutoff, periodic=periodic)
