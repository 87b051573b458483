"""Writing identified parameters into a URDF other than the model's own: the manufacturer's,
with its meshes, for a robot identified from a DH table or a robot file.

The URDF's moving joints must be the model's, by name and type, with the same kinematics: each
of its links must move rigidly with the model's link of the same joint. That is checked at
random configurations; the constant pose of each URDF link frame in the model's joint frame
then carries the identified inertias into the URDF's frames.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from .._files import excerpt, name_list
from ..errors import DataError
from ..models import Robot
from ..models.tree import Tree

__all__ = ["retarget"]

#: Largest change (m, rad) of a link frame's pose in the model's frame over configurations.
TOLERANCE = 1e-6


def _poses(tree: Tree, values: dict[str, float]) -> list[pin.SE3]:
    """The world pose of each moving joint's frame, in the order of ``tree.joint_names``."""
    model = tree.model
    q = pin.neutral(model)
    for jid in range(1, model.njoints):
        joint = model.joints[jid]
        angle = values[model.names[jid]]
        if joint.nq == 2:  # an unbounded revolute: (cos, sin)
            q[joint.idx_q:joint.idx_q + 2] = np.cos(angle), np.sin(angle)
        else:
            q[joint.idx_q] = angle
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    return [data.oMi[model.getJointId(name)].copy() for name in tree.joint_names]


def _frames(robot: Robot, target: Tree, where: str) -> list[pin.SE3]:
    names = robot.tree.joint_names
    rng = np.random.default_rng(0)
    configurations = [dict.fromkeys(names, 0.0)] + [
        dict(zip(names, rng.uniform(-1.0, 1.0, len(names)), strict=True)) for _ in range(4)]
    first = None
    for values in configurations:
        model_poses, target_poses = _poses(robot.tree, values), _poses(target, values)
        X = [m.actInv(t) for m, t in zip(model_poses, target_poses, strict=True)]
        if first is None:
            first = X
            continue
        for name, a, b in zip(names, first, X, strict=True):
            change = pin.log6(a.actInv(b)).vector
            if np.abs(change).max() > TOLERANCE:
                raise DataError(
                    f"{where}: joint {name!r} does not move as in the model (its link's pose "
                    f"relative to the model's changes by {np.abs(change).max():.3g} between "
                    "configurations): its axes, origins, joint directions or base differ from "
                    "the robot's; give the URDF the robot was described with")
    return first


def retarget(robot: Robot, theta: np.ndarray, urdf: str | Path) -> tuple[Robot, np.ndarray]:
    """The robot with ``urdf`` as the URDF its parameters are written into, and ``theta``
    with each link's inertial parameters expressed in that URDF's link frames."""
    target = Tree.from_urdf(urdf)
    where = f"URDF {excerpt(str(urdf), 200)}"
    names = robot.tree.joint_names
    missing = [j for j in names if j not in target.joint_names]
    extra = [j for j in target.joint_names if j not in names]
    if missing or extra:
        raise DataError(
            f"{where}: its moving joints do not match the model's ({name_list(names)}): "
            + "; ".join(part for part in (
                f"missing {name_list(missing)}" if missing else "",
                f"not in the model {name_list(extra)}" if extra else "") if part)
            + "; give the URDF of this robot (joints named as in the model), or lock its extra "
              "joints in the robot file (kinematics.locked)")
    types = dict(zip(target.joint_names, target.joint_types, strict=True))
    wrong = [j for j, kind in zip(names, robot.tree.joint_types, strict=True)
             if types[j] != kind]
    if wrong:
        raise DataError(f"{where}: joint {wrong[0]!r} is {types[wrong[0]]} there, "
                        f"{dict(zip(names, robot.tree.joint_types, strict=True))[wrong[0]]} in "
                        "the model")
    if robot.bodies:
        raise DataError(f"{where}: the robot has bodies fixed to its links "
                        f"({', '.join(b.name for b in robot.bodies)}), which are written only "
                        "into its own URDF; export without urdf=")
    frames = _frames(robot, target, where)
    theta = np.array(theta, dtype=float)
    params = robot.parameters
    moved: dict[str, np.ndarray] = {}
    for link, owner, X in zip(robot.tree.link_names, robot.tree.linkset.owners, frames,
                              strict=True):
        if owner is None:  # massless: nothing to move
            continue
        inertia = pin.Inertia.FromDynamicParameters(theta[params.link_block(owner)])
        value = inertia.se3ActionInverse(X).toDynamicParameters()
        if owner in moved and not np.allclose(moved[owner], value, rtol=1e-9, atol=1e-12):
            raise DataError(f"{where}: link {link!r} shares the parameters {owner!r} with "
                            "other links, but its frame there differs from theirs relative to "
                            "the model's, so one set of values cannot describe them all; "
                            "export into the model's own URDF (without urdf=)")
        moved[owner] = value
    for owner, value in moved.items():
        theta[params.link_block(owner)] = value
    return replace(robot, tree=replace(robot.tree, urdf=target.urdf)), theta
