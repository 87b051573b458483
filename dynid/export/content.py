"""What a URDF or an MJCF can hold of a robot, and the record of an export.

Both formats describe an open tree of rigid links with, per joint, viscous and Coulomb friction
(URDF ``<dynamics damping friction>``, MuJoCo ``damping`` and ``frictionloss``), and joints that
follow another (``<mimic>``, MuJoCo's joint equality). URDF ``<transmission>`` elements add a
constant gear ratio and a rotor inertia per joint; MuJoCo has the reflected rotor inertia as
the joint's ``armature``. :func:`describe` sorts a robot's model into what these hold, per tree
joint (:class:`JointDynamics`), and what they cannot: closed loops, couplings, lever and
ball-screw drives, motor-side friction, springs, cables, friction offsets, current gains. Those
are named in :attr:`Export.not_written`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..models import LinearClosure, Robot
from ..models.friction import SigmoidCoulomb, StribeckFriction
from ..models.stewart import SharedFriction, SphericalFriction, StewartClosure
from ..models.terms import CoordinateTerm
from ..models.transmissions import Gear
from ..models.tree import Mimic
from ._stewart import cut_sentence

__all__ = ["Content", "Export", "JointDynamics", "describe"]


@dataclass
class JointDynamics:
    """What a URDF holds of one tree joint's model, as parameter names.

    Attributes
    ----------
    damping, friction
        Names of the viscous (``fv``) and Coulomb (``fc``) friction parameters, or ``None``.
    armature
        (parameter name, factor) pairs whose sum is the joint-side inertia of the drive:
        ``(motor.Ia, 1)`` for an armature given on the joint, ``(motor.Jm, r²)`` for a rotor
        inertia behind a gear of ratio ``r``.
    ratio, actuator
        Gear ratio and actuator name of a constant gear that drives the joint alone, else
        ``None``.
    """

    damping: str | None = None
    friction: str | None = None
    armature: list[tuple[str, float]] = field(default_factory=list)
    ratio: float | None = None
    actuator: str | None = None

    def values(self, value: dict[str, float]) -> tuple[float, float, float]:
        """Damping, friction and armature with the parameter values ``value`` (name → value)."""
        return (value[self.damping] if self.damping else 0.0,
                value[self.friction] if self.friction else 0.0,
                sum(f * value[name] for name, f in self.armature))

    @property
    def rotor_inertia(self) -> bool:
        """Whether the joint's drive has an inertia."""
        return bool(self.armature)


@dataclass(frozen=True)
class Content:
    """A robot's model sorted into what URDF and MJCF hold and what they cannot.

    Attributes
    ----------
    joints
        Tree joint name → :class:`JointDynamics`, for every tree joint.
    mimic
        Tree joints that follow one other tree joint (closure rows and URDF ``<mimic>``).
    written
        Names of the parameters written beyond the link blocks (friction, rotor inertia).
    not_written
        One sentence per part of the model the formats cannot hold, naming its parameters.
    loops
        The sentence of :attr:`not_written` about closed loops the files leave cut ("" when
        there are none); an MJCF that closes them drops it.
    """

    joints: dict[str, JointDynamics]
    mimic: tuple[Mimic, ...]
    written: tuple[str, ...]
    not_written: tuple[str, ...]
    loops: str = ""


#: Why a parameter kind cannot be written, per kind (sentences of :attr:`Export.not_written`).
_WHY = {
    "fo": "constant friction offsets: the formats have no constant joint torque",
    "fvm": "motor-side friction: the formats have no motor",
    "fcm": "motor-side friction: the formats have no motor",
    "fom": "motor-side friction: the formats have no motor",
    "mt": "ball-screw mass and friction: the formats have no screw",
    "fvt": "ball-screw mass and friction: the formats have no screw",
    "fct": "ball-screw mass and friction: the formats have no screw",
    "Jm": "rotor inertias of drives that are not a gear driving one tree joint (a lever, a "
          "coupling)",
    "basis": "friction and armature of coordinates that are no joint of the tree",
    "spherical": "friction of the spherical joints: they are the loops' cuts, no joint of the "
                 "files",
}


def describe(robot: Robot) -> Content:
    """Sort ``robot``'s model into what URDF and MJCF hold (see the module docstring)."""
    tree = robot.tree
    joints = {name: JointDynamics() for name in tree.joint_names}
    same = robot.closure.tree_joints(tree.joint_names)  # basis coordinate → tree joint
    out: list[str] = []
    left: dict[str, list[str]] = {}  # reason → parameter names
    written: list[str] = []
    mimic, rows = _mimic_rows(robot, same)
    if rows:
        out.append(rows)
    trans = robot.transmission
    coupled = [name for k, name in enumerate(trans.names) if not _uncoupled(trans, k)]
    if coupled:
        out.append(f"transmission coupling of {', '.join(coupled)} (matrix C, q_m = C g(q)): "
                   "URDF transmissions drive one joint each")
    for k, drive in enumerate(trans.drives):
        t = same[k]
        if not isinstance(drive, Gear):
            out.append(f"{trans.names[k]} drives {robot.joint_names[k]} through {drive!r}: URDF "
                       "transmissions have a constant ratio")
        elif t is not None and _uncoupled(trans, k) and drive.ratio != 1.0:
            joints[tree.joint_names[t]].ratio = drive.ratio
            joints[tree.joint_names[t]].actuator = trans.names[k]
    if trans.torque_constants is not None:
        out.append(f"torque constants k_T of {', '.join(trans.names)}: the formats hold "
                   "torques, not currents")
    smoothed = []
    for term in robot.terms:
        if isinstance(term, SharedFriction | SphericalFriction):
            _leg_friction(robot, term, joints, written, left, smoothed)
            continue
        if isinstance(term, SigmoidCoulomb | StribeckFriction) and term.space != "actuator":
            t = term.rows[0] if term.space == "tree" else same[term.rows[0]]
            fc = term.parameters[0].name
            if t is not None:
                joints[tree.joint_names[t]].friction = fc
                written.append(fc)
            out.append(f"{term!r}: the formats' friction is a constant Coulomb level, {fc}; "
                       f"the {term.model} shape is left out"
                       + (f" ({term.parameters[1].name})" if len(term.parameters) > 1 else ""))
            continue
        if not isinstance(term, CoordinateTerm):
            names = ", ".join(p.name for p in term.parameters)
            out.append(f"{term!r} ({names}): springs and cables have no place in the formats")
            continue
        row = term.rows[0]
        if term.space == "actuator":
            _actuator(robot, term, joints, same, written, left)
            continue
        t = row if term.space == "tree" else same[row]
        for p in term.parameters:
            if t is None or p.kind not in ("fv", "fc", "Ia"):
                left.setdefault(_WHY["basis" if t is None else p.kind], []).append(p.name)
                continue
            dyn = joints[tree.joint_names[t]]
            if p.kind == "fv":
                dyn.damping = p.name
            elif p.kind == "fc":
                dyn.friction = p.name
                if term.smoothing > 0:
                    smoothed.append(term.owner)
            else:
                dyn.armature.append((p.name, 1.0))
            written.append(p.name)
    if smoothed:
        out.append(f"the smoothing of the Coulomb sign of {', '.join(smoothed)} (tanh(v / s)): "
                   "the formats' friction has the exact sign")
    out += [f"{reason} ({', '.join(names)})" for reason, names in left.items()]
    return Content(joints, mimic, tuple(written), tuple(out), rows)


def _leg_friction(robot: Robot, term: SharedFriction | SphericalFriction,
                  joints: dict[str, JointDynamics], written: list[str],
                  left: dict[str, list[str]], smoothed: list[str]) -> None:
    """Sort a Stewart platform's leg friction: a coefficient the six legs share is written on
    each leg's joint; the spherical joints' goes to ``left`` (they are the loops' cuts)."""
    name = term.parameters[0].name
    if isinstance(term, SphericalFriction):
        left.setdefault(_WHY["spherical"], []).extend(p.name for p in term.parameters)
        return
    for t in term.rows:
        dyn = joints[robot.tree.joint_names[t]]
        if term.kind == "viscous":
            dyn.damping = name
        else:
            dyn.friction = name
    written.append(name)
    if term.kind == "coulomb" and term.smoothing > 0:
        smoothed.append(name)


def _actuator(robot: Robot, term: CoordinateTerm, joints: dict[str, JointDynamics],
              same: list[int | None], written: list[str], left: dict[str, list[str]]) -> None:
    """Sort a motor-side term: a rotor inertia behind a gear that drives one tree joint is
    written (reflected, ``r² Jm``); the rest goes to ``left`` (reason → names)."""
    trans = robot.transmission
    k = term.rows[0]
    drive, t = trans.drives[k], same[k]
    for p in term.parameters:
        if p.kind == "Jm" and isinstance(drive, Gear) and _uncoupled(trans, k) \
                and t is not None:
            dyn = joints[robot.tree.joint_names[t]]
            dyn.armature.append((p.name, drive.ratio ** 2))
            dyn.ratio, dyn.actuator = drive.ratio, trans.names[k]
            written.append(p.name)
        else:
            left.setdefault(_WHY.get(p.kind, _WHY["fvm"]), []).append(p.name)


def _uncoupled(trans, k: int) -> bool:
    """Whether motor ``k`` moves its own coordinate only (row ``k`` of the coupling is ``e_k``):
    its ratio and rotor inertia then belong to that joint alone."""
    C = trans.coupling
    return C is None or bool(np.array_equal(C[k], np.eye(len(C))[k]))


def _mimic_rows(robot: Robot, same: list[int | None]) -> tuple[tuple[Mimic, ...], str]:
    """The closure rows that are a tree joint following one basis coordinate which is a tree
    joint (written as ``<mimic>``), and a sentence naming the rest of the closure."""
    closure, names = robot.closure, robot.tree.joint_names
    if closure.is_identity:
        return (), ""
    basis_joints = {t for t in same if t is not None}
    dependent = [t for t in range(len(names)) if t not in basis_joints]
    if isinstance(closure, StewartClosure):
        return (), cut_sentence(robot)
    if not isinstance(closure, LinearClosure):
        return (), (f"{closure!r}: the tree joints {', '.join(names[t] for t in dependent)} are "
                    "solved from closed loops; in the files they are free joints")
    A, b = closure.matrix, closure.offset
    mimic, rest = [], []
    for t in dependent:
        nonzero = np.flatnonzero(A[t])
        if len(nonzero) == 1 and same[nonzero[0]] is not None:
            k = nonzero[0]
            mimic.append(Mimic(names[t], names[same[k]], float(A[t, k]), float(b[t])))
        else:
            rest.append(names[t])
    text = (f"closure rows of {', '.join(rest)}: each follows several coordinates or one that "
            "is no tree joint (<mimic> follows one joint); in the files they are free joints"
            if rest else "")
    return tuple(mimic), text


@dataclass(frozen=True)
class Export:
    """What an export wrote.

    Attributes
    ----------
    path
        The file written.
    format
        ``"urdf"`` or ``"mjcf"``.
    params
        The standard parameters written (p,): the given ones, or their projection onto the
        physically consistent set (``project=True``).
    written
        What the file holds, one line each (links, friction, transmissions, changes to the
        source URDF).
    not_written
        Every part of the model the file cannot hold, one sentence each naming its parameters.
    moved
        Parameters the projection changed: name → (given value, written value).
    distance
        ``‖θ_written − θ_given‖`` (mixed units, as the projection measures it); 0 when nothing
        needed projecting.
    seconds
        Time the export took.

    Examples
    --------
    >>> out = dynid.write_urdf("ariane", result, "ariane.urdf")
    >>> print(out.summary())     # the file, what it holds, what moved, what it left out
    >>> out.not_written[0]
    'motor1 drives joint1 through LeverScrew(...): URDF transmissions have a constant ratio'
    """

    path: Path
    format: str
    params: np.ndarray
    written: tuple[str, ...]
    not_written: tuple[str, ...]
    moved: dict[str, tuple[float, float]] = field(default_factory=dict)
    distance: float = 0.0
    seconds: float = 0.0

    def summary(self) -> str:
        """A readable account: the file, what it holds, what it left out, what moved."""
        lines = [f"wrote {self.path} ({self.format.upper()}, {self.seconds:.2f} s)"]
        lines += [f"  {line}" for line in self.written]
        if self.moved:
            lines.append(f"projected onto the physically consistent set (distance "
                         f"{self.distance:.4g}):")
            lines += [f"  {name}: {a:.6g} → {b:.6g}" for name, (a, b) in self.moved.items()]
        if self.not_written:
            lines.append("not written (the format cannot hold it):")
            lines += [f"  {line}" for line in self.not_written]
        return "\n".join(lines)
