"""The rigid-body tree: a Pinocchio model with named one-degree-of-freedom joints.

The tree is what Pinocchio sees: an open kinematic tree (closed loops are cut, see
:mod:`dynid.models.closures`). Its coordinates are the tree coordinates ``q_t``: one angle or
displacement per joint, in Pinocchio's joint order. Unbounded revolute joints, which Pinocchio
stores as (cos, sin), are converted at this boundary, so the rest of dynid sees plain angles.

A URDF is checked before Pinocchio reads it (:mod:`dynid.models._urdf`), and each of its moving
joints must move some mass. Its ``<mimic>`` joints stay tree joints; the tree records how each
follows its leader (:attr:`Tree.mimic`) and :meth:`Tree.default_closure` makes them linear
closure rows, so they are not independent coordinates. A tree read from a URDF keeps the
URDF's text (:attr:`Tree.urdf`), so that exports can write the identified values into a copy of
it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from .._files import excerpt, name_list, read_text
from ..errors import ModelError
from ._urdf import Mimic, check_urdf
from .closures import Closure, IdentityClosure, LinearClosure
from .linkset import LinkSet
from .parameters import Parameter, link_parameters

__all__ = ["Mimic", "Tree", "UrdfSource"]

#: Largest URDF file read (bytes).
MAX_URDF_BYTES = 16 * 2 ** 20


def _joint_type(jmodel) -> str:
    name = jmodel.shortname()
    if jmodel.nv != 1 or "Mimic" in name or "Helical" in name:
        return ""
    if name.startswith(("JointModelR", "JointModelRevolute")):
        return "revolute"
    if name.startswith(("JointModelP", "JointModelPrismatic")):
        return "prismatic"
    return ""


@dataclass(frozen=True)
class UrdfSource:
    """The URDF a tree was read from.

    Attributes
    ----------
    text
        The URDF's XML text, as read.
    path
        The file it was read from (``None`` for text given directly); relative mesh file names
        are relative to its folder.
    locked
        Joints blocked at a fixed position (joint name, position in rad or m), including the
        mimic joints locked with their leader.
    """

    text: str
    path: Path | None = None
    locked: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Tree:
    """An open tree of rigid links joined by revolute and prismatic joints.

    Attributes
    ----------
    model
        The Pinocchio model (treat it as immutable).
    joint_names, link_names
        One per joint: the joint's name and the name of the link it carries.
    joint_types
        ``"revolute"`` or ``"prismatic"`` per joint.
    mimic
        Joints that follow another (URDF ``<mimic>``): ``q = multiplier · q_leader + offset``.
    urdf
        The URDF the tree was read from (:meth:`from_urdf`), else ``None``.
    massless
        Links that carry no parameters (zero inertia, fixed at zero; see :meth:`with_links`).
    shared
        Groups of identical links that carry one set of parameters: (group name, links).
    """

    model: pin.Model
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    joint_types: tuple[str, ...]
    mimic: tuple[Mimic, ...] = ()
    urdf: UrdfSource | None = field(default=None, compare=False, repr=False)
    massless: tuple[str, ...] = ()
    shared: tuple[tuple[str, tuple[str, ...]], ...] = ()
    linkset: LinkSet = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        links = LinkSet.build(self.link_names, self.massless, dict(self.shared))
        object.__setattr__(self, "linkset", links)
        for j, owner in enumerate(links.owners):
            values = self.model.inertias[j + 1].toDynamicParameters()
            if owner is None and np.any(values != 0):
                raise ModelError(
                    f"massless link {self.link_names[j]!r} has inertia in the model (mass "
                    f"{values[0]:g} kg, parameters {np.round(values, 6).tolist()}); a massless "
                    "link is fixed at zero, so give it no inertia, or leave it out of massless")
        for name, _ in self.shared:
            first = links.members(name)[0]
            ref = self.model.inertias[first + 1].toDynamicParameters()
            for j in links.members(name)[1:]:
                values = self.model.inertias[j + 1].toDynamicParameters()
                if not np.allclose(values, ref, rtol=1e-9, atol=1e-12):
                    raise ModelError(
                        f"shared[{name!r}]: links {self.link_names[first]!r} and "
                        f"{self.link_names[j]!r} share parameters but their priors differ "
                        f"({np.round(ref, 6).tolist()} and {np.round(values, 6).tolist()}, "
                        "each in its own frame); shared links must be identical")

    def with_links(self, *, massless: Sequence[str] = (),
                   shared: Mapping[str, Sequence[str]] | None = None) -> Tree:
        """The same tree with massless links and groups of links sharing their parameters.

        Parameters
        ----------
        massless
            Links that carry no parameters: their inertia is zero in the model and their
            regressor columns are dropped (virtual links inside a multi-DOF joint).
        shared
            Group name → identical links (each described in its own frame, with equal
            priors) that carry one set of ten parameters, named after the group; their
            regressor columns are summed.

        Examples
        --------
        >>> tree = robot.tree.with_links(massless=["x_slide", "y_slide"],
        ...                              shared={"legs_rod": ["leg1_rod", "leg2_rod"]})
        >>> tree.linkset.names[:2]
        ('z_slide', 'roll_link')
        """
        groups = tuple((str(k), tuple(v) if not isinstance(v, str) else (v,))
                       for k, v in (shared or {}).items())
        return replace(self, massless=tuple(massless), shared=groups)

    @classmethod
    def from_model(cls, model: pin.Model, link_names: tuple[str, ...] | None = None, *,
                   mimic: tuple[Mimic, ...] = ()) -> Tree:
        """Wrap a Pinocchio model whose joints all have one degree of freedom."""
        types = []
        for jid in range(1, model.njoints):
            kind = _joint_type(model.joints[jid])
            if not kind:
                raise ModelError(
                    f"joint {model.names[jid]!r}: type {model.joints[jid].shortname()} is not "
                    "supported; dynid trees have revolute and prismatic joints only (describe "
                    "closed loops with a closure; Tree.from_urdf makes a URDF's mimic joints "
                    "closure rows)")
            types.append(kind)
        if not types:
            raise ModelError("the robot has no movable joint; at least one is needed")
        if link_names is None:
            link_names = _carried_links(model)
        names = tuple(model.names[1:])
        for m in mimic:
            if m.joint not in names or m.leader not in names:
                raise ModelError(f"mimic joint {m.joint!r} follows {m.leader!r}: both must be "
                                 f"joints of the tree {name_list(names)}")
        return cls(model, names, tuple(link_names), tuple(types), tuple(mimic))

    @classmethod
    def from_urdf(cls, source: str | Path, *, locked: Mapping[str, float] | None = None,
                  gravity: np.ndarray | None = None,
                  inertias: Mapping[str, pin.Inertia] | None = None) -> Tree:
        """Load a URDF file (or XML text) through Pinocchio, after checking it.

        ``locked`` maps joint names to the fixed positions at which they are blocked (a locked
        leader locks the joints that mimic it). ``inertias`` replaces the inertia carried by
        the joints of the named moving links (priors given elsewhere than in the URDF). Every
        moving joint must then move some mass.
        """
        text = str(source)
        path = None
        if text.lstrip().startswith("<"):
            where = "URDF text"
        else:
            where = f"URDF file {excerpt(text, 200)}"
            path = Path(text)
            text = read_text(text, "URDF file", ModelError, max_bytes=MAX_URDF_BYTES)
        mimic = check_urdf(text, where)
        locked = dict(locked or {})
        try:
            model = pin.buildModelFromXML(text)
        except (RuntimeError, ValueError, IndexError) as exc:
            raise ModelError(f"{where} could not be read by Pinocchio: {exc}") from None
        if locked:
            model, mimic = _lock(model, locked, mimic)
        if gravity is not None:
            model.gravity.linear = np.asarray(gravity, dtype=float)
        tree = replace(cls.from_model(model, mimic=mimic),
                       urdf=UrdfSource(text, path, tuple((k, float(v)) for k, v in locked.items())))
        for link, inertia in (inertias or {}).items():
            if link not in tree.link_names:
                raise ModelError(f"inertial priors given for unknown links [{link!r}]; the "
                                 f"URDF's moving links are {name_list(tree.link_names)}")
            model.inertias[tree.link_names.index(link) + 1] = inertia
        _check_moving_mass(tree, where)
        return tree

    def default_closure(self) -> Closure:
        """The closure of the tree alone: the identity, or the linear rows of its mimic joints
        (basis: the other joints, in tree order)."""
        if not self.mimic:
            return IdentityClosure(self.joint_names)
        follows = {m.joint: m for m in self.mimic}
        basis = [j for j in self.joint_names if j not in follows]
        A, b = np.zeros((self.n, len(basis))), np.zeros(self.n)
        for t, joint in enumerate(self.joint_names):
            if joint in follows:
                m = follows[joint]
                A[t, basis.index(m.leader)], b[t] = m.multiplier, m.offset
            else:
                A[t, basis.index(joint)] = 1.0
        return LinearClosure(A, basis, offset=b)

    # Sizes and coordinates -------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of tree coordinates."""
        return len(self.joint_names)

    def configuration(self, q_t: np.ndarray) -> np.ndarray:
        """Pinocchio configurations (N, nq) from tree coordinates (N, n)."""
        if self.model.nq == self.n:
            return q_t
        out = np.empty((q_t.shape[0], self.model.nq))
        for j in range(self.n):
            jm = self.model.joints[j + 1]
            if jm.nq == 2:
                out[:, jm.idx_q] = np.cos(q_t[:, j])
                out[:, jm.idx_q + 1] = np.sin(q_t[:, j])
            else:
                out[:, jm.idx_q] = q_t[:, j]
        return out

    def limits(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Lower and upper position, velocity and effort limits per joint, from the model
        (±inf where there is none; an unbounded revolute joint has no position limits)."""
        model = self.model
        lower, upper = np.full(self.n, -np.inf), np.full(self.n, np.inf)
        velocity, effort = np.empty(self.n), np.empty(self.n)
        for j in range(self.n):
            jm = model.joints[j + 1]
            if jm.nq == 1:
                lower[j] = model.lowerPositionLimit[jm.idx_q]
                upper[j] = model.upperPositionLimit[jm.idx_q]
            velocity[j] = model.velocityLimit[jm.idx_v]
            effort[j] = model.effortLimit[jm.idx_v]
        out = lower, upper, velocity, effort
        # URDF files without <limit> give ±max double; treat as unbounded.
        for x in out:
            x[x < -1e100] = -np.inf
            x[x > 1e100] = np.inf
        return out

    def link_parameters(self) -> list[Parameter]:
        """Inertial parameters of every link that carries them (one block per shared group,
        none for a massless link), with the model's inertias as priors."""
        out: list[Parameter] = []
        links = self.linkset
        for name in links.names:
            j = links.members(name)[0]
            out += link_parameters(name, self.model.inertias[j + 1].toDynamicParameters())
        return out

    def link_owner(self, link: str) -> str | None:
        """The parameter block of tree link ``link``: its own name, its shared group's, or
        ``None`` for a massless link."""
        return self.linkset.owners[self.link_names.index(link)]


def _carried_links(model: pin.Model) -> tuple[str, ...]:
    """Per joint, the name of the first body frame it carries (else the joint's name)."""
    first: dict[int, str] = {}
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY:
            first.setdefault(frame.parentJoint, frame.name)
    return tuple(first.get(jid, model.names[jid]) for jid in range(1, model.njoints))


def _check_moving_mass(tree: Tree, where: str) -> None:
    """Every moving joint of a URDF tree moves some mass (its link or links beyond it)."""
    model = tree.model
    moved = [model.inertias[j].mass for j in range(model.njoints)]
    for j in range(model.njoints - 1, 0, -1):  # children come after their parents
        moved[model.parents[j]] += moved[j]
    for j, joint in enumerate(tree.joint_names):
        if not moved[j + 1] > 0:
            raise ModelError(
                f"{where}: joint {joint!r} moves no mass: its link {tree.link_names[j]!r} and "
                "every link beyond it are massless (no <inertial>, or mass 0). Give the link "
                "its <inertial> (a prior is enough; in a robot file, an entry under links:), "
                "or make the joint fixed (kinematics.locked in a robot file)")


def _lock(model: pin.Model, locked: dict[str, float], mimic: tuple[Mimic, ...]
          ) -> tuple[pin.Model, tuple[Mimic, ...]]:
    """The model with the ``locked`` joints blocked, and the mimic relations left; a locked
    leader locks the joints that follow it."""
    for m in mimic:
        if m.joint in locked and m.leader not in locked:
            raise ModelError(f"locked joint {m.joint!r} mimics {m.leader!r} in the URDF; lock "
                             f"{m.leader!r} instead (its mimic joints are locked with it)")
        if m.leader in locked and m.joint not in locked:
            locked[m.joint] = m.multiplier * locked[m.leader] + m.offset
    mimic = tuple(m for m in mimic if m.joint not in locked)
    q_ref = pin.neutral(model)
    ids = []
    for name, value in locked.items():
        if not model.existJointName(name):
            raise ModelError(f"locked joint {excerpt(name)} is not in the model; joints are "
                             f"{name_list(model.names[1:])}")
        jid = model.getJointId(name)
        jm = model.joints[jid]
        if jm.nq == 2:
            q_ref[jm.idx_q:jm.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            q_ref[jm.idx_q] = value
        ids.append(jid)
    return pin.buildReducedModel(model, ids, q_ref), mimic
