"""Everything one design needs, assembled from a robot and its settings.

:func:`assemble` checks the request (free coordinates, limits that leave room for a motion),
builds the design space, the constraints, the variables, the criterion and the
:class:`~dynid.trajectories.problem.ExcitationProblem`, and draws random feasible starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import TrajectoryError
from ..models import BaseParameters, Regressor, Robot, base_parameters
from ..models.base import independent_columns
from .constraints import Constraint, dense_times
from .criteria import Criterion, Information, make_criterion, noise_whitener
from .feasibility import DENSE_SAMPLES, build_constraints, check, largest_factor
from .fourier import FourierTrajectory
from .parametrization import Parametrization
from .problem import ExcitationProblem
from .sensitivity import base_regressor
from .settings import DesignSettings
from .spaces import DesignSpace

__all__ = ["Assembly", "assemble"]

#: Constraint samples per criterion sample.
CONSTRAINT_FACTOR = 4


@dataclass
class Assembly:
    """The pieces of one design (see :func:`assemble`)."""

    robot: Robot
    settings: DesignSettings
    space: DesignSpace
    constraints: list[Constraint]
    param: Parametrization
    regressor: Regressor
    base: BaseParameters
    whitener: np.ndarray | None
    criterion: Criterion
    problem: ExcitationProblem
    dense: int
    #: Regressor columns of the base parameters that the free coordinates can excite (all of
    #: ``base.independent`` unless coordinates are fixed).
    columns: np.ndarray

    def trajectory(self, x: np.ndarray) -> FourierTrajectory:
        """The trajectory of optimizer variables x."""
        s = self.settings
        return FourierTrajectory(self.param.coefficients(x), s.frequency, self.space.names,
                                 space=s.space, unit=s.unit, ramp=s.ramp_duration,
                                 periods=s.periods)

    def regressor_on(self, trajectory: FourierTrajectory, samples: int) -> np.ndarray:
        """Whitened base regressor (samples, n, b) over one period of the steady part."""
        t = trajectory.ramp + (np.arange(samples) + 0.5) * trajectory.period / samples
        basis = self.space.basis_state(*trajectory.evaluate(t))
        return base_regressor(self.regressor, self.columns, *basis, self.whitener)

    def start(self, rng: np.random.Generator) -> np.ndarray:
        """A random start inside every constraint on the grid."""
        return _feasible_start(self, rng)

    def within_grid(self, x: np.ndarray) -> np.ndarray | None:
        """x with its oscillation scaled about the offsets by the largest factor ≤ 1 that
        satisfies every constraint on the grid (x itself when it does); ``None`` when the
        offsets alone do not."""
        factor = largest_factor(lambda f: self.problem.grid_violation(
            self.param.scaled(x, f)) <= 0, tol=1e-7)
        return None if factor is None else self.param.scaled(x, factor)


def assemble(robot: Robot, settings: DesignSettings,
             previous: Sequence[Information] = ()) -> Assembly:
    """Check a design request and build its nonlinear program."""
    s = settings
    space = DesignSpace(robot, s.space, s.unit)
    free = _free(space, s.fixed)
    constraints = build_constraints(robot, space, joint_limits=s.joint_limits,
                                    actuator_limits=s.actuator_limits, cartesian=s.cartesian,
                                    margin=s.margin)
    center, half = _offset_range(robot, space, s)
    for name, value in s.fixed.items():
        center[space.names.index(name)] = value
    lim = space.limits()
    omega, period = 2 * np.pi * s.frequency, 1.0 / s.frequency
    param = Parametrization(s.harmonics, omega, center, half, lim.velocity * (1 - s.margin),
                            lim.acceleration * (1 - s.margin), free, rest=s.boundary == "rest")
    regressor = Regressor(robot)
    base = base_parameters(regressor)
    columns = _excitable(space, param, regressor, base) if s.fixed else base.independent
    info = _combine(previous, base, columns)
    whitener = noise_whitener(s.noise, robot.n)
    weight = s.rate * period * s.periods / s.samples
    criterion = make_criterion(s.criterion, scaling=s.scaling, previous=info, weight=weight)
    ramp, steady = s.ramp_duration, s.periods * period
    n_c = CONSTRAINT_FACTOR * s.samples
    problem = ExcitationProblem(
        space, param, ramp, steady,
        criterion_times=ramp + (np.arange(s.samples) + 0.5) * period / s.samples,
        constraint_times=dense_times(period, ramp, s.periods, n_c),
        delta=(2 * np.pi * s.harmonics / n_c) ** 2 / 8, constraints=constraints,
        criterion=criterion, regressor=regressor, columns=columns, whitener=whitener)
    return Assembly(robot, s, space, constraints, param, regressor, base, whitener, criterion,
                    problem, max(DENSE_SAMPLES, 10 * n_c), columns)


def _excitable(space: DesignSpace, param: Parametrization, regressor: Regressor,
               base: BaseParameters, tolerance: float = 1e-8) -> np.ndarray:
    """The base columns that stay independent when some coordinates are held still.

    A held coordinate leaves parameters without excitation (the inertia of a link that never
    turns about its own axis, say), so the criterion would be infinite for every trajectory.
    The base regressor is stacked at random states that keep the fixed coordinates still, its
    columns scaled to unit norm, and each column kept, in the base order, when it adds to the
    span of those kept (the rank test of :func:`~dynid.models.base_parameters`)."""
    rng = np.random.default_rng(0)
    n, b = space.n, base.rank
    N = max(60, int(np.ceil(6 * b / n)))
    half = np.where(np.isfinite(param.offset_scale), param.offset_scale, 1.0)
    free = param.free
    q = param.center + free * half * rng.uniform(-0.9, 0.9, (N, n))
    v = free * param.amplitude_scale[:, 0] * rng.standard_normal((N, n))
    a = free * param.amplitude_scale[:, 0] * param.omega * rng.standard_normal((N, n))
    W = base_regressor(regressor, base.independent, *space.basis_state(q, v, a))
    W = W.reshape(-1, b)
    W = W / np.maximum(np.linalg.norm(W, axis=0), 1e-300)
    # Threshold √tolerance (1e-4), looser than the tolerance of the base-parameter rank test
    # on the same unit-norm columns: that test only separates exact dependence from rounding,
    # whereas a column with less than 1e-4 of its norm outside the span of the others, at
    # random states that move every free coordinate over its range, stays that weakly
    # excited by any trajectory with these coordinates held and would dominate the criterion.
    # (On the library robots the columns left out have residuals of 0 to rounding; the
    # smallest kept, on the dVRK PSM with outer_roll held, is 2.3e-4.)
    kept = independent_columns(W, range(b), np.sqrt(tolerance))
    return base.independent[np.array(kept, dtype=int)]


def _free(space: DesignSpace, fixed: dict) -> np.ndarray:
    unknown = [k for k in fixed if k not in space.names]
    if unknown:
        raise TrajectoryError(f"fixed: unknown coordinates {unknown}; the {space.space} "
                              f"coordinates are {list(space.names)}")
    free = np.array([name not in fixed for name in space.names])
    if not free.any():
        raise TrajectoryError(f"no free coordinate: every {space.space} coordinate of "
                              f"{list(space.names)} is fixed, so nothing can be excited; leave "
                              "at least one coordinate free")
    return free


def _combine(previous: Sequence[Information], base: BaseParameters, columns: np.ndarray
             ) -> Information | None:
    """The information of earlier experiments (on every base parameter of the robot) about
    the base parameters of ``columns``."""
    info = None
    for item in previous:
        if item.matrix.shape != (base.rank, base.rank):
            raise TrajectoryError(f"previous: information of shape {item.matrix.shape} does not "
                                  f"match the robot's {base.rank} base parameters")
        info = item if info is None else info + item
    if info is None or len(columns) == base.rank:
        return info
    return info.restrict(np.searchsorted(base.independent, columns))


def _offset_range(robot: Robot, space: DesignSpace, s: DesignSettings
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Middle and half-width of the positions that the limits of both spaces allow, per design
    coordinate (elementwise drives; with a coupling matrix or another map, such as a
    hexapod's leg lengths, the design space's own limits)."""
    own = space.limits()
    lo, hi = own.lower.astype(float).copy(), own.upper.astype(float).copy()
    trans = robot.transmission
    other = robot.actuator_limits if space.is_basis else robot.limits
    use_other = s.actuator_limits if space.is_basis else s.joint_limits
    use_own = s.joint_limits if space.is_basis else s.actuator_limits
    if not use_own:
        lo[:], hi[:] = -np.inf, np.inf
    # The positions the other space's limits allow, in design units (2, n); NaN where there
    # is no such range or a limit lies beyond the drive's reach.
    ends = np.full((2, space.n), np.nan)
    if use_other and trans.coupling is None and trans.elementwise:
        for j, drive in enumerate(trans.drives):
            pair = np.array([other.lower[j], other.upper[j]])
            if np.all(np.isfinite(pair)):
                ends[:, j] = (drive.inverse(pair, strict=False) if space.is_basis
                              else drive.evaluate(pair)[0])
        if space.unit == "increments":
            ends = trans.to_increments(ends)
    for j in np.flatnonzero(np.isfinite(ends).all(axis=0)):
        a2, b2 = np.min(ends[:, j]), np.max(ends[:, j])
        if max(lo[j], a2) >= min(hi[j], b2):
            name = space.names[j]
            raise TrajectoryError(
                f"limits exclude every trajectory: {name} must stay in [{lo[j]:.6g}, "
                f"{hi[j]:.6g}] {space.units[j]} by its own limits and in [{a2:.6g}, {b2:.6g}] "
                f"{space.units[j]} by the {'actuator' if space.is_basis else 'joint'} limits, "
                "which do not overlap; correct one of them")
        lo[j], hi[j] = max(lo[j], a2), min(hi[j], b2)
    both = np.isfinite(lo) & np.isfinite(hi)
    finite_lo, finite_hi = np.where(np.isfinite(lo), lo, 0.0), np.where(np.isfinite(hi), hi, 0.0)
    center = np.where(both, (finite_lo + finite_hi) / 2,
                      np.where(np.isfinite(lo), finite_lo, finite_hi))
    half = np.where(both, (finite_hi - finite_lo) / 2 * (1 - s.margin), np.inf)
    return center, half


def _feasible_start(asm: Assembly, rng: np.random.Generator, attempts: int = 30
                    ) -> np.ndarray:
    """A random start inside every constraint on the grid: random offsets and harmonics, the
    harmonics scaled to 90 % of the largest feasible amplitude."""
    problem, param = asm.problem, asm.param
    worst = None
    for attempt in range(attempts):
        x = param.random(rng, offset_spread=0.5 if attempt < attempts // 2 else 0.0)
        alpha = largest_factor(lambda f, x=x: problem.grid_violation(param.scaled(x, f)) <= 0,
                               steps=30, grow=True)
        still = param.at_rest(x)
        if alpha is None:               # the offsets alone fail
            worst = still if worst is None else worst
            continue
        worst = still
        if alpha > 0:
            return param.scaled(x, 0.9 * alpha)
    report = check(asm.trajectory(worst), asm.robot, asm.constraints, per_period=8)
    report.raise_if_violated("limits exclude every trajectory: holding still at the allowed "
                             "offsets")
    raise TrajectoryError("limits exclude every trajectory: no random offset within the "
                          "limits passes every constraint on the grid; relax the constraints")
