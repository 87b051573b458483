"""Drive loops of the simulated robot and the rule that tunes them.

Each drive runs cascaded loops on its actuator: a proportional position loop feeding a PI
velocity loop whose output is the current (or torque) command, on top of the feed-forward of
the robot's prior model, and a current loop that makes the applied output follow the command
with a first-order lag (:mod:`dynid.hardware.plant` states the model the simulation steps).
:class:`DriveLoops` states the tuning rule; :func:`tune_loops` applies it along a reference
motion, or over states the robot may be in (as at commissioning, before any trajectory is
known), and returns the :class:`Gains`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _validate
from ..errors import DataError
from ..models import Robot
from ..models.dynamics import Dynamics
from .sensors import default_step

__all__ = ["DriveLoops", "Gains", "tune_loops"]


@dataclass(frozen=True)
class DriveLoops:
    """Cascaded loops of every drive (position P, velocity PI, current), tuned by a stated rule.

    The velocity loop of a drive sees the motor-side inertia and a chain of small lags whose
    sum is ``T_Σ = 1.5 dt + τ_c + τ_f``: the velocity differenced from the encoder (half a
    control period), the command reached one control period after it is computed, the current
    loop (a first-order lag, ``τ_c = 1 / (2π current_bandwidth)``) and, for a coarse encoder,
    the filter of its velocity (``τ_f``, see ``velocity_resolution``). With the axes coupled
    through the mass matrix ``M(q)``, the velocity loops' modes are the eigenvalues of
    ``K M⁻¹ diag(k_v)`` (``K`` the transmission Jacobian, ``k_v`` the velocity gains). The rule,
    evaluated on the mass matrix over the states tuned for (along the reference, or states
    the robot may be in):

    * velocity gains ``k_v = J ω / λ`` with ``J`` each axis's median inertia (the others
      locked), ``ω = 1 / (a T_Σ)`` its budget (capped by ``velocity_bandwidth``) and ``λ`` the
      largest eigenvalue of ``K M⁻¹ diag(J)`` at any of these states (1 for decoupled axes
      of constant inertia): no loop is faster than its budget, where the lags cost ``1/a`` rad
      of phase (19° for the default ``a = 3``) and the loop keeps more than 60° of phase
      margin; every other mode is slower and better damped;
    * integral corner and position gain (1/s) of each axis both ``ω_s / 2``, with ``ω_s`` the
      axis's slowest own mode (its gain over its largest locked inertia at these states): for
      a mode that fast the cascade's characteristic polynomial is
      ``s³ + ω_s s² + ω_s² s + ω_s³ / 4``, whose roots are damped (ζ ≈ 0.4) and real part
      ``≤ −0.3 ω_s``; faster modes are better damped;
    * velocity feed-forward, and the output the robot's prior model needs along the reference
      (a robot controller's computed-torque feed-forward, ``feedforward``), so the loops only
      correct what the prior model misses.

    Parameters
    ----------
    a
        Ratio of the lags' time scale to the fastest mode's (larger is slower and better
        damped; below about 1.5 the loops lose their phase margin and oscillate).
    current_bandwidth
        Bandwidth of the current (or torque) loop, Hz: the applied output follows the command
        with a first-order lag, so it is continuous, as in a real drive.
    velocity_bandwidth
        Optional upper bound of the velocity loop's bandwidth, Hz.
    velocity_resolution
        Noise of the velocity a drive feeds back, as a fraction of its axis's peak speed
        (along the reference, or as given): the velocity differenced from a coarse encoder
        (quantization noise ``σ = step / (dt √6)``) is low-passed by a first-order filter
        of time constant ``τ_f = dt / 2 · (σ / (velocity_resolution · peak))²`` when that
        exceeds a control period (at most 20 of them), a lag added to that drive's ``T_Σ``.
    feedforward
        Feed the prior model's output along the reference forward.
    limits
        Command limit per actuator, in the output's units (A or N·m); default: the robot's
        effort limits (divided by the torque constant for current output).
    encoder_increments
        Resolution (increments per motor turn) of the position the loops read; default: the
        robot's encoder, or 2¹⁶ when it has none.
    substeps
        Integration steps per control period.
    """

    a: float = 3.0
    current_bandwidth: float = 100.0
    velocity_bandwidth: float | None = None
    velocity_resolution: float = 0.01
    feedforward: bool = True
    limits: np.ndarray | None = None
    encoder_increments: float | None = None
    substeps: int = 1


@dataclass(frozen=True)
class Gains:
    """Gains of every drive's loops (:class:`DriveLoops` says how they are chosen).

    Attributes
    ----------
    inertia
        Motor-side inertia per actuator (output units per motor rad/s²), the median over the
        states tuned for (along the reference) with the other axes locked.
    velocity
        Velocity-loop gain per actuator (output units per motor rad/s).
    integral
        Integral corner of each velocity loop, rad/s.
    position
        Position-loop gain of each axis, 1/s.
    velocity_filter
        Time constant (s) of the first-order filter of each drive's encoder velocity (0: none).
    modes
        Slowest and fastest velocity-loop mode over the states tuned for, rad/s.
    delay
        Sum of the small lags of the velocity loop ``T_Σ``, s.
    """

    inertia: np.ndarray
    velocity: np.ndarray
    integral: np.ndarray
    position: np.ndarray
    velocity_filter: np.ndarray
    modes: tuple[float, float]
    delay: float


def tune_loops(dyn: Dynamics, motion: tuple[np.ndarray, np.ndarray, np.ndarray] | np.ndarray,
               loops: DriveLoops, control_rate: float, encoder_step: np.ndarray | float, *,
               samples: int = 64, speed: np.ndarray | float | None = None) -> Gains:
    """The drives' gains by the rule of :class:`DriveLoops`.

    Parameters
    ----------
    dyn
        The robot's dynamics (the inertia the loops see).
    motion
        Either a reference motion: basis positions, velocities and accelerations (N, n) at the
        control rate, whose mass matrix is taken at ``samples`` states along it and whose peak
        actuator speeds set the velocity filters; or basis positions (N, n) alone (the states
        the robot may be in), each used, with ``speed`` given.
    loops, control_rate
        The tuning rule and the rate of the loops, Hz.
    encoder_step
        Resolution of the position the loops read (rad per increment, per actuator); it sets
        the velocity filters.
    samples
        States taken along a reference motion.
    speed
        Peak speed of each actuator (rad/s or m/s, scalar or (n,)); default: the reference
        motion's.

    Examples
    --------
    >>> dyn = Dynamics(robot, robot.prior)
    >>> step = 2 * np.pi / 4096                                 # rad per encoder increment
    >>> gains = tune_loops(dyn, ref(np.arange(0, 10, 1e-3)), DriveLoops(), 1000.0, step)
    >>> states = random_states(robot, 64, np.random.default_rng(0))[0]   # positions only
    >>> gains = tune_loops(dyn, states, DriveLoops(), 1000.0, step, speed=300.0)
    """
    if not loops.a > 0:
        raise DataError(f"loops.a: expected a ratio > 0, found {loops.a}")
    if not loops.current_bandwidth > 0:
        raise DataError(f"loops.current_bandwidth: expected a frequency > 0 Hz, found "
                        f"{loops.current_bandwidth}")
    if not 0 < loops.velocity_resolution < 1:
        raise DataError(f"loops.velocity_resolution: expected a fraction in (0, 1), found "
                        f"{loops.velocity_resolution}")
    trans = dyn.robot.transmission
    if isinstance(motion, tuple):
        pick = np.linspace(0, len(motion[0]) - 1, samples).round().astype(int)
        q = motion[0][pick]
    else:
        q = _validate.batch(motion, "motion", dyn.n)
        if speed is None:
            raise DataError("speed: expected the peak speed of each actuator with positions "
                            "alone, found None; e.g. tune_loops(dyn, states, loops, 1000.0, "
                            "step, speed=300.0)")
    if speed is None:
        peak = np.abs(trans.actuator_state(*motion)[1]).max(axis=0)
    else:
        peak = np.asarray(speed, dtype=float)
        if peak.shape not in ((), (dyn.n,)) or not np.all(peak > 0) \
                or not np.all(np.isfinite(peak)):
            raise DataError(f"speed: expected a finite peak speed > 0 per actuator ({dyn.n} "
                            f"of them, rad/s or m/s), found {speed!r}")
        peak = np.broadcast_to(peak, (dyn.n,))
    M = dyn.mass_matrix(q)
    # Output per motor acceleration (the motor-side inertia matrix, in output units).
    MK = M @ np.linalg.inv(trans.jacobian(q))
    locked = np.diagonal(MK, axis1=1, axis2=2)
    J = np.median(locked, axis=0)  # signed: a negative gear ratio or torque constant flips it
    if np.any(np.sign(locked) != np.sign(J)) or np.any(J == 0):
        raise DataError("drive loops: an axis's inertia changes sign or vanishes over the "
                        "states tuned for; the transmission passes through a dead point")
    dt = 1.0 / control_rate
    # The velocity filter of each drive: quantization noise of the differenced encoder,
    # step / (dt √6), brought down to velocity_resolution of the peak speed (variance · dt / 2τ),
    # at most 20 control periods.
    raw = np.broadcast_to(encoder_step, peak.shape) / (dt * np.sqrt(6))
    with np.errstate(divide="ignore", invalid="ignore"):
        filt = dt / 2 * (raw / (loops.velocity_resolution * peak)) ** 2
    filt = np.where(filt > dt, np.minimum(filt, 20 * dt), 0.0)
    delay = 1.5 * dt + 1.0 / (2 * np.pi * loops.current_bandwidth) + filt
    budget = 1.0 / (loops.a * delay)
    if loops.velocity_bandwidth is not None:
        budget = np.minimum(budget, 2 * np.pi * loops.velocity_bandwidth)
    # Coupled axes: the modes of K M⁻¹ diag(J) are 1 for decoupled ones; scale every gain down
    # by the largest over the motion.
    coupling = np.linalg.eigvals(np.linalg.solve(MK, np.broadcast_to(np.diag(J), MK.shape)))
    kv = J * budget / coupling.real.max()
    modes = np.linalg.eigvals(np.linalg.solve(MK, np.broadcast_to(np.diag(kv), MK.shape))).real
    # Each axis's slowest own mode: its gain over its largest locked inertia.
    own = kv / np.abs(locked).max(axis=0) * np.sign(J)
    return Gains(inertia=J, velocity=kv, integral=own / 2, position=own / 2,
                 velocity_filter=filt, modes=(float(modes.min()), float(modes.max())),
                 delay=delay)


def encoder_steps(robot: Robot, loops: DriveLoops) -> np.ndarray:
    """Resolution (rad or m per increment) of the position each drive's loops read."""
    if loops.encoder_increments is not None:
        res = np.broadcast_to(np.asarray(loops.encoder_increments, dtype=float), (robot.n,))
        if not np.all(res > 0) or not np.all(np.isfinite(res)):
            raise DataError(f"loops.encoder_increments: expected increments per turn > 0, "
                            f"found {loops.encoder_increments!r}; e.g. DriveLoops("
                            "encoder_increments=4096)")
        return 2 * np.pi / res
    return np.broadcast_to(default_step(robot, "actuator"), (robot.n,))


def command_limits(robot: Robot, loops: DriveLoops) -> np.ndarray:
    """Command limit of each drive in the output's units (A or N·m), by
    :attr:`DriveLoops.limits` or the robot's effort limits."""
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
