"""The drive gains' estimate on the compressed system (see :mod:`dynid.identify.gains`).

Each actuator j contributes the triangular factor ``F_j`` of its rows ``[Y_b,j  l_j  i_j]``
(base regressor in torque units, the payload's known torque, the current), so that for any
``z`` the norm ``‖[Y_b,j l_j i_j] z‖`` over every row is ``‖F_j z‖``. The unknowns are
``x = [θ_b; g]``.

1. Equation error, weighted least squares: ``min Σ_j ‖Y_b,j θ_b + l_j − g_j i_j‖² / s_j²``,
   linear in ``x``, ``s_j`` iterated from the residuals. Its covariance says whether the
   payload fixed the scale of the gains.
2. Maximum likelihood for noise in the currents: ``min Σ_j ‖(Y_b,j θ_b + l_j)/g_j − i_j‖² /
   σ_j²`` by Levenberg–Marquardt (:func:`scipy.optimize.least_squares`) from the first
   estimate, ``σ_j`` iterated from the residuals until every one changes by less than ``TOLERANCE``.
   Its covariance is ``(JᵀJ)⁻¹`` of the whitened residual at the solution.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from ..errors import DataError, DynidWarning, SolverError

__all__ = ["GainFit", "fit_gains"]

#: Relative change of every σ below which the passes stop, and the most passes.
TOLERANCE, MAX_PASSES = 1e-3, 20
#: Least effect of the payload on the gains' scale, and of each gain, in σ.
LEAST_EFFECT = 5.0


@dataclass(frozen=True)
class GainFit:
    """``x = [θ_b; g]``, its covariance, each current's noise σ, the payload's effect on the
    gains' scale in σ, and the passes of the σ."""

    x: np.ndarray
    cov: np.ndarray
    sigma: np.ndarray
    effect: float
    passes: int


def fit_gains(factors: Sequence[np.ndarray], counts: np.ndarray, b: int,
              names: Sequence[str]) -> GainFit:
    """Fit ``x = [θ_b; g]`` to the per-actuator factors (b + 2 columns) of ``counts`` rows."""
    n = len(factors)
    F = np.array(factors)                                  # (n, b + 2, b + 2)
    dof = counts * (1.0 - (b + n) / counts.sum())
    # A σ no smaller than rounding of the currents (exact data would divide by zero).
    floor = 1e-13 * np.linalg.norm(F[:, :, b + 1], axis=1) / np.sqrt(np.maximum(counts, 1))
    if np.any(dof <= 0):
        raise DataError(f"drive gains: {', '.join(map(str, counts))} rows per actuator for "
                        f"{b} base parameters and {n} gains; record longer runs")
    x, cov = _equation_error(F, dof, b, floor)
    g, P = x[b:], cov[b:, b:]
    weak = np.abs(g) < LEAST_EFFECT * np.sqrt(np.diag(P))
    # The payload fixes the scale of every gain together: judged on the gains the data
    # determine (all of them weak: no scale at all).
    effect = 0.0 if weak.all() else scale_effect(g[~weak], P[np.ix_(~weak, ~weak)])
    if not effect >= LEAST_EFFECT:
        raise DataError(f"drive gains: the payload changes the currents by {effect:.2g} σ "
                        f"(at least {LEAST_EFFECT:g} needed): the loaded run shows (almost) no "
                        "effect of the payload. Check that it was fixed to the robot for the "
                        "loaded run and that payload= describes it (parent, pose, mass); a "
                        "heavier payload, or a longer run, makes its effect larger")
    if weak.any():
        j = int(np.argmax(weak))
        raise DataError(f"drive gains: the gain of {names[j]} is {g[j]:.3g} ± "
                        f"{np.sqrt(P[j, j]):.2g}, not determined: its current barely depends "
                        "on the motion. Move that actuator more, or check that its current "
                        "was recorded in the right column")
    return _likelihood(F, dof, b, x, floor)


def scale_effect(g: np.ndarray, P: np.ndarray) -> float:
    """The inverse of the relative σ of the gains' geometric mean: how many σ the payload
    fixes their common scale by."""
    w = 1.0 / (len(g) * g)
    return float(1.0 / np.sqrt(max(w @ P @ w, 1e-300)))


def _equation_error(F: np.ndarray, dof: np.ndarray, b: int, floor: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares of the equation error, its σ iterated; ``x`` and ``(MᵀM)⁻¹``."""
    n = len(F)
    M = np.zeros((n, b + 2, b + n))
    M[:, :, :b] = F[:, :, :b]
    M[np.arange(n), :, b + np.arange(n)] = -F[:, :, b + 1]
    c = F[:, :, b]
    s = np.ones(n)
    for _ in range(MAX_PASSES):
        Mw, cw = (M / s[:, None, None]).reshape(-1, b + n), (c / s[:, None]).reshape(-1)
        Q, R = np.linalg.qr(Mw)
        if np.abs(np.diag(R)).min() <= 1e-12 * np.abs(np.diag(R)).max():
            raise SolverError("drive gains: the runs do not determine the base parameters and "
                              "the gains together; record a more exciting trajectory")
        x = -scipy.linalg.solve_triangular(R, Q.T @ cw)
        new = np.sqrt(np.sum((np.einsum("jrk,k->jr", M, x) + c) ** 2, axis=1) / dof)
        new = np.maximum(new, floor * np.abs(x[b:]))
        done = np.all(np.abs(new / s - 1) < TOLERANCE)
        s = new
        if done:
            break
    Rinv = scipy.linalg.solve_triangular(R, np.eye(b + n))
    return x, Rinv @ Rinv.T


def _likelihood(F: np.ndarray, dof: np.ndarray, b: int, x0: np.ndarray, floor: np.ndarray
                ) -> GainFit:
    """Maximum likelihood for noise in the currents, from ``x0``; σ iterated."""
    n = len(F)
    A, load, current = F[:, :, :b], F[:, :, b], F[:, :, b + 1]
    rows = np.arange(n)

    def parts(x):
        torque = np.einsum("jrk,k->jr", A, x[:b]) + load      # (n, b + 2)
        return torque, x[b:]

    def residual(x, sigma):
        torque, g = parts(x)
        return ((torque / g[:, None] - current) / sigma[:, None]).reshape(-1)

    def jacobian(x, sigma):
        torque, g = parts(x)
        J = np.zeros((n, b + 2, b + n))
        J[:, :, :b] = A / (g * sigma)[:, None, None]
        J[rows, :, b + rows] = -torque / (g**2 * sigma)[:, None]
        return J.reshape(-1, b + n)

    x = np.array(x0, dtype=float)
    torque, g = parts(x)
    sigma = np.maximum(np.sqrt(np.sum((torque / g[:, None] - current) ** 2, axis=1) / dof),
                       floor)
    passes = 0
    while passes < MAX_PASSES:
        passes += 1
        out = scipy.optimize.least_squares(residual, x, jac=jacobian, args=(sigma,),
                                           method="lm", x_scale="jac", xtol=1e-12,
                                           ftol=1e-12, gtol=1e-12)
        if not out.success or not np.all(np.isfinite(out.x)):
            raise SolverError(f"drive gains: the fit did not converge ({out.message}); check "
                              "the runs' currents and the payload's description")
        x = out.x
        e = residual(x, sigma).reshape(n, -1) * sigma[:, None]
        new = np.maximum(np.sqrt(np.sum(e**2, axis=1) / dof), floor)
        done = np.all(np.abs(new / sigma - 1) < TOLERANCE)
        sigma = new
        if done:
            break
    if not done:
        warnings.warn(f"drive gains: the currents' σ did not settle in {MAX_PASSES} passes; "
                      "their uncertainty is approximate", DynidWarning, stacklevel=5)
    R = np.linalg.qr(jacobian(x, sigma), mode="r")
    Rinv = scipy.linalg.solve_triangular(R, np.eye(b + n))
    cov = Rinv @ Rinv.T
    return GainFit(x, cov, sigma, scale_effect(x[b:], cov[b:, b:]), passes)
