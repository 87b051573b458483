"""pyOptSparse (MDO Lab), when it is installed: its SLSQP with our analytic derivatives.

pyOptSparse is not on PyPI; importing this module raises :class:`ImportError` where it is
absent, which the registry reports as an unavailable backend.

SLSQP ends with an inform code (pyOptSparse 2.15: ``Solution.optInform``). Code 0 is
convergence; codes 3 to 9 (iteration limit, a line search or least-squares subproblem that
cannot go on, linearized constraints that contradict each other) stop at the current iterate,
which the design's dense check judges as it does SciPy's SLSQP, whose codes are the same. The
other codes mean the run itself broke (a request for evaluations left unanswered, a problem
SLSQP cannot take) and raise :class:`~dynid.errors.SolverError`, as does an optimizer that
pyOptSparse cannot load.

pyOptSparse prints its notices on standard output. The one that SLSQP's steps went past a
bound and were clipped to it is expected (SciPy's SLSQP clips as silently) and dropped; any
other becomes a :class:`~dynid.errors.DynidWarning`.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import numpy as np
import pyoptsparse

from ...errors import DynidWarning, SolverError
from .base import Optimizer, OptimizerResult, Problem

__all__ = ["PyOptSparseOptimizer"]

#: SLSQP inform codes that stop at a usable iterate (0: converged).
_STOPPED = frozenset(range(3, 10)) | {0}
_INFINITY = 1e20  # pyOptSparse's bound for "no bound"


class PyOptSparseOptimizer(Optimizer):
    """pyOptSparse's ``SLSQP`` with a user-supplied gradient and constraint Jacobian.

    Settings map to SLSQP's options: ``max_iterations`` → ``MAXIT``, ``tolerance`` → ``ACC``
    (the requested accuracy of the objective, as SciPy's ``ftol``); ``IPRINT = -1`` writes no
    output file.
    """

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
        lower = np.where(np.isfinite(problem.lower), problem.lower, -_INFINITY)
        upper = np.where(np.isfinite(problem.upper), problem.upper, _INFINITY)
        opt_prob.addVarGroup("x", n, "c", lower=lower, upper=upper, value=problem.x0)
        if m:
            opt_prob.addConGroup("constraints", m, upper=0.0)
        opt_prob.addObj("objective")
        options = {"MAXIT": self.max_iterations, "ACC": self.tolerance, "IPRINT": -1}
        try:
            optimizer = pyoptsparse.OPT(self.algorithm, options=options)
        except Exception as exc:    # a missing compiled optimizer, an unknown option
            raise SolverError(f"pyOptSparse could not set up {self.algorithm} ({exc}); "
                              "reinstall pyOptSparse with its compiled optimizers or choose "
                              "optimizer 'slsqp'") from exc
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            sol = optimizer(opt_prob, sens=sensitivities)
        _pass_on(printed.getvalue())
        code, text = _inform(sol, self.algorithm)
        x = np.asarray(sol.xStar["x"], float)
        # One gradient evaluation per SLSQP iteration.
        return OptimizerResult(x, float(problem.objective(x)), int(sol.userSensCalls), text,
                               code == 0)


def _pass_on(printed: str) -> None:
    """Warn with what pyOptSparse printed in its boxed notices, but for bound clipping."""
    notices = re.split(r"pyOptSparse Warning:", printed)[1:]
    for notice in notices:
        text = " ".join(re.sub(r"[|+-]{2,}|\|", " ", notice).split())
        if text and "outside bounds" not in text:
            warnings.warn(f"pyOptSparse: {text}", DynidWarning, stacklevel=4)


def _inform(sol, algorithm: str) -> tuple[int, str]:
    """The inform code and message of a pyOptSparse solution; raise for a broken run."""
    inform = sol.optInform          # SolutionInform in pyOptSparse ≥ 2.11, a dict before
    if inform is None:
        raise SolverError(f"pyOptSparse {algorithm} returned no inform code; expected one of "
                          "SLSQP's, so the run cannot be judged; choose optimizer 'slsqp'")
    code, text = int(inform["value"]), str(inform["text"])
    if code not in _STOPPED:
        raise SolverError(f"pyOptSparse {algorithm} failed with inform {code} ({text}); "
                          "expected convergence (0) or a stop at an iterate (3 to 9); check "
                          "the problem's bounds and derivatives, or choose optimizer 'slsqp'")
    return code, text
