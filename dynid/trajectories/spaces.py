"""The space a trajectory is designed in, and its maps to the robot's coordinates.

A trajectory lives in the robot's basis coordinates (joints, or a platform pose) or in its
actuator coordinates (what the drives move), in SI units or, for actuators with encoders, in
encoder increments (Leborne, Table III). The regressor takes basis states, actuator limits apply
to actuator states, so the design needs both maps and their Jacobians:

* design → basis: identity, or ``transmission.basis_state`` after converting increments to rad;
* design → actuator: ``transmission.actuator_state``, or the unit conversion alone.

The per-sample Jacobian of a map ``(x, ẋ, ẍ) → (q, q̇, q̈)`` has the block structure
``[[J, 0, 0], [∂q̇/∂x, J, 0], [∂q̈/∂x, ∂q̈/∂ẋ, J]]``: the velocity is ``J ẋ`` and the acceleration
``J ẍ + J̇ ẋ``. It is obtained by differences of the map, which are exact (to rounding) along ẍ
(the map is affine in ẍ) and along ẋ with central differences (quadratic in ẋ); only the
position columns carry the O(h²) error of central differences. The maps are vectorised numpy,
so the 1 + 5n evaluations cost far less than one regressor evaluation.
"""

from __future__ import annotations

import numpy as np

from ..errors import TrajectoryError
from ..models import Limits, Robot
from .fourier import SPACES, UNITS

__all__ = ["DesignSpace", "basis_motion"]

_STEP = 1e-6  # position step of the map differences, relative to the coordinate's scale


class DesignSpace:
    """Coordinates a trajectory is designed in, with maps to basis and actuator states.

    Parameters
    ----------
    robot
        The robot.
    space
        ``"basis"`` or ``"actuator"``.
    unit
        ``"si"``, or ``"increments"`` (actuator space, needs the actuators' encoders).
    """

    def __init__(self, robot: Robot, space: str = "basis", unit: str = "si"):
        if space not in SPACES:
            raise TrajectoryError(f"space: expected one of {SPACES}, found {space!r}")
        if unit not in UNITS:
            raise TrajectoryError(f"unit: expected one of {UNITS}, found {unit!r}")
        trans = robot.transmission
        if unit == "increments":
            if space != "actuator":
                raise TrajectoryError("unit 'increments' applies to actuator space; design in "
                                      "space 'actuator' or use unit 'si'")
            if trans.increments_per_turn is None:
                raise TrajectoryError(f"unit 'increments': robot {robot.name!r} gives no encoder "
                                      "resolution; add actuator.encoder.increments_per_turn to "
                                      "its robot file or use unit 'si'")
        self.robot, self.space, self.unit = robot, space, unit
        self.names = robot.joint_names if space == "basis" else robot.actuator_names
        self.n = robot.n
        #: Position unit of each design coordinate: the basis coordinates' own (m or rad),
        #: rad for the (rotary) motors, or encoder increments.
        if unit == "increments":
            self.units = ("inc",) * self.n
        else:
            self.units = robot.basis_units if space == "basis" else robot.actuator_units

    @property
    def is_basis(self) -> bool:
        """True when design coordinates are the basis coordinates in SI units."""
        return self.space == "basis"

    # Unit conversion (actuator space) ----------------------------------------------------
    def to_si(self, x, xd, xdd):
        """Actuator states in SI units (rad) of design states."""
        if self.unit == "si":
            return x, xd, xdd
        trans = self.robot.transmission
        return (trans.from_increments(x), trans.from_increments(xd, derivative=True),
                trans.from_increments(xdd, derivative=True))

    # Maps ------------------------------------------------------------------------------------
    def basis_state(self, x, xd, xdd, *, strict: bool = True):
        """Basis positions, velocities, accelerations (N, n), SI, of design states (N, n).

        A state beyond a mechanism's reach (a lever past its cylinder's stroke, or at its end,
        a dead point) raises :class:`~dynid.errors.ModelError`, or gives NaN at that sample
        when not ``strict``."""
        if self.is_basis:
            return x, xd, xdd
        return self.robot.transmission.basis_state(*self.to_si(x, xd, xdd), strict=strict)

    def actuator_state(self, x, xd, xdd):
        """Actuator positions, velocities, accelerations (N, n), SI (rad), of design states."""
        if self.is_basis:
            return self.robot.transmission.actuator_state(x, xd, xdd)[:3]
        return self.to_si(x, xd, xdd)

    def limits(self) -> Limits:
        """The limits that live in the design space itself, in design units."""
        if self.is_basis:
            return self.robot.limits
        lim = self.robot.actuator_limits
        if self.unit == "si":
            return lim
        trans = self.robot.transmission
        return Limits(trans.to_increments(lim.lower), trans.to_increments(lim.upper),
                      trans.to_increments(lim.velocity, derivative=True),
                      trans.to_increments(lim.acceleration, derivative=True), lim.effort)

    def jacobian(self, target: str, x, xd, xdd, scale: np.ndarray) -> np.ndarray | None:
        """Per-sample Jacobian (N, 3, n, 3, n) of the map to ``target`` (``"basis"`` or
        ``"actuator"``), ``[k_out, j_out, k_in, j_in]`` with k = position, velocity,
        acceleration; ``None`` for the identity. ``scale`` (n,) sets the position steps.

        At a sample within a position step of a mechanism's reach, the position column is the
        one-sided difference towards the reachable side; samples beyond reach give NaN."""
        if target == "basis" and self.is_basis:
            return None
        if target == "basis":
            def f(*state):
                return np.stack(self.basis_state(*state, strict=False), 1)
        else:
            def f(*state):
                return np.stack(self.actuator_state(*state), 1)
        N, n = x.shape
        J = np.zeros((N, 3, n, 3, n))
        h = _STEP * scale
        base = f(x, xd, xdd)
        for j in range(n):
            e = np.zeros(n)
            e[j] = h[j]
            plus, minus = f(x + e, xd, xdd), f(x - e, xd, xdd)
            column = (plus - minus) / (2 * h[j])
            edge = ~np.isfinite(column)
            if edge.any():
                forward = (plus - base) / h[j]
                column[edge] = np.where(np.isfinite(forward), forward, (base - minus) / h[j])[edge]
            J[:, :, :, 0, j] = column
            e[j] = 1.0
            plus, minus = f(x, xd + e, xdd), f(x, xd - e, xdd)
            J[:, :, :, 1, j] = (plus - minus) / 2
            J[:, :, :, 2, j] = f(x, xd, xdd + e) - base
        return J

    def __repr__(self) -> str:
        return f"DesignSpace({self.space}, {self.unit}: {', '.join(self.names)})"


def basis_motion(trajectory, robot: Robot):
    """The robot's basis motion along a trajectory of any design space: a callable
    ``t (N,) → (q, q̇, q̈)``, each (N, n) in SI units, e.g. the reference of a simulation.

    Parameters
    ----------
    trajectory
        A :class:`~dynid.trajectories.fourier.FourierTrajectory` of ``robot``.
    robot
        The robot.
    """
    space = DesignSpace(robot, trajectory.space, trajectory.unit)
    if tuple(trajectory.names) != tuple(space.names):
        raise TrajectoryError(f"trajectory coordinates {list(trajectory.names)} do not match "
                              f"the {trajectory.space} coordinates of robot {robot.name!r}, "
                              f"{list(space.names)}")

    def motion(t):
        return space.basis_state(*trajectory.evaluate(t))

    return motion
