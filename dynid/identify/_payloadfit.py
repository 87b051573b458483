"""The physically consistent estimate of one body's ten parameters: weighted least squares on
the compressed system under ``J(π) ≽ ε I`` (CVXPY, a semidefinite program).

Given the triangular factor ``R`` of the whitened system and the unconstrained estimate
``π_u`` (``R π_u = Qᵀ y``), the residual is ``‖R (π − π_u)‖`` plus a constant, so

    minimize ‖R π − R π_u‖   subject to   J(π) ≽ ε I

with ``J`` the pseudo-inertia (:func:`~dynid.identify.physical.pseudo_inertia`). When ``π_u``
is physical it is the solution and no solver runs. The problem is scaled as the robot's
(:class:`~dynid.identify.consistent.PhysicallyConsistent`): unknowns of order one, the LMI
scaled by the estimate's mass and radius of gyration. The solver status is checked: a failed
solve raises :class:`~dynid.errors.SolverError`, an inaccurate one warns.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import DynidWarning, SolverError
from .constrained import TOLERANCE, bootstrap
from .physical import PSEUDO, lmi_scaling, pseudo_inertia

__all__ = ["PayloadFit", "fit_payload"]


class PayloadFit:
    """A solved payload problem (see the module docstring).

    Attributes
    ----------
    params
        The estimate (10,).
    active
        Whether the pseudo-inertia constraint holds with equality (its smallest eigenvalue at
        ``ε``): the unconstrained estimate was not physical.
    min_eigenvalue
        The smallest eigenvalue of the estimate's pseudo-inertia.
    status
        ``"unconstrained"`` (no solve was needed) or the solver's status.
    """

    def __init__(self, R: np.ndarray, start: np.ndarray, *, epsilon: float,
                 solver: str = "CLARABEL", tolerance: float = 1e-9, margin: float = 1e-8):
        self.R, self.epsilon, self.solver = R, float(epsilon), solver
        self.tolerance, self.margin = tolerance, margin
        self._problem = None
        start = np.asarray(start, dtype=float)
        self._start = start
        self._T = lmi_scaling(start)
        if _lowest(start) >= self.epsilon:
            self.params, self.status = start.copy(), "unconstrained"
        else:
            self.params, self.status = self.solve(R @ start)
        low = _lowest(self.params)
        self.min_eigenvalue = low
        top = float(np.linalg.eigvalsh(pseudo_inertia(self.params))[-1])
        self.active = bool(low - self.epsilon <= TOLERANCE * max(top, 1e-300))

    def solve(self, z: np.ndarray) -> tuple[np.ndarray, str]:
        """The constrained estimate for the data ``z`` (in place of ``R π_u``) and the
        solver's status."""
        import cvxpy as cp

        if self._problem is None:
            self._build()
        problem, x, target, scale, zn = self._problem
        target.value = z / zn
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                problem.solve(solver=self.solver, tol_gap_abs=self.tolerance,
                              tol_gap_rel=self.tolerance, tol_feas=self.tolerance)
        except cp.error.SolverError as exc:
            raise SolverError(f"payload: {self.solver} failed ({exc}); try a larger "
                              "epsilon") from None
        status = problem.status
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
            raise SolverError(f"payload: {self.solver} ended with status {status!r}; try a "
                              "larger epsilon, or check the run's units")
        if status == cp.OPTIMAL_INACCURATE:
            warnings.warn(f"payload: {self.solver} reports an inaccurate solution; check the "
                          "estimate's pseudo-inertia eigenvalue (fit.min_eigenvalue)",
                          DynidWarning, stacklevel=6)
        return scale * x.value, status

    def _build(self) -> None:
        import cvxpy as cp

        R = self.R
        norms = np.linalg.norm(R, axis=0)
        zn = max(float(np.linalg.norm(R @ self._start)), 1e-300)
        scale = zn / np.where(norms > 0, norms, 1.0)
        x = cp.Variable(10)
        target = cp.Parameter(R.shape[0])
        J = cp.reshape(PSEUDO @ cp.multiply(scale, x), (4, 4), order="F")
        T = self._T
        eps = self.epsilon + self.margin
        problem = cp.Problem(cp.Minimize(cp.norm(R * (scale / zn) @ x - target, 2)),
                             [T @ J @ T >> eps * T @ T])
        self._problem = (problem, x, target, scale, zn)

    def bootstrap(self, root: np.ndarray, *, draws: int, seed: int) -> np.ndarray:
        """Covariance (10, 10): the second moment about the estimate of estimates solved for
        data ``R π̂ + root ξ`` (``root rootᵀ`` the covariance of the compressed data)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DynidWarning)
            cov, _ = bootstrap(lambda z: self.solve(z)[0], self.R @ self.params, root,
                               self.params, draws=draws, seed=seed)
        return cov


def fit_payload(R: np.ndarray, start: np.ndarray, *, epsilon: float) -> PayloadFit:
    """The physically consistent estimate for the compressed system ``R`` (10, 10), whose
    unconstrained estimate is ``start`` (10,)."""
    return PayloadFit(R, start, epsilon=epsilon)


def _lowest(block: np.ndarray) -> float:
    return float(np.linalg.eigvalsh(pseudo_inertia(block))[0])
