"""IDIM-IV: instrumental variables from the simulated closed loop (Gautier, Janot, Vandanjon).

With ``W`` the base regressor at the measured (processed) states, ``y`` the measured output and
``Z`` the same regressor at the states of the closed loop simulated with the previous
estimate (processed alike, the same rows kept), each output's rows weighted by ``1/σ_j``::

    θ_k = (Zᵀ W)⁻¹ Zᵀ y

The simulated states carry none of the position noise that the drives fed back, so ``Z`` is
uncorrelated with the output error ``e = y − W θ``, while it stays close to ``W``: the estimate
is consistent where least squares is biased. The iteration starts from least squares and stops
when no parameter moves by more than ``tolerance`` of its standard deviation.

``ZᵀW``, ``Zᵀy`` and, per output j, ``Z_jᵀZ_j``, ``W_jᵀW_j``, ``W_jᵀy_j`` and ``y_jᵀy_j`` are
accumulated chunk by chunk: memory is ``(n + 1) b²`` numbers whatever the number of samples.
The covariance is the sandwich of the estimating equation ``Σ_t g_t = 0``,
``g_t = Σ_j z_tj e_tj`` (sample t's instruments times its output errors, weighted rows)::

    P = (ZᵀW)⁻¹ B (ZᵀW)⁻ᵀ,     B = Σ_t Σ_s Z_tᵀ Γ(t − s) Z_s

with ``Γ`` the output error's autocovariance (n, n) at the final estimate, across outputs too,
by Welch's method over ``segment`` lags (:mod:`dynid.identify._coloured`), computed in one more
pass. The output error of closed-loop data is coloured (the positions' noise, differentiated,
and the drives' response to it) and its power at the instruments' low frequencies is far
below its average: the white-noise form ``Σ_j s_j² Z_jᵀ Z_j`` and Newey–West's lag window over
``g`` would both overstate σ several times.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import DataError, DynidWarning, SolverError
from ._coloured import SEGMENT, check_segment
from .closedloop import (
    check_data,
    check_simulator,
    coloured_information,
    common_params,
    simulated_states,
    start_estimate,
)
from .estimators import Estimator

__all__ = ["InstrumentalVariables"]


class InstrumentalVariables(Estimator):
    """IDIM-IV: least squares with instruments from the simulated closed loop.

    Parameters
    ----------
    simulator
        The experiment's closed loop: standard parameters (p,) → one noise-free recording per
        recording of the data (e.g. :class:`~dynid.hardware.ClosedLoop`).
    start
        The first estimate: ``"wls"`` (default), ``"ols"``, or an estimator (e.g.
        :class:`~dynid.identify.PhysicallyConsistent`, whose model is stable to simulate).
    weighted
        Weight each output's rows by ``1/σ_j``, the σ iterated from least-squares residuals
        (as :class:`~dynid.identify.WLS`); else unweighted.
    max_iterations
        Most simulations (each gives one estimate).
    tolerance
        The iteration stops when every base parameter moves by less than this many of its
        standard deviations.
    segment
        Lags (decimated samples) of the output error's autocovariance in the covariance.

    Examples
    --------
    >>> loop = ClosedLoop(robot, ref, 6.0, gains=sim.gains, control_rate=250)
    >>> est = InstrumentalVariables(simulator=loop).fit(IdentificationData(robot, run))
    >>> est.base_params_, np.sqrt(np.diag(est.base_cov_))
    >>> est.result_.solver["iterations"], est.result_.solver["converged"]
    """

    method = "iv"

    def __init__(self, *, simulator, start="wls", weighted: bool = True,
                 max_iterations: int = 20, tolerance: float = 0.01, segment: int = SEGMENT):
        check_simulator(simulator, "InstrumentalVariables")
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or \
                max_iterations < 1:
            raise DataError(f"InstrumentalVariables: max_iterations: expected a whole number "
                            f"≥ 1, found {max_iterations!r}; e.g. max_iterations=20")
        if not (isinstance(tolerance, int | float) and tolerance > 0):
            raise DataError(f"InstrumentalVariables: tolerance: expected a number of standard "
                            f"deviations > 0, found {tolerance!r}; e.g. tolerance=0.01")
        self.simulator, self.start, self.weighted = simulator, start, weighted
        self.max_iterations, self.tolerance = max_iterations, tolerance
        self.segment = check_segment(segment, "InstrumentalVariables")

    def get_params(self) -> dict:
        return {**common_params(self), "max_iterations": self.max_iterations}

    def _estimate(self, data):
        data = check_data(data, "InstrumentalVariables")
        theta, sigma, start = start_estimate(data, self.start, self.weighted,
                                             "InstrumentalVariables")
        changes = []
        for k in range(1, self.max_iterations + 1):
            states = simulated_states(data, self.simulator, theta,
                                      name="InstrumentalVariables", iteration=k)
            new, cov, noise = _iv_step(data, states, sigma)
            changes.append(float(np.max(np.abs(new - theta) / np.sqrt(np.diag(cov)))))
            theta = new
            if changes[-1] < self.tolerance:
                break
        cov = _coloured_covariance(data, states, sigma, theta, self.segment)
        converged = changes[-1] < self.tolerance
        if not converged:
            warnings.warn(f"InstrumentalVariables: the estimate did not settle in "
                          f"{self.max_iterations} iterations (the last moved a parameter by "
                          f"{changes[-1]:.3g} σ, tolerance {self.tolerance}); raise "
                          "max_iterations, loosen tolerance, or start from another estimate "
                          "(start=PhysicallyConsistent())", DynidWarning, stacklevel=4)
        solver = {"start": start, "iterations": len(changes), "converged": converged,
                  "changes": changes, "sigma": sigma.tolist()}
        return {"base_params": theta, "base_cov": cov, "noise_covariance": noise,
                "solver": solver, "colour_in_covariance": True, "covariance_method": "instrumental"}


def _iv_step(data, states, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One IV estimate with instruments at ``states``: the estimate (b,), its covariance
    (b, b) and the output noise covariance (n, n) (diagonal, in the output's units)."""
    n, b = data.robot.n, data.base.rank
    ZW, Zy = np.zeros((b, b)), np.zeros(b)
    ZZ, WW = np.zeros((n, b, b)), np.zeros((n, b, b))
    Wy, yy, rows = np.zeros((n, b)), np.zeros(n), np.zeros(n)
    w = 1.0 / sigma
    for (W, y, keep), (Z, _, _) in zip(data.rows(), data.rows(states=states), strict=True):
        mask = keep.astype(float)
        W, Z = W * w[:, None], Z * (w * mask)[..., None]
        y = y * w * mask
        ZW += np.einsum("mjp,mjq->pq", Z, W)
        Zy += np.einsum("mjp,mj->p", Z, y)
        ZZ += np.einsum("mjp,mjq->jpq", Z, Z)
        Wm = W * mask[..., None]
        WW += np.einsum("mjp,mjq->jpq", Wm, Wm)
        Wy += np.einsum("mjp,mj->jp", Wm, y)
        yy += np.einsum("mj,mj->j", y, y)
        rows += keep.sum(axis=0)
    scale = np.sqrt(np.abs(np.diag(ZW)))
    scale[scale == 0] = 1.0
    A = ZW / scale[:, None] / scale
    s = np.linalg.svd(A, compute_uv=False)
    if not s[-1] > 1e-12 * s[0]:
        raise SolverError("InstrumentalVariables: the instruments do not determine every base "
                          "parameter (ZᵀW is singular); record a more exciting trajectory")
    Ainv = np.linalg.inv(A) / scale[:, None] / scale  # (ZᵀW)⁻¹
    theta = Ainv @ Zy
    rss = yy - 2 * Wy @ theta + np.einsum("p,jpq,q->j", theta, WW, theta)
    dof = rows * (1.0 - b / rows.sum())
    if np.any(dof <= 0):
        raise DataError(f"InstrumentalVariables: {int(rows.sum())} rows for {b} base "
                        "parameters; record more samples")
    s2 = np.maximum(rss, 0.0) / dof
    cov = Ainv @ np.einsum("j,jpq->pq", s2, ZZ) @ Ainv.T
    return theta, (cov + cov.T) / 2, np.diag(s2 * sigma**2)


def _coloured_covariance(data, states, sigma: np.ndarray, theta: np.ndarray,
                        segment: int = SEGMENT) -> np.ndarray:
    """The covariance of the IV estimate ``theta`` with instruments at ``states`` under the
    output error's autocovariance (see the module docstring)."""
    b = data.base.rank
    w = 1.0 / sigma
    ZW, residuals = np.zeros((b, b)), []
    for rec, at in zip(data.processed, states, strict=True):
        parts = []
        for (W, y, keep), (Z, _, _) in zip(data.rows([rec]), data.rows([rec], states=[at]),
                                           strict=True):
            Zw = Z * (w * keep)[..., None]
            ZW += np.einsum("mjp,mjq->pq", Zw, W * w[:, None])
            parts.append((y - W @ theta) * w * keep)
        residuals.append(np.concatenate(parts))
    S = coloured_information(data, states, w, residuals, segment)
    Ainv = np.linalg.inv(ZW)
    cov = Ainv @ S @ Ainv.T
    return (cov + cov.T) / 2
