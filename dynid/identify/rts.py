"""The Rauch–Tung–Striebel smoother of positions, velocities and accelerations.

Per coordinate, the positions ``y_k`` (N samples at ``rate``) are the measurement of a
constant-jerk model::

    q⁗ = w,    y_k = q(k dt) + e_k

with ``w`` white noise of spectral density ``S`` and ``e_k`` white measurement noise of
variance ``r`` (``resolution² / 12`` for an encoder's quantization, plus any other position
noise). The Kalman filter runs forward over the samples and the smoother backward; the smoothed
state is the minimum mean-square estimate of ``(q, v, a, jerk)`` given every sample, and in the
middle of a long record it filters the positions by ``1 / (1 + (r dt ω⁸ / S))``: gain ½ at
``ω_c = (S / (r dt))^(1/8)``. The process noise is set from the cutoff by that rule,
``S = r dt (2π cutoff)⁸``, so the estimates depend on the cutoff alone (the same response as
the zero-phase Butterworth of order 4, :func:`~dynid.identify.filters.lowpass`), and ``r``
scales their covariance (:func:`rts_covariance`). Unlike the Butterworth's reflected padding,
the ends get what the model estimates there.

The state is scaled by the cutoff, ``z = [q, v/ω, a/ω², jerk/ω³]``, so that its covariance is
well conditioned whatever ``cutoff / rate``; the gains are the same for every coordinate (they
depend on ``S / r`` alone) and are computed once, until they settle; the states run over the
samples vectorised over the coordinates.
"""

from __future__ import annotations

from math import factorial

import numpy as np

from .._files import excerpt
from ..errors import DataError
from .derivatives import States, _positions
from .filters import check_cutoff

__all__ = ["MIN_RTS_RATIO", "rts_covariance", "rts_states"]

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
    cutoff = check_cutoff(cutoff, rate, N)
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
    check_cutoff(cutoff, rate, int(np.ceil(rate / cutoff)))
    w = 2 * np.pi * cutoff
    F, Q = _jerk_model(w / rate)
    H = np.array([[1.0, 0.0, 0.0, 0.0]])
    Pp = solve_discrete_are(F.T, H.T, Q, np.eye(1))
    Pf = Pp - np.outer(Pp[:, 0], Pp[0]) / (Pp[0, 0] + 1.0)
    C = np.linalg.solve(Pp, F @ Pf).T
    Ps = Pf + solve_discrete_lyapunov(C, C @ (Pf - Pp) @ C.T)
    scale = np.array([1.0, w, w * w])
    return r[:, None, None] * (Ps[:3, :3] * np.outer(scale, scale))
