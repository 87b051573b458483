"""Physically consistent least squares (semidefinite program, CVXPY).

The standard parameters ``θ`` (p) are estimated by

    minimize   ‖R B θ − z‖² + λ · regularization(θ)
    subject to J_k(θ) ≽ ε I                     per link (pseudo-inertia)
               m_k c_lo ≤ h_k ≤ m_k c_hi         per link (centre of mass in a box)
               lower ≤ θ ≤ upper                 friction, rotor inertia, springs, ... (bounds
                                                 of the ParameterSet)
               m_lo ≤ m_k ≤ m_hi, Σ m_k bounds   optional

where ``[R z]`` is the compressed, whitened system of the base regressor (so the objective equals
``‖W θ − y‖²`` over all samples without touching a raw row) and ``B`` maps standard to base
parameters. The pseudo-inertia ``J = [[½ tr(Ī) 1 − Ī, h], [hᵀ, m]]`` (Ī about the link frame's
origin, ``h = m c``) being positive definite is equivalent to a positive mass, and a density
behind the inertia, which implies the triangle inequalities (Wensing, Kim and Slotine, RA-L
2018). The regularization pulls towards the prior: Euclidean, ``‖(θ − π)/s‖²`` with ``s`` the
magnitude of each prior, or entropic, the log-det divergence of the pseudo-inertias
``Σ_k −log det(J_π⁻¹ J_k) + tr(J_π⁻¹ J_k) − 4`` (Lee and Wensing, 2020).

The solver status is always checked: infeasibility raises :class:`~dynid.errors.SolverError`
naming a smallest set of constraint groups that cannot hold together (found by dropping groups
one at a time), failure raises, an inaccurate solution warns (:class:`~dynid.errors.DynidWarning`).

The uncertainty follows the active constraints and the regularization (the ``covariance``
setting): weighted least squares' covariance when no constraint restricts the base parameters,
else a bootstrap under the constraints (:mod:`dynid.identify.constrained`); a regularized
estimate is biased towards the prior, and its σ hold that bias as well as its variance
(:mod:`dynid.identify.shrinkage`). The floor ``ε`` is itself a bias where links pressed
against it restrict the base parameters (a link the data put lighter than ``ε`` allows, e.g.
a massless one): the estimate is then solved again with the floor at zero, and the move
``d`` of the base parameters is added to the covariance as ``d dᵀ`` (a regularized fit's
shift from weighted least squares holds it already); a move beyond half a σ warns, naming
the links.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..errors import DataError, DynidWarning, SolverError
from ..models import Robot
from ._consistentsettings import check_settings
from .constrained import (
    active_constraints,
    bootstrap,
    bootstrap_draws,
    floor_move,
    free_subspace,
    typical_magnitudes,
)
from .estimators import Estimator, weighted_fit, weighting_covariance
from .groups import constraint_groups, resolve_boxes, resolve_mass_bounds, undetermined_masses
from .physical import PSEUDO, polish, pseudo_inertia
from .shrinkage import bootstrap_mse, regularization_root, regularized_mse, response

__all__ = ["PhysicallyConsistent"]

_SOLVERS = ("SCS", "CLARABEL")


def _cvxpy():
    """cvxpy, imported on first use (it takes about a second to import)."""
    import cvxpy

    return cvxpy


@dataclass
class _Problem:
    """A built physically consistent problem: the data ``target`` (scaled ``z``, then the
    regularization rows) can be changed and the problem solved again."""

    problem: object
    x: object
    target: object
    values: np.ndarray
    scale: np.ndarray
    zn: float
    groups: dict
    epsilon: float


class PhysicallyConsistent(Estimator):
    """Physically consistent least squares (see the module docstring).

    Parameters
    ----------
    epsilon
        Smallest eigenvalue required of each pseudo-inertia (kg·m² and kg mixed; a small
        positive number keeps the masses and inertias strictly physical). It is a bias for
        links lighter than it (a link of a few grams, a massless one): where links pressed
        against it restrict the base parameters, the σ hold the move of the estimate from
        the one with no floor (``diagnostics['epsilon_shift']``, the links in
        ``diagnostics['epsilon_links']``), and a move beyond half a σ warns: the data put
        those links lighter than ``epsilon`` allows.
    weighting
        ``"wls"`` (default): outputs weighted by their noise level, iterated from the
        residuals as :class:`~dynid.identify.estimators.WLS` does (``wls_iterations``), or
        given (``sigma``, ``noise_covariance``); ``"ols"``; ``"gauss-markov"``: full noise
        covariance (see :class:`~dynid.identify.estimators.GaussMarkov`).
    wls_iterations
        Weighted passes of the ``"wls"`` weighting: ``"auto"`` (until the σ settle) or an
        integer (1: weighted by the OLS residuals).
    sigma
        Noise standard deviation of each output (n,), in the output's unit: fixed weights
        ``1/σ_j`` of the objective, and of the covariance's sandwich.
    noise_covariance
        Or the outputs' noise covariance (n, n) of one sample weighting the objective.
    com_box
        ``"auto"``: boxes from the description (:func:`com_boxes`); a mapping link →
        (lower (3,), upper (3,)) in the link frame (links left out get the automatic box);
        ``None``: no box.
    com_margin
        Margin of the automatic boxes, m.
    mass_bounds
        Optional mapping link → (lower, upper) in kg, or a fraction ``r`` for
        ``(1 ± r)·prior`` on every link.
    total_mass
        Optional (lower, upper) bounds of the sum of the link masses, kg.
    regularization
        ``None``, ``"euclidean"`` or ``"entropic"`` (towards the prior).
    weight
        ``λ``: weight of the regularization against the whitened residual (whose expected
        value is the number of rows).
    solver
        ``"CLARABEL"`` (default) or ``"SCS"``. Clarabel, an interior-point method, reaches
        1e-9 in a few tens of iterations (at the dVRK PSM's size: 35 iterations, 0.02 s). SCS,
        a first-order method, needs tens of thousands of iterations at 1e-8 on these problems
        (12 600 and 1.3 s at the PSM's size, still 4 % above the optimal residual), and does
        not converge with the entropic regularization.
    tolerance
        Solver tolerance (default: 1e-9 for Clarabel, 1e-8 for SCS).
    margin
        Solved with every constraint tightened by this much, so that the solution meets the
        stated ones despite the solver's tolerance.
    max_iters
        Iteration limit of SCS.
    covariance
        How the uncertainty is obtained (the result's ``covariance_method`` says which):
        ``"auto"`` (default): when no active constraint restricts the base parameters,
        ``"unconstrained"`` (the estimate is then the weighted least-squares one, and so is
        its covariance) or, for a regularized fit, ``"regularized"``; else ``"bootstrap"``.
        ``"regularized"`` (Euclidean and entropic): the mean squared error of the estimate
        pulled towards the prior, ``Cov(b̂) + s sᵀ + Cov(s)``: the sandwich of the
        regularized normal equations (linearized at the estimate for the entropic one), the
        shift ``s`` from the weighted least-squares estimate as the plug-in bias, and that
        shift's own spread, which keeps σ from vanishing where the shift is small by chance
        (see :mod:`dynid.identify.shrinkage`; a σ is its root mean squared error where the
        bias dominates, and overstates the error where the prior happens to be close to the
        truth, which the data cannot confirm). ``"bootstrap"``: ``draws`` estimates from data
        drawn about the estimate with the residuals' noise, each solved under the constraints
        (it follows estimates pressed against a constraint, which are closer to the truth
        than the unconstrained covariance says): their second moment about the estimate, or for a
        regularized fit their covariance plus that of their shifts from weighted least
        squares plus ``s sᵀ``. ``"unconstrained"``: the weighted least-squares covariance
        (sandwich with the outputs' residual covariance), which leaves out a
        regularization's bias; ``"conditional"``: that covariance restricted to the
        base-parameter directions the active constraints leave free (see
        :mod:`dynid.identify.constrained`), zero along those they pin, so a lower bound
        unless the truth lies on the constraints. An unregularized ``"bootstrap"`` adds the
        floor's move ``d dᵀ`` (see ``epsilon``; a regularized fit's shift holds it);
        ``"unconstrained"`` and ``"conditional"`` leave it out.
    draws, seed
        Bootstrap draws and their seed.

    Examples
    --------
    >>> est = PhysicallyConsistent(mass_bounds=0.5).fit(data)          # doctest: +SKIP
    >>> est.weighting_.sigma         # σ iterated from the residuals   # doctest: +SKIP
    >>> PhysicallyConsistent(sigma=[0.2, 0.2, 0.05]).fit(data)         # doctest: +SKIP
    >>> est = PhysicallyConsistent(regularization="euclidean").fit(data)  # doctest: +SKIP
    >>> est.result_.covariance_method   # σ hold the bias to the prior   # doctest: +SKIP
    'regularized'
    """

    method = "consistent"

    def __init__(self, *, epsilon: float = 1e-6, weighting: str = "wls",
                 wls_iterations: int | str = "auto", sigma: np.ndarray | None = None,
                 noise_covariance: np.ndarray | None = None,
                 com_box: str | Mapping | None = "auto", com_margin: float = 0.1,
                 mass_bounds: Mapping | float | None = None,
                 total_mass: tuple[float, float] | None = None,
                 regularization: str | None = None, weight: float = 1.0,
                 solver: str = "CLARABEL", tolerance: float | None = None, margin: float = 1e-8,
                 max_iters: int = 200_000, covariance: str = "auto", draws: int = 200,
                 seed: int = 0):
        self.epsilon, self.weighting = float(epsilon), weighting
        self.wls_iterations = wls_iterations
        self.sigma, self.noise_covariance = sigma, noise_covariance
        self.com_box, self.com_margin = com_box, float(com_margin)
        self.mass_bounds, self.total_mass = mass_bounds, total_mass
        self.regularization, self.weight = regularization, float(weight)
        self.solver, self.margin = solver.upper(), margin
        self.tolerance = float(tolerance) if tolerance is not None else (
            1e-8 if self.solver == "SCS" else 1e-9)
        self.max_iters = int(max_iters)
        self.covariance, self.draws, self.seed = covariance, draws, seed

    # Fitting ---------------------------------------------------------------------------------
    def _estimate(self, data):
        check_settings(self, _SOLVERS)
        system = data.system()
        weighting = weighting_covariance(
            self.weighting, data, system, **({} if self.weighting != "wls" else dict(
                sigma=self.sigma, noise_covariance=self.noise_covariance,
                iterations=self.wls_iterations, iterations_name="wls_iterations")))
        cov = weighting.covariance
        whitened = system.system(covariance=cov)
        B = data.base.matrix
        A = whitened.R @ B
        built = self._build(data.robot, A, whitened.qty)
        theta, info = self._finish(data.robot, built)
        # The noise as the unconstrained weighted fit's residuals see it.
        unregularized, _, noise = weighted_fit(system, cov)
        out = {"params": theta, "base_params": B @ theta, "noise_covariance": cov,
               "solver": info, "weighting": weighting}
        masses = resolve_mass_bounds(data.robot, self.mass_bounds)
        rows, names = active_constraints(
            data.robot, theta, epsilon=self.epsilon, boxes=self._boxes(data.robot),
            masses=masses, total_mass=self.total_mass, margin=self.margin)
        note = undetermined_masses(data.robot, B, theta, masses, self.total_mass)
        if note:
            warnings.warn(note, DynidWarning, stacklevel=4)
        free = free_subspace(B, rows, data.robot.parameters.priors)
        regularized = self.regularization is not None and self.weight > 0
        method = self.covariance
        if method == "auto":
            method = "bootstrap" if free is not None else (
                "regularized" if regularized else "unconstrained")
        out["covariance_method"] = method
        out["diagnostics"] = {"active_constraints": names,
                              "constrained_base_directions": 0 if free is None else
                              B.shape[0] - free.shape[1]}
        if method in ("unconstrained", "conditional"):
            out["base_cov"] = system.covariance(cov, noise,
                                                free if method == "conditional" else None)
            return out
        Rv, Rg = system.factors(cov, noise)
        shift = B @ theta - unregularized  # the plug-in bias (dynid.identify.shrinkage)
        if method == "bootstrap":
            def solve(z: np.ndarray) -> np.ndarray:
                built.target.value = np.concatenate([z / built.zn, built.values[len(z):]])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DynidWarning)
                    return B @ self._finish(data.robot, built)[0]

            root = scipy.linalg.solve_triangular(Rv, Rg.T, trans="T")  # z's noise: root ξ
            if regularized:  # each draw's shift from its weighted least-squares estimate
                solved, drawn = bootstrap_draws(solve, A @ theta, root, draws=self.draws,
                                                seed=self.seed)
                base_cov = bootstrap_mse(
                    solved, scipy.linalg.solve_triangular(Rv, drawn.T).T, shift)
                used = len(solved)
            else:
                base_cov, used = bootstrap(solve, A @ theta, root, B @ theta,
                                           draws=self.draws, seed=self.seed)
            built.target.value = built.values
            out["diagnostics"]["bootstrap_draws"] = used
        else:  # "regularized"
            typical = typical_magnitudes(data.robot.parameters.priors)
            root = regularization_root(data.robot, theta, self.regularization, self.weight,
                                       typical)
            G = response(Rv, B, root, typical)
            base_cov = regularized_mse(G, Rv, Rg, shift)
        pull = self._floor_pull(data, A, whitened.qty, theta, base_cov, (rows, names),
                                out["diagnostics"])
        # A regularized fit's plug-in bias, its shift from weighted least squares, already
        # holds the floor's move.
        out["base_cov"] = base_cov if regularized else base_cov + pull
        return out

    def _floor_pull(self, data, A: np.ndarray, z: np.ndarray, theta: np.ndarray,
                    base_cov: np.ndarray, active: tuple[np.ndarray, list[str]],
                    diagnostics: dict) -> np.ndarray:
        """The floor's move ``d dᵀ`` (:func:`~dynid.identify.constrained.floor_move`), the
        estimate solved again with the pseudo-inertias' floor at zero."""
        def floorless() -> np.ndarray:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DynidWarning)
                return self._finish(data.robot, self._build(data.robot, A, z, 0.0))[0]

        pull, found, note = floor_move(data.robot, data.base, theta, base_cov, floorless,
                                       active=active, epsilon=self.epsilon)
        diagnostics.update(found)
        if note:
            warnings.warn(note, DynidWarning, stacklevel=5)
        return pull

    def solve(self, robot: Robot, A: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, dict]:
        """Minimize ``‖A θ − z‖²`` (+ regularization) under the constraints; returns the
        standard parameters (p,) and solver details."""
        return self._finish(robot, self._build(robot, A, z))

    def _build(self, robot: Robot, A: np.ndarray, z: np.ndarray,
               epsilon: float | None = None) -> _Problem:
        """The scaled problem, with the data ``z`` a parameter so it can be solved again for
        other data (the bootstrap) without building it anew; ``epsilon`` replaces the
        pseudo-inertias' floor."""
        epsilon = self.epsilon if epsilon is None else epsilon
        cp = _cvxpy()
        params = robot.parameters
        p = len(params)
        if A.shape != (len(z), p):
            raise DataError(f"A: expected shape ({len(z)}, {p}), found {A.shape}")
        prior = params.priors
        # Scaled unknowns x = θ / scale of order one: live columns contribute about ‖z‖ each.
        zn = max(float(np.linalg.norm(z)), 1e-300)
        norms = np.linalg.norm(A, axis=0)
        typical = typical_magnitudes(prior)
        live = norms > 1e-9 * norms.max()
        scale = np.where(live, zn / np.where(live, norms, 1.0), typical)
        x = cp.Variable(p)
        theta = cp.multiply(scale, x)
        groups = constraint_groups(robot, theta, epsilon=epsilon, margin=self.margin,
                                   boxes=self._boxes(robot),
                                   masses=resolve_mass_bounds(robot, self.mass_bounds),
                                   total_mass=self.total_mass)
        As, zs = A * (scale / zn), z / zn
        if self.regularization == "euclidean":
            # ‖A x − z‖² + λ‖(θ − π)/s‖² is the squared norm of one stacked residual.
            root = np.sqrt(self.weight) / zn
            As = np.vstack([As, root * np.diag(scale / typical)])
            zs = np.concatenate([zs, root * prior / typical])
        target = cp.Parameter(len(zs), value=zs)
        if self.regularization == "entropic":
            objective = cp.sum_squares(As @ x - target) + self.weight / zn**2 * self._entropic(
                robot, theta)
        elif self.solver == "SCS":
            objective = cp.sum_squares(As @ x - target)  # SCS takes a quadratic natively
        else:
            # Interior point: minimizing the norm makes the tolerance bound the residual itself
            # rather than its square.
            objective = cp.norm(As @ x - target, 2)
        problem = cp.Problem(cp.Minimize(objective),
                             [c for cs, _ in groups.values() for c in cs])
        return _Problem(problem, x, target, zs.copy(), scale, zn, groups, epsilon)

    def _finish(self, robot: Robot, built: _Problem) -> tuple[np.ndarray, dict]:
        """Solve a built problem, check its status and constraints, polish the solution."""
        cp = _cvxpy()
        params = robot.parameters
        problem, x, groups = built.problem, built.x, built.groups
        status, tolerance = self._run(problem), self.tolerance
        if status == cp.OPTIMAL_INACCURATE and self.solver != "SCS":
            # An interior-point solve that stalls just short of a tight tolerance is solved
            # again at ten times it; the status and tolerance reported are those of the solve
            # kept (the first one's when the second does not reach optimal either).
            status = self._run(problem, 10 * tolerance)
            if status == cp.OPTIMAL:
                tolerance = 10 * tolerance
            else:
                status = self._run(problem)
        if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            self._raise_infeasible(groups)
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
            raise SolverError(f"physically consistent estimate: {self.solver} ended with status "
                              f"{status!r}; try {self._other()} or a looser tolerance")
        raw = built.scale * x.value
        violated = {name: check(raw) for name, (_, check) in groups.items()}
        violated = {k: v for k, v in violated.items() if v > 1e3 * tolerance}
        if violated:
            feasibility = cp.Problem(cp.Minimize(0), problem.constraints)
            if self._run(feasibility) in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                self._raise_infeasible(groups)
            raise SolverError(f"physically consistent estimate: {self.solver} ended "
                              f"{status!r} with the constraint groups {sorted(violated)} "
                              f"missed by up to {max(violated.values()):.3g}; try "
                              f"{self._other()} or a tighter tolerance")
        if status == cp.OPTIMAL_INACCURATE:
            warnings.warn(f"physically consistent estimate: {self.solver} reports an inaccurate "
                          f"solution; check the constraint margins or try {self._other()}",
                          DynidWarning, stacklevel=5)
        value, shift = polish(robot, raw, built.epsilon, self.tolerance)
        eig = {link: float(np.linalg.eigvalsh(pseudo_inertia(value[params.link_block(link)]))[0])
               for link in params.links}
        stats = problem.solver_stats
        info = {"status": status, "solver": self.solver, "tolerance": tolerance,
                "solve_time": getattr(stats, "solve_time", None),
                "iterations": getattr(stats, "num_iters", None),
                "lmi_min_eigenvalue": min(eig.values()) if eig else None,
                "lmi_eigenvalues": eig, "lmi_shift": shift}
        return value, info

    # Problem pieces -----------------------------------------------------------------------
    def _boxes(self, robot: Robot) -> dict:
        return resolve_boxes(robot, self.com_box, self.com_margin)

    def _entropic(self, robot: Robot, theta):
        cp = _cvxpy()
        params = robot.parameters
        terms = []
        for link in params.links:
            idx = params.link_block(link)
            Jp = pseudo_inertia(robot.prior[idx])
            if np.linalg.eigvalsh(Jp)[0] <= 0:
                raise DataError(f"regularization 'entropic': the prior of {link} is not a "
                                "physical link (its pseudo-inertia is not positive definite); "
                                "give it a mass and inertia, or use 'euclidean'")
            J = cp.reshape(PSEUDO @ theta[idx], (4, 4), order="F")
            terms.append(-cp.log_det(J) + cp.trace(np.linalg.inv(Jp) @ J))
        return cp.sum(cp.hstack(terms)) if terms else 0.0

    def _run(self, problem, tolerance: float | None = None) -> str:
        cp = _cvxpy()
        tol = self.tolerance if tolerance is None else tolerance
        kwargs = ({"eps_abs": tol, "eps_rel": tol, "max_iters": self.max_iters}
                  if self.solver == "SCS" else
                  {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol})
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                problem.solve(solver=self.solver, **kwargs)
        except cp.error.SolverError as exc:
            raise SolverError(f"physically consistent estimate: {self.solver} failed ({exc}); "
                              f"try {self._other()} or a looser tolerance") from None
        return problem.status

    def _other(self) -> str:
        other = next(name for name in _SOLVERS if name != self.solver)
        return f"solver={other!r}"

    def _raise_infeasible(self, groups: dict[str, tuple[list, object]]) -> None:
        """Raise naming a smallest set of groups that is infeasible on its own, found by
        dropping groups one at a time (a deletion filter)."""
        cp = _cvxpy()
        needed = list(groups)
        for name in list(needed):
            trial = [g for g in needed if g != name]
            problem = cp.Problem(cp.Minimize(0), [c for g in trial for c in groups[g][0]])
            if self._run(problem) in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                needed = trial
        raise SolverError(f"physically consistent estimate: the constraints are infeasible; "
                          f"these groups cannot hold together: {needed}. Relax or remove one "
                          "of them (bounds, boxes, epsilon)")
