"""Checks of a URDF before Pinocchio reads it: every value, the link tree and mimic joints.

Pinocchio's URDF reader skips what it cannot parse (an ``<inertial>`` with a NaN mass is read as
massless) and keeps what is physically wrong (a negative mass, an inertia breaking the triangle
inequalities, a zero joint axis), so the URDF is checked here first and every problem is named
by its link or joint, element and value:

* numbers: finite; vectors of three; a joint axis not zero;
* ``<inertial>``: mass ≥ 0; the inertia about the centre of mass positive semi-definite and
  within the triangle inequalities (:class:`~dynid.models.dh.LinkInertia`); a massless link has
  no inertia. Whether each joint moves some mass is checked on the built tree (a massless link
  is fine fixed to its parent, or between two joints, like the cross of a universal joint);
* ``<limit>``: velocity and effort ≥ 0, ``lower`` ≤ ``upper``;
* the links form one tree: one root, one parent joint per link, no loop;
* ``<mimic>``: a joint that follows another, ``q = multiplier · q_leader + offset``. Mimic chains
  are resolved to their first leader, which must be a moving joint that mimics nothing.

Joints of type ``floating`` and ``planar`` are refused: dynid trees have one degree of freedom
per joint. DTDs and entity declarations, which URDF does not use, are refused too.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from .._files import excerpt, name_list
from ..errors import ModelError

__all__ = ["Mimic", "check_urdf"]

_MOVING = ("revolute", "continuous", "prismatic")
_TYPES = (*_MOVING, "fixed")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


@dataclass(frozen=True)
class Mimic:
    """Joint ``joint`` follows ``leader``: ``q_joint = multiplier · q_leader + offset``."""

    joint: str
    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


def _number(text: str | None, where: str, *, default: float | None = None) -> float:
    if text is None:
        if default is None:
            raise ModelError(f"{where}: missing; expected a number")
        return default
    if not _NUMBER.fullmatch(text.strip()):
        raise ModelError(f"{where}: expected a number, found {excerpt(text)}")
    x = float(text)
    if not math.isfinite(x):
        raise ModelError(f"{where}: expected a finite number, found {excerpt(text)}")
    return x


def _vector(text: str | None, where: str, default: str = "0 0 0") -> tuple[float, ...]:
    parts = (default if text is None else text).split()
    if len(parts) != 3:
        raise ModelError(f"{where}: expected three numbers, found {excerpt(text)}")
    return tuple(_number(p, where) for p in parts)


def _origin(element: ET.Element, where: str) -> None:
    origin = element.find("origin")
    if origin is not None:
        _vector(origin.get("xyz"), f"{where} <origin xyz>")
        _vector(origin.get("rpy"), f"{where} <origin rpy>")


def _name(element: ET.Element, kind: str, seen: set[str]) -> str:
    name = element.get("name")
    if not name:
        raise ModelError(f"a <{kind}> element has no name attribute")
    if len(name) > 200:
        raise ModelError(f"{kind} {excerpt(name)}: names are at most 200 characters")
    if name in seen:
        raise ModelError(f"{kind} {name!r} is defined twice; names must be unique")
    seen.add(name)
    return name


def _link(link: ET.Element, name: str) -> None:
    """Check a link's ``<inertial>``."""
    inertial = link.find("inertial")
    if inertial is None:
        return
    where = f"link {name!r} <inertial>"
    _origin(inertial, where)
    mass_el = inertial.find("mass")
    if mass_el is None:
        raise ModelError(f"{where}: no <mass value=...>; give the link's mass (kg) or remove "
                         "the <inertial> of a massless link")
    mass = _number(mass_el.get("value"), f"{where} <mass value>")
    if mass < 0:
        raise ModelError(f"{where} <mass value>: expected a mass ≥ 0 kg, found {mass:g}")
    el = inertial.find("inertia")
    if el is None:
        raise ModelError(f"{where}: no <inertia ixx=... iyz=...>; give the inertia about the "
                         "centre of mass (kg·m²)")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    inertia = tuple(_number(el.get(k), f"{where} <inertia {k}>") for k in keys)
    if mass == 0 and any(inertia):
        raise ModelError(f"{where}: mass 0 with a non-zero inertia {inertia}; a link without "
                         "mass has no inertia: give its mass, or zero inertia")
    from .dh import LinkInertia  # here: dh imports tree, which imports this module

    try:
        LinkInertia(mass, (0.0, 0.0, 0.0), inertia)
    except ModelError as exc:
        found = dict(zip(keys, inertia, strict=True))
        raise ModelError(f"{where} <inertia>: {str(exc).removeprefix('inertia: ')}; found "
                         f"{found}") from None


def _joint(joint: ET.Element, name: str, links: set[str]) -> tuple[str, str, str]:
    """Check a joint; its type, parent and child links."""
    kind = joint.get("type")
    where = f"joint {name!r}"
    if kind in ("floating", "planar"):
        raise ModelError(f"{where}: type {kind!r} is not supported; dynid trees have revolute, "
                         "continuous, prismatic and fixed joints (a moving base is not modelled:"
                         " make it 'fixed', or write a planar joint as two prismatic joints and "
                         "a revolute one)")
    if kind not in _TYPES:
        raise ModelError(f"{where}: type must be one of {list(_TYPES)}, found {excerpt(kind)}")
    ends = []
    for end in ("parent", "child"):
        el = joint.find(end)
        link = None if el is None else el.get("link")
        if not link:
            raise ModelError(f"{where}: no <{end} link=...>")
        if link not in links:
            raise ModelError(f"{where} <{end} link>: no link named {excerpt(link)}")
        ends.append(link)
    _origin(joint, where)
    if kind in _MOVING:
        axis = _vector(joint.find("axis").get("xyz") if joint.find("axis") is not None
                       else None, f"{where} <axis xyz>", default="1 0 0")
        if not any(axis):
            raise ModelError(f"{where} <axis xyz>: the axis is zero; give the direction the "
                             "joint turns about or slides along")
    limit = joint.find("limit")
    if limit is None and kind in ("revolute", "prismatic"):
        raise ModelError(f"{where}: a {kind} joint needs <limit lower upper velocity effort>; "
                         "a revolute joint that turns freely is 'continuous'")
    if limit is not None and kind in _MOVING:
        values = {k: _number(limit.get(k), f"{where} <limit {k}>",
                             default=0.0 if k in ("lower", "upper") else None)
                  for k in ("lower", "upper", "velocity", "effort")}
        for k in ("velocity", "effort"):
            if values[k] < 0:
                raise ModelError(f"{where} <limit {k}>: expected a value ≥ 0, found "
                                 f"{values[k]:g}")
        if kind != "continuous" and values["lower"] > values["upper"]:
            raise ModelError(f"{where} <limit>: lower {values['lower']:g} is above upper "
                             f"{values['upper']:g}")
    for tag, attrs in (("dynamics", ("damping", "friction")),
                       ("calibration", ("rising", "falling")),
                       ("safety_controller", ("soft_lower_limit", "soft_upper_limit",
                                              "k_position", "k_velocity"))):
        el = joint.find(tag)
        for attr in attrs:
            if el is not None and el.get(attr) is not None:
                _number(el.get(attr), f"{where} <{tag} {attr}>")
    return kind, ends[0], ends[1]


def _tree(links: list[str], joints: dict[str, tuple[str, str, str]]) -> None:
    """The links form one tree."""
    parent_of: dict[str, str] = {}
    for name, (_, parent, child) in joints.items():
        if child in parent_of:
            raise ModelError(f"link {child!r} is the child of two joints, {parent_of[child]!r} "
                             f"and {name!r}; closed loops are described in a robot file (a "
                             "closure with cuts), not in the URDF")
        if child == parent:
            raise ModelError(f"joint {name!r}: link {child!r} is its own parent")
        parent_of[child] = name
    roots = [link for link in links if link not in parent_of]
    if len(roots) != 1:
        what = (f"{len(roots)} root links {name_list(roots)}" if roots else
                "no root link: the joints form a loop")
        raise ModelError(f"the URDF has {what}; a robot is one tree with one root (closed "
                         "loops are described in a robot file: a closure with cuts)")
    children: dict[str, list[str]] = {}
    for _, parent, child in joints.values():
        children.setdefault(parent, []).append(child)
    reached, stack = set(), [roots[0]]
    while stack:
        link = stack.pop()
        reached.add(link)
        stack.extend(c for c in children.get(link, ()) if c not in reached)
    cut_off = [link for link in links if link not in reached]
    if cut_off:
        raise ModelError(f"links {name_list(cut_off)} are not connected to the root link "
                         f"{roots[0]!r}: their joints form a loop")


def _mimics(root: ET.Element, joints: dict[str, tuple[str, str, str]]) -> tuple[Mimic, ...]:
    direct: dict[str, Mimic] = {}
    for joint in root.findall("joint"):
        el = joint.find("mimic")
        name = joint.get("name")
        if el is None:
            continue
        where = f"joint {name!r} <mimic>"
        if joints[name][0] not in _MOVING:
            raise ModelError(f"{where}: a fixed joint cannot mimic another; remove the <mimic>")
        leader = el.get("joint")
        if not leader or leader not in joints or leader == name:
            raise ModelError(f"{where}: expected joint= naming another joint of the URDF, "
                             f"found {excerpt(leader)}")
        if joints[leader][0] not in _MOVING:
            raise ModelError(f"{where}: its leader {leader!r} is a fixed joint; a mimic joint "
                             "follows a moving joint")
        multiplier = _number(el.get("multiplier"), f"{where} multiplier", default=1.0)
        if multiplier == 0:
            raise ModelError(f"{where} multiplier: 0 keeps the joint still; make it a fixed "
                             "joint instead")
        direct[name] = Mimic(name, leader, multiplier,
                             _number(el.get("offset"), f"{where} offset", default=0.0))
    resolved: dict[str, Mimic] = {}
    for m in direct.values():  # each chain walked once: resolved joints are remembered
        chain, joint = [], m.joint
        while joint in direct and joint not in resolved:
            if joint in chain:
                raise ModelError(f"joint {m.joint!r} <mimic>: the mimic joints "
                                 f"{name_list(sorted(chain))} follow each other in a loop; one "
                                 "of them must be free")
            chain.append(joint)
            joint = direct[joint].leader
        for joint in reversed(chain):  # from the one nearest a free leader
            d = direct[joint]
            up = resolved.get(d.leader)
            resolved[joint] = d if up is None else Mimic(
                joint, up.leader, d.multiplier * up.multiplier, d.multiplier * up.offset
                + d.offset)
    return tuple(resolved[j] for j in direct)


def check_urdf(text: str, where: str) -> tuple[Mimic, ...]:
    """Check the URDF ``text`` (``where`` names it in messages); its mimic relations, each
    resolved to a leader that mimics nothing."""
    if re.search(r"<!(DOCTYPE|ENTITY)", text):
        raise ModelError(f"{where}: DTDs and entity declarations (<!DOCTYPE, <!ENTITY) are not "
                         "read; URDF does not use them: remove them")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"{where} is not well-formed XML: {exc}") from None
    try:
        if root.tag != "robot":
            raise ModelError(f"expected a <robot> root element, found <{root.tag[:40]}>")
        seen: set[str] = set()
        links = [_name(link, "link", seen) for link in root.findall("link")]
        if not links:
            raise ModelError("no <link> element; a robot has links joined by joints")
        for link, name in zip(root.findall("link"), links, strict=True):
            _link(link, name)
        seen = set()
        link_set = set(links)
        joints = {}
        for joint in root.findall("joint"):
            name = _name(joint, "joint", seen)
            joints[name] = _joint(joint, name, link_set)
        _tree(links, joints)
        return _mimics(root, joints)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None
