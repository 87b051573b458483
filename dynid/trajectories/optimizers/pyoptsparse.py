"""pyOptSparse (MDO Lab), when it is installed: its SLSQP with our analytic derivatives.

pyOptSparse is not on PyPI; importing this module raises :class:`ImportError` where it is
absent, which the registry reports as an unavailable backend.
"""

from __future__ import annotations

import numpy as np
import pyoptsparse

from .base import Optimizer, OptimizerResult, Problem

__all__ = ["PyOptSparseOptimizer"]


class PyOptSparseOptimizer(Optimizer):
    """pyOptSparse's ``SLSQP`` with a user-supplied gradient and constraint Jacobian."""

    name = "pyoptsparse"
    algorithm = "SLSQP"

    def minimize(self, problem: Problem) -> OptimizerResult:
        n, m = len(problem.x0), problem.n_constraints

        def functions(xdict):
            x = np.asarray(xdict["x"], float)
            out = {"objective": problem.objective(x)}
            if m:
                out["constraints"] = problem.constraints(x)
            return out, False

        def sensitivities(xdict, funcs):
            x = np.asarray(xdict["x"], float)
            out = {"objective": {"x": problem.gradient(x)}}
            if m:
                out["constraints"] = {"x": problem.jacobian(x)}
            return out, False

        opt_prob = pyoptsparse.Optimization("excitation", functions)
        lower = np.where(np.isfinite(problem.lower), problem.lower, -1e20)
        upper = np.where(np.isfinite(problem.upper), problem.upper, 1e20)
        opt_prob.addVarGroup("x", n, "c", lower=lower, upper=upper, value=problem.x0)
        if m:
            opt_prob.addConGroup("constraints", m, upper=0.0)
        opt_prob.addObj("objective")
        options = {"MAXIT": self.max_iterations, "ACC": self.tolerance, "IPRINT": -1}
        optimizer = pyoptsparse.OPT(self.algorithm, options=options)
        sol = optimizer(opt_prob, sens=sensitivities)
        inform = getattr(sol, "optInform", {}) or {}
        text = str(inform.get("text", "")) if isinstance(inform, dict) else str(inform)
        code = inform.get("value", -1) if isinstance(inform, dict) else -1
        x = np.asarray(sol.xStar["x"], float)
        return OptimizerResult(x, float(problem.objective(x)),
                               int(getattr(sol, "userSensCalls", 0) or 0), text, code == 0)
