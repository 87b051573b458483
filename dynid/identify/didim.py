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
grow with the samples. The Jacobian is either DIDIM's, the regressor at the simulated states
(``jacobian="regressor"``: ``−(R₀, 0)``, the sensitivity of the simulated states to θ left
out, which holds while the drives track the reference closely within the data's bandwidth),
or finite differences of the simulated output error (``"finite-differences"``: b + 1
simulations a Jacobian, exact). The covariance is ``s² (JᵀJ)⁻¹`` at the final Jacobian's
square part ``J``, ``s²`` the weighted output error per degree of freedom.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.optimize

from ..errors import DataError, DynidWarning, SolverError
from .closedloop import (
    check_data,
    check_simulator,
    simulated_states,
    simulator_settings,
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
        ``"regressor"`` (DIDIM's: the regressor at the simulated states) or
        ``"finite-differences"`` (exact, b + 1 simulations each).
    max_evaluations
        Most closed-loop simulations (default: 30 with the regressor Jacobian, 4 (b + 1) + 10
        with finite differences).
    tolerance
        The search stops when a step lowers the output error by less than a move of the
        parameters by this many of their standard deviations would (relative reduction
        ``tolerance² / rows``, the ``ftol`` of :func:`scipy.optimize.least_squares`).

    Examples
    --------
    >>> loop = ClosedLoop(robot, ref, 6.0, gains=sim.gains, control_rate=250)
    >>> est = DIDIM(simulator=loop).fit(IdentificationData(robot, run))
    >>> est.result_.solver["evaluations"], est.result_.training_rmse   # output error
    """

    method = "didim"

    def __init__(self, *, simulator, start="wls", weighted: bool = True,
                 jacobian: str = "regressor", max_evaluations: int | None = None,
                 tolerance: float = 0.01):
        if jacobian not in ("regressor", "finite-differences"):
            raise DataError(f"DIDIM: jacobian: expected 'regressor' or 'finite-differences', "
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

    def get_params(self) -> dict:
        start = self.start if isinstance(self.start, str) else self.start.method
        return {"simulator": simulator_settings(self.simulator), "start": start,
                "weighted": self.weighted, "jacobian": self.jacobian,
                "max_evaluations": self.max_evaluations,
                "tolerance": self.tolerance}

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
            for Y0, r, keep in data.rows(states=at, output_error=True):
                r = np.where(keep, r, 0.0)
                rw = r * w
                proj += np.einsum("mjp,mj->p", Y0 * w[:, None], rw)
                total += float(np.sum(rw**2))
                gram += r.T @ r
                rows += keep.T.astype(float) @ keep.astype(float)
            p = scipy.linalg.solve_triangular(R0, proj, trans="T")
            last.update(theta=theta, gram=gram, rows=rows, total=total)
            if total < best.get("total", np.inf):
                best.update(theta=np.array(theta), total=total)
            return np.append(p, np.sqrt(max(total - float(p @ p), 0.0)))

        # A move of the parameters by ``tolerance`` of their σ lowers the cost by about
        # tolerance² of its value over the rows (the cost is the noise's, about 1 a row).
        rows_total = int(data.system().rows.sum())
        most = self.max_evaluations or (30 if self.jacobian == "regressor" else 4 * (b + 1) + 10)
        jac = "2-point" if self.jacobian == "finite-differences" else \
            (lambda theta: -np.vstack([R0, np.zeros((1, b))]))
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
        theta = fit.x
        if last.get("theta") is None or not np.array_equal(last["theta"], theta):
            most += 1  # the final estimate's residual, beyond the search's budget
            error(theta)
        J = -R0 if fit.jac is None or self.jacobian == "regressor" else fit.jac[:b]
        rows = last["rows"]
        dof = int(np.trace(rows)) - b
        if dof <= 0:
            raise DataError(f"DIDIM: {int(np.trace(rows))} rows for {b} base parameters; "
                            "record more samples")
        Jinv = np.linalg.inv(J)
        cov = last["total"] / dof * (Jinv @ Jinv.T)
        with np.errstate(invalid="ignore", divide="ignore"):
            noise = np.where(rows > 0, last["gram"] / np.maximum(rows, 1) * (1 - b / np.trace(
                rows)), 0.0)
        solver = {"start": start, "jacobian": self.jacobian, "evaluations": evaluations,
                  "status": int(fit.status), "message": fit.message,
                  "converged": bool(fit.status > 0), "cost": float(2 * fit.cost),
                  "sigma": sigma.tolist()}
        return {"base_params": theta, "base_cov": (cov + cov.T) / 2,
                "noise_covariance": noise, "solver": solver,
                "covariance_method": "output-error"}


class _Exhausted(Exception):
    """The simulations allowed are used up."""
