"""Cut joints of closed loops: pairs of tree frames the real mechanism keeps together.

A loop is cut at one of its joints so that Pinocchio sees an open tree; the cut leaves two frames,
one on each side, which the mechanism holds together:

``point``     same origin (a ball joint): 3 equations;
``revolute``  same origin and parallel z axes (a hinge about z): 5 independent equations;
``weld``      same origin and orientation: 6 equations.

:func:`cut_residuals` measures how far apart the frames are; :func:`cut_equations` gives the
constraint values, their Jacobian with respect to the tree velocities and the acceleration drift
``J̇ v`` from Pinocchio's kinematics, for the loop solver (:mod:`dynid.models.loops`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .._files import name_list
from ..errors import ModelError

__all__ = ["CUT_KINDS", "Cut", "add_frame", "cut_equations", "cut_residuals", "loop_joints"]

CUT_KINDS = ("point", "revolute", "weld")
_WORLD = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class Cut:
    """Two frames of the tree that the mechanism keeps together.

    Attributes
    ----------
    frames
        Names of the two frames (Pinocchio frames of the tree's model).
    kind
        One of :data:`CUT_KINDS`.
    name
        A short name for messages (default ``frame_a/frame_b``).
    """

    frames: tuple[str, str]
    kind: str = "revolute"
    name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CUT_KINDS:
            raise ModelError(f"cut {self.frames}: kind must be one of {CUT_KINDS}, found "
                             f"{self.kind!r}")
        if len(self.frames) != 2 or self.frames[0] == self.frames[1]:
            raise ModelError(f"cut: expected two different frame names, found {self.frames}")
        if not self.name:
            object.__setattr__(self, "name", f"{self.frames[0]}/{self.frames[1]}")


def add_frame(model: pin.Model, name: str, parent: str, placement: pin.SE3) -> int:
    """Add an operational frame ``name`` fixed to the link of joint ``parent`` (or a frame
    called ``parent``) at ``placement`` relative to it; returns its frame id."""
    if model.existFrame(name):
        raise ModelError(f"frame {name!r} already exists in the model; choose another name")
    if not model.existFrame(parent):
        names = [f.name for f in model.frames]
        raise ModelError(f"frame {name!r}: parent {parent!r} is neither a link nor a frame of "
                         f"the tree; known frames are {name_list(names)}")
    # A link and its joint may share a name: prefer the link (body) frame.
    fid = next((i for i, f in enumerate(model.frames)
                if f.name == parent and f.type == pin.FrameType.BODY),
               next(i for i, f in enumerate(model.frames) if f.name == parent))
    base = model.frames[fid]
    frame = pin.Frame(name, base.parentJoint, fid, base.placement * placement,
                      pin.FrameType.OP_FRAME)
    return model.addFrame(frame)


def _frame_ids(model: pin.Model, cuts: Sequence[Cut]) -> list[tuple[int, int]]:
    ids = []
    for cut in cuts:
        for f in cut.frames:
            if not model.existFrame(f):
                raise ModelError(f"cut {cut.name}: frame {f!r} is not in the tree; add it under "
                                 "kinematics.frames")
        ids.append(tuple(model.getFrameId(f) for f in cut.frames))
    return ids


def loop_joints(model: pin.Model, cut: Cut) -> list[int]:
    """Tree indices (joint id − 1) of the joints on the loop a cut closes: those between
    either frame and the links' common ancestor, in tree order."""
    (fa, fb), = _frame_ids(model, [cut])
    a = set(model.supports[model.frames[fa].parentJoint])
    b = set(model.supports[model.frames[fb].parentJoint])
    return sorted(j - 1 for j in a ^ b)


def cut_residuals(tree, cuts: Sequence[Cut], q_t: np.ndarray) -> np.ndarray:
    """Distance (m) plus axis or orientation error (rad) of each cut, (N, n_cuts)."""
    model, data = tree.model, tree.model.createData()
    ids = _frame_ids(model, cuts)
    out = np.zeros((q_t.shape[0], len(cuts)))
    for k, qk in enumerate(tree.configuration(q_t)):
        pin.framesForwardKinematics(model, data, qk)
        for c, (cut, (fa, fb)) in enumerate(zip(cuts, ids, strict=True)):
            A, B = data.oMf[fa], data.oMf[fb]
            err = np.linalg.norm(A.translation - B.translation)
            if cut.kind == "revolute":
                err += np.linalg.norm(np.cross(A.rotation[:, 2], B.rotation[:, 2]))
            elif cut.kind == "weld":
                err += np.linalg.norm(pin.log3(A.rotation.T @ B.rotation))
            out[k, c] = err
    return out


def _skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def cut_equations(model: pin.Model, data: pin.Data, cuts: Sequence[Cut],
                  ids: Sequence[tuple[int, int]], *, drift: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Constraint values ``c`` (m,), Jacobian ``∂c/∂q_t`` (m, nv) and, with ``drift``, the
    acceleration drift ``J̇ v`` (m,) of every cut.

    ``data`` must hold ``pin.forwardKinematics(model, data, q, v, 0)`` followed by
    ``pin.computeJointJacobians`` and ``pin.updateFramePlacements``. The Jacobian is exact where
    the cut is closed, which is where the loop solver uses it for ``G`` and ``Ġ v``.
    """
    values, rows, drifts = [], [], []
    for cut, (fa, fb) in zip(cuts, ids, strict=True):
        A, B = data.oMf[fa], data.oMf[fb]
        Ja = pin.getFrameJacobian(model, data, fa, _WORLD)
        Jb = pin.getFrameJacobian(model, data, fb, _WORLD)
        values.append(A.translation - B.translation)
        rows.append(Ja[:3] - Jb[:3])
        if drift:
            acc_a = pin.getFrameClassicalAcceleration(model, data, fa, _WORLD)
            acc_b = pin.getFrameClassicalAcceleration(model, data, fb, _WORLD)
            drifts.append(acc_a.linear - acc_b.linear)
        if cut.kind == "revolute":
            za, zb = A.rotation[:, 2], B.rotation[:, 2]
            values.append(np.cross(za, zb))
            rows.append(_skew(zb) @ _skew(za) @ Ja[3:] - _skew(za) @ _skew(zb) @ Jb[3:])
            if drift:
                wa = pin.getFrameVelocity(model, data, fa, _WORLD).angular
                wb = pin.getFrameVelocity(model, data, fb, _WORLD).angular
                dza, dzb = np.cross(wa, za), np.cross(wb, zb)
                dda = np.cross(acc_a.angular, za) + np.cross(wa, dza)
                ddb = np.cross(acc_b.angular, zb) + np.cross(wb, dzb)
                drifts.append(np.cross(dda, zb) + 2 * np.cross(dza, dzb) + np.cross(za, ddb))
        elif cut.kind == "weld":
            values.append(A.rotation @ pin.log3(A.rotation.T @ B.rotation))
            rows.append(Jb[3:] - Ja[3:])
            if drift:
                drifts.append(acc_b.angular - acc_a.angular)
    return (np.concatenate(values), np.vstack(rows),
            np.concatenate(drifts) if drift else None)
