"""The identification system ``W θ = y``, QR-compressed as it is built.

Rows arrive chunk by chunk. Each chunk is stacked under the current triangular factor and
re-factorized, keeping only ``R`` (p × p), ``Qᵀ y`` (p) and the residual norm, so memory does
not grow with the number of samples::

    [R_k  z_k]          [R_{k+1}  z_{k+1}]
    [W    y  ]  = Q  ·  [0        ρ      ]
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..errors import DataError, SolverError

__all__ = ["LinearSystem"]


class LinearSystem:
    """A least-squares system accumulated in compressed form.

    Parameters
    ----------
    n_params
        Number of unknowns (columns of ``W``).
    """

    def __init__(self, n_params: int):
        self.n_params = int(n_params)
        self._Rz = np.zeros((0, self.n_params + 1))
        self.n_rows = 0
        self._yy = 0.0

    def add(self, W: np.ndarray, y: np.ndarray) -> None:
        """Append rows ``W`` (m, p) and observations ``y`` (m,)."""
        W = np.asarray(W, dtype=float).reshape(-1, self.n_params)
        y = np.asarray(y, dtype=float).reshape(-1)
        if W.shape[0] != y.shape[0]:
            raise DataError(f"W and y: expected the same number of rows, found {W.shape[0]} "
                            f"and {y.shape[0]}")
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(y))):
            raise DataError("W and y: expected finite values; remove non-finite samples first")
        stacked = np.vstack([self._Rz, np.column_stack([W, y])])
        self._Rz = scipy.linalg.qr(stacked, mode="r", check_finite=False)[0][
            :self.n_params + 1]
        self.n_rows += W.shape[0]
        self._yy += float(y @ y)

    @property
    def R(self) -> np.ndarray:
        """Triangular factor (p, p) with ``RᵀR = WᵀW``."""
        return self._Rz[:self.n_params, :self.n_params]

    @property
    def qty(self) -> np.ndarray:
        """``Qᵀ y`` (p,)."""
        return self._Rz[:self.n_params, self.n_params]

    @property
    def y_norm2(self) -> float:
        """``‖y‖²`` of everything added."""
        return self._yy

    def solve(self) -> np.ndarray:
        """Least-squares solution ``argmin ‖W θ − y‖``."""
        R = self.R
        if self.n_rows < self.n_params:
            raise SolverError(f"least squares: {self.n_rows} rows for {self.n_params} unknowns; "
                              "record more samples")
        diag = np.abs(np.diag(R))
        if diag.min() <= 1e-12 * diag.max():
            raise SolverError("least squares: the regressor is rank deficient; use base "
                              "parameters or a more exciting trajectory")
        return scipy.linalg.solve_triangular(R, self.qty)

    def residual_norm2(self, theta: np.ndarray) -> float:
        """``‖W θ − y‖²`` from the compressed form."""
        rho2 = max(self._yy - float(self.qty @ self.qty), 0.0)
        d = self.R @ theta - self.qty
        return float(d @ d) + rho2

    def covariance(self, theta: np.ndarray) -> np.ndarray:
        """``σ² (WᵀW)⁻¹`` with ``σ²`` the residual variance of the fit ``theta``."""
        dof = self.n_rows - self.n_params
        if dof <= 0:
            raise SolverError("covariance: needs more rows than unknowns")
        sigma2 = self.residual_norm2(theta) / dof
        Rinv = scipy.linalg.solve_triangular(self.R, np.eye(self.n_params))
        return sigma2 * Rinv @ Rinv.T
