"""A simple periodic reference for simulations: a Fourier series per coordinate.

``q_i(t) = q0_i + s(t) Σ_k (a_ki sin(k ω t) + b_ki cos(k ω t))`` with ``ω = 2π f`` and an
optional ramp ``s`` (a quintic step from 0 to 1 over ``ramp`` seconds) so the motion starts at
rest. Velocities and accelerations are analytic. Any callable ``t → (q, v, a)`` can replace it in
:func:`~dynid.identify.simulate.simulate`, e.g. an optimized excitation from
:mod:`dynid.trajectories` sampled the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..models import Robot

__all__ = ["FourierReference"]


def _smoothstep(t: np.ndarray, ramp: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if ramp <= 0:
        one = np.ones_like(t)
        return one, 0 * one, 0 * one
    x = np.clip(t / ramp, 0.0, 1.0)
    inside = (t > 0) & (t < ramp)
    s = x**3 * (10 - 15 * x + 6 * x * x)
    ds = np.where(inside, 30 * x * x * (1 - x) ** 2 / ramp, 0.0)
    dds = np.where(inside, 60 * x * (1 - x) * (1 - 2 * x) / ramp**2, 0.0)
    return s, ds, dds


@dataclass(frozen=True)
class FourierReference:
    """A Fourier-series trajectory in basis coordinates.

    Parameters
    ----------
    offset
        Mean position per coordinate (n,).
    sine, cosine
        Coefficients (K, n) of ``sin(k ω t)`` and ``cos(k ω t)``, k = 1..K.
    frequency
        Fundamental frequency, Hz; the period is ``1 / frequency``.
    ramp
        Seconds over which the amplitudes rise from zero (0: none).
    """

    offset: np.ndarray
    sine: np.ndarray
    cosine: np.ndarray
    frequency: float
    ramp: float = 0.0

    def __post_init__(self) -> None:
        if not self.frequency > 0:
            raise DataError(f"frequency: expected a value > 0 Hz, found {self.frequency}")
        sine, cosine = np.atleast_2d(self.sine), np.atleast_2d(self.cosine)
        if sine.shape != cosine.shape or sine.shape[1] != np.shape(self.offset)[0]:
            raise DataError(f"sine and cosine: expected equal shapes (K, {len(self.offset)}), "
                            f"found {sine.shape} and {cosine.shape}")

    @property
    def period(self) -> float:
        return 1.0 / self.frequency

    def __call__(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities and accelerations (N, n) at times ``t`` (N,)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        K = self.sine.shape[0]
        w = 2 * np.pi * self.frequency * np.arange(1, K + 1)
        s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
        f = s @ self.sine + c @ self.cosine
        df = (c * w) @ self.sine - (s * w) @ self.cosine
        ddf = -(s * w * w) @ self.sine - (c * w * w) @ self.cosine
        r, dr, ddr = (x[:, None] for x in _smoothstep(t, self.ramp))
        return (self.offset + r * f, dr * f + r * df, ddr * f + 2 * dr * df + r * ddf)

    def scaled(self, factor: np.ndarray | float) -> FourierReference:
        """The same reference with every amplitude of each coordinate multiplied by
        ``factor``."""
        return FourierReference(self.offset, self.sine * factor, self.cosine * factor,
                                self.frequency, self.ramp)

    @classmethod
    def random(cls, robot: Robot, *, harmonics: int = 5, frequency: float = 0.2,
               fill: float = 0.7, ramp: float | None = None, seed: int = 0) -> FourierReference:
        """Random coefficients scaled so that positions, velocities and accelerations stay
        within ``fill`` of the robot's limits (basis and actuator ones), checked on a dense
        grid over the ramp and one period. The ramp defaults to one period."""
        rng = np.random.default_rng(seed)
        n = robot.n
        lim = robot.limits
        lo = np.where(np.isfinite(lim.lower), lim.lower, -np.pi)
        hi = np.where(np.isfinite(lim.upper), lim.upper, np.pi)
        k = np.arange(1, harmonics + 1)[:, None]
        ref = cls((lo + hi) / 2, rng.standard_normal((harmonics, n)) / k,
                  rng.standard_normal((harmonics, n)) / k, frequency,
                  1.0 / frequency if ramp is None else ramp)
        t = np.linspace(0.0, ref.ramp + ref.period, 40 * harmonics * 8 + 1)
        def use(ref):
            q, v, a = ref(t)
            ratio = np.max(np.stack([np.abs(q - ref.offset).max(0) / (fill * (hi - lo) / 2),
                                     np.abs(v).max(0) / (fill * lim.velocity),
                                     np.abs(a).max(0) / (fill * lim.acceleration)]), axis=0)
            return np.maximum(ratio, _actuator_ratio(robot, q, v, a, ref.offset, fill))

        for _ in range(30):  # the ramp and nonlinear drives make the use not quite linear
            ratio = use(ref)
            ref = ref.scaled(1 / ratio)
            if np.all(np.abs(ratio - 1) < 1e-4):
                break
        return ref.scaled(1 / np.maximum(use(ref), 1.0))


def _actuator_ratio(robot: Robot, q, v, a, offset, fill: float) -> np.ndarray:
    """Per coordinate, the largest use of an actuator limit by the actuators it moves."""
    lim = robot.actuator_limits
    trans = robot.transmission
    q_m, v_m, a_m, _ = trans.actuator_state(q, v, a)
    zero = np.zeros((1, robot.n))
    q_m0 = trans.actuator_state(offset[None], zero, zero)[0][0]
    bounded = np.isfinite(lim.upper) & np.isfinite(lim.lower)
    upper, lower = np.where(bounded, lim.upper, 1.0), np.where(bounded, lim.lower, -1.0)
    half, centre = (upper - lower) / 2, (upper + lower) / 2
    room = np.where(bounded, fill * half - np.abs(q_m0 - centre), np.inf)
    if np.any(room <= 0):
        j = int(np.argmin(room))
        raise DataError(f"reference: the middle of the joint range puts actuator "
                        f"{robot.actuator_names[j]} outside {fill:.0%} of its range; "
                        "check the joint and actuator limits")
    use = np.max(np.stack([np.abs(q_m - q_m0).max(0) / room,
                           np.abs(v_m).max(0) / (fill * lim.velocity),
                           np.abs(a_m).max(0) / (fill * lim.acceleration)]), axis=0)
    coupling = np.ones((robot.n, robot.n)) if trans.coupling is not None else np.eye(robot.n)
    return (coupling * use[:, None]).max(axis=0)
