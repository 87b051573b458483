"""The rigid-body tree: a Pinocchio model with named one-degree-of-freedom joints.

The tree is what Pinocchio sees: an open kinematic tree (closed loops are cut, see
:mod:`dynid.models.closures`). Its coordinates are the tree coordinates ``q_t``: one angle or
displacement per joint, in Pinocchio's joint order. Unbounded revolute joints, which Pinocchio
stores as (cos, sin), are converted at this boundary, so the rest of dynid sees plain angles.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..errors import ModelError
from .parameters import Parameter, link_parameters

__all__ = ["Tree"]


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
    """

    model: pin.Model
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    joint_types: tuple[str, ...]

    @classmethod
    def from_model(cls, model: pin.Model, link_names: tuple[str, ...] | None = None) -> Tree:
        """Wrap a Pinocchio model whose joints all have one degree of freedom."""
        types = []
        for jid in range(1, model.njoints):
            kind = _joint_type(model.joints[jid])
            if not kind:
                raise ModelError(
                    f"joint {model.names[jid]!r}: type {model.joints[jid].shortname()} is not "
                    "supported; dynid trees have revolute and prismatic joints only (describe "
                    "mimic joints and closed loops with a closure instead)")
            types.append(kind)
        if not types:
            raise ModelError("the robot has no movable joint; at least one is needed")
        if link_names is None:
            link_names = tuple(_carried_link(model, jid) for jid in range(1, model.njoints))
        return cls(model, tuple(model.names[1:]), tuple(link_names), tuple(types))

    @classmethod
    def from_urdf(cls, source: str | Path, *, locked: dict[str, float] | None = None,
                  gravity: np.ndarray | None = None) -> Tree:
        """Load a URDF file (or XML text) through Pinocchio.

        ``locked`` maps joint names to the fixed positions at which they are blocked.
        """
        text = str(source)
        try:
            if text.lstrip().startswith("<"):
                model = pin.buildModelFromXML(text)
            else:
                if not Path(text).is_file():
                    raise ModelError(f"URDF file {text!r} does not exist")
                model = pin.buildModelFromUrdf(text)
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"URDF {text[:80]!r} could not be parsed: {exc}") from None
        if locked:
            model = _lock(model, locked)
        if gravity is not None:
            model.gravity.linear = np.asarray(gravity, dtype=float)
        return cls.from_model(model)

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
        """Inertial parameters of every link, with the model's inertias as priors."""
        out: list[Parameter] = []
        for j, link in enumerate(self.link_names):
            out += link_parameters(link, self.model.inertias[j + 1].toDynamicParameters())
        return out


def _carried_link(model: pin.Model, jid: int) -> str:
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint == jid:
            return frame.name
    return model.names[jid]


def _lock(model: pin.Model, locked: dict[str, float]) -> pin.Model:
    q_ref = pin.neutral(model)
    ids = []
    for name, value in locked.items():
        if not model.existJointName(name):
            raise ModelError(f"locked joint {name!r} is not in the model; joints are "
                             f"{list(model.names[1:])}")
        jid = model.getJointId(name)
        jm = model.joints[jid]
        if jm.nq == 2:
            q_ref[jm.idx_q:jm.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            q_ref[jm.idx_q] = value
        ids.append(jid)
    return pin.buildReducedModel(model, ids, q_ref)
