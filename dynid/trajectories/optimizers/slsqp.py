"""SciPy's SLSQP (sequential least squares programming, Kraft) with analytic derivatives."""

from __future__ import annotations

import numpy as np
import scipy.optimize

from .base import Optimizer, OptimizerResult, Problem

__all__ = ["SlsqpOptimizer"]


class SlsqpOptimizer(Optimizer):
    """``scipy.optimize.minimize(method="SLSQP")``; constraints ``−c(x) ≥ 0``."""

    name = "slsqp"

    def minimize(self, problem: Problem) -> OptimizerResult:
        bounds = scipy.optimize.Bounds(problem.lower, problem.upper)
        cons = []
        if problem.n_constraints:
            cons = [{"type": "ineq", "fun": lambda x: -problem.constraints(x),
                     "jac": lambda x: -problem.jacobian(x)}]
        res = scipy.optimize.minimize(problem.objective, problem.x0, jac=problem.gradient,
                                      method="SLSQP", bounds=bounds, constraints=cons,
                                      options={"maxiter": self.max_iterations,
                                               "ftol": self.tolerance})
        return OptimizerResult(np.asarray(res.x, float), float(res.fun), int(res.nit),
                               str(res.message), bool(res.success))
