"""Periodic Fourier excitation (Swevers et al. 1997; Abdellatif (12)–(15)).

Each coordinate ``j`` of the design space moves as an offset plus ``n_h`` harmonics of a
fundamental pulsation ``ω = 2π f`` common to all coordinates::

    x_j(τ) = x0_j + Σ_k ( μ_jk/(kω) sin(kωτ) − ν_jk/(kω) cos(kωτ) )          Abdellatif (12)
    ẋ_j(τ) = Σ_k ( μ_jk cos(kωτ) + ν_jk sin(kωτ) )                             (14)
    ẍ_j(τ) = Σ_k kω ( −μ_jk sin(kωτ) + ν_jk cos(kωτ) )                         (15)

so ``μ_jk`` and ``ν_jk`` are velocity amplitudes. The design space is the robot's basis
coordinates or its actuator coordinates (in SI units or in encoder increments); a
:class:`~dynid.trajectories.spaces.DesignSpace` maps it to the robot.

The executed trajectory may start and end with a smooth ramp of the amplitudes (Wang: 5 s): with
``s(t)`` rising from 0 to 1 over ``ramp`` seconds as the quintic ``10u³ − 15u⁴ + 6u⁵``, holding
1 for ``periods`` whole periods and falling back to 0, the executed motion is
``x(t) = x0 + s(t) p(t − ramp)`` where ``p`` is the oscillating part above. It starts and ends at
rest at ``x0`` with continuous acceleration. Without a ramp the executed time is the Fourier time.

Every position, velocity and acceleration is linear in the coefficients; :meth:`basis` gives the
matrices ``B`` with ``x = B c``, which are the exact derivatives with respect to the coefficients.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._files import excerpt
from ..errors import TrajectoryError

__all__ = ["SPACES", "UNITS", "FourierTrajectory", "Samples", "envelope"]

#: Where a trajectory is defined: the robot's basis coordinates or its actuator coordinates.
SPACES = ("basis", "actuator")
#: Units of the coordinates: SI (rad or m) or encoder increments (actuator space only).
UNITS = ("si", "increments")


def envelope(t: np.ndarray, ramp: float, steady: float) -> tuple[np.ndarray, ...]:
    """Amplitude factor ``s(t)`` and its first two derivatives (each (N,)).

    ``s`` rises over ``[0, ramp]``, is 1 on ``[ramp, ramp + steady]`` and falls over the next
    ``ramp`` seconds, with zero first and second derivatives at both ends of each ramp.
    """
    t = np.asarray(t, dtype=float)
    one = np.ones_like(t)
    if ramp <= 0:
        return one, np.zeros_like(t), np.zeros_like(t)
    rising = np.clip(t / ramp, 0.0, 1.0)
    falling = np.clip((2 * ramp + steady - t) / ramp, 0.0, 1.0)
    up = t < ramp
    u = np.where(up, rising, falling)
    sign = np.where(up, 1.0, -1.0)
    s = u**3 * (10 - 15 * u + 6 * u**2)
    ds = 30 * u**2 * (1 - u) ** 2 / ramp * sign
    dds = 60 * u * (1 - u) * (1 - 2 * u) / ramp**2
    inside = (u < 1.0)
    return (np.where(inside, s, one), np.where(inside, ds, 0.0), np.where(inside, dds, 0.0))


@dataclass(frozen=True)
class Samples:
    """A trajectory sampled at a drive rate: times (N,) s and states (N, n) in ``unit``."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    names: tuple[str, ...]
    space: str
    unit: str


class FourierTrajectory:
    """A Fourier excitation trajectory, optionally with amplitude ramps at start and end.

    Parameters
    ----------
    coefficients
        (n, 1 + 2 n_h): per coordinate ``[x0, μ_1 … μ_nh, ν_1 … ν_nh]``; ``x0`` in the
        coordinate's unit (rad, m or increments), ``μ, ν`` in that unit per second.
    frequency
        Fundamental frequency ``f`` in Hz (> 0); the period is ``1/f``.
    names
        Names of the n coordinates (basis coordinates or actuators of the robot).
    space, unit
        One of :data:`SPACES` and one of :data:`UNITS`.
    ramp
        Duration (s) of the amplitude ramp at start and at end; 0 for none.
    periods
        Number of whole periods between the ramps.
    """

    def __init__(self, coefficients: np.ndarray, frequency: float, names: Sequence[str], *,
                 space: str = "basis", unit: str = "si", ramp: float = 0.0, periods: int = 1):
        C = np.array(coefficients, dtype=float, ndmin=2)
        names = tuple(str(x) for x in names)
        if C.ndim != 2 or C.shape[1] < 3 or C.shape[1] % 2 == 0:
            raise TrajectoryError(
                f"coefficients: expected shape (n, 1 + 2·harmonics) with at least one harmonic, "
                f"found {np.shape(coefficients)}; give an offset and n_h ≥ 1 pairs (μ, ν) per "
                "coordinate")
        if not np.all(np.isfinite(C)):
            raise TrajectoryError("coefficients: expected finite values, found NaN or inf")
        if len(names) != C.shape[0] or len(set(names)) != len(names):
            raise TrajectoryError(f"names: expected {C.shape[0]} distinct coordinate names, "
                                  f"found {list(names)}")
        check_frequency(frequency)
        if space not in SPACES:
            raise TrajectoryError(f"space: expected one of {SPACES}, found {space!r}")
        if unit not in UNITS or (unit == "increments" and space != "actuator"):
            raise TrajectoryError(f"unit: expected 'si', or 'increments' in actuator space, "
                                  f"found {unit!r} in {space} space")
        if not (np.isfinite(ramp) and ramp >= 0):
            raise TrajectoryError(f"ramp: expected a duration ≥ 0 s, found {ramp}")
        if int(periods) != periods or periods < 1:
            raise TrajectoryError(f"periods: expected a whole number ≥ 1, found {periods}")
        self.coefficients = C
        self.coefficients.setflags(write=False)
        self.frequency = float(frequency)
        self.names = names
        self.space, self.unit = space, unit
        self.ramp, self.periods = float(ramp), int(periods)

    # Shapes and times ------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.coefficients.shape[0]

    @property
    def harmonics(self) -> int:
        return (self.coefficients.shape[1] - 1) // 2

    @property
    def omega(self) -> float:
        """Fundamental pulsation ``ω = 2π f`` (rad/s)."""
        return 2 * np.pi * self.frequency

    @property
    def period(self) -> float:
        return 1.0 / self.frequency

    @property
    def duration(self) -> float:
        """Executed duration: both ramps and every period (s)."""
        return 2 * self.ramp + self.periods * self.period

    @property
    def offsets(self) -> np.ndarray:
        return self.coefficients[:, 0]

    # Evaluation ------------------------------------------------------------------------
    def basis(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(B_q, B_v, B_a)``, each (N, 1 + 2 n_h), with ``x(t) = B_q c``, ``ẋ = B_v c``,
        ``ẍ = B_a c`` for the coefficient row ``c`` of any coordinate, at executed times ``t``."""
        return fourier_basis(np.atleast_1d(np.asarray(t, float)), self.harmonics, self.omega,
                             self.ramp, self.periods * self.period)

    def evaluate(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities and accelerations (N, n) at executed times ``t`` (N,) s."""
        Bq, Bv, Ba = self.basis(t)
        C = self.coefficients.T
        return Bq @ C, Bv @ C, Ba @ C

    def sample(self, rate: float) -> Samples:
        """The executed trajectory at a drive's rate (Hz), from 0 to :attr:`duration`."""
        if not (np.isfinite(rate) and rate > 0):
            raise TrajectoryError(f"rate: expected a sample rate > 0 Hz, found {rate}")
        t = np.arange(int(np.floor(self.duration * rate + 1e-9)) + 1) / rate
        q, v, a = self.evaluate(t)
        return Samples(t, q, v, a, self.names, self.space, self.unit)

    def scaled(self, factor: float | np.ndarray) -> FourierTrajectory:
        """The same trajectory with the oscillating part of each coordinate scaled about its
        offset by ``factor`` (scalar or (n,))."""
        C = self.coefficients.copy()
        C[:, 1:] *= np.broadcast_to(np.asarray(factor, float), (self.n,))[:, None]
        return self.with_coefficients(C)

    def with_coefficients(self, coefficients: np.ndarray) -> FourierTrajectory:
        return FourierTrajectory(coefficients, self.frequency, self.names, space=self.space,
                                 unit=self.unit, ramp=self.ramp, periods=self.periods)

    # Serialization ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        h = self.harmonics
        return {"space": self.space, "unit": self.unit, "frequency": self.frequency,
                "harmonics": h, "ramp": self.ramp, "periods": self.periods,
                "coordinates": {name: {"offset": float(c[0]), "mu": c[1:h + 1].tolist(),
                                       "nu": c[h + 1:].tolist()}
                                for name, c in zip(self.names, self.coefficients, strict=True)}}

    @classmethod
    def from_dict(cls, data: dict) -> FourierTrajectory:
        try:
            coords = data["coordinates"]
            rows = [[c["offset"], *c["mu"], *c["nu"]] for c in coords.values()]
            if len({len(r) for r in rows}) != 1 or len(rows[0]) != 1 + 2 * data["harmonics"]:
                raise TrajectoryError(f"trajectory: every coordinate needs an offset and "
                                      f"{data['harmonics']} values of mu and of nu")
            return cls(np.array(rows, float), data["frequency"], list(coords),
                       space=data["space"], unit=data["unit"], ramp=data.get("ramp", 0.0),
                       periods=data.get("periods", 1))
        except (KeyError, TypeError, AttributeError) as exc:
            raise TrajectoryError(f"trajectory: malformed entry ({exc!r}); expected keys "
                                  "space, unit, frequency, harmonics, coordinates") from None

    def __repr__(self) -> str:
        return (f"FourierTrajectory({self.n} {self.space} coordinates, {self.harmonics} "
                f"harmonics at {self.frequency:g} Hz, {self.duration:g} s)")


def check_frequency(frequency: float) -> None:
    if not (isinstance(frequency, int | float | np.floating) and np.isfinite(frequency)
            and frequency > 0):
        raise TrajectoryError(f"frequency: expected a fundamental frequency > 0 Hz, found "
                              f"{frequency!r}")


#: The most harmonics a Fourier excitation may have.
MAX_HARMONICS = 50


def check_harmonics(harmonics: int) -> None:
    if not isinstance(harmonics, int | np.integer) or not 1 <= harmonics <= MAX_HARMONICS:
        raise TrajectoryError(f"harmonics: expected a whole number from 1 to {MAX_HARMONICS}, "
                              f"found {excerpt(harmonics)}; a Fourier excitation needs at least "
                              "one harmonic, and more than a few tens excite what the drives "
                              "cannot follow")


def fourier_basis(t: np.ndarray, harmonics: int, omega: float, ramp: float = 0.0,
                  steady: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The matrices of :meth:`FourierTrajectory.basis` for ``harmonics`` and ``omega``.

    Columns: offset, the ``n_h`` sine terms (coefficients μ), the ``n_h`` cosine terms (ν).
    ``ramp`` and ``steady`` (s) set the amplitude envelope (see :func:`envelope`).
    """
    k = np.arange(1, harmonics + 1) * omega
    phase = np.outer(t - ramp, k)
    sin, cos = np.sin(phase), np.cos(phase)
    h = np.hstack([sin / k, -cos / k])           # p
    dh = np.hstack([cos, sin])                   # p′
    ddh = np.hstack([-sin * k, cos * k])         # p″
    s, ds, dds = (x[:, None] for x in envelope(t, ramp, steady))
    N = len(t)
    Bq = np.hstack([np.ones((N, 1)), s * h])
    Bv = np.hstack([np.zeros((N, 1)), s * dh + ds * h])
    Ba = np.hstack([np.zeros((N, 1)), s * ddh + 2 * ds * dh + dds * h])
    return Bq, Bv, Ba
