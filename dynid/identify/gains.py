"""Drive gains: the torque per ampere of each actuator, by the payload method.

Most drives report current, and the gain ``g_j`` that turns actuator j's current into its
torque (motor torque constant, amplifier gain) is rarely known to better than a few percent.
From the currents alone the model holds only up to a common scale (``θ`` and every ``g``
scaled together explain the same currents), and with wrong gains every parameter is wrong by
their error. A known payload fixes the scale (Gautier and Briot): two runs of one trajectory,
without and with a payload of known inertia, give for each actuator j and sample k::

    Y_b,kj θ_b + [loaded run] Y_L,kj π_L = g_j i_kj + e_kj

with ``Y_L π_L`` the payload's torque (its regressor times its known parameters). Stacked over
both runs, the system is solved for the robot's base parameters ``θ_b`` (in torque units) and
the gains ``g`` together.

The only noisy columns of that system are the currents, each in its own actuator's rows.
Gautier and Briot solve it by total least squares, which spreads the errors over every column;
with the errors where they are, total least squares is maximum likelihood in the currents,

    minimize Σ_j ‖(Y_b,j θ_b + Y_L,j π_L) / g_j − i_j‖² / σ_j²

with ``σ_j`` each current's noise, iterated from the residuals as
:class:`~dynid.identify.estimators.WLS` does. It starts from the equation-error weighted least
squares (the currents taken as exact) and is solved by Levenberg–Marquardt on the compressed
system: per actuator the triangular factor of ``[Y_b,j  Y_L,j π_L  i_j]``, built chunk by
chunk. The covariance of ``(θ_b, g)`` is the inverse of the whitened residual's ``JᵀJ`` at
the solution.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .._blas import single_threaded
from .._linalg import stack_triangular
from ..errors import DataError
from ..models import Body, Robot, base_parameters
from ._bodyrows import BodyRows, check_body
from ._gainsfit import fit_gains
from ._motions import check_same_motion
from .processing import Processing
from .recording import Recording
from .uncertainty import Uncertainty

__all__ = ["DriveGains", "identify_drive_gains"]

@dataclass(frozen=True)
class DriveGains:
    """Identified drive gains: torque (or force) per ampere of each actuator.

    Attributes
    ----------
    names, units
        Actuator names and the gains' units (``N·m/A``, ``N/A`` for a linear actuator).
    gains, cov
        The gains (n,) and their covariance (n, n).
    base_names, base_params
        The robot's base parameters (b,) identified with them, in torque units (those of
        the robot with motor-torque output).
    joint_cov
        Covariance (b + n, b + n) of the base parameters and the gains together, base
        parameters first (:attr:`base_cov` is its first block).
    noise_sigma
        Each current's noise σ (A), iterated from the residuals.
    payload_effect
        The payload's effect on the currents in standard deviations: the inverse of the
        relative σ of the gains' common scale, which only the payload determines.
    motion_difference
        Per coordinate, the RMS difference of the two runs' positions as a fraction of its
        range of motion.
    n_samples, passes, processing
        Samples used (both runs), weighted passes, and the processing applied.
    settings
        The payload (``name``, ``parent``, ``xyz``, ``rpy``, ``mass``, ``com``,
        ``inertia``) and ``trajectory_tolerance`` they were identified with (the command
        line adds the files it read).

    Examples
    --------
    >>> gains = identify_drive_gains(robot, empty, loaded, payload)   # doctest: +SKIP
    >>> gains.gains, gains.sigma                                       # doctest: +SKIP
    (array([0.1201, 0.1098, ...]), array([0.0004, 0.0002, ...]))
    >>> torque_run = gains.torques(run)            # currents → motor torques
    >>> model = gains.robot(robot)                 # current output with these gains
    """

    names: tuple[str, ...]
    units: tuple[str, ...]
    gains: np.ndarray
    cov: np.ndarray
    base_names: tuple[str, ...]
    base_params: np.ndarray
    joint_cov: np.ndarray
    noise_sigma: np.ndarray
    payload_effect: float
    motion_difference: np.ndarray
    n_samples: int
    passes: int
    processing: Processing
    settings: dict = field(default_factory=dict)

    @property
    def sigma(self) -> np.ndarray:
        """Standard deviation of each gain (n,)."""
        return np.sqrt(np.diag(self.cov))

    @property
    def base_cov(self) -> np.ndarray:
        """Covariance (b, b) of the base parameters."""
        b = len(self.base_params)
        return self.joint_cov[:b, :b]

    def uncertainty(self) -> Uncertainty:
        """Standard deviations and correlations of the gains."""
        return Uncertainty.from_covariance(self.names, self.gains, self.cov)

    def torques(self, recording: Recording) -> Recording:
        """The recording with its currents turned into motor torques (``g_j i_j``)."""
        if not isinstance(recording, Recording) or recording.output_kind != "current":
            kind = getattr(recording, "output_kind", type(recording).__name__)
            raise DataError(f"recording: expected a recording of currents, found {kind}; the "
                            "gains turn currents into torques")
        if recording.n != len(self.gains):
            raise DataError(f"recording: {recording.n} outputs, but the gains are of "
                            f"{len(self.gains)} actuators ({', '.join(self.names)})")
        g = self.gains
        units = {"time": "s", "positions": recording.units["positions"],
                 "output": tuple(u.split("/")[0] for u in self.units)}
        limits = None if recording.output_limits is None else \
            recording.output_limits * np.abs(g)
        cov = None if recording.output_covariance is None else \
            recording.output_covariance * np.outer(g, g)
        return Recording(recording.time, recording.positions, recording.output * g,
                         velocities=recording.velocities,
                         accelerations=recording.accelerations, space=recording.space,
                         output_kind="motor_torque", units=units, names=recording.names,
                         output_limits=limits, output_covariance=cov,
                         history=(*recording.history, "currents × identified drive gains"))

    def robot(self, robot: Robot) -> Robot:
        """``robot`` with current output and these gains as its torque constants."""
        if not isinstance(robot, Robot) or tuple(robot.actuator_names) != self.names:
            raise DataError("robot: expected the robot the gains were identified on (actuators "
                            f"{', '.join(self.names)})")
        return with_torque_constants(robot, self.gains)

    def save(self, path: str | Path) -> Path:
        """Write the gains as JSON (:func:`~dynid.identify.bodyfiles.load_drive_gains` reads
        them back); returns the path."""
        from .bodyfiles import save_drive_gains

        return save_drive_gains(self, path)

    def summary(self) -> str:
        lines = [f"{'actuator':<12} {'gain':>10} {'σ':>9} {'':<6} {'σ %':>6}"]
        for name, g, s, u in zip(self.names, self.gains, self.sigma, self.units, strict=True):
            lines.append(f"{name:<12} {g:10.5g} {s:9.2g} {u:<6} {100 * s / abs(g):6.3f}")
        lines.append(f"payload effect {self.payload_effect:.0f} σ; {self.passes} passes; "
                     f"{self.n_samples} samples")
        return "\n".join(lines)


def with_torque_constants(robot: Robot, constants: np.ndarray) -> Robot:
    """``robot`` with current output and the torque constants ``constants`` (n,)."""
    transmission = copy.copy(robot.transmission)
    transmission.torque_constants = np.array(constants, dtype=float)
    return replace(robot, transmission=transmission, output="current")


@single_threaded
def identify_drive_gains(robot: Robot, empty: Recording, loaded: Recording, payload: Body, *,
                         processing: Processing | None = None,
                         trajectory_tolerance: float = 0.1) -> DriveGains:
    """Identify each actuator's gain (torque per ampere) by the payload method.

    Parameters
    ----------
    robot
        The robot (its output and torque constants are not used: the gains are identified).
    empty, loaded
        Two runs of the same trajectory recording currents (A): without the payload, and with
        it fixed to the robot.
    payload
        The payload as a :class:`~dynid.models.Body`: where it is fixed and its known mass,
        centre of mass and inertia.
    processing
        How both runs are processed (default: :class:`~dynid.identify.processing.
        Processing`'s defaults, chosen for both runs' signals without a fit, which would
        need the gains).
    trajectory_tolerance
        Largest RMS difference between the runs' positions, as a fraction of each
        coordinate's range of motion.

    Returns
    -------
    DriveGains

    Examples
    --------
    >>> box = Body("box", "flange", LinkInertia(3.0, (0, 0, 0.05), (0.01, 0, 0, 0.01, 0,
    ...            0.004)))
    >>> gains = identify_drive_gains(robot, empty, loaded, box)        # doctest: +SKIP
    >>> print(gains.summary())                                         # doctest: +SKIP
    """
    if not isinstance(robot, Robot):
        raise DataError(f"robot: expected a Robot, found {type(robot).__name__}; e.g. "
                        "identify_drive_gains(dynid.load_robot('panda'), empty, loaded, box)")
    example = ("Body('box', 'flange', LinkInertia(3.0, (0, 0, 0.05), (0.01, 0, 0, 0.01, 0, "
               "0.004)))")
    payload = check_body(payload, "payload", example)
    if not payload.inertia.mass > 0:
        raise DataError(f"payload: its mass is {payload.inertia.mass:g} kg; the payload method "
                        f"needs a known mass > 0, e.g. {example}")
    for label, rec in (("empty", empty), ("loaded", loaded)):
        if not isinstance(rec, Recording) or rec.output_kind != "current":
            kind = getattr(rec, "output_kind", type(rec).__name__)
            raise DataError(f"{label}: expected a recording of currents (A), found {kind}; "
                            "drive gains relate current to torque")
    difference = check_same_motion(empty, loaded, trajectory_tolerance)
    unit = with_torque_constants(robot, np.ones(robot.n))
    base = base_parameters(unit)
    rows = BodyRows(unit, payload, base)
    data = rows.data((empty, loaded), processing or Processing())
    factors, counts, samples = _factors(data, rows.b, payload.values)
    fit = fit_gains(factors, counts, rows.b, robot.actuator_names)
    b = rows.b
    units = tuple(f"{u}/A" for u in robot.with_output("motor_torque").output_units)
    return DriveGains(names=tuple(robot.actuator_names), units=units, gains=fit.x[b:],
                      cov=fit.cov[b:, b:], base_names=base.names, base_params=fit.x[:b],
                      joint_cov=fit.cov, noise_sigma=fit.sigma, payload_effect=fit.effect,
                      motion_difference=difference, n_samples=samples, passes=fit.passes,
                      processing=data.processing,
                      settings={"payload": _body_json(payload),
                                "trajectory_tolerance": trajectory_tolerance})


def _body_json(body: Body) -> dict:
    """A body's pose and inertia as plain numbers."""
    inertia = body.inertia
    return {"name": body.name, "parent": body.parent, "xyz": list(body.xyz),
            "rpy": list(body.rpy), "mass": float(inertia.mass), "com": list(inertia.com),
            "inertia": list(inertia.inertia)}


def _factors(data, b: int, payload: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Per output, the triangular factor of the rows ``[Y_b  Y_L π_L  i]`` of both runs (the
    payload's column zero in the empty run); the rows per output and the samples used."""
    n = data.robot.n
    factors = [np.zeros((0, b + 2)) for _ in range(n)]
    counts = np.zeros(n, dtype=int)
    samples = 0
    for run, rec in enumerate(data.processed):
        for Y, y, keep in data.rows([rec]):
            load = Y[..., b:] @ payload if run == 1 else np.zeros(y.shape)
            samples += int(keep.any(axis=1).sum())
            for j in range(n):
                k = keep[:, j]
                block = np.column_stack([Y[k, j, :b], load[k, j], y[k, j]])
                factors[j] = stack_triangular(factors[j], block)
                counts[j] += int(k.sum())
    return [np.pad(F, ((0, b + 2 - F.shape[0]), (0, 0))) for F in factors], counts, samples
