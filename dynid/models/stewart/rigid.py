"""Rigid-body rows of a Stewart–Gough platform on its pose, in closed form over the samples.

The tree of :func:`~dynid.models.stewart.platform.stewart_platform` has one body on the pose
joints (the platform) and three per leg (cross, cylinder, rod). Its link columns on the pose,
``Gᵀ Y_t``, are written here directly, for every sample at once, instead of calling Pinocchio's
joint-torque regressor per sample on the 24-joint tree and projecting its 24 × 240 rows.

For a body whose frame origin has the acceleration ``a`` (gravity subtracted) and which turns
with ``ω``, ``ω̇`` (all in the body frame), the wrench about the origin is linear in its ten
parameters ``π = [m, h, I_o]`` (first moment ``h = m c``, inertia about the origin)::

    f = m a + ω̇ × h + ω × (ω × h),      n = h × a + I_o ω̇ + ω × (I_o ω)

(:func:`body_regressor`). The platform's generalized force on the pose is ``[R f, Hᵀ R n]``
(``v_o = Rᵀ ṙ``, ``ω = Rᵀ H φ̇`` in its frame). A leg's bodies act on their tree coordinates
(``α``, ``β``, ``l``) by virtual work: the cross ``τ_α = n_x``; the cylinder (turned by ``β``
about y) ``τ_α = e′·n``, ``τ_β = n_y`` with ``e′ = (cos β, 0, sin β)`` the first joint axis in
its frame; the rod, whose origin is ``l e_z`` along the cylinder, adds ``τ_α += −l cos β f_y``,
``τ_β += l f_x`` and ``τ_l = f_z``. The legs' rows reach the pose through their three rows of
``G``. Tested against Pinocchio's regressor projected by ``G``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .closure import POSE_NAMES
from .geometry import StewartGeometry, rate_matrix, rate_matrix_derivative, rotation

__all__ = ["StewartRigidRows", "body_regressor"]

_LEG_TYPES = ("JointModelRX", "JointModelRY", "JointModelPZ")
_POSE_TYPES = ("JointModelPX", "JointModelPY", "JointModelPZ", "JointModelRX",
               "JointModelRY", "JointModelRZ")


def body_regressor(a: np.ndarray, w: np.ndarray, wd: np.ndarray) -> np.ndarray:
    """Rows ``[f; n]`` (..., 6, 10) of a body's wrench about its frame origin, in its frame.

    Parameters
    ----------
    a
        Acceleration of the frame origin minus gravity (..., 3), m/s², in the body frame.
    w, wd
        Angular velocity and acceleration (..., 3), in the body frame.

    Columns are the ten parameters in Pinocchio's order ``[m, mcx, mcy, mcz, Ixx, Ixy, Iyy,
    Ixz, Iyz, Izz]`` (inertia about the origin): ``f`` has ``a`` on ``m`` and
    ``[ω̇]× + ω ωᵀ − |ω|² 1`` on ``h``; ``n`` has ``−[a]×`` on ``h`` and the map of the
    inertia to ``I ω̇ + ω × I ω`` on the inertia, each entry written out.

    Examples
    --------
    >>> Y = body_regressor(np.array([0, 0, 9.81]), np.zeros(3), np.zeros(3))
    >>> float(Y[2, 0])                            # a resting mass: f_z = m g
    9.81
    """
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    dx, dy, dz = wd[..., 0], wd[..., 1], wd[..., 2]
    xx, yy, zz, xy, xz, yz = x * x, y * y, z * z, x * y, x * z, y * z
    Y = np.zeros((*a.shape[:-1], 6, 10))
    Y[..., 0, 0], Y[..., 1, 0], Y[..., 2, 0] = ax, ay, az
    Y[..., 0, 1], Y[..., 0, 2], Y[..., 0, 3] = -yy - zz, xy - dz, xz + dy
    Y[..., 1, 1], Y[..., 1, 2], Y[..., 1, 3] = xy + dz, -xx - zz, yz - dx
    Y[..., 2, 1], Y[..., 2, 2], Y[..., 2, 3] = xz - dy, yz + dx, -xx - yy
    Y[..., 3, 2], Y[..., 3, 3] = az, -ay
    Y[..., 4, 1], Y[..., 4, 3] = -az, ax
    Y[..., 5, 1], Y[..., 5, 2] = ay, -ax
    Y[..., 3, 4], Y[..., 3, 5], Y[..., 3, 6] = dx, dy - xz, -yz
    Y[..., 3, 7], Y[..., 3, 8], Y[..., 3, 9] = dz + xy, yy - zz, yz
    Y[..., 4, 4], Y[..., 4, 5], Y[..., 4, 6] = xz, dx + yz, dy
    Y[..., 4, 7], Y[..., 4, 8], Y[..., 4, 9] = zz - xx, dz - xy, -xz
    Y[..., 5, 4], Y[..., 5, 5], Y[..., 5, 6] = -xy, xx - yy, xy
    Y[..., 5, 7], Y[..., 5, 8], Y[..., 5, 9] = dx - yz, dy + xz, dz
    return Y


class StewartRigidRows:
    """The link columns (N, 6, 10 k) on the pose of a Stewart platform's tree, in closed form.

    Built by :meth:`for_tree`, which gives ``None`` for a tree it does not describe (then the
    regressor uses Pinocchio's). Blocks are those of the tree's :attr:`~dynid.models.tree.Tree.
    linkset`: the platform, then each leg's cross, cylinder and rod, or the three shared by the
    six legs.
    """

    def __init__(self, geometry: StewartGeometry, gravity: np.ndarray, shared: bool):
        self.geometry, self.gravity, self.shared = geometry, np.asarray(gravity, float), shared

    @classmethod
    def for_tree(cls, tree, geometry: StewartGeometry) -> StewartRigidRows | None:
        """The closed form for ``tree`` when it is the platform tree of ``geometry`` (joints,
        their types and placements, massless pose links, legs shared or not), else ``None``."""
        from .platform import LEG_LINKS, PLATFORM_LINKS, SHARED_LEG_LINKS

        model = tree.model
        legs = [f"leg{i + 1}_{j}" for i in range(6) for j in ("alpha", "beta", "length")]
        if tree.joint_names != (*POSE_NAMES, *legs):
            return None
        types = [model.joints[j].shortname() for j in range(1, model.njoints)]
        if tuple(types) != _POSE_TYPES + _LEG_TYPES * 6:
            return None
        for jid in range(1, model.njoints):
            leg, k = divmod(jid - 7, 3)
            want = (pin.SE3(geometry.leg_frames[leg], geometry.base[leg]) if jid > 6 and k == 0
                    else pin.SE3.Identity())
            parent = 0 if jid in (1, 7, 10, 13, 16, 19, 22) else jid - 1
            if model.parents[jid] != parent or not model.jointPlacements[jid].isApprox(want,
                                                                                       1e-12):
                return None
        own = ("platform", *(f"leg{i + 1}_{k}" for i in range(6) for k in LEG_LINKS))
        if tree.massless != PLATFORM_LINKS[:5]:
            return None
        if tree.linkset.names == own:
            return cls(geometry, model.gravity.linear, shared=False)
        if tree.linkset.names == ("platform", *SHARED_LEG_LINKS) and \
                dict(tree.shared) == SHARED_LEG_LINKS:
            return cls(geometry, model.gravity.linear, shared=True)
        return None

    def __call__(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, q_t: np.ndarray,
                 v_t: np.ndarray, a_t: np.ndarray, G: np.ndarray,
                 out: np.ndarray | None = None) -> np.ndarray:
        """Link rows (N, 6, 10 k) at poses, rates, accelerations (N, 6) and the tree state
        with ``G`` from the closure, written into ``out`` when given."""
        N = q.shape[0]
        if out is None:
            out = np.empty((N, 6, 40 if self.shared else 190))
        out[:, :, :10] = self._platform(q, v, a)
        tau = self._leg_forces(q_t[:, 6:], v_t[:, 6:], a_t[:, 6:])  # (N, leg, joint, 30)
        Gt = np.swapaxes(G[:, 6:].reshape(N, 6, 3, 6), 2, 3)  # (N, leg, pose, joint)
        if self.shared:
            out[:, :, 10:] = np.matmul(Gt, tau).sum(axis=1)
        else:  # (N, pose, leg, 30), written in place as (N, leg, pose, 30)
            target = out[:, :, 10:].reshape(N, 6, 6, 30)
            if np.may_share_memory(target, out):
                np.matmul(Gt, tau, out=target.swapaxes(1, 2))
            else:  # a reshape that had to copy
                out[:, :, 10:] = np.matmul(Gt, tau).swapaxes(1, 2).reshape(N, 6, 180)
        return out

    def _platform(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        R = rotation(q[:, 3:])
        H = rate_matrix(q[:, 3:])
        Rt = np.swapaxes(R, 1, 2)
        w = np.einsum("nij,nj->ni", H, v[:, 3:])
        wd = (np.einsum("nij,nj->ni", H, a[:, 3:])
              + np.einsum("nij,nj->ni", rate_matrix_derivative(q[:, 3:], v[:, 3:]), v[:, 3:]))
        Yb = body_regressor(np.einsum("nij,nj->ni", Rt, a[:, :3] - self.gravity),
                            np.einsum("nij,nj->ni", Rt, w), np.einsum("nij,nj->ni", Rt, wd))
        rows = np.empty((q.shape[0], 6, 10))
        rows[:, :3] = np.matmul(R, Yb[:, :3])
        rows[:, 3:] = np.matmul(np.swapaxes(H, 1, 2), np.matmul(R, Yb[:, 3:]))
        return rows

    def _leg_forces(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> np.ndarray:
        """Rows (N, 6 legs, 3 tree joints α β l, 3 bodies × 10) of the legs' forces on their
        tree coordinates, from those coordinates (N, 18): ``α, β, l`` per leg."""
        N = x.shape[0]
        al, be, ln = x[:, 0::3], x[:, 1::3], x[:, 2::3]
        ald, bed, lnd = xd[:, 0::3], xd[:, 1::3], xd[:, 2::3]
        aldd, bedd, lndd = xdd[:, 0::3], xdd[:, 1::3], xdd[:, 2::3]
        ca, sa, cb, sb = np.cos(al), np.sin(al), np.cos(be), np.sin(be)
        # Gravity in each universal joint's frame, then in the cross's and the cylinder's.
        g0 = np.einsum("kji,j->ki", self.geometry.leg_frames, self.gravity)  # (6, 3)
        gcy = ca * g0[:, 1] + sa * g0[:, 2]
        gcz = -sa * g0[:, 1] + ca * g0[:, 2]
        gy = np.empty((N, 6, 3))
        gy[..., 0] = cb * g0[:, 0] - sb * gcz
        gy[..., 1] = gcy
        gy[..., 2] = sb * g0[:, 0] + cb * gcz
        tau = np.zeros((N, 6, 3, 3, 10))  # (sample, leg, tree joint α β l, body, column)
        # The cross turns about x: τ_α = n_x = −[g]× row x on h, α̈ on Ixx.
        tau[:, :, 0, 0, 2], tau[:, :, 0, 0, 3], tau[:, :, 0, 0, 4] = -gcz, gcy, aldd
        # The cylinder and the rod: ω = α̇ e′ + β̇ e_y in their frames, e′ = (cos β, 0, sin β).
        w = np.empty((N, 6, 3))
        w[..., 0], w[..., 1], w[..., 2] = ald * cb, bed, ald * sb
        wd = np.empty((N, 6, 3))
        wd[..., 0] = aldd * cb - ald * bed * sb
        wd[..., 1] = bedd
        wd[..., 2] = aldd * sb + ald * bed * cb
        Yy = body_regressor(-gy, w, wd)
        tau[:, :, 0, 1] = cb[..., None] * Yy[..., 3, :] + sb[..., None] * Yy[..., 5, :]
        tau[:, :, 1, 1] = Yy[..., 4, :]
        # The rod's origin is r = l e_z in the cylinder's frame.
        acc = -gy
        acc[..., 0] += 2 * w[..., 1] * lnd + wd[..., 1] * ln + w[..., 0] * w[..., 2] * ln
        acc[..., 1] += -2 * w[..., 0] * lnd - wd[..., 0] * ln + w[..., 1] * w[..., 2] * ln
        acc[..., 2] += lndd - (w[..., 0] ** 2 + w[..., 1] ** 2) * ln
        Yr = body_regressor(acc, w, wd)
        tau[:, :, 0, 2] = (cb[..., None] * Yr[..., 3, :] + sb[..., None] * Yr[..., 5, :]
                           - (ln * cb)[..., None] * Yr[..., 1, :])
        tau[:, :, 1, 2] = Yr[..., 4, :] + ln[..., None] * Yr[..., 0, :]
        tau[:, :, 2, 2] = Yr[..., 2, :]
        return tau.reshape(N, 6, 3, 30)
