"""Closed-loop simulation of a robot tracking a reference trajectory, for ground truth.

The robot with known parameters ``θ`` is driven through its own model: each control period,
the drives read quantized encoders and run cascaded loops per actuator (a proportional position
loop feeding a PI velocity loop whose output is the current, or torque, command, on top of the
prior model's feed-forward), with gains from the stated rule of :class:`DriveLoops` (stable
along the whole reference, whatever the robot's inertia there); the command is limited, the
current loop follows it with a first-order lag, and the forward dynamics ``a = M⁻¹ (u − h)``
(:mod:`dynid.models.dynamics`) advance the state. The recording holds what
the drives measure at their rate: encoder positions (quantized, optionally noisy) and the output
(with noise and quantization). A noise-free twin (true states and applied outputs) is returned
as well; every tuple ``(q, v, a, u)`` of it satisfies the model exactly.

The command is interpolated over each control period and followed by the current loop with a
first-order lag, so the applied output and the acceleration are smooth, as behind a real current
loop; the mechanics are integrated by the classical Runge–Kutta method. Both matter for ground
truth: differences of the sampled positions then agree with the recorded states to about 1e-4
of the acceleration, whereas a held command (or a first-order step) shifts them by a fraction of
a sample, which biases an identification far beyond its noise level.

Coulomb friction with an exact sign makes any explicit closed-loop simulation chatter at
velocity reversals; simulate models whose Coulomb terms have a smoothing velocity.

Runs are vectorized: ``runs`` independent experiments (different noise) are simulated at once,
since the forward dynamics is evaluated for a batch of states in one regressor call.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._blas import single_threaded
from ..errors import DataError
from ..models import Robot
from ..models.dynamics import Dynamics
from ..models.terms import CoordinateTerm
from .drives import DriveLoops, Gains, tune_loops
from .processing import _signal
from .recording import Recording
from .reference import FourierReference

__all__ = ["SensorNoise", "Simulation", "simulate", "smooth_coulomb"]

Reference = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


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
    """

    position_step: float | None = None
    position_std: float = 0.0
    output_std: float | np.ndarray = 0.0
    output_step: float = 0.0


@dataclass(frozen=True)
class Simulation:
    """Recordings of a simulated experiment: what was measured and the truth (true basis
    states with accelerations, and the applied output), one per run, and the drives' gains."""

    measured: tuple[Recording, ...]
    truth: tuple[Recording, ...]
    gains: Gains


def smooth_coulomb(robot: Robot, *, joint: float, motor: float | None = None) -> Robot:
    """The robot with the sign of every Coulomb term smoothed, ``tanh(ẋ / s)``, over
    ``s = joint`` (rad/s or m/s) on joint coordinates and ``s = motor`` on actuator ones
    (default: ``joint``).

    Closed-loop simulation needs it: with an exact sign the friction force flips at every
    integration step near a velocity reversal. The motor value should exceed the noise of
    velocities differenced from the encoder, or identifying with it is biased.
    """
    terms = []
    for term in robot.terms:
        if isinstance(term, CoordinateTerm):
            term = copy.copy(term)
            term.smoothing = float(motor if motor is not None and term.space == "actuator"
                                   else joint)
        terms.append(term)
    return robot.with_terms(terms)


def _quantize(x: np.ndarray, step: float | np.ndarray) -> np.ndarray:
    step = np.asarray(step, dtype=float)
    if np.all(step <= 0):
        return x
    return np.where(step > 0, step * np.round(x / np.where(step > 0, step, 1.0)), x)


@single_threaded
def simulate(robot: Robot, theta: np.ndarray, reference: Reference | FourierReference,
             duration: float, *, control_rate: float = 1000.0, record_every: int = 1,
             loops: DriveLoops | None = None, noise: SensorNoise | None = None,
             space: str = "basis", runs: int = 1, seed: int = 0) -> Simulation:
    """Simulate the robot tracking ``reference`` in closed loop.

    Parameters
    ----------
    robot, theta
        The robot and its true standard parameters.
    reference
        Callable ``t (N,) → (q, v, a)`` (N, n) in basis coordinates, e.g. a
        :class:`~dynid.identify.reference.FourierReference`, or a designed excitation
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
    """
    loops = loops or DriveLoops()
    noise = noise or SensorNoise()
    if space not in ("basis", "actuator"):
        raise DataError(f"space: expected 'basis' or 'actuator', found {space!r}")
    dt = 1.0 / control_rate
    n_steps = round(duration * control_rate)
    if n_steps < 10 * record_every:
        raise DataError(f"duration: {duration} s at {control_rate} Hz gives too few samples")
    rng = np.random.default_rng(seed)
    n, trans = robot.n, robot.transmission
    reference = _as_reference(robot, reference)
    dyn = Dynamics(robot, theta)

    q_r, v_r, _ = reference(np.array([0.0]))
    q = np.repeat(q_r, runs, axis=0)
    v = np.repeat(v_r, runs, axis=0)
    encoder = (2 * np.pi / np.broadcast_to(float(loops.encoder_increments), (n,))
               if loops.encoder_increments is not None else _default_step(robot, "actuator"))
    # The reference on the motor side at every control period, and the output the robot's
    # prior model says it needs (the controller's feed-forward), evaluated at once.
    motion = reference(np.arange(n_steps) * dt)
    ref_q_m, ref_v_m = trans.actuator_state(*motion)[:2]
    gains = tune_loops(dyn, motion, loops, control_rate, encoder)
    kv, ki, kp = gains.velocity, gains.integral, gains.position
    smoothing = np.where(gains.velocity_filter > 0, -np.expm1(-dt / np.where(
        gains.velocity_filter > 0, gains.velocity_filter, 1.0)), 1.0)
    # The reference velocity through the same filter as the measured one, so a motion tracked
    # exactly leaves no velocity error behind the filter's lag.
    ref_v_m = np.column_stack([_signal().lfilter([s], [1.0, s - 1.0], ref_v_m[:, j],
                                                 zi=[(1.0 - s) * ref_v_m[0, j]])[0]
                               for j, s in enumerate(smoothing)])
    feedforward = (dyn.regressor.predict(*motion, robot.prior) if loops.feedforward
                   else np.zeros((n_steps, n)))
    h0 = dyn.terms(q[:1], np.zeros_like(q[:1]))[1]
    limit = _limits(robot, loops)
    # The integral holds the start position against what the feed-forward leaves.
    integral = np.repeat((h0 - feedforward[:1]) / (kv * ki), runs, axis=0)
    current = np.repeat(h0, runs, axis=0)
    command_prev = current.copy()

    step = noise.position_step or _default_step(robot, space)
    noise_std = np.broadcast_to(np.asarray(noise.output_std, dtype=float), (n,))
    substeps = max(1, int(loops.substeps))
    h = dt / substeps
    tau = 1.0 / (2 * np.pi * loops.current_bandwidth)
    q_m0, v_m0, _, _ = trans.actuator_state(q, v, np.zeros_like(q))
    prev = _quantize(q_m0 - v_m0 * dt, encoder)
    v_filtered = v_m0
    n_rec = (n_steps + record_every - 1) // record_every
    rec = {k: np.empty((n_rec, runs, n)) for k in ("q", "v", "a", "u", "pos", "y")}
    for k in range(n_steps):
        q_m = trans.actuator_state(q, v, np.zeros_like(q))[0]
        q_meas = _quantize(q_m + noise.position_std * rng.standard_normal(q.shape), encoder)
        v_filtered = v_filtered + smoothing * ((q_meas - prev) / dt - v_filtered)
        prev = q_meas
        error = ref_v_m[k] + kp * (ref_q_m[k] - q_meas) - v_filtered
        command = kv * (error + ki * (integral + error * dt)) + feedforward[k]
        u = np.clip(command, -limit, limit)
        integral = np.where(u == command, integral + error * dt, integral)  # anti-windup
        a = _accel(dyn, q, v, current)
        if k % record_every == 0:
            i = k // record_every
            rec["q"][i], rec["v"][i], rec["a"][i], rec["u"][i] = q, v, a, current
            sensed = q_m if space == "actuator" else q
            rec["pos"][i] = _quantize(sensed + noise.position_std * rng.standard_normal(
                q.shape), step)
            rec["y"][i] = _quantize(current + noise_std * rng.standard_normal(u.shape),
                                    noise.output_step)
        # The command is interpolated linearly over the control period (from the previous one
        # to this one) and the current loop follows it with a first-order lag, solved exactly:
        # the current and the acceleration are then smooth, as in a real drive. The mechanics
        # advance by classical Runge–Kutta steps.
        slope = (u - command_prev) / dt
        offset = current - command_prev + slope * tau

        def current_at(s, slope=slope, offset=offset, start=command_prev):
            return start + slope * (s - tau) + offset * np.exp(-s / tau)

        for i in range(substeps):
            s0 = i * h
            c_mid, c_end = current_at(s0 + h / 2), current_at(s0 + h)
            dq1, dv1 = v, a
            dq2, dv2 = v + dv1 * h / 2, _accel(dyn, q + dq1 * h / 2, v + dv1 * h / 2, c_mid)
            dq3, dv3 = v + dv2 * h / 2, _accel(dyn, q + dq2 * h / 2, v + dv2 * h / 2, c_mid)
            dq4, dv4 = v + dv3 * h, _accel(dyn, q + dq3 * h, v + dv3 * h, c_end)
            q = q + h / 6 * (dq1 + 2 * dq2 + 2 * dq3 + dq4)
            v = v + h / 6 * (dv1 + 2 * dv2 + 2 * dv3 + dv4)
            current = c_end
            if i + 1 < substeps:
                a = _accel(dyn, q, v, current)
        command_prev = u
    time = np.arange(n_rec) * record_every * dt
    names = robot.joint_names if space == "basis" else robot.actuator_names
    units = _units(robot, space)
    measured, truth = [], []
    for r in range(runs):
        measured.append(Recording(time, rec["pos"][:, r], rec["y"][:, r], space=space,
                                  output_kind=robot.output, names=names, units=units,
                                  output_limits=limit))
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


def _accel(dyn: Dynamics, q: np.ndarray, v: np.ndarray, u: np.ndarray) -> np.ndarray:
    M, h = dyn.terms(q, v)
    return np.linalg.solve(M, (u - h)[..., None])[..., 0]


def _limits(robot: Robot, loops: DriveLoops) -> np.ndarray:
    if loops.limits is not None:
        lim = np.broadcast_to(np.asarray(loops.limits, dtype=float), (robot.n,))
    elif robot.output == "joint_torque":
        lim = robot.limits.effort
    else:
        lim = robot.actuator_limits.effort
        if robot.output == "current":
            lim = lim / np.abs(robot.transmission.torque_constants)
    if np.any(~(lim > 0)):
        raise DataError(f"drive limits: expected values > 0 per actuator, found {lim}")
    return np.array(lim, dtype=float)


def _default_step(robot: Robot, space: str) -> float | np.ndarray:
    if space == "basis":
        return 2 * np.pi / 2.0 ** 20
    res = robot.transmission.increments_per_turn
    return 2 * np.pi / (res if res is not None else np.full(robot.n, 2.0 ** 16))


def _units(robot: Robot, space: str) -> dict:
    positions = robot.actuator_units if space == "actuator" else robot.basis_units
    return {"positions": positions, "output": robot.output_units}
