"""The transmission of a Stewart–Gough platform: actuator coordinates are the leg lengths.

``q_m = c (l(x) − l_0)`` with ``l`` the six leg lengths of the pose ``x`` (closed-form inverse
kinematics), ``c`` the actuator units per metre (1 for direct linear drives, as on the PaLiDA;
``2π r / lead`` for a motor turning a screw through a gear of ratio ``r``) and ``l_0`` the leg
length at actuator position 0. With ``K = c ∂l/∂x`` (Abdellatif (5)–(7): ``K = c J⁻¹``)::

    v_m = K v,    a_m = K a + c K̇ v,    τ_m = K⁻ᵀ τ,    τ = Kᵀ τ_m.

``K`` is full and depends on the pose, so the actuator-side force is one 6×6 solve per sample,
done for the whole batch at once. The inverse map is the direct kinematics
(:func:`~dynid.models.stewart.direct.direct_kinematics`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import ModelError
from ..transmissions import Gear, Transmission
from .geometry import StewartGeometry

__all__ = ["SINGULAR_CONDITION", "LegTransmission"]

#: Condition number of the scaled leg Jacobian above which a pose is taken as singular.
SINGULAR_CONDITION = 1e6


class LegTransmission(Transmission):
    """Leg lengths as actuator coordinates of a Stewart–Gough platform.

    Parameters
    ----------
    geometry
        The platform's :class:`~dynid.models.stewart.geometry.StewartGeometry`.
    names
        The six actuator names.
    scale
        Actuator units per metre of leg length, ``c`` (default 1: positions in m, forces in N).
    zero
        Leg length at actuator position 0, ``l_0`` (m; default 0: the position is the length).
    torque_constants
        Force (or torque) per ampere of each drive, for current output.
    resolution
        Resolution of the leg-length sensors (m): the direct kinematics solves to a hundredth
        of it.

    Examples
    --------
    >>> robot = dynid.load_robot("hexapod")
    >>> q_m, v_m, a_m, K = robot.transmission.actuator_state(q, v, a)   # K (N, 6, 6)
    >>> q2, v2, a2 = robot.transmission.basis_state(q_m, v_m, a_m)      # direct kinematics
    """

    def __init__(self, geometry: StewartGeometry, names: Sequence[str], *, scale: float = 1.0,
                 zero: float = 0.0, torque_constants: Sequence[float] | None = None,
                 resolution: float | None = None):
        super().__init__([Gear(1.0) for _ in range(6)], names,
                         torque_constants=torque_constants)
        if not (np.isfinite(scale) and scale != 0 and np.isfinite(zero)):
            raise ModelError(f"leg transmission: expected a finite non-zero scale and a finite "
                             f"zero length, found scale {scale}, zero {zero}; e.g. "
                             "LegTransmission(geometry, names, scale=1.0, zero=0.0)")
        if resolution is not None and not 0 < resolution < np.inf:
            raise ModelError(f"leg transmission: resolution must be a length > 0 (m), found "
                             f"{resolution}")
        self.geometry = geometry
        self.scale, self.zero = float(scale), float(zero)
        self.resolution = None if resolution is None else float(resolution)
        self._direct = False

    @property
    def tolerance(self) -> float:
        """Leg-length tolerance (m) of the direct kinematics: 1 % of the resolution, at most
        1e-10 m."""
        return 1e-10 if self.resolution is None else min(1e-10, 0.01 * self.resolution)

    def actuator_units(self, basis_units: Sequence[str]) -> tuple[str, ...]:
        return ("m" if self.scale == 1.0 else "rad",) * 6

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        K = self.scale * self.geometry.legs(q).K
        _check_singular(self.geometry, q, K)
        return K

    def actuator_state(self, q, v, a):
        legs = self.geometry.legs(q, v)
        K = self.scale * legs.K
        _check_singular(self.geometry, q, K)
        c = self.scale
        q_m = c * (legs.length - self.zero)
        a_m = np.matmul(K, a[..., None])[..., 0] + c * legs.length_ddot0
        return q_m, c * legs.length_dot, a_m, K

    def basis_state(self, q_m, v_m, a_m, *, strict=True):
        from .direct import direct_kinematics

        q = direct_kinematics(self.geometry, q_m / self.scale + self.zero,
                              tolerance=self.tolerance, strict=strict)
        ok = np.all(np.isfinite(q), axis=1)
        v = np.full_like(q, np.nan)
        a = np.full_like(q, np.nan)
        if np.any(ok):
            K = self.scale * self.geometry.legs(q[ok]).K
            v[ok] = np.linalg.solve(K, v_m[ok][..., None])[..., 0]
            bias = self.scale * self.geometry.legs(q[ok], v[ok]).length_ddot0
            a[ok] = np.linalg.solve(K, (a_m[ok] - bias)[..., None])[..., 0]
        return q, v, a

    def to_actuator(self, rows, gp, *, overwrite=False):
        return np.matmul(np.swapaxes(np.linalg.inv(gp), 1, 2), rows)

    def to_basis(self, rows, gp, *, overwrite=False):
        return np.matmul(np.swapaxes(gp, 1, 2), rows)

    def __repr__(self) -> str:
        return f"LegTransmission(scale={self.scale:g}, zero={self.zero:g})"


def singular_poses(geometry: StewartGeometry, K: np.ndarray) -> np.ndarray:
    """Condition numbers (N,) in the 1-norm of the scaled leg Jacobians ``K`` (N, 6, 6)."""
    with np.errstate(all="ignore"):
        return np.linalg.cond(geometry.scaled_jacobian(K), 1)  # inf where exactly singular


def _check_singular(geometry: StewartGeometry, q: np.ndarray, K: np.ndarray) -> None:
    cond = singular_poses(geometry, K)
    bad = ~(cond < SINGULAR_CONDITION)
    if np.any(bad):
        k = int(np.argmax(bad))
        raise ModelError(
            f"Stewart platform: singular pose {np.round(q[k], 6).tolist()} (condition number of "
            f"the leg Jacobian {cond[k]:.3g}, expected below {SINGULAR_CONDITION:g}): the legs "
            "cannot hold the platform there and the actuator forces are undefined; keep the "
            "poses away from it (dynid.models.stewart.check_poses names the time)")
