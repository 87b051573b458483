"""A random periodic reference for simulations: a Fourier excitation of the basis coordinates.

:class:`FourierReference` is a :class:`~dynid.trajectories.fourier.FourierTrajectory` of the
robot's basis coordinates in SI units (an offset and harmonics per coordinate, amplitudes
ramped in and out over ``ramp`` seconds, so the motion starts and ends at rest), callable as
``t → (q, v, a)``. :meth:`FourierReference.random` draws its coefficients and fits them to the
robot's limits with the dense feasibility check of :mod:`dynid.trajectories`. Any callable
``t → (q, v, a)``, or an optimized excitation from :mod:`dynid.trajectories`, can replace it in
:func:`~dynid.hardware.simulate.simulate`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import DataError, ModelError
from ..models import Robot
from ..trajectories.feasibility import build_constraints, evaluate, shrink
from ..trajectories.fourier import FourierTrajectory
from ..trajectories.spaces import DesignSpace

__all__ = ["FourierReference"]


class FourierReference(FourierTrajectory):
    """A Fourier trajectory of a robot's basis coordinates (SI units), callable.

    Parameters
    ----------
    coefficients, frequency, names, ramp, periods
        As in :class:`~dynid.trajectories.fourier.FourierTrajectory`: per coordinate
        ``[x0, μ_1 … μ_nh, ν_1 … ν_nh]`` (``μ, ν`` velocity amplitudes), the fundamental
        frequency in Hz, the basis coordinate names, the ramp duration (s) and the whole
        periods between the ramps (after them the motion rests at the offsets).
    """

    def __init__(self, coefficients: np.ndarray, frequency: float, names: Sequence[str], *,
                 ramp: float = 0.0, periods: int = 1):
        super().__init__(coefficients, frequency, names, ramp=ramp, periods=periods)

    def __call__(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities and accelerations (N, n) at times ``t`` (N,)."""
        return self.evaluate(np.atleast_1d(np.asarray(t, dtype=float)))

    @classmethod
    def random(cls, robot: Robot, *, harmonics: int = 5, frequency: float = 0.2,
               fill: float = 0.7, ramp: float | None = None, periods: int = 1,
               seed: int = 0) -> FourierReference:
        """Random coefficients (position amplitudes falling as 1/k with the harmonic k) about
        the middle of the joint ranges, each coordinate scaled to use ``fill`` of the limits
        it meets first: its own position (±π when unbounded), velocity and acceleration
        limits, and those of the actuators it moves (through the transmission, about the
        actuator state at the offsets). The result passes the dense check of every joint and
        actuator limit narrowed to ``fill`` of its range. The ramp defaults to one period.
        """
        if not 0 < fill <= 1:
            raise DataError(f"fill: expected a fraction in (0, 1], found {fill}")
        rng = np.random.default_rng(seed)
        n, lim = robot.n, robot.limits
        lo = np.where(np.isfinite(lim.lower), lim.lower, -np.pi)
        hi = np.where(np.isfinite(lim.upper), lim.upper, np.pi)
        ramp = 1.0 / frequency if ramp is None else ramp
        # a_k sin(kωt) + b_k cos(kωt), written about t − ramp in velocity amplitudes (μ, ν).
        k = np.arange(1, harmonics + 1)[:, None]
        a, b = rng.standard_normal((harmonics, n)) / k, rng.standard_normal((harmonics, n)) / k
        w, phase = 2 * np.pi * frequency * k, 2 * np.pi * frequency * k * ramp
        mu = w * (a * np.cos(phase) - b * np.sin(phase))
        nu = -w * (a * np.sin(phase) + b * np.cos(phase))
        ref = cls(np.column_stack([(lo + hi) / 2, mu.T, nu.T]), frequency, robot.joint_names,
                  ramp=ramp, periods=periods)

        space = DesignSpace(robot, "basis")
        actuators = build_constraints(robot, space, joint_limits=False, margin=1 - fill)
        rest = np.zeros((1, n))
        at_rest = evaluate(actuators, space, ref.offsets[None], rest, rest)[0][0]
        rows = [r for c in actuators for r in c.rows]
        # Room of each row about the state at rest (infinite for a one-sided position limit,
        # left to the dense check).
        mid = np.array([(r.lower + r.upper) / 2 if np.isfinite(r.lower + r.upper) else 0.0
                        for r in rows])
        room = np.array([(r.upper - r.lower) / 2 for r in rows]) - np.abs(at_rest - mid)
        if np.any(room <= 0):
            bad = rows[int(np.argmin(room))].coordinate
            raise DataError(f"reference: the middle of the joint ranges puts actuator {bad} "
                            f"outside {fill:.0%} of its range; check the joint and actuator "
                            "limits")
        # Which coordinates move the actuator of each row.
        moves = robot.transmission.jacobian(ref.offsets[None])[0] != 0
        owner = [robot.actuator_names.index(r.coordinate) for r in rows]
        moved = moves[owner] if rows else np.zeros((0, n), dtype=bool)
        # Scaled on a grid over the ramp and one period, then checked densely.
        t = np.linspace(0.0, ramp + ref.period, 320 * harmonics + 1)

        def joint_use(ref: FourierReference) -> np.ndarray:
            q, v, a = ref.evaluate(t)
            return np.max([np.abs(q - ref.offsets).max(0) / ((hi - lo) / 2),
                           np.abs(v).max(0) / lim.velocity,
                           np.abs(a).max(0) / lim.acceleration], axis=0) / fill

        def use(ref: FourierReference) -> np.ndarray:
            q, v, a = ref.evaluate(t)
            joint = joint_use(ref)
            values = evaluate(actuators, space, q, v, a)[0]
            row = np.nan_to_num(np.abs(values - at_rest).max(0) / room, nan=2.0)
            return np.max(np.vstack([joint, moved * row[:, None]]), axis=0)

        try:
            use(ref)
        except ModelError:
            # The actuator map refuses the raw amplitudes (a hexapod's legs far from home):
            # within the joints' limits first.
            ref = ref.scaled(1 / np.maximum(joint_use(ref), 1e-12))
        for _ in range(30):  # nonlinear drives make the use not quite linear in the amplitude
            ratio = use(ref)
            ref = ref.scaled(1 / ratio)
            if np.all(np.abs(ratio - 1) < 1e-4):
                break
        limits = build_constraints(robot, space, margin=1 - fill)
        fitted = shrink(ref.scaled(1 / np.maximum(use(ref), 1.0) * (1 - 1e-9)), robot, limits)
        return cls(fitted[0].coefficients, frequency, robot.joint_names, ramp=ramp,
                   periods=periods)
