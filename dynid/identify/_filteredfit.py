"""Least squares of an output on its regressor low-passed at any cutoff, cheaply and exactly.

The model filter's search (:func:`~dynid.identify.modelband.choose_model_cutoff`) needs, for
many cutoffs ``c``, the residual norm of

    min_θ  Σ_r ‖M_r (y_r − F_c(k_r) − F_c(Y_r) θ)‖²

over the recordings ``r``: ``Y_r`` the base regressor (N, n, b), ``k_r`` the known bodies'
output (N, n), ``y_r`` the output (N, n), ``M_r`` the rows kept and ``F_c`` the model filter
(:func:`~dynid.identify.modelband.filter_model`). :class:`FilteredFit` holds the recordings
once and evaluates it for any cutoff, without approximation:

* Only the signals that are not identically zero are filtered. A joint's output depends on
  the bodies beyond it only, so about half the (output, column) signals of a serial arm's
  base regressor are zero, and the filter, being linear, maps them to zero. The others are
  held as one contiguous (signals, N) array per recording, grouped by output, which scipy
  filters along its rows.
* The fit is solved from its normal equations, output by output over that output's own
  columns (``Σ_j X_jᵀ X_j``), on column-scaled data, then refined once from the explicit
  residual, whose norm is returned. For a scaled regressor of condition number ``κ`` the
  normal equations lose ``ε κ²`` (``ε`` the rounding unit) and the refinement step takes
  that error down by a factor ``ε κ²`` again; the explicit residual is never below the true
  minimum. A fit whose scaled normal matrix has a condition number above :data:`MAX_COND`
  (``κ > 10⁶``: ``ε κ² > 10⁻⁴``) is solved by a QR factorization instead, the rows
  compressed output by output. (A scaled regressor with ``κ ≈ 2·10⁷`` solved by the refined
  normal equations still gave the residual to 10⁻¹¹; KUKA's has ``κ ≈ 110``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.linalg

from .._linalg import stack_triangular

__all__ = ["MAX_COND", "FilteredFit"]

#: Largest condition number of the scaled normal matrix solved by Cholesky (κ² for a scaled
#: regressor of condition number κ); above it, :class:`FilteredFit` factors the rows by QR.
MAX_COND = 1e12


class _Recording:
    """One recording's non-zero signals (k, N), with, per output, its rows there, its base
    columns, the row of its known bodies' output (or -1), and its kept rows and output."""

    def __init__(self, Yb: np.ndarray, known: np.ndarray, y: np.ndarray, keep: np.ndarray,
                 rate: float) -> None:
        N, n, self.n_params = Yb.shape
        self.rate, self.keep = rate, np.asarray(keep, dtype=bool)
        self.target = np.where(self.keep, y, 0.0).T.copy()  # (n, N), zero where left out
        signals, self.outputs, start = [], [], 0
        for j in range(n):
            cols = np.flatnonzero(np.any(Yb[:, j, :] != 0, axis=0))
            signals.append(Yb[:, j, cols].T)
            known_row = -1
            if np.any(known[:, j] != 0):
                signals.append(known[None, :, j])
                known_row = start + len(cols)
            self.outputs.append((slice(start, start + len(cols)), cols, known_row))
            start += len(cols) + (known_row >= 0)
        self.signals = np.ascontiguousarray(np.concatenate(signals)) if start else \
            np.zeros((0, N))

    def filtered(self, cutoff: float | None, order: int) -> np.ndarray:
        """The signals through the model filter, zero at the rows left out (a new array)."""
        from .modelband import filter_model

        if cutoff is None or not len(self.signals):
            out = self.signals.copy()
        else:
            out = np.ascontiguousarray(filter_model(self.signals.T, self.rate, cutoff, order).T)
        for j, (rows, _, known_row) in enumerate(self.outputs):
            stop = rows.stop + (known_row >= 0)
            if not self.keep[:, j].all():
                out[rows.start:stop] *= self.keep[:, j]
        return out

    def blocks(self, F: np.ndarray):
        """Per output: its base columns, its filtered regressor (b_j, N) and the target
        (N,) it is fitted to (output less filtered known bodies), zero at rows left out."""
        for j, (rows, cols, known_row) in enumerate(self.outputs):
            target = self.target[j] if known_row < 0 else self.target[j] - F[known_row]
            yield cols, F[rows], target


class FilteredFit:
    """The least-squares residual of outputs on their model-filtered base regressor, for any
    cutoff (see the module docstring).

    Parameters
    ----------
    rows
        Per recording: the base regressor (N, n, b), the known bodies' output (N, n) and the
        output (N, n), as :func:`~dynid.identify.modelband.model_rows` gives them unfiltered
        (an iterator of them holds one recording's whole regressor at a time).
    rates
        Per recording, its sample rate (Hz).
    keep
        Per recording, the rows fitted (N, n), booleans.
    order
        Order of the model filter.

    Examples
    --------
    >>> rows = [model_rows(regressor, base, rec, rec, None, 4)]        # doctest: +SKIP
    >>> fit = FilteredFit(rows, [rec.rate], [np.ones(rec.output.shape, bool)], 4)  # doctest: +SKIP
    >>> fit.residual(None), fit.residual(2.0)    # unfiltered, filtered at 2 Hz  # doctest: +SKIP
    """

    def __init__(self, rows: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]],
                 rates: Sequence[float], keep: Sequence[np.ndarray], order: int) -> None:
        self.order = int(order)
        self._recordings = [_Recording(Yb, known, y, k, rate) for (Yb, known, y), rate, k
                            in zip(rows, rates, keep, strict=True)]
        self.n_params = self._recordings[0].n_params
        #: Norm of the outputs at the rows fitted.
        self.norm = float(np.sqrt(sum(np.sum(r.target ** 2) for r in self._recordings)))

    def residual(self, cutoff: float | None) -> float:
        """Residual norm of the least-squares fit with the regressor (and the known bodies'
        output) through the model filter at ``cutoff`` Hz (``None``: unfiltered). Call it
        within :func:`~dynid._blas.single_thread`: its products are small."""
        filtered = [r.filtered(cutoff, self.order) for r in self._recordings]
        b = self.n_params
        G, g = np.zeros((b, b)), np.zeros(b)
        for rec, F in zip(self._recordings, filtered, strict=True):
            for cols, X, t in rec.blocks(F):
                G[np.ix_(cols, cols)] += X @ X.T
                g[cols] += X @ t
        scale = np.sqrt(np.diag(G))
        scale[scale == 0] = 1.0
        Gs = G / scale[:, None] / scale
        eig = np.linalg.eigvalsh(Gs)
        if not eig[0] > eig[-1] / MAX_COND:
            return self._qr_residual(filtered)
        factor = scipy.linalg.cho_factor(Gs, check_finite=False)
        theta = scipy.linalg.cho_solve(factor, g / scale, check_finite=False) / scale
        correction = np.zeros(b)
        for rec, F in zip(self._recordings, filtered, strict=True):
            for cols, X, t in rec.blocks(F):
                correction[cols] += X @ (t - theta[cols] @ X)
        theta += scipy.linalg.cho_solve(factor, correction / scale, check_finite=False) / scale
        return float(np.sqrt(sum(np.sum((t - theta[cols] @ X) ** 2)
                                 for rec, F in zip(self._recordings, filtered, strict=True)
                                 for cols, X, t in rec.blocks(F))))

    def _qr_residual(self, filtered: list[np.ndarray]) -> float:
        """The residual norm from the triangular factor of the rows ``[W t]``, compressed
        output by output (for fits too ill-conditioned for the normal equations)."""
        b = self.n_params
        R = np.zeros((0, b + 1))
        for rec, F in zip(self._recordings, filtered, strict=True):
            for cols, X, t in rec.blocks(F):
                block = np.zeros((len(t), b + 1))
                block[:, cols], block[:, b] = X.T, t
                R = stack_triangular(R, block)
        return float(abs(R[b, b])) if R.shape[0] > b else 0.0
