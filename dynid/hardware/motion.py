"""What a capture commands, cycle by cycle, all checked against the limits before any of it.

A :class:`Schedule` holds the actuator targets of every cycle: a ramp in from where the robot
stands to the trajectory's first state, the trajectory for the requested periods (the
recorded part), and a ramp out that brings the robot to rest. The ramps are quintic
polynomials in basis (joint) coordinates, where the joint limits are boxes: a ramp in from
rest to rest stays on the straight segment between two configurations inside them; the ramp
out starts from the trajectory's last state (position, velocity, acceleration) and stops at
``q + v T / 2``. Each lasts long enough for half of every velocity and acceleration limit,
at least ``min_ramp`` seconds. The whole schedule is then checked densely (every cycle)
against every joint and actuator limit; a violation raises
:class:`~dynid.errors.TrajectoryError` naming the limit, the coordinate and the time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TrajectoryError
from ..models import Regressor, Robot
from ..trajectories.constraints import Report, worst_points
from ..trajectories.feasibility import build_constraints, evaluate
from ..trajectories.spaces import DesignSpace, basis_motion

__all__ = ["Schedule", "check_motion", "plan", "quintic", "sample_trajectory"]


@dataclass(frozen=True)
class Schedule:
    """Actuator targets (N, n) at ``rate`` Hz; the cycles in ``recorded`` are the trajectory's.
    ``feedforward`` (N, n) is the output the robot's prior model needs at each target (A,
    N·m or N), or ``None``."""

    targets: np.ndarray
    recorded: slice
    rate: float
    ramp_in: float
    ramp_out: float
    feedforward: np.ndarray | None = None

    @property
    def cycles(self) -> int:
        return len(self.targets)


def quintic(start: np.ndarray, end: np.ndarray, duration: float, t: np.ndarray, *,
            v0: np.ndarray | None = None, a0: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities, accelerations (N, n) of the quintic from ``start`` (with
    velocity ``v0`` and acceleration ``a0``, default rest) to ``end`` at rest, at times
    ``t`` (N,) in [0, duration]."""
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    v0 = np.zeros_like(start) if v0 is None else np.asarray(v0, dtype=float)
    a0 = np.zeros_like(start) if a0 is None else np.asarray(a0, dtype=float)
    T = float(duration)
    d = end - start - v0 * T - a0 * T**2 / 2
    # q = start + v0 t + a0 t²/2 + c3 t³ + c4 t⁴ + c5 t⁵ with q(T) = end, q'(T) = q''(T) = 0.
    M = np.array([[T**3, T**4, T**5], [3 * T**2, 4 * T**3, 5 * T**4],
                  [6 * T, 12 * T**2, 20 * T**3]])
    rhs = np.vstack([d, -v0 - a0 * T, -a0])
    c3, c4, c5 = np.linalg.solve(M, rhs)
    s = np.clip(np.asarray(t, dtype=float), 0.0, T)[:, None]
    q = start + v0 * s + a0 * s**2 / 2 + c3 * s**3 + c4 * s**4 + c5 * s**5
    v = v0 + a0 * s + 3 * c3 * s**2 + 4 * c4 * s**3 + 5 * c5 * s**4
    a = a0 + 6 * c3 * s + 12 * c4 * s**2 + 20 * c5 * s**3
    return q, v, a


def check_motion(robot: Robot, t: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                 what: str) -> Report:
    """Every joint and actuator limit at the basis states (N, n) at times ``t``; raises
    :class:`~dynid.errors.TrajectoryError` naming the worst violation."""
    space = DesignSpace(robot, "basis")
    values, rows = evaluate(build_constraints(robot, space), space, q, v, a)
    report = Report(tuple(worst_points(t, values, rows)), len(t))
    report.raise_if_violated(what)
    return report


def _duration(delta: np.ndarray, robot: Robot, min_ramp: float, fill: float) -> float:
    """Shortest rest-to-rest quintic over ``delta`` (n,) within ``fill`` of the limits: its
    peak speed is 15/8 Δ/T and its peak acceleration 10/√3 Δ/T²."""
    lim = robot.limits
    with np.errstate(divide="ignore", invalid="ignore"):
        t_v = np.where(np.isfinite(lim.velocity), 15 / 8 * np.abs(delta) / (fill * lim.velocity),
                       0.0)
        t_a = np.where(np.isfinite(lim.acceleration), np.sqrt(
            10 / np.sqrt(3) * np.abs(delta) / (fill * lim.acceleration)), 0.0)
    return float(max(min_ramp, np.max(t_v, initial=0.0), np.max(t_a, initial=0.0)))


def _actuator_stretch(robot: Robot, motion, fill: float) -> float:
    """How much longer a rest-to-rest ramp must last for its actuators to stay within
    ``fill`` of their speed and acceleration limits (a lever's ratio varies along the way):
    speeds scale as 1/T and accelerations as 1/T²."""
    lim = robot.actuator_limits
    if lim is None:
        return 1.0
    _, v, a, _ = robot.transmission.actuator_state(*motion)
    with np.errstate(divide="ignore", invalid="ignore"):
        sv = np.where(np.isfinite(lim.velocity), np.abs(v).max(axis=0, initial=0.0)
                      / (fill * lim.velocity), 0.0)
        sa = np.where(np.isfinite(lim.acceleration), np.sqrt(
            np.abs(a).max(axis=0, initial=0.0) / (fill * lim.acceleration)), 0.0)
    return float(max(1.0, np.max(sv, initial=0.0), np.max(sa, initial=0.0)))


def sample_trajectory(robot: Robot, trajectory, rate: float
                      ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The trajectory's basis states at every cycle of ``rate`` Hz over its whole duration,
    checked against every limit (nothing about the robot's present position is needed, so
    this runs before any frame is sent)."""
    if not (np.isfinite(rate) and rate > 0):
        raise TrajectoryError(f"rate: expected a cycle rate > 0 Hz, found {rate}")
    n_traj = int(np.floor(trajectory.duration * rate + 1e-9)) + 1
    t = np.arange(n_traj) / rate
    motion = basis_motion(trajectory, robot)(t)
    check_motion(robot, t, *motion, "the trajectory")
    return t, motion


def plan(robot: Robot, trajectory, rate: float, start: np.ndarray, *,
         min_ramp: float = 1.0, fill: float = 0.5, feedforward: bool = True) -> Schedule:
    """The schedule of a capture of ``trajectory`` (all its periods) at ``rate`` Hz for a
    robot whose actuators stand at ``start`` (n,): checked against every limit; with the
    prior model's output along it when ``feedforward``."""
    t_traj, (q_t, v_t, a_t) = sample_trajectory(robot, trajectory, rate)
    n_traj = len(t_traj)
    trans = robot.transmission
    start = np.asarray(start, dtype=float).reshape(1, -1)
    zero = np.zeros_like(start)
    try:
        q_start = trans.basis_state(start, zero, zero)[0][0]
    except Exception as exc:  # a lever beyond its stroke, a NaN: say where the robot is
        raise TrajectoryError(f"the robot's actuators stand at {start[0].tolist()}, which its "
                              f"transmission cannot map to joint positions ({exc})") from None
    dt = 1.0 / rate
    check_motion(robot, np.zeros(1), q_start[None], zero, zero,
                 "the robot's present position")

    t_in = _duration(q_t[0] - q_start, robot, min_ramp, fill)
    for _ in range(2):  # lengthened once if the actuators would move too fast
        n_in = int(np.ceil(t_in * rate))
        t_in = n_in * dt
        ramp_in = quintic(q_start, q_t[0], t_in, np.arange(n_in) * dt)
        t_in *= _actuator_stretch(robot, ramp_in, fill)
    check_motion(robot, np.arange(n_in) * dt, *ramp_in, "the ramp to the trajectory's start")

    q_e, v_e, a_e = q_t[-1], v_t[-1], a_t[-1]
    # Stopping from v_e over T decelerates by about 1.5 v_e / T: T ≥ 3 v_e / (fill a_lim).
    acc_lim = robot.limits.acceleration
    moving = bool(np.any(np.abs(v_e) > 0) or np.any(np.abs(a_e) > 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t_acc = np.where(np.isfinite(acc_lim), 3 * np.abs(v_e) / (fill * acc_lim), 0.0)
    t_out = max(min_ramp if moving else 0.1, float(np.max(t_acc, initial=0.0)))
    n_out = int(np.ceil(t_out * rate))
    t_out = n_out * dt
    times = (np.arange(n_out) + 1) * dt
    ramp_out = quintic(q_e, q_e + v_e * t_out / 2, t_out, times, v0=v_e, a0=a_e)
    check_motion(robot, trajectory.duration + times, *ramp_out, "the ramp out of the trajectory")

    basis = np.vstack([ramp_in[0], q_t, ramp_out[0]])
    vel = np.vstack([ramp_in[1], v_t, ramp_out[1]])
    acc = np.vstack([ramp_in[2], a_t, ramp_out[2]])
    targets = trans.actuator_state(basis, vel, acc)[0]
    ff = Regressor(robot).predict(basis, vel, acc, robot.prior) if feedforward else None
    return Schedule(targets, slice(n_in, n_in + n_traj), float(rate), t_in, t_out, ff)
