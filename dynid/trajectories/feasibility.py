"""Which constraints a design must satisfy, checking them densely, and restoring feasibility.

:func:`build_constraints` turns a robot's limits (and optional Cartesian boxes) into
:class:`~dynid.trajectories.constraints.Constraint` objects that read the states of the space
they live in; :func:`evaluate` maps design states there. :func:`check` is the acceptance test: every
row on a dense grid covering the ramps and one whole period. :func:`shrink` scales the oscillating
part of a trajectory about its offsets until the dense check passes (every limit of a Fourier
trajectory in its own space scales with that factor, the offsets themselves being feasible).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import ModelError, TrajectoryError
from ..models import Robot
from .constraints import (
    CartesianBox,
    Constraint,
    LimitConstraint,
    Report,
    Row,
    dense_times,
    worst_points,
)
from .efforts import EffortConstraint
from .fourier import FourierTrajectory
from .spaces import DesignSpace, basis_motion

__all__ = ["build_constraints", "check", "evaluate", "largest_factor", "shrink"]

#: Dense check: samples per period, unless a design asks for more.
DENSE_SAMPLES = 4000


def build_constraints(robot: Robot, space: DesignSpace, *, joint_limits: bool = True,
                      actuator_limits: bool = True, cartesian: Sequence[CartesianBox] = (),
                      margin: float = 0.0) -> list[Constraint]:
    """The constraints of a design in ``space``: the robot's joint limits and actuator limits
    (the finite ones; each in the units of the space it lives in), the actuator efforts its
    prior model predicts against the actuators' effort limits
    (:class:`~dynid.trajectories.efforts.EffortConstraint`), and Cartesian boxes."""
    out: list[Constraint] = []
    if joint_limits:
        out.append(LimitConstraint(robot.limits, robot.joint_names, robot.basis_units,
                                   "design" if space.is_basis else "basis", "joint limits",
                                   margin))
    if actuator_limits:
        if space.space == "actuator":
            out.append(LimitConstraint(space.limits(), robot.actuator_names, space.units,
                                       "design", "actuator limits", margin))
        else:
            out.append(LimitConstraint(robot.actuator_limits, robot.actuator_names,
                                       robot.actuator_units, "actuator", "actuator limits",
                                       margin))
        if np.isfinite(robot.actuator_limits.effort).any():
            out.append(EffortConstraint(robot, margin=margin))
    out.extend(box.bind(robot) for box in cartesian)
    return [c for c in out if c.rows]


def constraint_states(space: DesignSpace, where: str, q, v, a):
    """Design states mapped to the space a constraint reads (``design``, ``basis``,
    ``actuator``), NaN at the samples a mechanism cannot reach (a lever beyond its cylinder's
    stroke)."""
    if where == "design":
        return q, v, a
    if where == "basis":
        return space.basis_state(q, v, a, strict=False)
    return space.actuator_state(q, v, a)


def evaluate(constraints: Sequence[Constraint], space: DesignSpace, q, v, a
             ) -> tuple[np.ndarray, list[Row]]:
    """Every row's value (N, m) at design states (N, n), and the rows (NaN where a mechanism
    cannot reach the state)."""
    cache: dict[str, tuple] = {}
    values, rows = [], []
    for c in constraints:
        if c.space not in cache:
            cache[c.space] = constraint_states(space, c.space, q, v, a)
        values.append(c.values(*cache[c.space]))
        rows.extend(c.rows)
    N = q.shape[0]
    return (np.hstack(values) if values else np.zeros((N, 0))), rows


def _space_of(trajectory: FourierTrajectory, robot: Robot) -> DesignSpace:
    basis_motion(trajectory, robot)     # checks that the coordinates match
    return DesignSpace(robot, trajectory.space, trajectory.unit)


def check(trajectory: FourierTrajectory, robot: Robot,
          constraints: Sequence[Constraint] | None = None, *,
          per_period: int = DENSE_SAMPLES) -> Report:
    """Every constraint row at ``per_period`` samples per period (ramps included).

    ``constraints`` defaults to the robot's joint and actuator limits. Use
    ``check(...).raise_if_violated()`` to raise :class:`~dynid.errors.TrajectoryError` naming
    the worst violation: limit, coordinate, value and time. A state the robot cannot take (a
    singular pose of a hexapod, whose actuator forces are undefined) raises
    :class:`~dynid.errors.TrajectoryError` naming the first such time.
    """
    space = _space_of(trajectory, robot)
    if constraints is None:
        constraints = build_constraints(robot, space)
    t = dense_times(trajectory.period, trajectory.ramp, trajectory.periods, per_period)
    states = trajectory.evaluate(t)
    try:
        values, rows = evaluate(constraints, space, *states)
    except ModelError as exc:  # a state the robot's maps refuse (a singular pose, say)
        k = _first_refused(constraints, space, states)
        at = ", ".join(f"{name} = {x:.6g}" for name, x in
                       zip(space.names, states[0][k], strict=True))
        raise TrajectoryError(f"trajectory: the robot cannot take its state at t = {t[k]:.6g} "
                              f"s ({at}): {exc}") from None
    return Report(tuple(worst_points(t, values, rows)), len(t))


def _first_refused(constraints: Sequence[Constraint], space: DesignSpace, states) -> int:
    """Index of the first sample whose constraint values raise, by bisection on prefixes."""
    lo, hi = 0, states[0].shape[0]            # the prefix of lo samples passes, of hi fails

    def fails(k: int) -> bool:
        try:
            evaluate(constraints, space, *(x[:k] for x in states))
        except ModelError:
            return True
        return False

    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid) else (mid, hi)
    return hi - 1


def largest_factor(feasible: Callable[[float], bool], *, steps: int = 40, tol: float = 0.0,
                   grow: bool = False) -> float | None:
    """The largest factor in [0, 1] (in [0, ∞) with ``grow``) at which ``feasible`` holds,
    for a test that holds from 0 up to some factor and fails beyond: 1 when it holds at 1
    (without ``grow``), else bisection for ``steps`` halvings or until the bracket is below
    ``tol`` (with ``grow``, after doubling 1 while it holds, up to 1e6). ``None`` when it
    fails at 0."""
    if not grow and feasible(1.0):
        return 1.0
    if not feasible(0.0):
        return None
    lo, hi = 0.0, 1.0
    while grow and hi < 1e6 and feasible(hi):
        lo, hi = hi, 2 * hi
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if feasible(mid) else (lo, mid)
        if hi - lo < tol:
            break
    return lo


def shrink(trajectory: FourierTrajectory, robot: Robot, constraints: Sequence[Constraint], *,
           per_period: int = DENSE_SAMPLES, steps: int = 40
           ) -> tuple[FourierTrajectory, Report, float] | None:
    """The trajectory with its oscillation scaled by the largest factor ≤ 1 (to 1e-6) that
    passes the dense check, that check, and the factor; ``None`` when even the offsets alone
    fail."""
    reports: dict[float, Report] = {}

    def passes(factor: float) -> bool:
        reports[factor] = check(trajectory.scaled(factor), robot, constraints,
                                per_period=per_period)
        return reports[factor].feasible

    factor = largest_factor(passes, steps=steps, tol=1e-6)
    if factor is None:
        return None
    return trajectory.scaled(factor), reports[factor], factor
