"""Drive loops of the simulated robot and the rule that tunes them.

Each drive runs cascaded loops on its actuator: a proportional position loop feeding a PI
velocity loop whose output is the current (or torque) command, on top of the feed-forward of
the robot's prior model. :class:`DriveLoops` states the tuning rule; :func:`tune_loops`
applies it along a reference motion and returns the :class:`Gains`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..models.dynamics import Dynamics

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
    evaluated on the mass matrix along the reference:

    * velocity gains ``k_v = J ω / λ`` with ``J`` each axis's median inertia (the others
      locked), ``ω = 1 / (a T_Σ)`` its budget (capped by ``velocity_bandwidth``) and ``λ`` the
      largest eigenvalue of ``K M⁻¹ diag(J)`` anywhere on the reference (1 for decoupled axes
      of constant inertia): no loop is faster than its budget, where the lags cost ``1/a`` rad
      of phase (19° for the default ``a = 3``) and the loop keeps more than 60° of phase
      margin; every other mode is slower and better damped;
    * integral corner and position gain (1/s) of each axis both ``ω_s / 2``, with ``ω_s`` the
      axis's slowest own mode (its gain over its largest locked inertia on the reference): for
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
        Noise of the velocity a drive feeds back, as a fraction of its axis's peak reference
        speed: the velocity differenced from a coarse encoder (quantization noise
        ``σ = step / (dt √6)``) is low-passed by a first-order filter of time constant
        ``τ_f = dt / 2 · (σ / (velocity_resolution · peak))²`` when that exceeds a control
        period (at most 20 of them), a lag added to that drive's ``T_Σ``.
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
        Motor-side inertia per actuator (output units per motor rad/s²), the median along the
        reference with the other axes locked.
    velocity
        Velocity-loop gain per actuator (output units per motor rad/s).
    integral
        Integral corner of each velocity loop, rad/s.
    position
        Position-loop gain of each axis, 1/s.
    velocity_filter
        Time constant (s) of the first-order filter of each drive's encoder velocity (0: none).
    modes
        Slowest and fastest velocity-loop mode over the reference, rad/s.
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


def tune_loops(dyn: Dynamics, motion: tuple[np.ndarray, np.ndarray, np.ndarray],
               loops: DriveLoops, control_rate: float, encoder_step: np.ndarray | float, *,
               samples: int = 64) -> Gains:
    """The drives' gains for tracking ``motion`` (basis positions, velocities and
    accelerations (N, n) at the control rate), by the rule of :class:`DriveLoops`, from the
    mass matrix at ``samples`` states along it; ``encoder_step`` (rad per increment, per
    actuator) sets the velocity filters."""
    if not loops.a > 0:
        raise DataError(f"loops.a: expected a ratio > 0, found {loops.a}")
    if not loops.current_bandwidth > 0:
        raise DataError(f"loops.current_bandwidth: expected a frequency > 0 Hz, found "
                        f"{loops.current_bandwidth}")
    if not 0 < loops.velocity_resolution < 1:
        raise DataError(f"loops.velocity_resolution: expected a fraction in (0, 1), found "
                        f"{loops.velocity_resolution}")
    trans = dyn.robot.transmission
    pick = np.linspace(0, len(motion[0]) - 1, samples).round().astype(int)
    q = motion[0][pick]
    M = dyn.mass_matrix(q)
    # Output per motor acceleration (the motor-side inertia matrix, in output units).
    MK = M @ np.linalg.inv(trans.jacobian(q))
    locked = np.diagonal(MK, axis1=1, axis2=2)
    J = np.median(locked, axis=0)  # signed: a negative gear ratio or torque constant flips it
    if np.any(np.sign(locked) != np.sign(J)) or np.any(J == 0):
        raise DataError("drive loops: an axis's inertia changes sign or vanishes along the "
                        "reference; the transmission passes through a dead point")
    dt = 1.0 / control_rate
    # The velocity filter of each drive: quantization noise of the differenced encoder,
    # step / (dt √6), brought down to velocity_resolution of the peak speed (variance · dt / 2τ),
    # at most 20 control periods.
    peak = np.abs(trans.actuator_state(*motion)[1]).max(axis=0)
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
