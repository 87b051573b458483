"""Ball-screw and lever linear actuators (Leborne (3)–(7), (16)–(17)).

A gear motor turns a ball screw whose nut moves a rod; the cylinder formed by screw and rod is
hinged at one end at distance ``l1`` from the joint axis on the preceding link, and at the other
end at distance ``l2`` on the driven link. With the angle between the two arms ``θ = q + β``
(``β`` fixed by the geometry), the cylinder length is (law of cosines)::

    q_p(q) = sqrt(l1² + l2² − 2 l1 l2 cos(q + β))
    ∂q_p/∂q = l1 l2 sin(q + β) / q_p = l2 sin α        (α: angle of the rod on the link, Fig. 2)

and the motor angle is proportional to the cylinder extension (``p`` screw pitch in m per turn,
``r`` gear ratio, motor turns per screw turn, ``L0`` the length at motor angle zero)::

    q_m = (2π r / p) (q_p(q) − L0)

Virtual work turns the rod force ``F_BS`` into the joint torque ``τ_l = F_BS ∂q_p/∂q = l2 sin α
F_BS``, Leborne (4). The translating parts (mass ``m_t``, viscous ``f_vt`` and Coulomb ``f_ct``
friction on ``q_p``, Leborne (3)) move with ``q̇_p = c q̇_m``, ``c = p / (2π r)`` (m/rad), so,
seen from the motor, they add ``c² m_t q̈_m + c² f_vt q̇_m + |c| f_ct sgn q̇_m``: the same columns
as the rotor inertia and motor friction, scaled by constants. Each lever therefore has six
actuator parameters but three base parameters (Leborne (16)–(17), in consistent units)::

    J_actuator = J_m + c² m_t,   f_v,actuator = f_vm + c² f_vt,   f_c,actuator = f_cm + |c| f_ct

Leborne writes these scaled by ``l2`` and a factor ``2π/p``; here they are written on the motor
shaft, where the encoder measures, and the configuration-dependent factor ``l2 sin α`` is in the
transmission Jacobian ``K(q) = (2π r / p) l2 sin α``, hence also in the current gain
``K(q) k_T`` of Leborne (9), (14)–(15).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ._geometry import cosine_law
from .terms import CoordinateTerm
from .transmissions import Drive

__all__ = ["LeverScrew", "screw_dynamics"]

_DEAD = 1e-3  # |sin θ| below which a lever is taken to be at a dead point


class LeverScrew(Drive):
    """The motor angle of a ball-screw and lever actuator as a function of its joint angle.

    Parameters
    ----------
    l1, l2
        Distances (m) from the joint axis to the cylinder's hinge on the preceding link and on
        the driven link (Leborne Table II).
    beta
        Angle (rad) between the two arms at joint angle zero: the arms make ``q + beta``.
    pitch
        Screw lead ``p`` (m per screw turn), > 0.
    ratio
        Gear ratio ``r`` between motor and screw (motor turns per screw turn); its sign sets the
        direction in which the motor angle grows.
    length_at_zero
        Cylinder length ``L0`` (m) at motor angle zero (default ``|l1 − l2|``).
    limits
        Joint position range (rad) the actuator works in; it must hold no dead point, and it
        picks the assembly branch (sign of ``sin(q + β)``) for :meth:`inverse`.
    name, joint
        Names for messages: the actuator (e.g. its robot-file path) and the joint it drives.
    """

    def __init__(self, l1: float, l2: float, beta: float, pitch: float, ratio: float = 1.0, *,
                 length_at_zero: float | None = None,
                 limits: tuple[float, float] | None = None, name: str = "lever",
                 joint: str = ""):
        self.name, self.joint = name, joint
        self.limits = None if limits is None else (float(limits[0]), float(limits[1]))
        for key, value in (("l1", l1), ("l2", l2), ("pitch", pitch)):
            if not np.isfinite(value) or value <= 0:
                raise ModelError(f"{name}.{key}: expected a length > 0 m, found {value}")
        if not np.isfinite(ratio) or ratio == 0:
            raise ModelError(f"{name}.ratio: expected a finite non-zero gear ratio, found {ratio}")
        if not np.isfinite(beta):
            raise ModelError(f"{name}.beta: expected a finite angle, found {beta}")
        self.l1, self.l2, self.beta = float(l1), float(l2), float(beta)
        self.pitch, self.ratio = float(pitch), float(ratio)
        self.length_at_zero = abs(l1 - l2) if length_at_zero is None else float(length_at_zero)
        self.scale = 2 * np.pi * self.ratio / self.pitch   # motor rad per m of cylinder
        if not 1e-100 < abs(self.scale) < 1e100 or not np.isfinite(self.length_at_zero):
            raise ModelError(f"{name}: ratio {ratio:g} and pitch {pitch:g} m give "
                             f"{self.scale:.3g} motor rad per m of cylinder, too far from any "
                             "real screw to compute with; check their units (pitch in m per "
                             "screw turn, ratio in motor turns per screw turn)")
        self.branch, self.center = 1.0, 0.0
        if limits is not None:
            self._check_range(*limits, label=name)
            lo, hi = limits
            self.center = 0.5 * (lo + hi)
            self.branch = float(np.sign(np.sin(self.center + self.beta)))

    @property
    def lead(self) -> float:
        """``c = ∂q_p/∂q_m = p / (2π r)``, m of cylinder per rad of motor (signed)."""
        return 1.0 / self.scale

    def _check_range(self, lower: float, upper: float, label: str) -> None:
        """Raise when the lever has a dead point (``g′ = 0``) in ``[lower, upper]``."""
        if not (np.isfinite(lower) and np.isfinite(upper)):
            raise ModelError(f"{label}: a lever actuator needs finite joint position limits to "
                             f"check for dead points, found [{lower}, {upper}]")
        lo, hi = lower + self.beta, upper + self.beta
        k = np.ceil((lo - _DEAD) / np.pi)
        if k * np.pi <= hi + _DEAD:
            q_dead = k * np.pi - self.beta
            raise ModelError(
                f"{label}: lever at a dead point at joint angle {q_dead:.4g} rad within the "
                f"range [{lower:.4g}, {upper:.4g}] rad: there the lever angle q + beta is a "
                f"multiple of π, the cylinder lies along the lever arm (l2 sin α = 0) and the "
                "motor cannot move the joint. Change beta or the joint limits")

    @property
    def _of(self) -> str:
        return f" of joint {self.joint!r}" if self.joint else ""

    def reach(self) -> tuple[float, float]:
        """Lowest and highest motor positions (rad) the cylinder reaches: its lengths from
        ``|l1 − l2|`` to ``l1 + l2``."""
        ends = self.scale * (np.array([abs(self.l1 - self.l2), self.l1 + self.l2])
                             - self.length_at_zero)
        return float(ends.min()), float(ends.max())

    def length(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cylinder length ``q_p`` (m) and its first two derivatives in ``q`` at (N,)."""
        theta = q + self.beta
        dead = np.abs(np.sin(theta)) < 1e-9
        if np.any(dead):
            k = int(np.argmax(dead))
            raise ModelError(f"{self.name}: lever{self._of} at a dead point at joint angle "
                             f"{q[k]:.6g} rad (q + beta is a multiple of π); the motor cannot "
                             "move the joint there, so no motor-side model exists")
        return cosine_law(self.l1, self.l2, theta)

    def evaluate(self, q):
        qp, d1, d2 = self.length(q)
        k = self.scale
        return k * (qp - self.length_at_zero), k * d1, k * d2

    def inverse(self, g, *, strict=True):
        qp = self.length_at_zero + np.asarray(g, dtype=float) / self.scale
        cos = (self.l1 ** 2 + self.l2 ** 2 - qp ** 2) / (2 * self.l1 * self.l2)
        beyond = np.abs(cos) > 1 + 1e-12
        if strict and np.any(beyond):
            raise ModelError(self._beyond(np.atleast_1d(np.asarray(g, dtype=float)),
                                          np.atleast_1d(beyond)))
        if not strict:
            # The ends of the reach are dead points, where the drive has no velocity ratio.
            beyond |= np.sqrt(np.maximum(1.0 - cos * cos, 0.0)) < 1e-9
        theta = np.where(beyond, np.nan, self.branch * np.arccos(np.clip(cos, -1.0, 1.0)))
        q = theta - self.beta
        # The representative of q + 2πk nearest to the working range.
        return q + 2 * np.pi * np.round((self.center - q) / (2 * np.pi))

    def _beyond(self, g: np.ndarray, beyond: np.ndarray) -> str:
        k = int(np.argmax(beyond))
        lo, hi = self.reach()
        sample = f" (sample {k} of {g.size})" if g.size > 1 else ""
        working = ""
        if self.limits is not None:
            ends = np.sort(self.evaluate(np.array(self.limits))[0])
            working = (f"; the joint's limits [{self.limits[0]:.4g}, {self.limits[1]:.4g}] rad "
                       f"are motor positions {ends[0]:.6g} to {ends[1]:.6g} rad")
        return (f"{self.name}: motor position {g[k]:.6g} rad{sample}{self._of} is beyond the "
                f"cylinder's reach: the lever reaches motor positions from {lo:.6g} to "
                f"{hi:.6g} rad (cylinder lengths |l1 − l2| = {abs(self.l1 - self.l2):.4g} m "
                f"to l1 + l2 = {self.l1 + self.l2:.4g} m; length {self.length_at_zero:.4g} m "
                f"at motor position 0){working}. Check the motor's zero (length_at_zero, the "
                "encoder's zero) and that positions are motor angles in rad (increments "
                "converted with the encoder's resolution)")

    def __repr__(self) -> str:
        return (f"LeverScrew(l1={self.l1:g}, l2={self.l2:g}, beta={self.beta:.4g}, "
                f"pitch={self.pitch:g}, ratio={self.ratio:g})")


def screw_dynamics(motor: str, row: int, lead: float, *, mass: float | None = None,
                   viscous: float | None = None, coulomb: float | None = None,
                   smoothing: float = 0.0) -> CoordinateTerm:
    """Translating mass and friction of a ball screw, on its motor's coordinate.

    Parameters ``motor.mt`` (kg), ``motor.fvt`` (N·s/m), ``motor.fct`` (N) for the values
    given; their columns are ``c² q̈_m``, ``c² q̇_m`` and ``|c| sgn q̇_m`` with ``c = lead``
    (m/rad), Leborne (3) seen from the motor.
    """
    if not 1e-100 < abs(lead) < 1e100:  # also keeps lead² finite and non-zero
        raise ModelError(f"{motor}: screw lead must be finite and non-zero, found {lead}")
    priors = {q: (k, v) for q, k, v in (("inertia", "mt", mass), ("viscous", "fvt", viscous),
                                         ("coulomb", "fct", coulomb)) if v is not None}
    scales = {"inertia": lead ** 2, "viscous": lead ** 2, "coulomb": abs(lead)}
    units = {"inertia": "kg", "viscous": "N·s/m", "coulomb": "N"}
    return CoordinateTerm(motor, row, "actuator", priors, smoothing=smoothing, scales=scales,
                          units=units)
