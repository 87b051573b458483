"""What the simulated drives measure: encoder positions and the output, with noise,
quantization and current ripple.

A drive reports the position of its encoder (quantized to the encoder's step, optionally with
white noise added before quantization) and the output it applies (current or torque), with
white noise, the torque ripple of its motor and the quantization of its current measurement::

    position = step · round((x + σ_x ε) / step)
    output   = step_y · round((u + σ_y ε + A sin(p q_m)) / step_y)

with ``x`` the true position on the recorded side (actuator or basis), ``u`` the applied
output, ``q_m`` the true actuator position, ``A`` the ripple amplitude and ``p`` its periods per
actuator turn (the cogging and commutation ripple of a motor with ``p`` electrical periods a
turn). The ripple is part of the measurement only: the applied output, which moves the robot,
is ``u``.

Examples
--------
>>> noise = SensorNoise(output_std=0.02, output_step=0.001, output_ripple=0.05)
>>> positions, output = plant.sense("actuator")    # a Plant simulated with these sensors
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..models import Robot

__all__ = ["SensorNoise"]


@dataclass(frozen=True)
class SensorNoise:
    """What the drives measure.

    Parameters
    ----------
    position_step
        Resolution of the recorded positions (rad or m); default: the actuator encoder
        (``2π / increments_per_turn``, 2¹⁶ per turn when unknown) for actuator-side
        recordings, 2π / 2²⁰ for basis-side ones.
    position_std
        Standard deviation of white noise added to the positions before quantization.
    output_std
        Standard deviation of the output noise per actuator (A or N·m), scalar or (n,).
    output_step
        Quantization step of the measured output.
    output_ripple
        Amplitude of the ripple in the measured output (A or N·m), scalar or (n,):
        ``output_ripple · sin(ripple_per_turn · q_m)`` with ``q_m`` the true actuator position
        (rad; m for a linear actuator, whose ``ripple_per_turn`` is then per 2π m).
    ripple_per_turn
        Periods of the ripple per actuator turn, scalar or (n,).

    Examples
    --------
    >>> SensorNoise(position_std=1e-5, output_std=0.05, output_step=0.01)
    >>> SensorNoise(output_ripple=[0.1, 0.1, 0.05], ripple_per_turn=8)   # 3 actuators
    """

    position_step: float | None = None
    position_std: float = 0.0
    output_std: float | np.ndarray = 0.0
    output_step: float = 0.0
    output_ripple: float | np.ndarray = 0.0
    ripple_per_turn: float | np.ndarray = 6.0


class Sensors:
    """The sensors of ``n`` drives as :class:`SensorNoise` states them, checked once."""

    def __init__(self, robot: Robot, noise: SensorNoise):
        n = robot.n
        self.noise = noise
        self.position_std = _nonnegative(noise.position_std, "noise.position_std", ())
        self.output_std = _nonnegative(noise.output_std, "noise.output_std", (n,))
        self.output_step = _nonnegative(noise.output_step, "noise.output_step", ())
        self.ripple = np.broadcast_to(_finite(noise.output_ripple, "noise.output_ripple", n),
                                      (n,))
        self.per_turn = np.broadcast_to(_finite(noise.ripple_per_turn, "noise.ripple_per_turn",
                                                n), (n,))
        self.has_ripple = bool(np.any(self.ripple != 0))
        if noise.position_step is not None and not noise.position_step > 0:
            raise DataError(f"noise.position_step: expected a resolution > 0 (rad or m), "
                            f"found {noise.position_step}; e.g. SensorNoise(position_step="
                            "2 * np.pi / 2**20), or None for the encoder's")
        self.position_steps = {space: noise.position_step or default_step(robot, space)
                               for space in ("basis", "actuator")}

    def positions(self, x: np.ndarray, space: str, rng: np.random.Generator) -> np.ndarray:
        """Measured positions from the true ones ``x`` (runs, n) on side ``space``."""
        return quantize(x + self.position_std * rng.standard_normal(x.shape),
                        self.position_steps[space])

    def output(self, u: np.ndarray, q_m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Measured output from the applied one ``u`` at true actuator positions ``q_m``."""
        y = u + self.output_std * rng.standard_normal(u.shape)
        if self.has_ripple:
            y = y + self.ripple * np.sin(self.per_turn * q_m)
        return quantize(y, self.output_step)


def quantize(x: np.ndarray, step: float | np.ndarray) -> np.ndarray:
    """``x`` rounded to multiples of ``step`` (per column; a step ≤ 0 leaves it as it is)."""
    step = np.asarray(step, dtype=float)
    if np.all(step > 0):
        return step * np.round(x / step)
    if np.all(step <= 0):
        return x
    return np.where(step > 0, step * np.round(x / np.where(step > 0, step, 1.0)), x)


def default_step(robot: Robot, space: str) -> float | np.ndarray:
    """Resolution of positions read on ``space``: 2π / 2²⁰ for joint encoders; on the actuator
    side the resolution the transmission states for its sensors (the leg-length sensors of a
    hexapod, m), else the actuator encoders' (2π / increments per turn, 2¹⁶ when unknown)."""
    if space == "basis":
        return 2 * np.pi / 2.0 ** 20
    stated = getattr(robot.transmission, "resolution", None)
    if stated is not None:
        return np.full(robot.n, float(stated))
    res = robot.transmission.increments_per_turn
    return 2 * np.pi / (res if res is not None else np.full(robot.n, 2.0 ** 16))


def _finite(value, name: str, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape not in ((), (n,)) or not np.all(np.isfinite(arr)):
        raise DataError(f"{name}: expected a finite number or {n} of them (one per actuator), "
                        f"found {value!r}")
    return arr


def _nonnegative(value, name: str, shape: tuple) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape not in ((), shape) or not np.all(arr >= 0) or not np.all(np.isfinite(arr)):
        raise DataError(f"{name}: expected a finite value ≥ 0"
                        f"{' or one per actuator' if shape else ''}, found {value!r}")
    return np.broadcast_to(arr, shape) if shape else arr
