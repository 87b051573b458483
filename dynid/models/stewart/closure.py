"""The closure of a Stewart–Gough platform: every tree joint from the platform pose.

The tree (:func:`~dynid.models.stewart.platform.stewart_platform`) has the six platform joints
(``x, y, z, roll, pitch, yaw``: ``q_t = x`` on them) and per leg a universal joint (angles
``α`` about its fixed x axis, then ``β`` about the moved y axis) and a prismatic joint whose
coordinate is the leg length ``l``. The leg loops are cut at the spherical joints.

From the leg direction in the universal joint's frame, ``u′ = R_0ᵀ u = (sin β, −sin α cos β,
cos α cos β)``: ``β = asin u′_x``, ``α = atan2(−u′_y, u′_z)``. ``G`` and ``Ġ v`` follow in closed
form from ``ḋ = ṙ + ω × R p``, ``u̇ = (I − u uᵀ) ḋ / l`` and ``ü = (d̈ − 2 u̇ l̇ − u l̈) / l``
(no finite differences). The universal joint itself is singular where ``cos β = 0`` (the leg at
right angles to its home direction); there the closure raises.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from ..closures import NonlinearClosure
from ..cuts import Cut
from .geometry import StewartGeometry

__all__ = ["POSE_NAMES", "StewartClosure"]

#: Names of the basis coordinates: the platform pose.
POSE_NAMES = ("x", "y", "z", "roll", "pitch", "yaw")
# Smallest cos β of a universal joint before it is taken as singular.
_GIMBAL = 1e-6


class StewartClosure(NonlinearClosure):
    """Tree joints of a Stewart–Gough platform from its pose, with analytic ``G`` and ``Ġ v``.

    Parameters
    ----------
    geometry
        The platform's :class:`~dynid.models.stewart.geometry.StewartGeometry`.
    cuts
        The six spherical joints (point cuts between the platform and each leg's rod).

    Tree coordinates are ``x, y, z, roll, pitch, yaw`` then ``α_i, β_i, l_i`` per leg.

    Examples
    --------
    >>> robot = dynid.load_robot("hexapod")
    >>> q_t, v_t, a_t, G = robot.closure.tree_state(q, v, a)   # (N, 24) and G (N, 24, 6)
    """

    def __init__(self, geometry: StewartGeometry, cuts: tuple[Cut, ...] = ()):
        self.geometry = geometry
        self.cuts = tuple(cuts)
        self.basis_names = POSE_NAMES
        self.n_basis, self.n_tree = 6, 24

    def tree_joints(self, tree_names):
        return list(range(6))

    @staticmethod
    def project(rows: np.ndarray, G: np.ndarray | None) -> np.ndarray:
        """``Gᵀ rows`` (N, 6, p) of tree rows (N, 24, p): the platform joints are the pose
        itself (their block of ``G`` is the identity), so only the legs' rows are multiplied."""
        return rows[:, :6] + np.matmul(np.swapaxes(G[:, 6:], 1, 2), rows[:, 6:])

    def rigid_rows(self, tree):
        """The platform's and legs' rows in closed form
        (:class:`~dynid.models.stewart.rigid.StewartRigidRows`) when ``tree`` is this
        platform's tree, else ``None``."""
        from .rigid import StewartRigidRows

        return StewartRigidRows.for_tree(tree, self.geometry)

    def legs(self, q: np.ndarray, v: np.ndarray | None = None):
        """The legs' state (:class:`~dynid.models.stewart.geometry.LegState`) at poses (N, 6)."""
        return self.geometry.legs(q, v)

    def evaluate(self, q, v):
        legs = self.geometry.legs(q, v)
        N = q.shape[0]
        R0T = np.swapaxes(self.geometry.leg_frames, 1, 2)  # (6, 3, 3): base → joint frames
        # Leg directions and their derivatives in each universal joint's frame.
        up = np.matmul(R0T, legs.u[..., None])[..., 0]
        s, y, z = up[..., 0], up[..., 1], up[..., 2]
        c2 = y * y + z * z  # cos² β
        if np.any(c2 < _GIMBAL ** 2) or np.any(legs.length <= 0):
            k, i = np.argwhere((c2 < _GIMBAL ** 2) | (legs.length <= 0))[0]
            raise ModelError(
                f"Stewart platform: no inverse kinematics at pose {np.round(q[k], 6).tolist()}: "
                f"leg {i + 1} is at right angles to its universal joint's home direction (or "
                "has zero length), where the joint cannot follow it; keep the pose within the "
                "robot's pose limits")
        # ∂u′/∂x = R_0ᵀ (I − u uᵀ) [I, −[R p]× H] / l: (N, 6, 3, 6).
        Mp = (R0T - up[..., :, None] * legs.u[..., None, :]) / legs.length[..., None, None]
        dup = np.empty((N, 6, 3, 6))
        dup[..., :3] = Mp
        dup[..., 3:] = -np.matmul(np.matmul(Mp, _skew(legs.arm)), legs.H[:, None])
        q_t = np.empty((N, 24))
        G = np.zeros((N, 24, 6))
        bias = np.zeros((N, 24))
        q_t[:, :6] = q
        G[:, np.arange(6), np.arange(6)] = 1.0
        alpha, beta, ell = (slice(6 + j, 24, 3) for j in range(3))
        q_t[:, alpha] = np.arctan2(-y, z)
        q_t[:, beta] = np.arcsin(np.clip(s, -1.0, 1.0))
        q_t[:, ell] = legs.length
        c = np.sqrt(c2)
        G[:, alpha] = (y[..., None] * dup[..., 2, :] - z[..., None] * dup[..., 1, :]) \
            / c2[..., None]
        G[:, beta] = dup[..., 0, :] / c[..., None]
        G[:, ell] = legs.K
        if v is not None and np.any(v):
            l_dot = legs.length_dot[..., None]
            u_dot = (legs.d_dot - legs.u * l_dot) / legs.length[..., None]
            u_dd0 = (legs.d_ddot0 - 2 * u_dot * l_dot
                     - legs.u * legs.length_ddot0[..., None]) / legs.length[..., None]
            sd, yd, zd = np.matmul(R0T, u_dot[..., None])[..., 0].transpose(2, 0, 1)
            sdd, ydd, zdd = np.matmul(R0T, u_dd0[..., None])[..., 0].transpose(2, 0, 1)
            alpha_dot = (y * zd - z * yd) / c2
            bias[:, alpha] = (y * zdd - z * ydd) / c2 - alpha_dot * 2 * (y * yd + z * zd) / c2
            bias[:, beta] = sdd / c + s * sd * sd / (c * c2)
            bias[:, ell] = legs.length_ddot0
        return q_t, G, bias

    def __repr__(self) -> str:
        return "StewartClosure(pose → 6 platform joints and 6 universal–prismatic legs)"


def _skew(x: np.ndarray) -> np.ndarray:
    """Cross-product matrices (..., 3, 3) of vectors (..., 3)."""
    out = np.zeros((*x.shape, 3))
    out[..., 0, 1], out[..., 0, 2] = -x[..., 2], x[..., 1]
    out[..., 1, 0], out[..., 1, 2] = x[..., 2], -x[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -x[..., 1], x[..., 0]
    return out
