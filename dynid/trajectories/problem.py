"""The excitation design as a smooth nonlinear program: ``min f(x)`` s.t. ``c(x) ≤ 0``.

* ``f``: a criterion (:mod:`~dynid.trajectories.criteria`) of the base regressor at N samples of
  one period, with its gradient from the analytic Fourier basis, the Jacobian of the map to the
  basis coordinates and the regressor sensitivities (:mod:`~dynid.trajectories.sensitivity`).
* ``c``: one entry per constraint row (a limit of one coordinate, or one axis of a Cartesian
  box), the Kreisselmeier–Steinhauser aggregate ``max_k g_k + log Σ_k exp(ρ (g_k − max)) / ρ``
  of the normalized violations ``g_k`` at every grid time (both sides of the row). It is smooth
  and never below the largest ``g_k``, so ``c ≤ 0`` keeps every grid value inside its bound; with
  ρ = 300 it over-estimates the largest by about 0.3 % of the range.
* Between grid points: a trigonometric polynomial ``p`` of degree ``n_h`` sampled every ``Δt``
  exceeds its grid maximum by at most ``max|p″| Δt²/8`` (the maximum is a stationary point at
  most ``Δt/2`` from a grid point), and by Bernstein's inequality ``|p″| ≤ (n_h ω)² max|p − c|``
  for any constant c. With ``δ = (n_h ω Δt)²/8``, bounds tightened to ``(1 − δ)`` of their
  half-range on the grid therefore hold at every time of the periodic part of a trajectory whose
  limits are linear in it (basis limits of a basis design, actuator limits of an actuator
  design, gear transmissions). Ramps, nonlinear maps and Cartesian boxes rely on the dense
  acceptance check instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..models import Regressor
from .constraints import Constraint, row_bounds
from .criteria import Criterion
from .feasibility import constraint_states
from .fourier import fourier_basis
from .parametrization import Parametrization
from .sensitivity import base_regressor, regressor_vjp
from .spaces import DesignSpace

__all__ = ["ExcitationProblem"]

RHO = 300.0
_UNREACHABLE = 10.0  # normalized violation at a sample whose state a mechanism cannot reach


class ExcitationProblem:
    """Objective, constraints and their derivatives as functions of the optimizer variables.

    Parameters
    ----------
    space
        The design space (and its robot).
    param
        Variables → coefficients.
    ramp, steady
        Envelope of the executed trajectory (s): ramp duration and steady duration.
    criterion_times
        Executed times (N,) at which the criterion's regressor is built (one period).
    constraint_times, delta
        Executed times (M,) at which the constraints are enforced, and the relative tightening
        of every bound there.
    constraints
        The constraint set.
    criterion, regressor, columns, whitener
        Criterion, the robot's regressor, the base columns and the noise whitening (or None).
    """

    def __init__(self, space: DesignSpace, param: Parametrization, ramp: float, steady: float,
                 criterion_times: np.ndarray, constraint_times: np.ndarray, delta: float,
                 constraints: Sequence[Constraint], criterion: Criterion, regressor: Regressor,
                 columns: np.ndarray, whitener: np.ndarray | None = None):
        self.space, self.param, self.criterion = space, param, criterion
        self.regressor, self.columns, self.whitener = regressor, columns, whitener
        self.constraints = list(constraints)
        h, w = param.harmonics, param.omega
        self._B = fourier_basis(criterion_times, h, w, ramp, steady)
        self._Bc = fourier_basis(constraint_times, h, w, ramp, steady)
        self.rows = [r for c in self.constraints for r in c.rows]
        lo, hi, scale = row_bounds(self.rows)
        two = np.isfinite(lo) & np.isfinite(hi)
        mid = np.where(two, (lo + hi) / 2, 0.0)
        self._lo = np.where(two, mid - (1 - delta) * scale, lo + delta * scale)
        self._hi = np.where(two, mid + (1 - delta) * scale, hi - delta * scale)
        self._scale = scale
        self._pos_scale = np.maximum(np.abs(param.offset[:, 0]), 1.0)
        self._cache: dict = {}
        self._constraint_cache: dict = {}

    @property
    def n_constraints(self) -> int:
        return len(self.rows)

    # States ------------------------------------------------------------------------------
    @staticmethod
    def _states(B, C):
        Ct = C.T
        return B[0] @ Ct, B[1] @ Ct, B[2] @ Ct

    def _regressor(self, x: np.ndarray):
        key = x.tobytes()
        if self._cache.get("key") != key:
            C = self.param.coefficients(x)
            design = self._states(self._B, C)
            basis = self.space.basis_state(*design, strict=False)
            if all(np.isfinite(b).all() for b in basis):
                W = base_regressor(self.regressor, self.columns, *basis, self.whitener)
            else:               # beyond the reach of a mechanism: not a valid trajectory
                basis, W = None, None
            self._cache = {"key": key, "design": design, "basis": basis, "W": W}
        return self._cache

    # Objective ---------------------------------------------------------------------------
    def objective(self, x: np.ndarray) -> float:
        W = self._regressor(x)["W"]
        return np.inf if W is None else self.criterion.objective(W, gradient=False)[0]

    def gradient(self, x: np.ndarray) -> np.ndarray:
        cache = self._regressor(x)
        if cache["W"] is None:
            return np.zeros(self.param.size)
        _, G = self.criterion.objective(cache["W"], gradient=True)
        s = np.stack(regressor_vjp(self.regressor, self.columns, *cache["basis"], G,
                                   self.whitener), axis=1)          # (N, 3, n) basis
        J = self.space.jacobian("basis", *cache["design"], self._pos_scale)
        if J is not None:
            s = np.einsum("kaibj,kai->kbj", J, s)
        Bq, Bv, Ba = self._B
        gC = (Bq.T @ s[:, 0] + Bv.T @ s[:, 1] + Ba.T @ s[:, 2]).T   # (n, nc)
        return self.param.pullback(gC)

    # Constraints -------------------------------------------------------------------------
    def _violations(self, x: np.ndarray, jacobian: bool):
        """Normalized violations ``g`` (2M, m) on the constraint grid (upper sides, then lower
        sides) and, when asked, ``∂value/∂state`` (M, m, 3, n) in design states. Both are kept
        for the last x: the optimizer asks for the values and the Jacobian, and the tracker
        for the largest violation, at the same points."""
        key = x.tobytes()
        cache = self._constraint_cache
        if cache.get("key") != key:
            design = self._states(self._Bc, self.param.coefficients(x))
            states: dict[str, tuple] = {}
            values, jac = [], []
            for c in self.constraints:
                if c.space not in states:
                    states[c.space] = constraint_states(self.space, c.space, *design)
                if jacobian:                # values and Jacobian from one pass
                    V, Jc = c.values_and_jacobian(*states[c.space])
                    jac.append(Jc)
                else:
                    V = c.values(*states[c.space])
                values.append(V)
            V = np.hstack(values)
            # A sample beyond a mechanism's reach (NaN; infinite at the very edge, where the
            # lever has no velocity ratio) counts as far outside, with no direction back; the
            # others keep their values and derivatives.
            unreachable = ~np.isfinite(V)
            g = np.concatenate([(V - self._hi) / self._scale, (self._lo - V) / self._scale])
            g[np.concatenate([unreachable, unreachable])] = _UNREACHABLE
            cache = self._constraint_cache = {"key": key, "design": design, "states": states,
                                              "unreachable": unreachable, "g": g,
                                              "parts": jac if jacobian else None, "J": None}
        if not jacobian:
            return cache["g"], None
        if cache["J"] is None:
            cache["J"] = self._design_jacobian(cache)
        return cache["g"], cache["J"]

    def _design_jacobian(self, cache: dict) -> np.ndarray:
        """Row Jacobians in design states (M, m, 3, n): each constraint's own Jacobian in the
        states it reads, times the Jacobian of the map to them (once per space)."""
        design, states = cache["design"], cache["states"]
        parts = cache["parts"] or [c.jacobian(*states[c.space]) for c in self.constraints]
        maps: dict[str, np.ndarray | None] = {"design": None}
        jac = []
        for c, Jc in zip(self.constraints, parts, strict=True):       # Jc: (M, m, 3, n)
            if c.space not in maps:
                Jm = self.space.jacobian(c.space, *design, self._pos_scale)
                if Jm is not None:
                    # Outputs beyond reach are NaN; the rows that read them are flagged, and
                    # the other rows do not depend on them.
                    Jm[~np.isfinite(Jm)] = 0.0
                maps[c.space] = Jm
            if maps[c.space] is not None:
                Jc = np.einsum("kraj,kajbi->krbi", Jc, maps[c.space])
            jac.append(Jc)
        J = np.concatenate(jac, axis=1)
        J[cache["unreachable"]] = 0.0
        return J

    def constraints_value(self, x: np.ndarray) -> np.ndarray:
        """Aggregated constraints (m,), feasible when every entry is ≤ 0."""
        if not self.rows:
            return np.zeros(0)
        g = self._violations(x, jacobian=False)[0]
        top = g.max(axis=0)
        return top + np.log(np.exp(RHO * (g - top)).sum(axis=0)) / RHO

    def grid_violation(self, x: np.ndarray) -> float:
        """Largest normalized violation on the constraint grid (≤ 0: feasible there)."""
        if not self.rows:
            return -np.inf
        return float(self._violations(x, jacobian=False)[0].max())

    def constraints_jacobian(self, x: np.ndarray) -> np.ndarray:
        """``∂c/∂x`` (m, n_variables)."""
        if not self.rows:
            return np.zeros((0, self.param.size))
        g, J = self._violations(x, jacobian=True)
        top = g.max(axis=0)
        e = np.exp(RHO * (g - top))
        w = e / e.sum(axis=0)                                    # (2M, m)
        M = J.shape[0]
        cot = (w[:M] - w[M:]) / self._scale                      # ∂c_r/∂value_r at each time
        E = cot[:, :, None, None] * J                            # (M, m, 3, n)
        Bq, Bv, Ba = self._Bc
        gC = (np.einsum("krj,kc->rjc", E[:, :, 0], Bq) + np.einsum("krj,kc->rjc", E[:, :, 1], Bv)
              + np.einsum("krj,kc->rjc", E[:, :, 2], Ba))
        return self.param.pullback(gC)
