"""IPOPT through CasADi, with the objective and constraints as CasADi callbacks.

CasADi ships IPOPT; :class:`casadi.Callback` wraps a Python function as a CasADi function, and
``get_jacobian`` hands CasADi our analytic first derivatives (it never differentiates numerically
here). Second derivatives come from IPOPT's limited-memory BFGS approximation.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from .base import Optimizer, OptimizerResult, Problem

__all__ = ["IpoptOptimizer"]


class _Function(ca.Callback):
    """``x (n) → value (m)`` with a Jacobian callback ``(x, value) → (m, n)``."""

    def __init__(self, name: str, n: int, m: int, value, jacobian):
        ca.Callback.__init__(self)
        self._n, self._m, self._value, self._jacobian = n, m, value, jacobian
        self._jac = None
        self.construct(name, {})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self._n, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(self._m, 1)

    def eval(self, arg):
        return [np.atleast_1d(self._value(np.asarray(arg[0]).ravel()))]

    def has_jacobian(self):
        return True

    def get_jacobian(self, name, inames, onames, opts):
        self._jac = _Jacobian(name, self._n, self._m, self._jacobian, opts)
        return self._jac


class _Jacobian(ca.Callback):
    def __init__(self, name: str, n: int, m: int, jacobian, opts):
        ca.Callback.__init__(self)
        self._n, self._m, self._jacobian = n, m, jacobian
        self.construct(name, opts)

    def get_n_in(self):
        return 2

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self._n, 1) if i == 0 else ca.Sparsity.dense(self._m, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(self._m, self._n)

    def eval(self, arg):
        J = np.asarray(self._jacobian(np.asarray(arg[0]).ravel()), float)
        return [J.reshape(self._m, self._n)]


class IpoptOptimizer(Optimizer):
    """IPOPT, interior point with a limited-memory quasi-Newton Hessian."""

    name = "ipopt"

    def minimize(self, problem: Problem) -> OptimizerResult:
        n, m = len(problem.x0), problem.n_constraints
        f = _Function("objective", n, 1, problem.objective, problem.gradient)
        x = ca.MX.sym("x", n)
        nlp = {"x": x, "f": f(x)}
        if m:
            c = _Function("constraints", n, m, problem.constraints, problem.jacobian)
            nlp["g"] = c(x)
        options = {
            "print_time": False,
            "show_eval_warnings": False,
            "ipopt.print_level": 0,
            "ipopt.sb": "yes",
            "ipopt.hessian_approximation": "limited-memory",
            "ipopt.max_iter": self.max_iterations,
            "ipopt.tol": self.tolerance,
            "ipopt.constr_viol_tol": 1e-8,
            "ipopt.mu_strategy": "adaptive",
        }
        solver = ca.nlpsol("excitation", "ipopt", nlp, options)
        lower = np.where(np.isfinite(problem.lower), problem.lower, -ca.inf)
        upper = np.where(np.isfinite(problem.upper), problem.upper, ca.inf)
        kw = {"lbg": -ca.inf, "ubg": 0.0} if m else {}
        sol = solver(x0=problem.x0, lbx=lower, ubx=upper, **kw)
        stats = solver.stats()
        return OptimizerResult(np.asarray(sol["x"], float).ravel(), float(sol["f"]),
                               int(stats.get("iter_count", 0)),
                               str(stats.get("return_status", "")), bool(stats.get("success")))
