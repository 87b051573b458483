"""Bodies fixed to a link without a joint: counterweights, tools, payloads.

An attached :class:`Body` is rigidly fixed to a link of the tree (or to a frame fixed to one),
at a pose (``xyz``, ``rpy``) in the link's frame; its mass, centre of mass and inertia about the
centre of mass are given in its own frame (the frame at that pose), like a link's. It is one of
two kinds:

identified (the default)
    The body has ten inertial parameters of its own, ``<body>.m``, ``<body>.mcx`` …
    ``<body>.Izz`` (Pinocchio's order, about the body frame's origin, in the body frame), in
    the ``link`` group. The body moves with its link, so its regressor columns are the link's
    columns seen through the fixed pose: with ``X`` the body's placement in the link's joint
    frame, the body adds ``T(X) π_b`` to the link's parameters, ``T(X)`` being the linear map
    of Pinocchio's ``Inertia.se3Action`` on the ten parameters (:func:`parameter_map`). The
    base parameters regroup the body with its link. A body is a block of ten link parameters
    like any link's, so the physical-consistency constraints hold for it on its own; the
    pseudo-inertia condition does not depend on the frame, so a body physical in its frame is
    physical in its link's.
known (``known=True``)
    Fixed values, not identified (a payload or a tool weighed beforehand): no parameter. Its
    generalized force is part of the model's prediction, ``y = Y θ + y_known``
    (:meth:`~dynid.models.regressor.Regressor.affine`).

Bodies are resolved on the tree by :class:`Attachments`, which checks their names and parents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .._files import excerpt, name_list
from ..errors import ModelError
from .dh import LinkInertia
from .parameters import Parameter, link_parameters
from .tree import Tree

__all__ = ["Attachments", "Body", "parameter_map"]


@dataclass(frozen=True)
class Body:
    """A rigid body fixed to a link, without a joint.

    Parameters
    ----------
    name
        The body's name: the owner of its parameters (``counterweight.m``).
    parent
        The link it is fixed to (a link of the DH table or of the URDF, including links a URDF
        fixes to a moving link), or a frame fixed to a link (a DH tool frame, an extra frame
        of the robot file); the pose is then in that frame.
    inertia
        Mass (kg), centre of mass (m) and inertia about the centre of mass (kg·m²), in the body
        frame; the prior of an identified body, the value of a known one.
    xyz, rpy
        Pose of the body frame in its parent's frame: position (m) and roll, pitch, yaw
        (rad, about the fixed x, y, z axes, as in URDF).
    known
        True for fixed values that are not identified.

    Examples
    --------
    >>> from dynid.models import Body, LinkInertia
    >>> weight = Body("counterweight", "link2", LinkInertia(3.0, (0.0, 0.0, 0.02)),
    ...               xyz=(-0.15, 0.0, 0.0))
    >>> robot = Robot(tree, bodies=(weight,))   # parameters counterweight.m … .Izz
    """

    name: str
    parent: str
    inertia: LinkInertia
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    known: bool = False

    def __post_init__(self) -> None:
        for key in ("name", "parent"):
            value = getattr(self, key)
            if not isinstance(value, str) or not value:
                raise ModelError(f"body {key}: expected a non-empty string, found "
                                 f"{excerpt(value)}")
        if not isinstance(self.known, bool):
            raise ModelError(f"body {self.name!r}: known must be True or False, found "
                             f"{excerpt(self.known)}")
        if not isinstance(self.inertia, LinkInertia):
            raise ModelError(f"body {self.name!r}: inertia must be a LinkInertia(mass, com, "
                             f"inertia), found {type(self.inertia).__name__}")
        for key in ("xyz", "rpy"):
            try:
                value = np.asarray(getattr(self, key), dtype=float)
            except (TypeError, ValueError):
                value = np.full(0, np.nan)
            if value.shape != (3,) or not np.all(np.isfinite(value)):
                raise ModelError(f"body {self.name!r}: {key} must be three finite numbers, "
                                 f"found {excerpt(getattr(self, key))}")
            object.__setattr__(self, key, tuple(float(x) for x in value))

    @property
    def placement(self) -> pin.SE3:
        """Pose of the body frame in its parent's frame."""
        return pin.SE3(pin.rpy.rpyToMatrix(*self.rpy), np.array(self.xyz))

    @property
    def values(self) -> np.ndarray:
        """The ten inertial parameters (10,) about the body frame's origin, in the body frame
        (Pinocchio's order)."""
        return self.inertia.to_pinocchio().toDynamicParameters()


def parameter_map(placement: pin.SE3) -> np.ndarray:
    """``T`` (10, 10): a body's ten parameters in its own frame → the same body's parameters in
    the frame where it is placed (Pinocchio's ``Inertia.se3Action``, which is linear in them).

    Examples
    --------
    >>> X = pin.SE3.Random()
    >>> I = pin.Inertia.Random()
    >>> np.allclose(parameter_map(X) @ I.toDynamicParameters(),
    ...             I.se3Action(X).toDynamicParameters())
    True
    """
    # Ten independent parameter vectors of unit mass (a valid input of FromDynamicParameters),
    # moved by se3Action; T is the linear map taking the ones to the others.
    basis = np.eye(10)
    basis[0] = 1.0
    moved = np.column_stack([pin.Inertia.FromDynamicParameters(b).se3Action(placement)
                             .toDynamicParameters() for b in basis.T])
    return np.linalg.solve(basis.T, moved.T).T


class Attachments:
    """The bodies of a robot resolved on its tree.

    Parameters
    ----------
    tree
        The robot's tree.
    bodies
        The attached bodies.
    reserved
        Other owner names of the robot's parameters (actuators, springs …) that a body's name
        must not repeat.

    Attributes
    ----------
    joints
        Per body, the index of the tree joint that carries it.
    placements
        Per body, the pose of its frame in that joint's frame (``pin.SE3``).
    maps
        Per body, ``T`` (10, 10) from its parameters to its joint frame's (see
        :func:`parameter_map`).
    identified, known
        Indices of the identified and of the known bodies.
    """

    def __init__(self, tree: Tree, bodies: Sequence[Body], *, reserved: Sequence[str] = ()):
        self.bodies = tuple(bodies)
        model = tree.model
        links = [f.name for f in model.frames
                 if f.type == pin.FrameType.BODY and f.parentJoint != 0]
        carriers = links + [f.name for f in model.frames
                            if f.type == pin.FrameType.OP_FRAME and f.parentJoint != 0]
        frames = {f.name for f in model.frames}
        seen: set[str] = set()
        self.joints, self.placements, maps = [], [], []
        for i, body in enumerate(self.bodies):
            where = f"bodies[{i}]"
            if not isinstance(body, Body):
                raise ModelError(f"{where}: expected a Body, found {type(body).__name__}")
            if body.name in seen:
                raise ModelError(f"{where}.name: body {body.name!r} is named twice; body "
                                 "names must be unique")
            seen.add(body.name)
            if body.name in frames or body.name in reserved:
                what = ("a link" if body.name in links else "a joint or frame of the tree"
                        if body.name in frames else "an actuator, spring or cable")
                raise ModelError(f"{where}.name: {body.name!r} is already the name of {what}; "
                                 "a body's parameters are named after it, so give it a name "
                                 "of its own")
            frame = _link_frame(model, body.parent, carriers, f"{where}.parent")
            X = frame.placement * body.placement
            T = parameter_map(X)
            with np.errstate(all="ignore"):
                finite = np.all(np.isfinite(T @ body.values))
            if not finite:
                raise ModelError(f"{where}: body {body.name!r} (mass {body.inertia.mass:g} kg, "
                                 f"pose xyz {list(body.xyz)}) is too large to compute with; "
                                 "check the units of its mass, centre of mass and pose")
            self.joints.append(frame.parentJoint - 1)
            self.placements.append(X)
            maps.append(T)
        self.maps = np.array(maps).reshape(len(maps), 10, 10)
        self.identified = tuple(i for i, b in enumerate(self.bodies) if not b.known)
        self.known = tuple(i for i, b in enumerate(self.bodies) if b.known)

    def parameters(self) -> list[Parameter]:
        """The ten parameters of each identified body, with its values as priors."""
        out: list[Parameter] = []
        for i in self.identified:
            out += link_parameters(self.bodies[i].name, self.bodies[i].values)
        return out

    def known_values(self) -> dict[int, np.ndarray]:
        """Tree joint index → the ten parameters (in the joint frame) of the known bodies it
        carries, summed."""
        out: dict[int, np.ndarray] = {}
        for i in self.known:
            moved = self.maps[i] @ self.bodies[i].values
            j = self.joints[i]
            out[j] = out.get(j, 0.0) + moved
        return out


_CARRIERS = (pin.FrameType.BODY, pin.FrameType.OP_FRAME)


def _link_frame(model: pin.Model, parent: str, carriers: list[str], where: str) -> pin.Frame:
    """The frame ``parent``: a link, or an operational frame fixed to one, that a joint moves."""
    named = [f for f in model.frames if f.name == parent]
    for kind in _CARRIERS:  # a link before a frame of the same name
        for f in named:
            if f.type == kind and f.parentJoint != 0:
                return f
    hint = f"links and frames are {name_list(carriers)}"
    if any(f.parentJoint == 0 for f in named):
        raise ModelError(f"{where}: {parent!r} is fixed to the world, so a body on it moves "
                         "with no joint and has no effect on the model; attach the body to a "
                         f"moving link: {hint}")
    if named:
        raise ModelError(f"{where}: {parent!r} is a joint, not a link; a body is fixed to a "
                         f"link or a frame: {hint}")
    raise ModelError(f"{where}: no link or frame named {excerpt(parent)} in the tree (the fixed "
                     f"base cannot carry a body); {hint}")
