"""A URDF generated from a tree's Pinocchio model, for robots described by DH tables or built in
Python.

Each moving joint of the tree becomes a URDF joint placed as in the model (its pose in its
parent's joint frame, its axis) and each link a URDF link whose frame is its joint's frame, which
is where the identified parameters are expressed (for a classic DH table that is the joint's
frame on its axis, not the link's DH frame). A revolute joint without position limits is
``continuous``. Frames fixed to a link (a DH tool frame, the robot file's extra frames) become
massless links fixed to it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from ..models import Robot
from . import _elements as E
from ._stewart import is_stewart, leg_limits


def joint_limits(robot: Robot) -> tuple[np.ndarray, ...]:
    """Lower and upper position, velocity and effort limits per tree joint: the robot's limits
    for the basis coordinates that are tree joints, the tree's own for the others (for a
    Stewart platform's legs, their stroke and drive limits)."""
    lower, upper, velocity, effort = (x.copy() for x in robot.tree.limits())
    lim = robot.limits
    for k, t in enumerate(robot.closure.tree_joints(robot.tree.joint_names)):
        if t is not None:
            lower[t], upper[t] = lim.lower[k], lim.upper[k]
            velocity[t], effort[t] = lim.velocity[k], lim.effort[k]
    if is_stewart(robot):
        leg_limits(robot, lower, upper, velocity, effort)
    return lower, upper, velocity, effort


def _axes(model: pin.Model) -> list[np.ndarray]:
    """Per joint, its axis in its own frame (from the joint's motion subspace)."""
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    out = []
    for jid in range(1, model.njoints):
        S = np.asarray(data.joints[jid].S).ravel()
        out.append(S[3:] if np.any(S[3:]) else S[:3])
    return out


def generate(robot: Robot, theta: np.ndarray) -> tuple[ET.Element, dict[str, ET.Element],
                                                        set[str], list[str]]:
    """The URDF of the tree: the root element, its moving joints by name, the names of every
    joint (to keep new ones unique) and what it holds (lines for the export's account). The
    caller adds dynamics, transmissions and attached bodies."""
    tree = robot.tree
    model = tree.model
    root = ET.Element("robot", name=robot.name)
    frames = {f.name for f in model.frames} | set(tree.link_names)
    base = "base"
    while base in frames:
        base = f"{base}_link"
    ET.SubElement(root, "link", name=base)
    link_of = {0: base}
    joints: dict[str, ET.Element] = {}
    lower, upper, velocity, effort = joint_limits(robot)
    values = robot.link_values(theta)
    for jid, axis in enumerate(_axes(model), start=1):
        j = jid - 1
        name, link = tree.joint_names[j], tree.link_names[j]
        link_of[jid] = link
        el = ET.SubElement(root, "link", name=link)
        E.set_inertial(el, values[j])
        kind = tree.joint_types[j]
        if kind == "revolute" and np.isinf(lower[j]) and np.isinf(upper[j]):
            kind = "continuous"
        joint = ET.SubElement(root, "joint", name=name, type=kind)
        joint.append(E.origin(model.jointPlacements[jid]))
        ET.SubElement(joint, "parent", link=link_of[model.parents[jid]])
        ET.SubElement(joint, "child", link=link)
        ET.SubElement(joint, "axis", xyz=E.nums(axis))
        attrs = {"effort": E.limit(effort[j]), "velocity": E.limit(velocity[j])}
        if kind != "continuous":
            attrs = {"lower": E.limit(lower[j]), "upper": E.limit(upper[j]), **attrs}
        ET.SubElement(joint, "limit", attrs)
        joints[name] = joint
    taken = set(tree.joint_names)
    fixed = []
    for frame in model.frames:
        if frame.type == pin.FrameType.OP_FRAME and frame.parentJoint != 0:
            E.fixed_link(root, frame.name, link_of[frame.parentJoint],
                         E.origin(frame.placement), None, taken)
            fixed.append(frame.name)
    lines = [f"{len(joints)} joints and links generated from the model (link frames at their "
             f"joints, root link {base!r})"]
    if fixed:
        lines.append(f"frames {', '.join(fixed)} as massless fixed links")
    return root, joints, taken, lines
