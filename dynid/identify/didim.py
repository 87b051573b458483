"""DIDIM: output error on the simulated closed loop (Gautier, Janot, Vandanjon).

The measured output ``y`` (the drives' command: current or torque) is compared with the
output ``u_s(θ)`` that the drives applied in the closed loop simulated with parameters θ (same
reference, same controller, no noise), both filtered and decimated as the data's output is and
on the data's rows; the estimate minimises the output error, each output weighted by
``1/σ_j``::

    θ̂ = argmin Σ_j ‖y_j − u_s,j(θ)‖² / σ_j²

by Levenberg–Marquardt (:func:`scipy.optimize.least_squares`), each evaluation one closed-loop
simulation. The simulated run depends on the reference and θ only, not on the noise the drives
fed back, and the two outputs compared went through the same filter: neither the noise nor the
filtering of the positions biases the estimate.

The solver sees the output error in a fixed basis: with ``Y₀ = Q₀ R₀`` the weighted base
regressor at the states simulated with the start θ₀ (processed as the data are), the residual
is ``(Q₀ᵀ r, ρ)``, ``r`` the weighted output error and ``ρ² = ‖r‖² − ‖Q₀ᵀ r‖²``; its norm is the
output error's, and ``Q₀ᵀ r = R₀⁻ᵀ Y₀ᵀ r`` is accumulated chunk by chunk, so memory does not
grow with the samples. The search's Jacobian is by finite differences of the simulated output
error (``jacobian="finite-differences"``, b + 1 simulations a Jacobian), or DIDIM's, the
regressor at the simulated states (``"regressor"``: ``−(R₀, 0)``, the sensitivity of the
simulated states to θ left out, off by a factor of 0.2 to 3 along some parameters for drives
of moderate bandwidth; its fixed point ``Q₀ᵀ r = 0`` is not the output error's minimum and
keeps a part of the bias). After the search, the Jacobian ``J`` at the estimate is taken by
finite differences (b simulations, steps of a tenth of each parameter's σ).

The covariance is that of ``−J⁻¹ Q₀ᵀ e`` (``J`` the square part; the sensitivity's part outside
the basis is reported as ``solver["jacobian_outside_basis"]``): ``Q₀ᵀ e = R₀⁻ᵀ Y₀ᵀ e`` with
``Y₀ᵀ e``'s covariance from the output error's autocovariance (:mod:`dynid.identify.
_coloured`), since the output error of a closed loop is far from white.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.optimize

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
from .system import JointSystem

__all__ = ["DIDIM"]


class DIDIM(Estimator):
    """DIDIM: the output error of the simulated closed loop, minimised over the parameters.

    Parameters
    ----------
    simulator
        The experiment's closed loop: standard parameters (p,) → one noise-free recording per
        recording of the data (e.g. :class:`~dynid.hardware.ClosedLoop`).
    start
        The first estimate: ``"wls"`` (default), ``"ols"``, or an estimator (e.g.
        :class:`~dynid.identify.PhysicallyConsistent`, whose model is stable to simulate).
    weighted
        Weight each output by ``1/σ_j``, the σ iterated from least-squares residuals (as
        :class:`~dynid.identify.WLS`); else unweighted.
    jacobian
        The search's Jacobian: ``"finite-differences"`` (b + 1 simulations each; the output
        error's minimum) or ``"regressor"`` (DIDIM's: the regressor at the simulated states,
        fewer simulations, a fixed point ``Q₀ᵀ r = 0`` that is not quite the minimum).
    max_evaluations
        Most closed-loop simulations of the search (default: 4 (b + 1) + 10 with finite
        differences, 30 with the regressor Jacobian); b + 1 more follow it (the covariance).
    tolerance
        The search stops when a step lowers the output error by less than a move of the
        parameters by this many of their standard deviations would (relative reduction
        ``tolerance² / rows``, the ``ftol`` of :func:`scipy.optimize.least_squares`).
    segment
        Lags (decimated samples) of the output error's autocovariance in the covariance.

    Examples
    --------
    >>> loop = ClosedLoop(robot, ref, 6.0, gains=sim.gains, control_rate=250)
    >>> est = DIDIM(simulator=loop).fit(IdentificationData(robot, run))
    >>> est.result_.solver["evaluations"], est.result_.training_rmse   # output error
    """

    method = "didim"

    def __init__(self, *, simulator, start="wls", weighted: bool = True,
                 jacobian: str = "finite-differences", max_evaluations: int | None = None,
                 tolerance: float = 0.01, segment: int = SEGMENT):
        if jacobian not in ("regressor", "finite-differences"):
            raise DataError(f"DIDIM: jacobian: expected 'finite-differences' or 'regressor', "
                            f"found {jacobian!r}; e.g. DIDIM(simulator=loop, "
                            "jacobian='finite-differences')")
        self.jacobian = jacobian
        check_simulator(simulator, "DIDIM")
        if max_evaluations is not None and (isinstance(max_evaluations, bool) or not
                                            isinstance(max_evaluations, int) or
                                            max_evaluations < 2):
            raise DataError(f"DIDIM: max_evaluations: expected a whole number ≥ 2, found "
                            f"{max_evaluations!r}; e.g. max_evaluations=30")
        if not (isinstance(tolerance, int | float) and 0 < tolerance < 1):
            raise DataError(f"DIDIM: tolerance: expected a number of standard deviations in "
                            f"(0, 1), found {tolerance!r}; e.g. tolerance=0.01")
        self.simulator, self.start, self.weighted = simulator, start, weighted
        self.max_evaluations, self.tolerance = max_evaluations, tolerance
        self.segment = check_segment(segment, "DIDIM")

    def get_params(self) -> dict:
        return {**common_params(self), "jacobian": self.jacobian,
                "max_evaluations": self.max_evaluations}

    def _estimate(self, data):
        data = check_data(data, "DIDIM")
        theta0, sigma, start = start_estimate(data, self.start, self.weighted, "DIDIM")
        n, b = data.robot.n, data.base.rank
        w = 1.0 / sigma
        first = simulated_states(data, self.simulator, theta0, name="DIDIM", iteration=0)
        # The fixed basis: the weighted regressor at the first simulated states, Y₀ = Q₀ R₀.
        basis = JointSystem(n, b)
        for Y0, _, keep in data.rows(states=first):
            basis.add(Y0 * w[:, None], np.zeros(keep.shape), keep)
        R0 = basis.system().R
        evaluations = 0
        last: dict = {}
        best: dict = {}

        def error(theta):
            """The weighted output error in the fixed basis, ``(Q₀ᵀ r, ρ)``."""
            nonlocal evaluations
            if evaluations >= most:
                raise _Exhausted
            evaluations += 1
            states = simulated_states(data, self.simulator, theta, name="DIDIM",
                                      iteration=evaluations)
            at = [f.with_signals(output=s.output) for f, s in zip(first, states, strict=True)]
            proj, total = np.zeros(b), 0.0
            gram, rows = np.zeros((n, n)), np.zeros((n, n))
            residuals = []
            for rec, a in zip(data.processed, at, strict=True):
                parts = []
                for Y0, r, keep in data.rows([rec], states=[a], output_error=True):
                    r = np.where(keep, r, 0.0)
                    rw = r * w
                    parts.append(rw)
                    proj += np.einsum("mjp,mj->p", Y0 * w[:, None], rw)
                    total += float(np.sum(rw**2))
                    gram += r.T @ r
                    rows += keep.T.astype(float) @ keep.astype(float)
                residuals.append(np.concatenate(parts))
            p = scipy.linalg.solve_triangular(R0, proj, trans="T")
            last.update(theta=np.array(theta), gram=gram, rows=rows, total=total,
                        residuals=residuals)
            if total < best.get("total", np.inf):
                best.update(theta=np.array(theta), total=total)
            last["vector"] = np.append(p, np.sqrt(max(total - float(p @ p), 0.0)))
            return last["vector"]

        # A move of the parameters by ``tolerance`` of their σ lowers the cost by about
        # tolerance² of its value over the rows (the cost is the noise's, about 1 a row).
        rows_total = int(data.system().rows.sum())
        most = self.max_evaluations or (30 if self.jacobian == "regressor" else 4 * (b + 1) + 10)
        # Finite-difference steps of the final Jacobian: a tenth of each parameter's σ at unit
        # weighted noise (far above the simulation's rounding, far below its nonlinearity).
        steps = 0.1 * np.sqrt(np.diag(scipy.linalg.cho_solve((R0, False), np.eye(b))))

        def sensitivity(theta, r):
            """The output error's Jacobian in the fixed basis, (b + 1, b), by forward
            differences from ``r`` at ``theta`` (b simulations)."""
            return np.column_stack([(error(theta + h * e) - r) / h
                                    for h, e in zip(steps, np.eye(b), strict=True)])

        fixed = -np.vstack([R0, np.zeros((1, b))])
        jac = "2-point" if self.jacobian == "finite-differences" else (lambda theta: fixed)
        try:
            fit = scipy.optimize.least_squares(error, theta0, jac=jac, method="lm",
                                               x_scale="jac", ftol=max(self.tolerance**2 /
                                                                       rows_total, 1e-14),
                                               xtol=1e-8, gtol=1e-12)
        except _Exhausted:
            warnings.warn(f"DIDIM: the output error did not settle in {most} simulations; "
                          "raise max_evaluations, loosen tolerance, or start from another "
                          "estimate (start=PhysicallyConsistent())", DynidWarning, stacklevel=4)
            fit = scipy.optimize.OptimizeResult(x=best["theta"], status=0, cost=best["total"] / 2,
                                                message="max_evaluations reached", jac=None)
        if fit.status < 0:
            raise SolverError(f"DIDIM: Levenberg–Marquardt failed ({fit.message}); start from "
                              "another estimate, e.g. DIDIM(simulator=loop, start="
                              "PhysicallyConsistent())")
        # The Jacobian at the estimate by finite differences, for the covariance.
        most = evaluations + b + 1
        theta = fit.x
        if last.get("theta") is None or not np.array_equal(last["theta"], theta):
            error(theta)
        final = dict(last)
        J = sensitivity(theta, final["vector"])
        last.clear()
        last.update(final)
        rows = last["rows"]
        dof = int(np.trace(rows)) - b
        if dof <= 0:
            raise DataError(f"DIDIM: {int(np.trace(rows))} rows for {b} base parameters; "
                            "record more samples")
        cov = _covariance(data, first, w, R0, J[:b], last["residuals"], self.segment)
        outside = np.linalg.norm(J[b]) / max(np.linalg.norm(J[:b]), 1e-300)
        with np.errstate(invalid="ignore", divide="ignore"):
            noise = np.where(rows > 0, last["gram"] / np.maximum(rows, 1) * (1 - b / np.trace(
                rows)), 0.0)
        solver = {"start": start, "jacobian": self.jacobian, "evaluations": evaluations,
                  "status": int(fit.status), "message": fit.message,
                  "converged": bool(fit.status > 0), "cost": float(last["total"]),
                  "sigma": sigma.tolist(), "jacobian_outside_basis": float(outside)}
        return {"base_params": theta, "base_cov": (cov + cov.T) / 2,
                "noise_covariance": noise, "solver": solver, "colour_in_covariance": True,
                "covariance_method": "output-error"}


def _covariance(data, first, w: np.ndarray, R0: np.ndarray, J: np.ndarray,
                residuals: list[np.ndarray], segment: int) -> np.ndarray:
    """The estimate's covariance under the output error's autocovariance: with the output's
    sensitivity in the fixed basis ``Q₀ J`` (J (b, b) by finite differences), the error is
    ``−J⁻¹ Q₀ᵀ e = −J⁻¹ R₀⁻ᵀ Y₀ᵀ e``, whose covariance takes ``Y₀ᵀ e``'s from
    :func:`~dynid.identify._coloured.sandwich`."""
    b = R0.shape[0]
    B = coloured_information(data, first, w, residuals, segment)
    M = np.linalg.solve(J, scipy.linalg.solve_triangular(R0, np.eye(b), trans="T"))
    cov = M @ B @ M.T
    return (cov + cov.T) / 2


class _Exhausted(Exception):
    """The simulations allowed are used up."""
