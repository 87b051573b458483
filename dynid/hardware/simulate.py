"""Closed-loop simulation of a robot tracking a reference trajectory, for ground truth.

:func:`simulate` drives a :class:`~dynid.hardware.plant.Plant` (the robot with known
parameters ``θ`` and its drives, whose model :mod:`dynid.hardware.plant` states) along a
reference, one control period at a time: the drives' gains are tuned along the reference by
the rule of :class:`~dynid.hardware.drives.DriveLoops` (stable along the whole reference,
whatever the robot's inertia there), their targets are the reference on the actuator side,
with its velocity as velocity feed-forward and the output the robot's prior model needs along
it as output feed-forward (a computed-torque controller's). The recording holds what the
drives measure at their rate (:class:`~dynid.hardware.sensors.SensorNoise`): encoder
positions (quantized, optionally noisy) and the output (with noise, ripple and quantization).
A noise-free twin (true states and applied outputs) is returned as well; every tuple
``(q, v, a, u)`` of it satisfies the model exactly.

The plant's applied output is continuous (a ramped command behind a first-order current lag)
and its mechanics are integrated by the classical Runge–Kutta method. Both matter for ground
truth: differences of the sampled positions then agree with the recorded states to about 1e-4
of the acceleration, whereas a held command (or a first-order step) shifts them by a fraction of
a sample, which biases an identification far beyond its noise level.

Coulomb friction with an exact sign makes any explicit closed-loop simulation chatter at
velocity reversals; simulate models whose Coulomb terms have a smoothing velocity
(:func:`smooth_coulomb`).

Runs are vectorized: ``runs`` independent experiments (different noise) are simulated at once,
since the forward dynamics is evaluated for a batch of states in one regressor call.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _validate
from .._blas import single_threaded
from ..errors import DataError
from ..identify.recording import Recording
from ..models import Robot
from ..models.dynamics import Dynamics
from ..models.friction import StribeckFriction
from ..models.terms import CoordinateTerm
from .drives import DriveLoops, Gains, encoder_steps, tune_loops
from .plant import Plant
from .reference import FourierReference
from .sensors import SensorNoise, default_step

__all__ = ["SensorNoise", "Simulation", "simulate", "smooth_coulomb"]

Reference = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Simulation:
    """Recordings of a simulated experiment: what was measured and the truth (true basis
    states with accelerations, and the applied output), one per run, and the drives' gains
    (``None`` for a measurement without drive loops, :func:`~dynid.hardware.measure.measure`)."""

    measured: tuple[Recording, ...]
    truth: tuple[Recording, ...]
    gains: Gains | None


def smooth_coulomb(robot: Robot, *, joint: float, motor: float | None = None) -> Robot:
    """The robot with the sign of every Coulomb and Stribeck term smoothed, ``tanh(ẋ / s)``, over
    ``s = joint`` (rad/s or m/s) on joint coordinates and ``s = motor`` on actuator ones
    (default: ``joint``).

    Closed-loop simulation needs it: with an exact sign the friction force flips at every
    integration step near a velocity reversal. The motor value should exceed the noise of
    velocities differenced from the encoder, or identifying with it is biased.
    """
    terms = []
    for term in robot.terms:
        if isinstance(term, (CoordinateTerm, StribeckFriction)):
            term = copy.copy(term)
            term.smoothing = float(motor if motor is not None and term.space == "actuator"
                                   else joint)
        terms.append(term)
    return robot.with_terms(terms)


@single_threaded
def simulate(robot: Robot, theta: np.ndarray, reference: Reference | FourierReference,
             duration: float, *, control_rate: float = 1000.0, record_every: int = 1,
             loops: DriveLoops | None = None, noise: SensorNoise | None = None,
             space: str = "basis", runs: int = 1, seed: int = 0,
             gains: Gains | None = None) -> Simulation:
    """Simulate the robot tracking ``reference`` in closed loop.

    Parameters
    ----------
    robot, theta
        The robot and its true standard parameters.
    reference
        Callable ``t (N,) → (q, v, a)`` (N, n) in basis coordinates, e.g. a
        :class:`~dynid.hardware.reference.FourierReference`, or a designed excitation
        (:class:`~dynid.trajectories.FourierTrajectory`, in basis or actuator space).
    duration
        Seconds simulated.
    control_rate
        Rate of the drives' loops and of the integration, Hz.
    record_every
        Record one control period in this many (the drives' recording rate).
    loops, noise
        Drive loops and sensors.
    space
        Record positions on the ``"basis"`` (joint encoders) or ``"actuator"`` side.
    runs
        Independent experiments simulated together (different noise, same reference).
    seed
        Seed of the noise.
    gains
        The drives' gains (e.g. ``Simulation.gains`` of an earlier run, to simulate the same
        controller with other parameters); default: tuned by the rule of ``loops`` along the
        reference, for ``theta``.
    """
    loops = loops or DriveLoops()
    noise = noise or SensorNoise()
    if space not in ("basis", "actuator"):
        raise DataError(f"space: expected 'basis' or 'actuator', found {space!r}")
    if not (_validate.is_number(control_rate) and control_rate > 0):
        raise DataError(f"control_rate: expected a rate > 0 Hz, found {control_rate!r}")
    dt = 1.0 / control_rate
    n_steps = round(duration * control_rate)
    if n_steps < 10 * record_every:
        raise DataError(f"duration: {duration} s at {control_rate} Hz gives too few samples")
    n, trans = robot.n, robot.transmission
    reference = _as_reference(robot, reference)
    dyn = Dynamics(robot, theta)
    # The reference on the motor side at every control period, and the output the robot's
    # prior model says it needs (the controller's feed-forward), evaluated at once.
    motion = reference(np.arange(n_steps) * dt)
    ref_q_m, ref_v_m = trans.actuator_state(*motion)[:2]
    if gains is None:
        gains = tune_loops(dyn, motion, loops, control_rate, encoder_steps(robot, loops))
    feedforward = (dyn.regressor.predict(*motion, robot.prior) if loops.feedforward
                   else np.zeros((n_steps, n)))
    q0, v0, _ = reference(np.array([0.0]))
    plant = Plant(robot, theta, control_rate=control_rate, gains=gains, loops=loops,
                  noise=noise, q0=q0[0], v0=v0[0], runs=runs, seed=seed)
    n_rec = (n_steps + record_every - 1) // record_every
    rec = {k: np.empty((n_rec, runs, n)) for k in ("q", "v", "a", "u", "pos", "y")}
    for k in range(n_steps):
        if k % record_every == 0:
            i = k // record_every
            rec["q"][i], rec["v"][i], rec["a"][i] = plant.q, plant.v, plant.a
            rec["u"][i] = plant.current
            rec["pos"][i], rec["y"][i] = plant.sense(space)
        plant.step(ref_q_m[k], ref_v_m[k], feedforward[k])
    limit = plant.limits
    time = np.arange(n_rec) * record_every * dt
    names = robot.joint_names if space == "basis" else robot.actuator_names
    units = _units(robot, space)
    resolution = noise.position_step or default_step(robot, space)
    measured, truth = [], []
    for r in range(runs):
        measured.append(Recording(time, rec["pos"][:, r], rec["y"][:, r], space=space,
                                  output_kind=robot.output, names=names, units=units,
                                  output_limits=limit, resolution=resolution))
        truth.append(Recording(time, rec["q"][:, r], rec["u"][:, r], velocities=rec["v"][:, r],
                               accelerations=rec["a"][:, r], output_kind=robot.output,
                               names=robot.joint_names, units=_units(robot, "basis"),
                               output_limits=limit))
    return Simulation(tuple(measured), tuple(truth), gains)


def _as_reference(robot: Robot, reference) -> Reference:
    """A basis-space callable from a callable, or from a trajectory of
    :mod:`dynid.trajectories` in any design space (mapped by its ``basis_motion``)."""
    if not hasattr(reference, "evaluate"):
        return reference
    from ..trajectories.spaces import basis_motion

    return basis_motion(reference, robot)


def _units(robot: Robot, space: str) -> dict:
    positions = robot.actuator_units if space == "actuator" else robot.basis_units
    return {"positions": positions, "output": robot.output_units}
