"""The identification system ``W θ = y``, QR-compressed as it is built.

Rows arrive chunk by chunk. Each chunk is stacked under the current triangular factor and
re-factorized, keeping only ``R`` (p × p), ``Qᵀ y`` (p) and the residual norm, so memory does
not grow with the number of samples::

    [R_k  z_k]          [R_{k+1}  z_{k+1}]
    [W    y  ]  = Q  ·  [0        ρ      ]

Two forms:

* :class:`JointSystem` keeps each sample's n output rows *side by side*, as one row
  ``[Y_1 … Y_n  y_1 … y_n]`` of length ``n (p + 1)``. Its factor holds every cross product
  ``W_iᵀ W_j``, so a full output covariance can be applied afterwards
  (:meth:`JointSystem.system`), and per-output residuals and their covariance are available for
  any ``θ`` (:meth:`JointSystem.residual_covariance`), without a second pass over the data.
* :class:`LinearSystem` is one stack of rows in compressed form, the triangular factor of
  ``[W y]``: what :meth:`JointSystem.system` gives, and what the estimators solve.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .. import _validate
from .._blas import single_threaded
from .._linalg import stack_triangular
from ..errors import DataError, SolverError

__all__ = ["JointSystem", "LinearSystem", "RankDeficient"]


class RankDeficient(SolverError):
    """The data do not determine every unknown: ``columns`` are those of the least
    determined combination, largest first."""

    def __init__(self, columns: np.ndarray):
        self.columns = [int(c) for c in columns]
        super().__init__("least squares: the data do not determine every unknown (the "
                         "regressor is rank deficient); record a more exciting trajectory, "
                         "or identify fewer parameters")


class LinearSystem:
    """A least-squares system ``W θ = y`` in compressed form.

    Parameters
    ----------
    Rz
        Triangular factor of ``[W y]`` (``RᵀR = [W y]ᵀ[W y]``), (p + 1) columns; its first
        p + 1 rows are kept.
    n_rows
        Number of rows of ``W``.
    """

    def __init__(self, Rz: np.ndarray, n_rows: int):
        self.n_params = Rz.shape[1] - 1
        self._Rz = np.array(Rz[:Rz.shape[1]], dtype=float)
        self.n_rows = int(n_rows)
        self._yy = float(self._Rz[:, -1] @ self._Rz[:, -1])

    @property
    def R(self) -> np.ndarray:
        """Triangular factor (p, p) with ``RᵀR = WᵀW``."""
        R = np.zeros((self.n_params, self.n_params))
        k = min(self._Rz.shape[0], self.n_params)
        R[:k] = self._Rz[:k, :self.n_params]
        return R

    @property
    def qty(self) -> np.ndarray:
        """``Qᵀ y`` (p,)."""
        z = np.zeros(self.n_params)
        k = min(self._Rz.shape[0], self.n_params)
        z[:k] = self._Rz[:k, self.n_params]
        return z

    def solve(self) -> np.ndarray:
        """Least-squares solution ``argmin ‖W θ − y‖``."""
        R = self.R
        if self.n_rows < self.n_params:
            raise SolverError(f"least squares: {self.n_rows} rows for {self.n_params} unknowns; "
                              "record more samples")
        norms = np.linalg.norm(R, axis=0)
        if np.any(norms == 0) or np.any(~np.isfinite(R)):
            raise RankDeficient(np.flatnonzero(norms == 0)[:3])
        _, s, Vt = np.linalg.svd(R / norms)  # column-normalized: units do not matter
        if s[-1] <= 1e-10 * s[0]:
            raise RankDeficient(np.argsort(-np.abs(Vt[-1]))[:3])
        return scipy.linalg.solve_triangular(R, self.qty)

    def residual_norm2(self, theta: np.ndarray) -> float:
        """``‖W θ − y‖²`` from the compressed form."""
        rho2 = max(self._yy - float(self.qty @ self.qty), 0.0)
        d = self.R @ theta - self.qty
        return float(d @ d) + rho2

    def inverse_information(self) -> np.ndarray:
        """``(WᵀW)⁻¹`` (p, p), from the triangular factor."""
        Rinv = scipy.linalg.solve_triangular(self.R, np.eye(self.n_params))
        return Rinv @ Rinv.T


class JointSystem:
    """Samples of n outputs, compressed side by side (see the module docstring).

    Parameters
    ----------
    n_outputs
        Outputs per sample (n).
    n_params
        Unknowns (p).

    Memory is ``(n (p + 1))²`` numbers whatever the number of samples.
    """

    def __init__(self, n_outputs: int, n_params: int):
        self.n_outputs, self.n_params = int(n_outputs), int(n_params)
        self._R = np.zeros((0, self.n_outputs * (self.n_params + 1)))
        self.n_samples = 0

    @single_threaded
    def add(self, Y: np.ndarray, y: np.ndarray) -> None:
        """Append samples: regressor rows ``Y`` (m, n, p) and outputs ``y`` (m, n)."""
        n, p = self.n_outputs, self.n_params
        Y = np.asarray(Y, dtype=float)
        y = np.asarray(y, dtype=float)
        if Y.ndim != 3 or Y.shape[1:] != (n, p) or y.shape != Y.shape[:2]:
            raise DataError(f"Y and y: expected shapes (m, {n}, {p}) and (m, {n}), found "
                            f"{Y.shape} and {y.shape}")
        if not (np.all(np.isfinite(Y)) and np.all(np.isfinite(y))):
            raise DataError("Y and y: expected finite values; remove non-finite samples first")
        if not len(y):
            return
        self._R = stack_triangular(self._R, np.column_stack([Y.reshape(len(y), n * p), y]))
        self.n_samples += len(y)

    def _blocks(self) -> list[np.ndarray]:
        """Per output i, the factor's columns ``[W_i y_i]`` (r, p + 1)."""
        n, p = self.n_outputs, self.n_params
        return [np.column_stack([self._R[:, i * p:(i + 1) * p], self._R[:, n * p + i]])
                for i in range(n)]

    @single_threaded
    def system(self, *, covariance: np.ndarray | None = None) -> LinearSystem:
        """The stacked system of every output row, whitened by an output covariance (n, n)
        when given (``C⁻¹`` applied to each sample's rows and outputs, ``C Cᵀ = covariance``,
        so the whitened noise has unit covariance)."""
        n = self.n_outputs
        T = np.eye(n) if covariance is None else _validate.whitener(covariance, "covariance", n)
        return LinearSystem(self._combined(T), self.n_samples * self.n_outputs)

    @single_threaded
    def factors(self, weighting: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Triangular factors ``R_v`` and ``R_g`` (p columns) with ``R_vᵀR_v = Wᵀ V⁻¹ W`` and
        ``R_gᵀR_g = Wᵀ V⁻¹ Σ V⁻¹ W``, for an estimate weighted by the output covariance
        ``weighting`` (V, n × n) when each sample's output noise has covariance ``noise``
        (Σ)."""
        n = self.n_outputs
        Rv = self.system(covariance=weighting).R
        Vi = np.linalg.inv(np.asarray(weighting, dtype=float))
        middle = Vi @ np.asarray(noise, dtype=float) @ Vi
        if middle.shape != (n, n):
            raise DataError(f"noise: expected an ({n}, {n}) covariance, found {middle.shape}")
        d, U = np.linalg.eigh((middle + middle.T) / 2)
        T = np.sqrt(np.clip(d, 0.0, None))[:, None] * U.T  # TᵀT = V⁻¹ Σ V⁻¹
        return Rv, self._combined(T)[:, :self.n_params]

    def covariance(self, weighting: np.ndarray, noise: np.ndarray,
                   subspace: np.ndarray | None = None) -> np.ndarray:
        """Covariance (p, p) of the estimate weighted by ``weighting`` (V) when the output
        noise has covariance ``noise`` (Σ): ``(Wᵀ V⁻¹ W)⁻¹ Wᵀ V⁻¹ Σ V⁻¹ W (Wᵀ V⁻¹ W)⁻¹`` (the
        sandwich; ``(Wᵀ Σ⁻¹ W)⁻¹`` when ``V = Σ``), from triangular factors rather than normal
        equations. With ``subspace`` (p, r), orthonormal columns ``U``: the covariance of the
        estimate restricted to ``θ = θ₀ + U α`` (the same sandwich in ``α``, mapped back)."""
        Rv, Rg = self.factors(weighting, noise)
        if subspace is not None:
            U = np.asarray(subspace, dtype=float)
            Rv, Rg = scipy.linalg.qr(Rv @ U, mode="r")[0][:U.shape[1]], Rg @ U
        Y = scipy.linalg.solve_triangular(Rv, Rg.T, trans="T")
        Z = scipy.linalg.solve_triangular(Rv, Y)  # Rv⁻¹ Rv⁻ᵀ Rgᵀ
        P = Z @ Z.T
        return P if subspace is None else U @ P @ U.T

    def _combined(self, T: np.ndarray) -> np.ndarray:
        """Triangular factor of the rows ``Σ_i T_li [W_i y_i]`` of every output l."""
        blocks = self._blocks()
        n = self.n_outputs
        stacked = np.vstack([sum(T[l, i] * blocks[i] for i in range(n) if T[l, i] != 0.0)
                             if np.any(T[l] != 0.0) else np.zeros_like(blocks[0])
                             for l in range(n)])
        return stack_triangular(np.zeros((0, self.n_params + 1)), stacked)

    def residuals_gram(self, theta: np.ndarray) -> np.ndarray:
        """``EᵀE`` (n, n) of the residuals ``e_i = W_i θ − y_i`` of each output."""
        theta = np.asarray(theta, dtype=float)
        F = np.column_stack([B[:, :-1] @ theta - B[:, -1] for B in self._blocks()])
        return F.T @ F

    @single_threaded
    def leverage(self, weighting: np.ndarray) -> np.ndarray:
        """Each output's share ``h_j`` (n,) of the leverage of the fit weighted by the output
        covariance ``weighting`` (V): the trace of output j's block of the hat matrix
        ``H = W (Wᵀ V⁻¹ W)⁻¹ Wᵀ V⁻¹``, ``h_j = Σ_k (V⁻¹)_kj tr(P W_kᵀ W_j)`` with
        ``P = (Wᵀ V⁻¹ W)⁻¹``; they sum to p.

        When V is the noise covariance, output j's residual sum of squares has expectation
        ``σ_j² (N − h_j)``: an output weighted heavily takes a larger share of the fit and
        leaves a residual smaller than its noise by that share.
        """
        n, p = self.n_outputs, self.n_params
        Rv = self.system(covariance=weighting).R
        Vi = np.linalg.inv(np.asarray(weighting, dtype=float))
        X = [scipy.linalg.solve_triangular(Rv, B[:, :p].T, trans="T") for B in self._blocks()]
        traces = np.array([[np.sum(X[k] * X[j]) for j in range(n)] for k in range(n)])
        return np.sum(Vi * traces, axis=0)

    def residual_covariance(self, theta: np.ndarray, weighting: np.ndarray | None = None
                            ) -> np.ndarray:
        """Covariance (n, n) of the output residuals of ``theta``.

        Without ``weighting``, the degrees of freedom of a fit of p parameters are shared
        equally by the outputs (``N − p/n`` each). With the output covariance (n, n) that
        weighted the fit of ``theta``, each output has its own, ``N − h_j`` with ``h_j`` its
        share of the leverage (:meth:`leverage`): unbiased when the weighting is the noise's
        covariance, as it is at the fixed point of iterated weighted least squares.
        """
        n, N = self.n_outputs, self.n_samples
        dof = np.full(n, N - self.n_params / n) if weighting is None else \
            N - self.leverage(weighting)
        if np.any(dof <= 0):
            raise SolverError(f"residual covariance: {N} samples of {n} outputs for "
                              f"{self.n_params} parameters; record more samples")
        return self.residuals_gram(theta) / np.sqrt(np.outer(dof, dof))
