"""A copy of the URDF a robot was read from, to write identified values into.

Everything of the source is kept (names, visuals, collisions, materials, Gazebo and other
elements, comments) except what the identified model replaces:

* the ``<inertial>`` of each moving joint's child link: the joint's identified parameters,
  which Pinocchio lumps over the link and every link fixed to it, so the links fixed to it lose
  their own ``<inertial>`` (the account names them);
* a joint the robot file locks: a fixed joint, its pose at the locked position;
* ``<dynamics>`` of every moving joint, and the ``<transmission>`` elements of the joints that
  get new ones or are locked;
* relative mesh file names, made relative to the folder the copy is written to.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..models import Robot
from ..models.tree import UrdfSource
from . import _elements as E

_MOVING = ("revolute", "continuous", "prismatic")
_JOINT_ONLY = ("axis", "limit", "dynamics", "mimic", "calibration", "safety_controller")


def parse(text: str) -> ET.Element:
    """The source's root element, with its comments; the prefixes of its namespaces are kept
    when it is written again."""
    for prefix, uri in re.findall(r'xmlns:([\w.-]+)\s*=\s*["\']([^"\']+)["\']', text):
        ET.register_namespace(prefix, uri)
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    return ET.fromstring(text, parser=parser)


def prolog(text: str) -> str:
    """What comes before the source's root element (its comments), without the XML
    declaration."""
    match = re.match(r"\s*(<\?xml[^>]*\?>)?(.*?)<robot\b", text, re.S)
    return match.group(2).strip() if match else ""


def _pose(el: ET.Element | None) -> pin.SE3:
    """The pose of an ``<origin>`` (identity when absent)."""
    if el is None:
        return pin.SE3.Identity()
    xyz = [float(x) for x in (el.get("xyz") or "0 0 0").split()]
    rpy = [float(x) for x in (el.get("rpy") or "0 0 0").split()]
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz))


def _lock(joint: ET.Element, value: float) -> None:
    """Make a moving joint fixed at position ``value``."""
    axis_el = joint.find("axis")
    axis = np.array([float(x) for x in (axis_el.get("xyz") if axis_el is not None
                                        else "1 0 0").split()])
    axis = axis / np.linalg.norm(axis)
    if joint.get("type") == "prismatic":
        motion = pin.SE3(np.eye(3), axis * value)
    else:
        motion = pin.SE3(pin.exp3(axis * value), np.zeros(3))
    pose = _pose(joint.find("origin")) * motion
    for tag in ("origin", *_JOINT_ONLY):
        E.drop(joint, tag)
    joint.set("type", "fixed")
    joint.insert(0, E.origin(pose))


def _meshes(root: ET.Element, source: Path | None, folder: Path | None) -> None:
    """Relative mesh file names, relative to ``folder`` instead of the source's folder."""
    if source is None or folder is None:
        return
    for mesh in root.iter("mesh"):
        name = mesh.get("filename") or ""
        if name and "://" not in name and not os.path.isabs(name):
            target = (source.parent / name).resolve()
            mesh.set("filename", os.path.relpath(target, folder.resolve()))


def edit(robot: Robot, source: UrdfSource, theta: np.ndarray, folder: Path | None
         ) -> tuple[ET.Element, dict[str, ET.Element], set[str], list[str]]:
    """The copy of the source with the identified inertials (see the module docstring): its
    root, its moving joints by name, every joint name, and what changed (account lines). The
    caller adds dynamics, transmissions and attached bodies."""
    tree = robot.tree
    root = parse(source.text)
    links = {el.get("name"): el for el in root.findall("link")}
    joints = {el.get("name"): el for el in root.findall("joint")}
    lines = []
    locked = dict(source.locked)
    for name, value in locked.items():
        _lock(joints[name], value)
    if locked:
        lines.append("locked joints written as fixed: " + ", ".join(
            f"{k} at {v:.6g}" for k, v in locked.items()))
    parent_joint = {el.find("child").get("link"): el for el in joints.values()}
    moving = {name: joints[name] for name in tree.joint_names}
    carriers = {el.find("child").get("link"): name for name, el in moving.items()}
    values = robot.link_values(theta)
    for j, name in enumerate(tree.joint_names):
        child = moving[name].find("child").get("link")
        E.set_inertial(links[child], values[j])
    merged: dict[str, list[str]] = {}
    for link_name, link in links.items():
        up = link_name
        while up not in carriers and up in parent_joint:
            up = parent_joint[up].find("parent").get("link")
        if up in carriers and up != link_name and link.find("inertial") is not None:
            E.drop(link, "inertial")
            merged.setdefault(up, []).append(link_name)
    for carrier, names in merged.items():
        lines.append(f"link {carrier} holds the identified inertia of the links fixed to it, "
                     f"{', '.join(names)} (their <inertial> removed)")
    _meshes(root, source.path, folder)
    lines.append(f"{len(moving)} links' <inertial> written into a copy of the source URDF")
    return root, moving, set(joints), lines


def drop_transmissions(root: ET.Element, joints: set[str]) -> list[str]:
    """Remove the source's transmissions that drive any of ``joints``; their names."""
    out = []
    for el in root.findall("transmission"):
        driven = {j.get("name") for j in el.findall("joint")}
        if driven & joints:
            root.remove(el)
            out.append(el.get("name") or "(unnamed)")
    return out
