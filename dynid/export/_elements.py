"""URDF elements of an identified model: numbers, origins, inertials, joint dynamics,
transmissions, mimic relations and fixed links.

Numbers are written with the shortest text that reads back as the same double (``repr``), so a
file written and read again gives the identified values bit for bit (the conversion of a link's
parameters to its centre of mass and back rounds at 1e-16). Unbounded limits are written as the
largest double, as Pinocchio's defaults, which dynid reads back as no limit.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from .content import JointDynamics

#: Namespace of Drake's URDF extensions (``drake:rotor_inertia``, ``drake:gear_ratio``).
DRAKE = "http://drake.mit.edu"
#: The largest double: an unbounded limit.
UNBOUNDED = float(np.finfo(float).max)


def num(x: float) -> str:
    """``x`` as the shortest text that reads back as the same double."""
    return repr(float(x) + 0.0)  # + 0.0: no "-0.0"


def nums(values) -> str:
    return " ".join(num(x) for x in values)


def limit(x: float) -> str:
    """A limit, the largest double for an infinite one."""
    return num(np.clip(x, -UNBOUNDED, UNBOUNDED))


def origin(placement: pin.SE3, tag: str = "origin") -> ET.Element:
    """``<origin xyz rpy>`` of a pose (URDF's roll, pitch, yaw about fixed x, y, z)."""
    return ET.Element(tag, xyz=nums(placement.translation),
                      rpy=nums(pin.rpy.matrixToRpy(placement.rotation)))


def inertial(block: np.ndarray) -> ET.Element | None:
    """``<inertial>`` of a link's ten parameters (about its frame's origin, in its frame): the
    mass, the centre of mass as the origin (no rotation) and the inertia about the centre of
    mass in the link's axes; ``None`` for a massless link."""
    if not np.any(block):
        return None
    inertia = pin.Inertia.FromDynamicParameters(np.asarray(block, dtype=float))
    I = inertia.inertia
    el = ET.Element("inertial")
    el.append(ET.Element("origin", xyz=nums(inertia.lever), rpy="0.0 0.0 0.0"))
    el.append(ET.Element("mass", value=num(inertia.mass)))
    el.append(ET.Element("inertia", ixx=num(I[0, 0]), ixy=num(I[0, 1]), ixz=num(I[0, 2]),
                         iyy=num(I[1, 1]), iyz=num(I[1, 2]), izz=num(I[2, 2])))
    return el


def drop(parent: ET.Element, tag: str) -> None:
    """Remove the ``tag`` children of ``parent`` (and the blank text left inside it)."""
    for old in parent.findall(tag):
        parent.remove(old)
    if len(parent) == 0 and not (parent.text or "").strip():
        parent.text = None


def set_inertial(link: ET.Element, block: np.ndarray) -> None:
    """Replace the link's ``<inertial>`` by the one of ``block`` (first child, as usual)."""
    drop(link, "inertial")
    el = inertial(block)
    if el is not None:
        link.insert(0, el)


def set_dynamics(joint: ET.Element, damping: float, friction: float) -> None:
    """Replace the joint's ``<dynamics>``."""
    drop(joint, "dynamics")
    joint.append(ET.Element("dynamics", damping=num(damping), friction=num(friction)))


def set_mimic(joint: ET.Element, leader: str, multiplier: float, offset: float) -> None:
    drop(joint, "mimic")
    joint.append(ET.Element("mimic", joint=leader, multiplier=num(multiplier),
                            offset=num(offset)))


def transmission(joint: str, dyn: JointDynamics, armature: float) -> ET.Element:
    """A ``transmission_interface/SimpleTransmission`` of the joint: its gear ratio as
    ``<mechanicalReduction>`` and, when the drive has an inertia, the rotor inertia
    ``armature / r²`` and the ratio in Drake's ``drake:rotor_inertia`` and ``drake:gear_ratio``
    (Drake's reflected inertia ``r² · rotor inertia`` is then the armature)."""
    ratio = dyn.ratio if dyn.ratio is not None else 1.0
    actuator = dyn.actuator or f"{joint}_motor"
    el = ET.Element("transmission", name=f"{joint}_transmission")
    ET.SubElement(el, "type").text = "transmission_interface/SimpleTransmission"
    j = ET.SubElement(el, "joint", name=joint)
    ET.SubElement(j, "hardwareInterface").text = "hardware_interface/EffortJointInterface"
    a = ET.SubElement(el, "actuator", name=actuator)
    ET.SubElement(a, "mechanicalReduction").text = num(ratio)
    if dyn.rotor_inertia:
        ET.SubElement(a, f"{{{DRAKE}}}rotor_inertia", value=num(armature / ratio ** 2))
        ET.SubElement(a, f"{{{DRAKE}}}gear_ratio", value=num(ratio))
    return el


def fixed_link(root: ET.Element, name: str, parent: str, pose: ET.Element,
               block: np.ndarray | None, taken: set[str]) -> None:
    """Append a link fixed to ``parent`` at ``pose`` (an ``<origin>``), with the inertial of
    ``block`` (or massless), and its fixed joint named after it (made unique among
    ``taken``)."""
    link = ET.SubElement(root, "link", name=name)
    if block is not None:
        set_inertial(link, block)
    joint_name = f"{name}_joint"
    while joint_name in taken:
        joint_name += "_"
    taken.add(joint_name)
    joint = ET.SubElement(root, "joint", name=joint_name, type="fixed")
    joint.append(pose)
    ET.SubElement(joint, "parent", link=parent)
    ET.SubElement(joint, "child", link=name)
