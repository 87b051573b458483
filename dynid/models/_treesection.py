"""The ``kinematics`` and ``links`` sections of a robot file (:mod:`dynid.models.robotfile`):
the kinematic tree with the links' inertial priors, from a URDF or a DH table.

* ``kinematics`` holds exactly one source: ``urdf`` (a path relative to the robot file, with
  ``locked`` joints blocked at a position), ``modified_dh`` (Khalil–Kleinfinger rows: ``d``,
  ``r``, ``alpha``, ``theta``, ``gamma``, ``b`` and an optional ``parent`` for trees) or
  ``dh`` (classic rows: ``a``, ``d``, ``alpha``, ``theta``), each row naming its ``joint`` and
  optionally its ``link`` and ``type`` (``revolute`` or ``prismatic``); a DH table may end in a
  fixed ``tool`` frame. ``massless`` lists links that carry no parameters. Extra ``frames``
  are read by :mod:`dynid.models._mechanisms`.
* ``links`` gives each link's prior about its centre of mass, in the link frame: ``mass`` (kg),
  ``com`` (m) and ``inertia`` ``[ixx, ixy, ixz, iyy, iyz, izz]`` (kg·m²); they are converted to
  Pinocchio's inertias when the tree is built.

Every key is checked (:mod:`dynid.models._schema`); what is wrong raises
:class:`~dynid.errors.ModelError` naming its path in the file (``kinematics.dh[2].alpha``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ModelError
from . import _schema as S
from .dh import DHJoint, LinkInertia, build_tree
from .tree import Tree

__all__ = ["KINEMATICS", "ROWS", "dh_row", "links", "massless", "tree"]

#: Keys of the ``kinematics`` section.
KINEMATICS = ("urdf", "modified_dh", "dh", "tool", "locked", "frames", "massless")
#: Keys of a row of each DH table.
ROWS = {"modified_dh": ("joint", "link", "type", "d", "r", "alpha", "theta", "gamma", "b",
                        "parent"),
        "dh": ("joint", "link", "type", "a", "d", "alpha", "theta")}


def links(value: object) -> dict[str, LinkInertia]:
    out = {}
    for link, entry in S.mapping(value, "links", S.ANY).items():
        path = f"links.{link}"
        e = S.mapping(entry, path, ("mass", "com", "inertia"), required=("mass",))
        mass = S.number(e["mass"], f"{path}.mass", nonnegative=True)
        com = S.numbers(e.get("com", [0, 0, 0]), f"{path}.com", 3)
        inertia = S.numbers(e.get("inertia", [0] * 6), f"{path}.inertia", 6)
        try:
            out[link] = LinkInertia(mass, tuple(com), tuple(inertia))
        except ModelError as exc:  # the message starts with the field's name
            raise ModelError(f"{path}.{exc}") from None
    return out


def tree(kin: dict, base_dir: Path, links: dict[str, LinkInertia],
          gravity: list[float]) -> Tree:
    """The tree of the (checked) ``kinematics`` section, without its extra frames."""
    sources = [k for k in ("urdf", "modified_dh", "dh") if k in kin]
    if len(sources) != 1:
        raise S.fail("kinematics", f"expected exactly one of 'urdf', 'modified_dh', 'dh', "
                                   f"found {sources or 'none'}")
    source = sources[0]
    if source == "urdf":
        if "tool" in kin:
            raise S.fail("kinematics.tool", "a tool frame belongs to DH tables; add it to the "
                                            "URDF as a fixed joint instead")
        locked = {k: S.number(v, f"kinematics.locked.{k}")
                  for k, v in S.mapping(kin.get("locked"), "kinematics.locked", S.ANY).items()}
        path = base_dir / S.text(kin["urdf"], "kinematics.urdf", max_length=4096)
        return Tree.from_urdf(path, locked=locked, gravity=np.array(gravity),
                              inertias={k: v.to_pinocchio() for k, v in links.items()})
    if "locked" in kin:
        raise S.fail("kinematics.locked", "locking joints applies to URDF; leave the joint "
                                          "out of the DH table instead")
    rows_value = kin[source]
    if not isinstance(rows_value, list) or not rows_value:
        raise S.fail(f"kinematics.{source}", "expected a list of joint rows, one per joint")
    rows = [dh_row(r, f"kinematics.{source}[{i}]", source) for i, r in enumerate(rows_value)]
    names = [r.name for r in rows]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise S.fail(f"kinematics.{source}", f"joint names must be unique, found "
                                             f"{S.names(twice)} more than once")
    tool = None
    if "tool" in kin:
        t = S.mapping(kin["tool"], "kinematics.tool", ("name", *ROWS[source][3:7]))
        tool = DHJoint(name=S.text(t.get("name", "tool"), "kinematics.tool.name"),
                       **{k: S.number(v, f"kinematics.tool.{k}") for k, v in t.items()
                          if k != "name"})
    convention = "modified" if source == "modified_dh" else "classic"
    return build_tree(rows, convention=convention, inertias=links, tool=tool, gravity=gravity)


def dh_row(value: object, path: str, source: str) -> DHJoint:
    row = S.mapping(value, path, ROWS[source], required=("joint",))
    kw = {"name": S.text(row["joint"], f"{path}.joint"),
          "type": S.text(row.get("type", "revolute"), f"{path}.type", ("revolute", "prismatic"))}
    for key in ("link", "parent"):
        if key in row:
            kw[key] = S.text(row[key], f"{path}.{key}")
    for key in ROWS[source][3:]:
        if key in row and key != "parent":
            kw[key] = S.number(row[key], f"{path}.{key}")
    return DHJoint(**kw)


def massless(value: object, tree: Tree) -> Tree:
    """The tree with the links of ``kinematics.massless`` carrying no parameters."""
    path = "kinematics.massless"
    if not isinstance(value, list):
        raise S.fail(path, f"expected a list of link names, found {S.excerpt(value)}; e.g. "
                           "massless: [virtual_link]")
    names = [S.text(x, f"{path}[{i}]", tree.link_names) for i, x in enumerate(value)]
    try:
        return tree.with_links(massless=names)
    except ModelError as exc:
        raise S.fail(path, str(exc)) from None
