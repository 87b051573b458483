"""Trees from Denavit–Hartenberg tables.

Two conventions, each with its own customary symbols:

``modified`` (Khalil–Kleinfinger, as in Leborne Table II)
    Frame ``j`` is fixed to link ``j`` with ``z_j`` on joint ``j``'s axis, and
    ``T(j-1 → j) = Rz(γ) Tz(b) Rx(α) Tx(d) Rz(θ) Tz(r)``. The joint variable is ``θ`` for a
    revolute joint and ``r`` for a prismatic one; the table holds their offsets. ``γ`` and ``b``
    (zero for serial chains) and ``parent`` (the antecedent link) describe trees.
``classic`` (distal)
    ``T(i-1 → i) = Rz(θ) Tz(d) Tx(a) Rx(α)``; joint ``i`` moves about ``z_{i-1}``. The joint
    variable is ``θ`` (revolute) or ``d`` (prismatic); the table holds their offsets.

Each link's inertial prior is given about its centre of mass, in the link's own DH frame. In the
Pinocchio model the inertial parameters are about the joint frame's origin; for the modified
convention that is the link frame itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .._files import name_list
from ..errors import ModelError
from .tree import Tree

__all__ = ["DHJoint", "LinkInertia", "build_tree"]


@dataclass(frozen=True)
class LinkInertia:
    """Mass, centre of mass (m) and inertia about the centre of mass (kg·m²) in the link frame.

    ``inertia`` is ``[ixx, ixy, ixz, iyy, iyz, izz]``, the order of a URDF ``<inertia>``. A link
    that is not physical (negative mass, principal moments negative or breaking the triangle
    inequalities) raises :class:`~dynid.errors.ModelError`.
    """

    mass: float = 0.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia: tuple[float, float, float, float, float, float] = (0.0,) * 6

    def __post_init__(self) -> None:
        if not self.mass >= 0:
            raise ModelError(f"mass: expected a value ≥ 0, found {self.mass}")
        if not np.isfinite(self.mass):
            raise ModelError(f"mass: expected a finite value, found {self.mass}")
        if not np.all(np.isfinite(self.com)):
            raise ModelError(f"com: expected finite values, found {tuple(self.com)}")
        tensor = self.tensor
        if not np.all(np.isfinite(tensor)):
            raise ModelError(f"inertia: expected finite values, found {tuple(self.inertia)}")
        scale = float(np.abs(tensor).max()) or 1.0
        eig = np.linalg.eigvalsh(tensor / scale)  # scaled: no overflow for huge values
        if eig[0] < -1e-12 / scale or 2 * eig.max() > eig.sum() * (1 + 1e-9):
            raise ModelError(f"inertia: not a physical inertia about the centre of mass "
                             f"(principal moments {eig * scale}); they must be ≥ 0 and "
                             "satisfy the triangle inequalities")

    @property
    def tensor(self) -> np.ndarray:
        """The 3×3 inertia tensor about the centre of mass."""
        ixx, ixy, ixz, iyy, iyz, izz = self.inertia
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)

    def to_pinocchio(self) -> pin.Inertia:
        return pin.Inertia(float(self.mass), np.asarray(self.com, dtype=float), self.tensor)


@dataclass(frozen=True)
class DHJoint:
    """One row of a DH table (see the module docstring for the symbols of each convention).

    ``lower`` and ``upper`` are the joint's position limits (rad or m; default none); robot
    files give limits per joint under ``joints.<joint>.limits`` instead.
    """

    name: str
    type: str = "revolute"
    link: str = ""
    theta: float = 0.0
    alpha: float = 0.0
    d: float = 0.0
    r: float = 0.0
    a: float = 0.0
    gamma: float = 0.0
    b: float = 0.0
    parent: str = ""
    lower: float = -np.inf
    upper: float = np.inf


def _rz(t: float) -> pin.SE3:
    return pin.SE3(pin.utils.rotate("z", t), np.zeros(3))


def _rx(t: float) -> pin.SE3:
    return pin.SE3(pin.utils.rotate("x", t), np.zeros(3))


def _t(x: float = 0.0, z: float = 0.0) -> pin.SE3:
    return pin.SE3(np.eye(3), np.array([x, 0.0, z]))


def _modified(row: DHJoint) -> pin.SE3:
    return _rz(row.gamma) * _t(z=row.b) * _rx(row.alpha) * _t(x=row.d) * _rz(row.theta) \
        * _t(z=row.r)


def _classic(row: DHJoint) -> pin.SE3:
    return _rz(row.theta) * _t(z=row.d) * _t(x=row.a) * _rx(row.alpha)


def build_tree(rows: Sequence[DHJoint], *, convention: str = "modified",
               inertias: Mapping[str, LinkInertia] | None = None,
               tool: DHJoint | None = None,
               gravity: Sequence[float] = (0.0, 0.0, -9.81),
               base: str = "base") -> Tree:
    """Build a :class:`~dynid.models.tree.Tree` from a DH table.

    Parameters
    ----------
    rows
        One :class:`DHJoint` per joint, parents before children. The tree's joints are in
        depth-first order (the table's order for a serial chain).
    convention
        ``"modified"`` (Khalil–Kleinfinger) or ``"classic"``.
    inertias
        Inertial prior per link name; links not named get zero inertia.
    tool
        Optional fixed frame after the last joint (a row whose variable is held at zero).
    gravity
        Gravity vector in the base frame (m/s²).
    base
        Name of the fixed base link (the default antecedent of the first joint).
    """
    if convention not in ("modified", "classic"):
        raise ModelError(f"DH convention: expected 'modified' or 'classic', found {convention!r}")
    if not rows:
        raise ModelError("DH table: expected at least one joint row, found none")
    inertias = dict(inertias or {})
    links = [row.link or f"link{i + 1}" for i, row in enumerate(rows)]
    for i, link in enumerate(links):
        if link in links[:i]:
            raise ModelError(f"joint {rows[i].name!r}: link {link!r} is already the link of "
                             f"joint {rows[links.index(link)].name!r}; every joint moves a link "
                             "of its own (link names must be unique)")
    unknown = set(inertias) - set(links)
    if unknown:
        raise ModelError(f"inertial priors given for unknown links "
                         f"{name_list(sorted(unknown))}; links are {name_list(links)}")
    parents = []
    for i, row in enumerate(rows):
        if row.type not in ("revolute", "prismatic"):
            raise ModelError(f"joint {row.name!r}: type must be 'revolute' or 'prismatic', "
                             f"found {row.type!r}")
        parent = row.parent or (links[i - 1] if i else base)
        if parent not in (base, *links[:i]):
            raise ModelError(f"joint {row.name!r}: parent link {parent!r} is not defined before "
                             f"it; known links are {name_list([base, *links[:i]])}")
        if convention == "classic" and (row.parent or row.gamma or row.b):
            raise ModelError(f"joint {row.name!r}: parent, gamma and b belong to the "
                             "modified (Khalil–Kleinfinger) convention; use it for trees")
        parents.append(parent)
    model = pin.Model()
    model.name = "dh"
    model.gravity.linear = np.asarray(gravity, dtype=float)
    joint_of = {base: 0}
    tail = {base: pin.SE3.Identity()}  # classic: placement of the link's DH frame in its joint
    order = _depth_first(links, parents, base)
    for i in order:
        row, link, parent = rows[i], links[i], parents[i]
        if convention == "modified":
            placement, body = _modified(row), pin.SE3.Identity()
        else:
            placement, body = tail[parent], _classic(row)
        jmodel = pin.JointModelRZ() if row.type == "revolute" else pin.JointModelPZ()
        jid = model.addJoint(joint_of[parent], jmodel, placement, row.name,
                             np.array([np.inf]), np.array([np.inf]),
                             np.array([row.lower]), np.array([row.upper]))
        inertia = inertias.get(link, LinkInertia()).to_pinocchio()
        model.appendBodyToJoint(jid, inertia, body)
        joint_frame = model.addJointFrame(jid)
        model.addBodyFrame(link, jid, body, joint_frame)
        joint_of[link], tail[link] = jid, body
    if tool is not None:
        last = links[-1]
        frame = _modified(tool) if convention == "modified" else tail[last] * _classic(tool)
        if model.existFrame(tool.name) or tool.name == base:
            raise ModelError(f"tool frame {tool.name!r}: a link or joint of the table has this "
                             "name already; give the tool another name")
        model.addFrame(pin.Frame(tool.name, joint_of[last], frame, pin.FrameType.OP_FRAME))
    return Tree.from_model(model, tuple(links[i] for i in order))


def _depth_first(links: list[str], parents: list[str], base: str) -> list[int]:
    """Row indices in depth-first order, children in table order.

    Pinocchio's algorithms that use subtree structure (CRBA, for one) need every subtree's
    joints to be consecutive; a table that lists a tree breadth-first is reordered."""
    children: dict[str, list[int]] = {}
    for i, parent in enumerate(parents):
        children.setdefault(parent, []).append(i)
    order: list[int] = []
    stack = list(reversed(children.get(base, [])))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children.get(links[i], [])))
    return order
