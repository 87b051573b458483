"""Checks of platform poses along a trajectory: reach, stroke and singularity, named by time."""

from __future__ import annotations

import numpy as np

from ... import _validate
from ...errors import ModelError, TrajectoryError
from .closure import _GIMBAL
from .legs import SINGULAR_CONDITION, LegTransmission, singular_poses

__all__ = ["check_poses"]


def check_poses(robot, q: np.ndarray, *, t: np.ndarray | None = None) -> np.ndarray:
    """Check platform poses (N, 6) of a Stewart platform robot; their leg lengths (N, 6).

    Raises :class:`~dynid.errors.TrajectoryError` naming the first bad sample (index and time
    ``t`` when given) and its value when a pose is unreachable (no inverse kinematics, or a leg
    length outside the stroke) or singular (condition number of the scaled leg Jacobian above
    :data:`~dynid.models.stewart.legs.SINGULAR_CONDITION`).

    Examples
    --------
    >>> robot = dynid.load_robot("hexapod")
    >>> lengths = check_poses(robot, poses, t=times)   # raises on a bad sample
    """
    trans = getattr(robot, "transmission", None)
    if not isinstance(trans, LegTransmission):
        raise ModelError(f"check_poses: expected a Stewart platform robot (its transmission a "
                         f"LegTransmission), found {robot!r}; e.g. "
                         "check_poses(dynid.load_robot('hexapod'), poses)")
    q = _validate.batch(q, "poses", 6)
    if t is not None:
        t = _validate.vector(t, "t", q.shape[0])
    geo = trans.geometry

    def where(k: int) -> str:
        return f"sample {k}" + ("" if t is None else f" (t = {t[k]:.6g} s)")

    legs = geo.legs(q)
    up = np.einsum("kji,nkj->nki", geo.leg_frames, legs.u)
    gimbal = np.any(up[..., 1] ** 2 + up[..., 2] ** 2 < _GIMBAL ** 2, axis=1)
    lo, hi = geo.stroke
    stroke = np.any((legs.length < lo) | (legs.length > hi), axis=1)
    cond = singular_poses(geo, legs.K)
    singular = ~(cond < SINGULAR_CONDITION)
    for bad, what in ((gimbal, "unreachable"), (stroke, "stroke"), (singular, "singular")):
        if not np.any(bad):
            continue
        k = int(np.argmax(bad))
        pose = np.round(q[k], 6).tolist()
        if what == "unreachable":
            raise TrajectoryError(f"pose {pose} at {where(k)} is unreachable: a leg is at right "
                                  "angles to its universal joint's home direction, so no "
                                  "inverse kinematics exists; keep the poses within the pose "
                                  "limits")
        if what == "stroke":
            i = int(np.argmax((legs.length[k] < lo) | (legs.length[k] > hi)))
            raise TrajectoryError(f"pose {pose} at {where(k)} is unreachable: leg {i + 1} "
                                  f"({robot.actuator_names[i]}) would be "
                                  f"{legs.length[k, i]:.6g} m long, outside its stroke "
                                  f"[{lo:g}, {hi:g}] m; reduce the motion's amplitude or "
                                  "move its centre towards the home pose "
                                  f"{geo.home.tolist()}")
        raise TrajectoryError(f"pose {pose} at {where(k)} is singular: the condition number "
                              f"of the scaled leg Jacobian is {cond[k]:.3g}, expected below "
                              f"{SINGULAR_CONDITION:g}; the legs cannot hold the platform "
                              "there. Keep the trajectory away from it (smaller rotations)")
    return legs.length
