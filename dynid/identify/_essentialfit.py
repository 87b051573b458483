"""Refits of a subset of the base parameters, the others fixed, on one compressed system; and
the validation error of base parameters on another compressed system.

With ``V`` the output weighting of the estimator (``I`` for OLS, the iterated σ² for WLS, the
noise covariance for Gauss–Markov) and ``[R z]`` the triangular factor of the whitened system
``V^{-1/2} [W y]`` (b columns, built once), the estimate over the kept columns ``S`` with the
others ``F`` fixed at ``c`` is::

    θ_S = argmin ‖R_S θ_S − (z − R_F c)‖

a least-squares problem of b rows, whatever the number of samples. Its covariance is the
estimator's own (the sandwich of :meth:`~dynid.identify.system.JointSystem.covariance`
restricted to the kept columns; for Gauss–Markov ``(W_Sᵀ V⁻¹ W_S)⁻¹``), with the outputs'
residual covariance at the restricted estimate.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from .system import JointSystem

__all__ = ["Subsets", "ValidationError", "weighting_of"]


def weighting_of(estimator) -> np.ndarray:
    """The output weighting (n, n) a fitted OLS, WLS or Gauss–Markov estimator used."""
    if estimator.method == "ols":
        return np.eye(len(estimator.noise_covariance_))
    if estimator.method == "wls":
        return np.asarray(estimator.weighting_.covariance, dtype=float)
    return np.asarray(estimator.noise_covariance_, dtype=float)


class Subsets:
    """Weighted least squares over subsets of the base parameters of one compressed system.

    Parameters
    ----------
    system
        The compressed system of the base regressor.
    method
        ``"ols"``, ``"wls"`` or ``"gauss-markov"``: how the covariance is formed.
    weighting
        The output weighting ``V`` (n, n).
    fixed
        The values (b,) the parameters left out are fixed at.
    """

    def __init__(self, system: JointSystem, method: str, weighting: np.ndarray,
                 fixed: np.ndarray):
        self.system, self.method = system, method
        self.weighting = np.asarray(weighting, dtype=float)
        whitened = system.system(covariance=self.weighting)
        self.R, self.z = whitened.R, whitened.qty
        self.fixed = np.asarray(fixed, dtype=float)

    def fit(self, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The estimate (b,) with the parameters not ``kept`` (b booleans) at their fixed
        values, and its covariance (b, b) (zero rows and columns for those left out)."""
        S = np.flatnonzero(kept)
        z = self.z - self.R[:, ~kept] @ self.fixed[~kept]
        theta = self.fixed.copy()
        theta[S] = np.linalg.lstsq(self.R[:, S], z, rcond=None)[0]
        if self.method == "gauss-markov":
            noise = self.weighting
        elif self.method == "ols":
            noise = self.system.residual_covariance(theta)
        else:
            noise = self.system.residual_covariance(theta, weighting=self.weighting)
        U = np.eye(len(theta))[:, S]
        return theta, self.system.covariance(self.weighting, noise, subspace=U)

    def residual_variance(self, theta: np.ndarray, n_free: int) -> float:
        """The unweighted residual variance per row of ``theta`` fitted with ``n_free``
        parameters."""
        dof = int(self.system.rows.sum()) - n_free
        return self.system.system().residual_norm2(theta) / max(dof, 1)


class ValidationError:
    """The overall relative error ``100 ‖Ŵ θ − y‖ / ‖y‖`` (%) of base parameters on a
    compressed validation system (every row, unweighted)."""

    def __init__(self, system: JointSystem):
        self.system = system.system()
        self.norm2 = self.system.residual_norm2(np.zeros(system.n_params))
        if not self.norm2 > 0:
            raise DataError("validation: its outputs are all zero; validate on a recording "
                            "of the robot moving under load")

    def __call__(self, theta: np.ndarray) -> float:
        return float(100 * np.sqrt(self.system.residual_norm2(theta) / self.norm2))

