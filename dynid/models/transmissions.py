"""Transmissions from basis coordinates to actuator coordinates.

A transmission ``q_m = μ(q)`` says what the drives measure and move. dynid writes it as a drive
per basis coordinate followed by a constant coupling matrix::

    q_m = C g(q),   g(q) = (g_1(q_1), …, g_n(q_n)),   K = ∂μ/∂q = C diag(g′(q))

``g_j`` is a gear ratio (``g = r q``), or a nonlinear drive such as a ball-screw and lever
(:class:`~dynid.models.levers.LeverScrew`); ``C`` is the identity, or a tendon coupling matrix
(the dVRK wrists, the Stäubli TX40's joints 5–6). With a square, invertible ``K``, power
balance ``τ_mᵀ v_m = τᵀ v`` gives the actuator-side force ``τ_m = K⁻ᵀ τ`` (:meth:`to_actuator`)
and, the other way, the joint-side force of actuator terms ``τ = Kᵀ τ_m`` (:meth:`to_basis`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from ..errors import ModelError

__all__ = ["Drive", "Gear", "Transmission"]


class Drive(ABC):
    """Elementwise map ``g(q_j)`` of one basis coordinate to one drive coordinate."""

    @abstractmethod
    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``g``, ``g′`` and ``g″`` at positions ``q`` (N,)."""

    @abstractmethod
    def inverse(self, g: np.ndarray, *, strict: bool = True) -> np.ndarray:
        """Positions ``q`` (N,) with ``g(q) = g``. A drive position out of reach raises
        :class:`~dynid.errors.ModelError`, or gives NaN for that sample when not ``strict``."""


class Gear(Drive):
    """A gear train of constant ratio ``r`` (motor turns per joint turn, any sign)."""

    def __init__(self, ratio: float):
        if not np.isfinite(ratio) or ratio == 0:
            raise ModelError(f"gear ratio: expected a finite non-zero number, found {ratio}")
        self.ratio = float(ratio)

    def evaluate(self, q):
        return self.ratio * q, np.full_like(q, self.ratio), np.zeros_like(q)

    def inverse(self, g, *, strict=True):
        return g / self.ratio

    def __repr__(self) -> str:
        return f"Gear({self.ratio:g})"


class Transmission:
    """Drives per basis coordinate and a constant coupling matrix.

    Parameters
    ----------
    drives
        One :class:`Drive` per basis coordinate.
    names
        Actuator names (one per actuator, as many as basis coordinates).
    coupling
        Square, invertible coupling matrix ``C`` (default: identity).
    torque_constants
        Motor torque constants ``k_T`` (N·m/A) per actuator, or ``None`` when unknown; needed
        to output motor current ``i = τ_m / k_T``.
    increments_per_turn, zero_increments
        Encoder resolution (increments per motor turn) and the reading at ``q_m = 0``, per
        actuator, for positions the drives report in increments (default: none).
    """

    def __init__(self, drives: Sequence[Drive], names: Sequence[str], *,
                 coupling: np.ndarray | None = None,
                 torque_constants: Sequence[float] | None = None,
                 increments_per_turn: Sequence[float] | None = None,
                 zero_increments: Sequence[float] | None = None):
        self.drives = tuple(drives)
        self.names = tuple(names)
        n = len(self.drives)
        if len(self.names) != n:
            raise ModelError(f"transmission: {n} drives but {len(self.names)} actuator names")
        # Constant gear ratios when every drive is a gear (else None).
        self._ratios = (np.array([d.ratio for d in self.drives])
                        if all(isinstance(d, Gear) for d in self.drives) else None)
        if coupling is None:
            self.coupling = None
        else:
            C = np.asarray(coupling, dtype=float)
            if C.shape != (n, n):
                raise ModelError(f"coupling matrix: expected shape ({n}, {n}) for {n} "
                                 f"actuators, found {C.shape}")
            if not np.all(np.isfinite(C)):
                raise ModelError("coupling matrix: expected finite values, found "
                                 f"{C[~np.isfinite(C)][0]}")
            scale = np.abs(C).max()
            cond = np.linalg.cond(C / scale) if scale > 0 else np.inf  # scale-free
            if cond > 1e12:
                raise ModelError(f"coupling matrix is singular (condition number {cond:.3g});"
                                 " every actuator must move an independent combination of "
                                 "joints")
            self.coupling = C
            self._coupling_inv = np.linalg.inv(C)
        if torque_constants is None:
            self.torque_constants = None
        else:
            kt = np.asarray(torque_constants, dtype=float)
            if kt.shape != (n,) or np.any(~np.isfinite(kt)) or np.any(kt == 0):
                raise ModelError(f"torque constants: expected {n} finite non-zero values, "
                                 f"found {kt}")
            self.torque_constants = kt
        self.increments_per_turn = self.zero_increments = None
        if increments_per_turn is not None:
            res = np.asarray(increments_per_turn, dtype=float)
            zero = np.zeros(n) if zero_increments is None else np.asarray(zero_increments, float)
            if res.shape != (n,) or np.any(~np.isfinite(res)) or np.any(res <= 0):
                raise ModelError(f"encoder increments per turn: expected {n} values > 0, "
                                 f"found {res}")
            if zero.shape != (n,) or np.any(~np.isfinite(zero)):
                raise ModelError(f"encoder zero increments: expected {n} finite values, "
                                 f"found {zero}")
            self.increments_per_turn, self.zero_increments = res, zero
        self._direct = (self.coupling is None and self._ratios is not None
                        and bool(np.all(self._ratios == 1.0)))

    @classmethod
    def direct(cls, names: Sequence[str]) -> Transmission:
        """Each joint driven directly (ratio 1, no coupling)."""
        return cls([Gear(1.0) for _ in names], names)

    @property
    def n(self) -> int:
        return len(self.drives)

    @property
    def elementwise(self) -> bool:
        """Whether the map is ``q_m = C g(q)`` with one drive per basis coordinate, as this
        class computes it; a subclass with its own map (a hexapod's leg lengths, each a
        function of the whole pose) is not, and its drives say nothing of it."""
        return type(self) is Transmission

    @property
    def is_direct(self) -> bool:
        """Every joint driven directly: unit gears and no coupling."""
        return self._direct

    def actuator_units(self, basis_units: Sequence[str]) -> tuple[str, ...]:
        """Position unit of each actuator given those of the basis coordinates: ``"m"`` for
        an actuator that moves prismatic coordinates only, each through a unit gear, else
        ``"rad"``."""
        C = np.eye(self.n) if self.coupling is None else self.coupling
        linear = np.array([u == "m" and isinstance(d, Gear) and d.ratio == 1.0 for u, d in
                           zip(basis_units, self.drives, strict=True)])
        return tuple("m" if np.all(linear[row != 0]) else "rad" for row in C)

    # Encoder units -----------------------------------------------------------------------
    def _encoder(self) -> np.ndarray:
        if self.increments_per_turn is None:
            raise ModelError("the actuators have no encoder resolution; give "
                             "actuator.encoder.increments_per_turn in the robot file")
        return self.increments_per_turn / (2 * np.pi)

    def to_increments(self, q_m: np.ndarray, *, derivative: bool = False) -> np.ndarray:
        """Actuator positions in rad (N, n) as encoder increments; velocities and
        accelerations (``derivative=True``) are scaled without the zero offset."""
        scaled = np.asarray(q_m, dtype=float) * self._encoder()
        return scaled if derivative else scaled + self.zero_increments

    def from_increments(self, counts: np.ndarray, *, derivative: bool = False) -> np.ndarray:
        """Encoder increments (N, n) as actuator positions in rad (see :meth:`to_increments`)."""
        scale = self._encoder()
        counts = np.asarray(counts, dtype=float)
        return (counts if derivative else counts - self.zero_increments) / scale

    # Kinematics --------------------------------------------------------------------------
    def _drive_state(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ratios = self._ratios
        if ratios is not None:
            return q * ratios, np.broadcast_to(ratios, q.shape), np.broadcast_to(0.0, q.shape)
        g, gp, gpp = (np.empty_like(q) for _ in range(3))
        for j, drive in enumerate(self.drives):
            g[:, j], gp[:, j], gpp[:, j] = drive.evaluate(q[:, j])
        return g, gp, gpp

    def actuator_state(self, q: np.ndarray, v: np.ndarray, a: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Actuator positions, velocities, accelerations (N, n) and ``g′`` (N, n)."""
        g, gp, gpp = self._drive_state(q)
        gv, ga = gp * v, gp * a + gpp * v * v
        if self.coupling is not None:
            C = self.coupling.T
            g, gv, ga = g @ C, gv @ C, ga @ C
        return g, gv, ga, gp

    def basis_state(self, q_m: np.ndarray, v_m: np.ndarray, a_m: np.ndarray, *,
                    strict: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Basis positions, velocities and accelerations from actuator ones (inverse map).

        Actuator positions out of a drive's reach raise, or give NaN rows when not ``strict``.
        """
        if self.coupling is not None:
            Ci = self._coupling_inv.T
            q_m, v_m, a_m = q_m @ Ci, v_m @ Ci, a_m @ Ci
        q = np.empty_like(q_m)
        for j, drive in enumerate(self.drives):
            q[:, j] = drive.inverse(q_m[:, j], strict=strict)
        _, gp, gpp = self._drive_state(q)
        v = v_m / gp
        return q, v, (a_m - gpp * v * v) / gp

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """``K = ∂q_m/∂q`` at each sample, shape (N, n, n)."""
        _, gp, _ = self._drive_state(q)
        K = gp[:, None, :] * np.eye(self.n)
        return K if self.coupling is None else self.coupling @ K

    def current_gain(self, q: np.ndarray) -> np.ndarray:
        """Joint-side torque per ampere, ``K(q)ᵀ diag(k_T)`` (N, n, n): ``τ = K(q)ᵀ k_T i``.

        For a lever actuator the diagonal entry is ``k_T (2π r / p) l_2 sin α``, the
        configuration-dependent gain of Leborne (9); for a gear it is ``k_T r``.
        """
        if self.torque_constants is None:
            raise ModelError("current gain: the actuators have no torque constants; give "
                             "actuator torque_constant values")
        return np.swapaxes(self.jacobian(q), 1, 2) * self.torque_constants[None, None, :]

    # Forces ------------------------------------------------------------------------------
    def to_actuator(self, rows: np.ndarray, gp: np.ndarray, *,
                    overwrite: bool = False) -> np.ndarray:
        """Basis-space rows (N, n, p) to actuator space: ``K⁻ᵀ rows`` (written over ``rows``
        when ``overwrite`` and there is no coupling)."""
        out = np.divide(rows, gp[:, :, None], out=rows if overwrite else None)
        if self.coupling is not None:
            out = np.matmul(self._coupling_inv.T, out)
        return out

    def to_basis(self, rows: np.ndarray, gp: np.ndarray, *,
                 overwrite: bool = False) -> np.ndarray:
        """Actuator-space rows (N, n, p) to basis space: ``Kᵀ rows`` (written over ``rows``
        when ``overwrite`` and there is no coupling)."""
        if self.coupling is not None:
            rows, overwrite = np.matmul(self.coupling.T, rows), True
        return np.multiply(rows, gp[:, :, None], out=rows if overwrite else None)
