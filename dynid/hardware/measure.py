"""Measurement of a robot that follows its reference exactly: sensors without control loops.

:func:`measure` is the experiment of statistical studies (Abdellatif 3.2, 4: the spread of
estimates over repeated noisy runs), where what matters is the noise of the sensors, not the
tracking of the drives: the true basis motion *is* the reference, the applied output is the
inverse dynamics of the true parameters along it, and the drives record both through the
sensors of :class:`~dynid.hardware.sensors.SensorNoise` (positions with white noise and
quantization on the actuator or basis side, the output with noise, ripple and quantization).
It costs one regressor evaluation of the samples, whatever the number of runs; the closed-loop
:func:`~dynid.hardware.simulate.simulate` steps the drives' loops and the forward dynamics
instead, and its motion differs from the reference by the tracking error.

Examples
--------
>>> sim = measure(robot, theta, reference, 12.0, rate=500.0, space="actuator",
...               noise=SensorNoise(position_step=1e-6, output_std=2.0), runs=100)
>>> sim.measured[0].positions           # leg lengths, quantized to 1 µm, of the first run
"""

from __future__ import annotations

import numpy as np

from .. import _validate
from ..errors import DataError
from ..identify.recording import Recording
from ..models import Regressor, Robot
from .sensors import SensorNoise, Sensors
from .simulate import Simulation, _as_reference, _units

__all__ = ["measure"]


def measure(robot: Robot, theta: np.ndarray, reference, duration: float, *,
            rate: float = 1000.0, noise: SensorNoise | None = None, space: str = "basis",
            runs: int = 1, seed: int = 0) -> Simulation:
    """Recordings of ``runs`` experiments in which the robot follows ``reference`` exactly.

    Parameters
    ----------
    robot, theta
        The robot and its true standard parameters (p,).
    reference
        Callable ``t (N,) → (q, v, a)`` (N, n) in basis coordinates, or a designed excitation
        (:class:`~dynid.trajectories.FourierTrajectory`, in basis or actuator space).
    duration
        Seconds recorded, from t = 0.
    rate
        Recording rate, Hz.
    noise
        The sensors (default: noise-free, positions quantized to the default resolution).
    space
        Positions recorded on the ``"basis"`` or ``"actuator"`` side (leg lengths).
    runs
        Independent noise draws of the same motion.
    seed
        Seed of the noise.

    Returns
    -------
    Simulation
        ``measured`` and ``truth`` recordings, one per run (``truth`` holds the true basis
        states and the applied output); ``gains`` is ``None``: no drive loop was simulated.
    """
    noise = noise or SensorNoise()
    if space not in ("basis", "actuator"):
        raise DataError(f"space: expected 'basis' or 'actuator', found {space!r}; e.g. "
                        "measure(..., space='actuator') to record leg lengths")
    if not (_validate.is_number(rate) and rate > 0):
        raise DataError(f"rate: expected a rate > 0 Hz, found {rate!r}; e.g. rate=500.0")
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 1:
        raise DataError(f"runs: expected a whole number ≥ 1, found {runs!r}")
    if not (_validate.is_number(duration) and duration > 0):
        raise DataError(f"duration: expected seconds > 0, found {duration!r}")
    theta = _validate.vector(theta, "theta", len(robot.parameters))
    sensors = Sensors(robot, noise)
    time = np.arange(round(duration * rate)) / rate
    q, v, a = _as_reference(robot, reference)(time)
    u = Regressor(robot).predict(q, v, a, theta)
    q_m = robot.transmission.actuator_state(q, v, a)[0]
    rng = np.random.default_rng(seed)
    shape = (runs, *q.shape)
    positions = sensors.positions(np.broadcast_to(q_m if space == "actuator" else q, shape),
                                  space, rng)
    outputs = sensors.output(np.broadcast_to(u, shape), q_m, rng)
    names = robot.joint_names if space == "basis" else robot.actuator_names
    step = sensors.position_steps[space]
    truth = Recording(time, q, u, velocities=v, accelerations=a, output_kind=robot.output,
                      names=robot.joint_names, units=_units(robot, "basis"))
    measured = tuple(Recording(time, positions[r], outputs[r], space=space,
                               output_kind=robot.output, names=names,
                               units=_units(robot, space), resolution=step)
                     for r in range(runs))
    return Simulation(measured, (truth,) * runs, None)
