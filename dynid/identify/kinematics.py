"""Recordings in actuator coordinates mapped to the robot's basis coordinates.

Drives measure actuator coordinates ``q_m`` (motor angles, or the leg lengths of a hexapod);
the regressor takes basis coordinates ``q`` (joint angles, or the platform pose). The inverse
of the transmission ``q_m = μ(q)`` maps one to the other: per coordinate for gears and levers,
by the direct kinematics (Newton–Raphson) for a hexapod. Where the map is applied matters as
soon as it is nonlinear, because the low-pass that precedes differentiation is linear:

``"after"``
    the actuator coordinates are filtered and differentiated, then mapped with their
    derivatives (``v = K⁻¹ v_m``, ``a = K⁻¹ (a_m − K̇ v)``). Right when the excitation was
    designed in actuator coordinates (Leborne's motor-space Fourier series): their spectrum
    is band-limited, the basis motion's is not.
``"before"``
    each recorded sample is mapped first (positions by the direct kinematics, recorded
    velocities and accelerations through ``K``), and the basis coordinates are filtered and
    differentiated. Right when the excitation was designed in basis coordinates, as a
    hexapod's pose (Abdellatif 3.1, 3.3): the pose is band-limited, the leg lengths are not,
    and a low-pass of the leg lengths at the pose's harmonics would distort the motion.
``"auto"``
    ``"after"`` for a transmission of elementwise drives and a constant coupling
    (:class:`~dynid.models.transmissions.Transmission`: gears, levers, tendons), whose robots
    are excited in motor space; ``"before"`` for any other transmission (a hexapod's leg
    lengths, designed in pose space).

A sample the map cannot reach (the direct kinematics does not converge, a lever beyond its
stroke) raises :class:`~dynid.errors.DataError` naming its time and values.
"""

from __future__ import annotations

import numpy as np

from .._files import excerpt
from ..errors import DataError
from .recording import Recording

__all__ = ["KINEMATICS", "actuator_positions", "check_kinematics", "kinematics_order", "map_first",
           "to_basis"]

#: Settings of ``Processing(kinematics=...)``.
KINEMATICS = ("auto", "before", "after")


def check_kinematics(setting) -> None:
    if setting not in KINEMATICS:
        raise DataError(f"kinematics: expected one of {', '.join(map(repr, KINEMATICS))}, "
                        f"found {excerpt(setting)}; e.g. Processing(kinematics='before') maps "
                        "leg lengths to poses before filtering")


def kinematics_order(setting: str, robot) -> str:
    """``"before"`` or ``"after"``: where an actuator-space recording of ``robot`` is mapped
    to basis coordinates (see the module docstring)."""
    check_kinematics(setting)
    if setting != "auto":
        return setting
    return "after" if robot.transmission.elementwise else "before"


def to_basis(robot, time: np.ndarray, q_m: np.ndarray, v_m: np.ndarray, a_m: np.ndarray,
             *, what: str = "recording") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Basis positions, velocities and accelerations (N, n) of actuator ones (N, n) at times
    ``time`` (N,), s. A sample the transmission's inverse cannot map raises
    :class:`~dynid.errors.DataError` naming the first such time."""
    if q_m.shape[1] != robot.n:
        raise DataError(f"{what}: {q_m.shape[1]} actuator coordinates, the robot {robot.name} "
                        f"has {robot.n} ({', '.join(robot.actuator_names)})")
    q, v, a = robot.transmission.basis_state(q_m, v_m, a_m, strict=False)
    bad = ~(np.isfinite(q).all(axis=1) & np.isfinite(v).all(axis=1) & np.isfinite(a).all(axis=1))
    if bad.any():
        k = int(np.argmax(bad))
        values = ", ".join(f"{name} = {x:.6g}" for name, x in
                           zip(robot.actuator_names, q_m[k], strict=True))
        raise DataError(
            f"{what}: the actuator positions at t = {time[k]:.6g} s ({values}) map to no "
            f"basis position of robot {robot.name} ({int(bad.sum())} of {len(bad)} samples): "
            "the direct kinematics does not converge there (a pose out of reach, or a "
            "singular one). Expected actuator positions the robot can take; check the "
            "columns, their units and offsets, or drop those samples with "
            "Processing(skip=...) or recording.select(...)")
    return q, v, a


def map_first(rec: Recording, robot) -> Recording:
    """An actuator-space recording with every sample mapped to basis coordinates before any
    filtering (``kinematics="before"``): positions by the direct kinematics, recorded
    velocities and accelerations through the transmission's Jacobian."""
    N = rec.n_samples
    zero = np.zeros((N, robot.n))
    v_m = rec.velocities if rec.velocities is not None else zero
    a_m = rec.accelerations if rec.accelerations is not None else zero
    q, v, a = to_basis(robot, rec.time, rec.positions, v_m, a_m)
    units = {**rec.units, "positions": robot.basis_units}
    return rec.with_signals(space="basis", names=robot.joint_names, units=units,
                            resolution=None, positions=q,
                            velocities=v if rec.velocities is not None else None,
                            accelerations=a if rec.accelerations is not None else None)


def actuator_positions(robot, q: np.ndarray) -> np.ndarray:
    """Actuator positions ``μ(q)`` (N, n) of basis positions (N, n)."""
    zero = np.zeros_like(q)
    return robot.transmission.actuator_state(q, zero, zero)[0]
