"""Constraints on an excitation trajectory, and the dense check every accepted trajectory passes.

Three kinds, each a set of rows ``lower ≤ value(t) ≤ upper`` that must hold at every time:

* :class:`LimitConstraint`: position, velocity and acceleration limits of the basis coordinates
  (joint limits) or of the actuators (motor limits, in SI units or encoder increments);
* :class:`CartesianBox`: the position of a frame of the robot stays in an axis-aligned box of the
  base frame (Wang: the robot is confined in its workspace).

:func:`check` evaluates every row on a dense time grid of the executed trajectory (ramps
included) and reports each row's worst margin, with the time and value where it is reached; an
infeasible trajectory raises :class:`~dynid.errors.TrajectoryError` naming the limit, the
coordinate and the time.

Margins are normalized: ``min(upper − value, value − lower) / scale`` with ``scale`` half the
allowed range (the limit itself for ``±`` velocity and acceleration limits), or 1 m for one-sided
Cartesian bounds. A margin ≥ 0 means satisfied.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..errors import TrajectoryError
from ..models import Limits, Robot

__all__ = ["CartesianBox", "Constraint", "LimitConstraint", "Report", "Row", "Violation",
           "dense_times", "row_bounds"]

_QUANTITIES = ("position", "velocity", "acceleration")


@dataclass(frozen=True)
class Row:
    """One constrained scalar: ``lower ≤ value ≤ upper`` in ``unit``."""

    group: str          # "joint limits", "actuator limits", "cartesian bounds"
    coordinate: str     # coordinate, actuator or frame name
    quantity: str       # position, velocity, acceleration, or x, y, z
    unit: str
    lower: float
    upper: float

    @property
    def scale(self) -> float:
        if np.isfinite(self.lower) and np.isfinite(self.upper):
            return (self.upper - self.lower) / 2
        return 1.0

    def describe(self) -> str:
        lo, hi = self.lower, self.upper
        if np.isfinite(lo) and lo == -hi:
            return f"±{hi:.6g} {self.unit}"
        return f"[{lo:.6g}, {hi:.6g}] {self.unit}"


class Constraint(ABC):
    """Rows evaluated on states of one space (``"design"``, ``"basis"`` or ``"actuator"``)."""

    space: str
    rows: tuple[Row, ...]

    @abstractmethod
    def values(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Row values (N, m) at states (N, n)."""

    @abstractmethod
    def jacobian(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """``∂value/∂state`` (N, m, 3, n); axis 2 is position, velocity, acceleration."""

    def values_and_jacobian(self, q: np.ndarray, v: np.ndarray, a: np.ndarray
                            ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`values` and :meth:`jacobian` together (one pass where they share work)."""
        return self.values(q, v, a), self.jacobian(q, v, a)


class LimitConstraint(Constraint):
    """Position, velocity and acceleration limits of n coordinates (finite ones only).

    Parameters
    ----------
    limits
        The limits, in the units of the states the constraint reads.
    names, units
        Coordinate names and unit labels (n each); velocity and acceleration units get ``/s``
        and ``/s²``.
    space
        Space of the states: ``"design"``, ``"basis"`` or ``"actuator"``.
    group
        ``"joint limits"`` or ``"actuator limits"``.
    margin
        Fraction of each range kept free (0 uses the full limits): the position range shrinks
        about its middle, velocity and acceleration limits shrink towards 0.
    """

    def __init__(self, limits: Limits, names: Sequence[str], units: Sequence[str], space: str,
                 group: str, margin: float = 0.0):
        if not 0 <= margin < 1:
            raise TrajectoryError(f"margin: expected a fraction in [0, 1), found {margin}")
        self.space, self.group = space, group
        rows, select = [], []
        for j, name in enumerate(names):
            lo, hi = float(limits.lower[j]), float(limits.upper[j])
            if np.isfinite(lo) and np.isfinite(hi):
                mid, half = (lo + hi) / 2, (hi - lo) / 2 * (1 - margin)
                rows.append(Row(group, name, "position", units[j], mid - half, mid + half))
                select.append((0, j))
            elif np.isfinite(lo) or np.isfinite(hi):
                rows.append(Row(group, name, "position", units[j], lo, hi))
                select.append((0, j))
            for k, key, suffix in ((1, "velocity", "/s"), (2, "acceleration", "/s²")):
                bound = float(getattr(limits, key)[j])
                if bound <= 0 or np.isnan(bound):
                    raise TrajectoryError(f"{group} of {name}: the {key} limit must be > 0, found "
                                          f"{bound}; no trajectory can move this coordinate")
                if np.isfinite(bound):
                    b = bound * (1 - margin)
                    rows.append(Row(group, name, key, units[j] + suffix, -b, b))
                    select.append((k, j))
        self.rows = tuple(rows)
        self._select = np.array(select, dtype=int).reshape(-1, 2)

    def values(self, q, v, a):
        states = np.stack([q, v, a], axis=1)    # (N, 3, n)
        return states[:, self._select[:, 0], self._select[:, 1]]

    def jacobian(self, q, v, a):
        m = len(self.rows)
        J = np.zeros((q.shape[0], m, 3, q.shape[1]))
        J[:, np.arange(m), self._select[:, 0], self._select[:, 1]] = 1.0
        return J


@dataclass(frozen=True)
class CartesianBox:
    """The origin of ``frame`` stays in ``lower ≤ p ≤ upper`` (m, base frame; ±inf: free)."""

    frame: str
    lower: tuple[float, float, float]
    upper: tuple[float, float, float]

    def __post_init__(self) -> None:
        lo = np.asarray(self.lower, float)
        hi = np.asarray(self.upper, float)
        if lo.shape != (3,) or hi.shape != (3,) or np.any(np.isnan(lo)) or np.any(np.isnan(hi)):
            raise TrajectoryError(f"cartesian bounds of {self.frame!r}: expected three lower and "
                                  f"three upper values (m), found {self.lower} and {self.upper}")
        if np.any(lo >= hi):
            raise TrajectoryError(f"cartesian bounds of {self.frame!r}: every lower bound must be "
                                  f"below the upper one, found {self.lower} and {self.upper}")
        object.__setattr__(self, "lower", tuple(float(x) for x in lo))
        object.__setattr__(self, "upper", tuple(float(x) for x in hi))

    def bind(self, robot: Robot) -> CartesianConstraint:
        return CartesianConstraint(self, robot)

    def to_dict(self) -> dict:
        return {"frame": self.frame, "lower": list(self.lower), "upper": list(self.upper)}


class CartesianConstraint(Constraint):
    """A :class:`CartesianBox` evaluated on a robot's basis positions with Pinocchio."""

    space = "basis"

    def __init__(self, box: CartesianBox, robot: Robot):
        model = robot.tree.model
        if not model.existFrame(box.frame):
            frames = [f.name for f in model.frames][1:]
            raise TrajectoryError(f"cartesian bounds: robot {robot.name!r} has no frame "
                                  f"{box.frame!r}; its frames are {frames}")
        self.box, self.robot = box, robot
        self._fid = model.getFrameId(box.frame)
        self._axes = [i for i in range(3)
                      if np.isfinite(box.lower[i]) or np.isfinite(box.upper[i])]
        self.rows = tuple(Row("cartesian bounds", box.frame, "xyz"[i], "m", box.lower[i],
                              box.upper[i]) for i in self._axes)

    def values(self, q, v, a):
        return self._kinematics(q, jacobian=False)[0]

    def jacobian(self, q, v, a):
        return self.values_and_jacobian(q, v, a)[1]

    def values_and_jacobian(self, q, v, a):
        pos, jac = self._kinematics(q, jacobian=True)
        J = np.zeros((q.shape[0], len(self.rows), 3, q.shape[1]))
        J[:, :, 0, :] = jac
        return pos, J

    def _kinematics(self, q: np.ndarray, jacobian: bool):
        robot = self.robot
        model = robot.tree.model
        data = model.createData()
        closure = robot.closure
        q_t = q if closure.is_identity else closure.positions(q)
        pq = robot.tree.configuration(q_t)
        pos = np.empty((q.shape[0], len(self._axes)))
        jac = np.empty((q.shape[0], len(self._axes), q_t.shape[1])) if jacobian else None
        frame = pin.LOCAL_WORLD_ALIGNED
        for k, qk in enumerate(pq):
            if jacobian:
                Jk = pin.computeFrameJacobian(model, data, qk, self._fid, frame)
                jac[k] = Jk[self._axes]
                pos[k] = data.oMf[self._fid].translation[self._axes]
            else:
                pin.framesForwardKinematics(model, data, qk)
                pos[k] = data.oMf[self._fid].translation[self._axes]
        if jacobian and not closure.is_identity:
            jac = np.matmul(jac, closure.jacobian(q))
        return pos, jac


@dataclass(frozen=True)
class Violation:
    """A row's worst point on the dense grid."""

    row: Row
    time: float
    value: float
    margin: float

    def message(self) -> str:
        r = self.row
        what = r.quantity if r.group != "cartesian bounds" else f"{r.quantity} position"
        bound = {"joint limits": "joint limit", "actuator limits": "actuator limit",
                 "cartesian bounds": "cartesian bound"}.get(r.group, r.group)
        if np.isnan(self.value):
            return (f"{r.coordinate}: {what} cannot be computed at t = {self.time:.4g} s: the "
                    f"mechanism cannot reach that state (the {bound} is {r.describe()})")
        side = "above" if self.value > r.upper else "below"
        return (f"{r.coordinate}: {what} reaches {self.value:.6g} {r.unit} at t = "
                f"{self.time:.4g} s, {side} the {bound} {r.describe()}")


@dataclass(frozen=True)
class Report:
    """Dense check of every row: the worst point of each row (margin < 0: violated)."""

    worst: tuple[Violation, ...]
    samples: int

    @property
    def margin(self) -> float:
        """Worst normalized margin over every row (≥ 0: every constraint satisfied)."""
        return min((w.margin for w in self.worst), default=np.inf)

    @property
    def violations(self) -> tuple[Violation, ...]:
        return tuple(sorted((w for w in self.worst if w.margin < 0), key=lambda w: w.margin))

    @property
    def feasible(self) -> bool:
        return self.margin >= 0

    def raise_if_violated(self, what: str = "trajectory") -> None:
        bad = self.violations
        if bad:
            more = f" ({len(bad) - 1} more rows violated)" if len(bad) > 1 else ""
            raise TrajectoryError(f"{what} violates a limit: {bad[0].message()}{more}")


def margins(values: np.ndarray, lower: np.ndarray, upper: np.ndarray,
            scale: np.ndarray) -> np.ndarray:
    """Normalized margins (N, m) of row values (N, m)."""
    return np.minimum(upper - values, values - lower) / scale


def row_bounds(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower bounds, upper bounds and normalizing scales of rows, (m,) each."""
    return (np.array([r.lower for r in rows], dtype=float),
            np.array([r.upper for r in rows], dtype=float),
            np.array([r.scale for r in rows], dtype=float))


def worst_points(t: np.ndarray, values: np.ndarray, rows: Sequence[Row]) -> list[Violation]:
    m = margins(values, *row_bounds(rows))
    m[np.isnan(m)] = -np.inf
    k = np.argmin(m, axis=0)
    cols = np.arange(len(rows))
    return [Violation(rows[i], float(t[k[i]]), float(values[k[i], i]), float(m[k[i], i]))
            for i in cols]


def dense_times(period: float, ramp: float, periods: int, per_period: int) -> np.ndarray:
    """Executed times that cover the ramp-in, one whole period and the ramp-out (the other
    periods repeat it), ``per_period`` samples per period."""
    dt = period / per_period
    steady = np.arange(per_period) * dt + ramp
    if ramp <= 0:
        return steady
    n_ramp = int(np.ceil(ramp / dt))
    up = np.linspace(0.0, ramp, n_ramp, endpoint=False)
    end = 2 * ramp + periods * period
    down = np.linspace(end - ramp, end, n_ramp + 1)
    return np.concatenate([up, steady, down])
