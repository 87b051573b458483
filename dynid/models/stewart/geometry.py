"""Geometry and closed-form inverse kinematics of a Stewart–Gough platform.

The pose ``x = [r, φ]`` (Abdellatif 3.1) is the platform frame's origin ``r`` (m, base frame)
and its roll–pitch–yaw angles ``φ = (φ, θ, ψ)`` (rad), with the rotation

    R(φ, θ, ψ) = R_x(φ) R_y(θ) R_z(ψ)

(rotations about the moving axes x, then y′, then z″). The angular velocity in the base frame
is ``ω = H φ̇`` with Abdellatif's (16)::

    H = [[1, 0,     sin θ       ],
         [0, cos φ, −sin φ cos θ],
         [0, sin φ,  cos φ cos θ]]

(the paper prints ψ where φ stands in the second column; ``H`` above is the one this rotation
has). Leg ``i`` joins the base point ``b_i`` (a universal joint) to the platform point ``p_i``
(a spherical joint, in the platform frame): ``d_i = r + R p_i − b_i``, length ``l_i = |d_i|``,
direction ``u_i = d_i / l_i``. Its rows of the Jacobian ``K = ∂l/∂x`` are
``[u_iᵀ, ((R p_i) × u_i)ᵀ H]`` (Abdellatif (5)–(7): ``K`` is the inverse of the manipulator
Jacobian ``J``).

Every function works on batches of N poses; nothing loops over samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ModelError

__all__ = ["LegState", "StewartGeometry", "rate_matrix", "rate_matrix_derivative", "rotation"]


def rotation(angles: np.ndarray) -> np.ndarray:
    """``R = R_x(φ) R_y(θ) R_z(ψ)`` (N, 3, 3) of roll–pitch–yaw angles (N, 3)."""
    (c1, c2, c3), (s1, s2, s3) = np.cos(angles).T, np.sin(angles).T
    R = np.empty((angles.shape[0], 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 0, 2] = c2 * c3, -c2 * s3, s2
    R[:, 1, 0] = c1 * s3 + s1 * s2 * c3
    R[:, 1, 1] = c1 * c3 - s1 * s2 * s3
    R[:, 1, 2] = -s1 * c2
    R[:, 2, 0] = s1 * s3 - c1 * s2 * c3
    R[:, 2, 1] = s1 * c3 + c1 * s2 * s3
    R[:, 2, 2] = c1 * c2
    return R


def rate_matrix(angles: np.ndarray) -> np.ndarray:
    """``H`` (N, 3, 3) with ``ω = H φ̇`` (Abdellatif (16)) at angles (N, 3)."""
    (c1, c2), (s1, s2) = np.cos(angles[:, :2]).T, np.sin(angles[:, :2]).T
    H = np.zeros((angles.shape[0], 3, 3))
    H[:, 0, 0] = 1.0
    H[:, 1, 1], H[:, 2, 1] = c1, s1
    H[:, 0, 2], H[:, 1, 2], H[:, 2, 2] = s2, -s1 * c2, c1 * c2
    return H


def rate_matrix_derivative(angles: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """``Ḣ`` (N, 3, 3) at angles and angle rates (N, 3): ``α = H φ̈ + Ḣ φ̇``."""
    (c1, c2), (s1, s2) = np.cos(angles[:, :2]).T, np.sin(angles[:, :2]).T
    d1, d2 = rates[:, 0], rates[:, 1]
    Hd = np.zeros((angles.shape[0], 3, 3))
    Hd[:, 1, 1], Hd[:, 2, 1] = -s1 * d1, c1 * d1
    Hd[:, 0, 2] = c2 * d2
    Hd[:, 1, 2] = -c1 * c2 * d1 + s1 * s2 * d2
    Hd[:, 2, 2] = -s1 * c2 * d1 - c1 * s2 * d2
    return Hd


@dataclass(frozen=True)
class LegState:
    """Leg vectors of a batch of N poses (legs along axis 1).

    ``d`` (N, 6, 3), ``length`` (N, 6), ``u`` (N, 6, 3) unit directions, ``arm`` (N, 6, 3) the
    platform points in the base frame ``R p_i``, ``H`` (N, 3, 3), ``K`` (N, 6, 6) ``∂l/∂x``;
    with velocities: ``d_dot`` (N, 6, 3), ``length_dot`` (N, 6), ``d_ddot0`` and
    ``length_ddot0``, the second derivatives at zero pose acceleration (``K̇ v``).
    """

    d: np.ndarray
    length: np.ndarray
    u: np.ndarray
    arm: np.ndarray
    H: np.ndarray
    K: np.ndarray
    d_dot: np.ndarray | None = None
    length_dot: np.ndarray | None = None
    d_ddot0: np.ndarray | None = None
    length_ddot0: np.ndarray | None = None


@dataclass(frozen=True)
class StewartGeometry:
    """Attachment points, stroke and home pose of a six-legged Stewart–Gough platform.

    Parameters
    ----------
    base
        Universal-joint centres ``b_i`` (6, 3), m, base frame.
    platform
        Spherical-joint centres ``p_i`` (6, 3), m, platform frame.
    stroke
        Shortest and longest leg length (m), ``(lower, upper)``, for every leg.
    home
        A pose (6,) in the working assembly (x, y, z in m, roll, pitch, yaw in rad): the start
        of the direct kinematics and the direction of every universal joint's leg axis.

    Examples
    --------
    >>> geo = StewartGeometry.symmetric(0.5, 0.2, base_gap=0.35, platform_gap=0.3,
    ...                                 height=0.9, stroke=(0.7, 1.2))
    >>> geo.legs(geo.home[None]).length.shape
    (1, 6)
    """

    base: np.ndarray
    platform: np.ndarray
    stroke: tuple[float, float]
    home: np.ndarray
    #: Per leg, the orientation of its universal joint's frame (6, 3, 3): z along the leg at
    #: the home pose, x the first (fixed) axis of the universal joint, horizontal.
    leg_frames: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for name, shape in (("base", (6, 3)), ("platform", (6, 3)), ("home", (6,))):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise ModelError(f"Stewart platform {name}: expected finite values of shape "
                                 f"{shape}, found shape {value.shape}; e.g. "
                                 "StewartGeometry.symmetric(0.5, 0.2, base_gap=0.35, "
                                 "platform_gap=0.3, height=0.9, stroke=(0.7, 1.2))")
            set_(self, name, value)
        lo, hi = (float(s) for s in self.stroke)
        if not 0 < lo < hi < np.inf:
            raise ModelError(f"Stewart platform stroke: expected 0 < lower < upper (m), found "
                             f"({lo:g}, {hi:g})")
        set_(self, "stroke", (lo, hi))
        with np.errstate(all="ignore"):
            state = self.legs(self.home[None])
        lengths = state.length[0]
        if not (np.all(np.isfinite(state.K)) and np.all(np.isfinite(lengths))
                and np.all(lengths > 0)):
            raise ModelError("Stewart platform: the legs at the home pose are not finite or "
                             "have zero length; check the units of the points (m) and that the "
                             "home pose holds the platform away from the base points")
        if np.any((lengths < lo) | (lengths > hi)):
            i = int(np.argmax((lengths < lo) | (lengths > hi)))
            raise ModelError(f"Stewart platform: leg {i + 1} is {lengths[i]:.6g} m long at the "
                             f"home pose {self.home.tolist()}, outside the stroke [{lo:g}, "
                             f"{hi:g}] m; the home pose must be reachable (check the stroke, "
                             "the points and the home height)")
        frames = np.empty((6, 3, 3))
        for i, z in enumerate(state.u[0]):
            x = np.cross([0.0, 0.0, 1.0], z)
            x = x / np.linalg.norm(x) if np.linalg.norm(x) > 1e-9 else np.array([1.0, 0, 0])
            frames[i] = np.column_stack([x, np.cross(z, x), z])
        set_(self, "leg_frames", frames)
        with np.errstate(all="ignore"):
            cond = float(np.linalg.cond(self.scaled_jacobian(state.K))[0])
        if not cond < 1e6:
            raise ModelError(f"Stewart platform: the home pose {self.home.tolist()} is singular "
                             f"(condition number of the leg Jacobian {cond:.3g}); choose "
                             "attachment points and a home pose where the legs hold the "
                             "platform in every direction")

    @classmethod
    def symmetric(cls, base_radius: float, platform_radius: float, *, base_gap: float,
                  platform_gap: float, height: float, stroke: tuple[float, float]
                  ) -> StewartGeometry:
        """Points in pairs on two circles, every 120°: base pair ``k`` at ``120° k ± gap/2``,
        platform pair ``k`` at ``60° + 120° k ± gap/2`` (gaps in rad), each leg from a base
        point to the nearer point of the neighbouring platform pair; home pose ``(0, 0,
        height, 0, 0, 0)``."""
        k = np.repeat(np.arange(3), 2)
        sign = np.tile([-1.0, 1.0], 3)
        ab = 2 * np.pi / 3 * k + sign * base_gap / 2
        ap = 2 * np.pi / 3 * k + sign * (np.pi / 3 - platform_gap / 2)
        circle = np.column_stack
        base = base_radius * circle([np.cos(ab), np.sin(ab), np.zeros(6)])
        platform = platform_radius * circle([np.cos(ap), np.sin(ap), np.zeros(6)])
        return cls(base, platform, stroke, np.array([0, 0, height, 0, 0, 0.0]))

    @property
    def radius(self) -> float:
        """Largest distance of a platform point from the platform origin (m): the length that
        makes angles and lengths comparable in :meth:`scaled_jacobian`."""
        return float(np.linalg.norm(self.platform, axis=1).max())

    def scaled_jacobian(self, K: np.ndarray) -> np.ndarray:
        """``K`` (N, 6, 6) with its angle columns divided by :attr:`radius`: every entry in
        m/m, so that its condition number measures closeness to a singularity."""
        return K * np.r_[1.0, 1.0, 1.0, [1 / self.radius] * 3]

    def legs(self, q: np.ndarray, v: np.ndarray | None = None) -> LegState:
        """Leg vectors, lengths and ``K`` at poses ``q`` (N, 6); with pose rates ``v`` (N, 6)
        also the leg velocities and second derivatives at zero pose acceleration."""
        R = rotation(q[:, 3:])
        arm = np.matmul(self.platform, np.swapaxes(R, 1, 2))
        d = q[:, None, :3] + arm - self.base
        length = np.sqrt(np.sum(d * d, axis=2))
        u = d / length[..., None]
        H = rate_matrix(q[:, 3:])
        K = np.empty((q.shape[0], 6, 6))
        K[:, :, :3] = u
        K[:, :, 3:] = np.matmul(np.cross(arm, u), H)
        if v is None:
            return LegState(d, length, u, arm, H, K)
        w = np.matmul(H, v[:, 3:, None])[..., 0]
        alpha0 = np.matmul(rate_matrix_derivative(q[:, 3:], v[:, 3:]), v[:, 3:, None])[..., 0]
        w_arm = np.cross(w[:, None, :], arm)
        d_dot = v[:, None, :3] + w_arm
        d_ddot0 = np.cross(alpha0[:, None, :], arm) + np.cross(w[:, None, :], w_arm)
        l_dot = np.sum(u * d_dot, axis=2)
        l_ddot0 = ((np.sum(d_dot * d_dot, axis=2) - l_dot ** 2) / length
                   + np.sum(u * d_ddot0, axis=2))
        return LegState(d, length, u, arm, H, K, d_dot, l_dot, d_ddot0, l_ddot0)
