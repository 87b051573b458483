"""The covariance of ``Σ_t X_tᵀ e_t`` when the error ``e`` is coloured.

A closed-loop estimate's error is a weighted sum of the output error, ``Σ_t X_tᵀ e_t`` with
``X_t`` (n, b) the weights of sample t (the instruments, or the output's sensitivity to the
parameters) and ``e_t`` (n,) its output error. The weights are noise-free and smooth (they
come from a simulation of the excitation), the error is not white: in closed loop it holds
the positions' noise, differentiated and fed back by the drives, whose power lies at high
frequencies and largely cancels over neighbouring samples. The covariance of the sum is ::

    B = Σ_t Σ_s X_tᵀ Γ(t − s) X_s,        Γ(l) = E[e_{t+l} e_tᵀ]  (n, n)

Forms that estimate the autocovariance of the products ``g_t = X_tᵀ e_t`` (Newey–West with
few lags) smooth the spectrum of ``g`` over a band far wider than the weights' and take in
power from the high frequencies where the error is strong: σ several times too large. Here
only the error's autocovariance is estimated, pooled over every sample of every recording
(few numbers, well determined), and the weights enter exactly. ``Γ`` is Welch's: Hann-tapered
segments of ``segment`` samples with half overlap, so that its spectrum is never negative and
``B ≽ 0``. Long segments resolve the low frequencies where the weights lie; the cost is
``segment`` lags of ``n² b²`` products a sample.

The residual at an estimate is orthogonal to the weights it was fitted with, which removes
part of the error's power; :func:`autocovariance` takes the number of parameters fitted and
scales ``Γ`` up by the rows over the degrees of freedom.

The σ err on the large side: on the two-joint arm of the tests by a factor of about 1.3 (1.0
to 1.8 by parameter), where Newey–West's were about 3 times too large. The model is
stationary, the closed loop's error likely not quite (the regressor's noise is modulated by
the state, e.g. the mass matrix times the accelerations' noise), which would put power at the
low frequencies of a stationary spectrum that the products with the smooth weights cancel.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import DataError

__all__ = ["SEGMENT", "autocovariance", "check_segment", "sandwich"]

#: Samples of a Welch segment: the autocovariance holds lags below it.
SEGMENT = 256


def check_segment(segment, name: str) -> int:
    """``segment`` checked: a whole number of samples ≥ 2."""
    if isinstance(segment, bool) or not isinstance(segment, int | np.integer) or segment < 2:
        raise DataError(f"{name}: segment: expected a whole number of (decimated) samples ≥ 2 "
                        f"for the output error's autocovariance, found {segment!r}; e.g. "
                        f"{name}(simulator=loop, segment={SEGMENT})")
    return int(segment)


def autocovariance(residuals: Sequence[np.ndarray], fitted: int = 0,
                   segment: int = SEGMENT) -> np.ndarray:
    """Welch's estimate of the output error's autocovariance ``Γ(l)`` for ``l < segment``:
    (L, n, n) from residuals (T_k, n) per recording (rows left out set to 0), scaled by
    rows / (rows − ``fitted``), the rows those of every output."""
    n = residuals[0].shape[1]
    M = max(2, min(int(segment), max(len(e) for e in residuals)))
    total, weight, rows = np.zeros((M, n, n)), 0.0, 0
    for e in residuals:
        rows += int(np.count_nonzero(e))
        m = min(M, len(e))
        if m < 2:
            continue
        h = np.hanning(m + 2)[1:-1]
        starts = range(0, len(e) - m + 1, max(1, m // 2))
        for s in starts:
            x = e[s:s + m] * h[:, None]
            F = np.fft.rfft(x, 2 * m, axis=0)
            # Γ(l)_jk = Σ_t x_{t+l,j} x_{t,k}
            c = np.fft.irfft(F[:, :, None] * np.conj(F[:, None, :]), 2 * m, axis=0)[:m]
            total[:m] += c
            weight += float(h @ h)
    if weight == 0 or rows <= fitted:
        return total
    return total / weight * rows / (rows - fitted)


def sandwich(chunks: Iterable[np.ndarray], gamma: np.ndarray) -> np.ndarray:
    """``B = Σ_t Σ_s X_tᵀ Γ(t − s) X_s`` (b, b) over one recording's weights, given chunk by
    chunk in order (each (m, n, b); rows left out set to 0), with ``Γ`` from
    :func:`autocovariance`. Memory: the last ``L − 1`` rows of weights."""
    L = len(gamma)
    B, tail = None, None
    for X in chunks:
        if B is None:
            B = np.zeros((X.shape[2], X.shape[2]))
            tail = X[:0]
        both, off = np.concatenate([tail, X]), len(tail)
        new = both[off:]
        B += np.einsum("mjp,jk,mkq->pq", new, gamma[0], new, optimize=True)
        for lag in range(1, L):
            k0 = max(off - lag, 0)  # pairs (s, s + lag) with s + lag in this chunk
            if k0 + lag >= len(both):
                break
            G = np.einsum("mjp,jk,mkq->pq", both[k0 + lag:], gamma[lag], both[k0:len(both) - lag],
                          optimize=True)
            B += G + G.T
        tail = both[-(L - 1):] if L > 1 else both[:0]
    return (B + B.T) / 2 if B is not None else np.zeros((0, 0))

