"""URDF export of identified parameters.

:func:`write_urdf` writes the identified standard parameters into a URDF that Pinocchio,
Gazebo, Drake, MuJoCo and ROS tools read:

* per link: ``<inertial>`` with the mass, the centre of mass as its ``<origin>`` (no rotation)
  and the inertia about the centre of mass in the link's axes (dynid's parameters are about the
  joint frame's origin: converted here);
* per moving joint: ``<dynamics damping friction>``, the viscous (``joint.fv``) and Coulomb
  (``joint.fc``) friction, 0 where the model has none; ``<mimic>`` for tree joints that follow
  one other joint;
* per joint with a gear or a drive inertia: a ``transmission_interface/SimpleTransmission``
  with the ratio as ``<mechanicalReduction>``, and the drive's inertia as Drake writes it,
  ``<drake:rotor_inertia value="Jm"/>`` and ``<drake:gear_ratio value="r"/>``: the armature
  (the inertia reflected to the joint) is ``r² · Jm``. A robot file's ``armature`` (``Ia``,
  already joint-side) is written as the rotor inertia ``Ia / r²``, so ``r²`` times it gives it
  back. Pinocchio and Gazebo do not read these; :func:`~dynid.export.mjcf.write_mjcf` writes
  the armature as MuJoCo's joint ``armature``;
* bodies fixed to links (:attr:`Robot.bodies`, identified or known) as links fixed to theirs,
  each with its own ``<inertial>``.

A robot read from a URDF gets a copy of it (:mod:`dynid.export._source`: names, visuals and
collisions kept); other robots get a URDF generated from the Pinocchio model
(:mod:`dynid.export._generate`). Either way, loading the file with
``pinocchio.buildModelFromXML`` gives dynid's rigid-body model, and adding ``damping · v +
friction · sign(v) + armature · a`` gives dynid's joint torque for the terms written (Pinocchio
reads ``<mimic>`` joints as free joints unless asked otherwise; dynid's
:meth:`~dynid.models.tree.Tree.from_urdf` makes them closure rows). What URDF
cannot hold is named in :attr:`Export.not_written`: closed loops (a Stewart platform's file is
its cut tree, :mod:`dynid.export._stewart`), couplings, lever and ball-screw
drives, motor-side friction, friction offsets, springs, cables, current gains, and a gravity
other than (0, 0, −9.81) m/s².
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .._arguments import check_output, replacing
from ..models import Robot, load_robot
from . import _elements as E
from ._generate import generate
from ._source import drop_transmissions, edit, prolog
from ._stewart import is_stewart, refuse_into
from ._target import retarget
from ._values import parameter_vector, physical_values
from .content import Content, Export, describe

__all__ = ["urdf_text", "write_urdf"]

#: Gravity every URDF consumer assumes (m/s²).
STANDARD_GRAVITY = (0.0, 0.0, -9.81)


def _robot(robot: Robot | str | Path) -> Robot:
    return robot if isinstance(robot, Robot) else load_robot(robot)


def prepare(robot: Robot | str | Path, params: object, project: bool,
            into: str | Path | None = None) -> tuple[Robot, Content, np.ndarray, dict, float]:
    """The robot, what the formats hold of it and the parameters to write, checked physical or
    projected, in the frames of the URDF ``into`` when given (see :func:`write_urdf`)."""
    robot = _robot(robot)
    if into is not None and is_stewart(robot):
        refuse_into(robot, into)
    theta = parameter_vector(robot, params)
    content = describe(robot)
    theta, moved, distance = physical_values(robot, theta, content.written, project=project)
    if into is not None:
        robot, theta = retarget(robot, theta, into)
    return robot, content, theta, moved, distance


def document(robot: Robot, content: Content, theta: np.ndarray, folder: Path | None, *,
             urdf: bool = True) -> tuple[ET.Element, list[str], str]:
    """The URDF root element with the values ``theta``, the account of what it holds (of a
    URDF, or with ``urdf=False`` of what MuJoCo keeps of it: no transmissions) and the source's
    comments before its root element; ``folder`` is where it will be written (relative mesh
    names are made relative to it)."""
    tree = robot.tree
    if tree.urdf is not None:
        root, joints, taken, lines = edit(robot, tree.urdf, theta, folder)
    else:
        root, joints, taken, lines = generate(robot, theta)
    value = dict(zip(robot.parameters.names, theta.tolist(), strict=True))
    driven, with_friction = [], []
    for name, dyn in content.joints.items():
        damping, friction, armature = dyn.values(value)
        E.set_dynamics(joints[name], damping, friction)
        if dyn.damping or dyn.friction:
            with_friction.append(name)
        if dyn.ratio is not None or dyn.rotor_inertia:
            driven.append((name, E.transmission(name, dyn, armature)))
    for m in content.mimic:
        E.set_mimic(joints[m.joint], m.leader, m.multiplier, m.offset)
    if with_friction:
        lines.append(f"damping and friction of {', '.join(with_friction)}")
    without = [name for name in content.joints if name not in with_friction]
    if without and tree.urdf is not None:
        lines.append(f"no friction modelled on {', '.join(without)}: damping and friction 0")
    dropped = drop_transmissions(root, {n for n, _ in driven} | {k for k, _ in (
        tree.urdf.locked if tree.urdf is not None else ())})
    for _, el in driven:
        root.append(el)
    if driven and urdf:
        lines.append(f"transmissions of {', '.join(n for n, _ in driven)} (gear ratio; rotor "
                     "inertia where modelled)" + (f", replacing the source's {', '.join(dropped)}"
                                   if dropped else ""))
    if content.mimic:
        lines.append("mimic joints " + ", ".join(f"{m.joint} (follows {m.leader})"
                                                for m in content.mimic))
    lines += _bodies(robot, theta, root, taken)
    return root, lines, prolog(tree.urdf.text) if tree.urdf is not None else ""


def _bodies(robot: Robot, theta: np.ndarray, root: ET.Element, taken: set[str]) -> list[str]:
    """Append the robot's bodies as fixed links; the account's line."""
    att = robot.attachments
    links = {el.get("name") for el in root.findall("link")}
    names = []
    for i, body in enumerate(robot.bodies):
        block = body.values if body.known else theta[robot.parameters.link_block(body.name)]
        if body.parent in links:
            parent = body.parent
            pose = ET.Element("origin", xyz=E.nums(body.xyz), rpy=E.nums(body.rpy))
        else:  # a frame of the robot file: placed in the carrying joint's link
            parent = robot.tree.link_names[att.joints[i]]
            pose = E.origin(att.placements[i])
        E.fixed_link(root, body.name, parent, pose, block, taken)
        names.append(f"{body.name} ({'known' if body.known else 'identified'}, on {parent})")
    return [f"bodies as fixed links: {', '.join(names)}"] if names else []


def serialize(root: ET.Element, before: str = "") -> str:
    """The XML text of a URDF root element, after the comments ``before``."""
    ET.register_namespace("drake", E.DRAKE)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + (before + "\n" if before else "") \
        + ET.tostring(root, encoding="unicode") + "\n"


def not_written(robot: Robot, content: Content) -> tuple[str, ...]:
    """What a URDF cannot hold of ``robot``: the content's list and a non-standard gravity."""
    g = robot.tree.model.gravity.linear
    if np.allclose(g, STANDARD_GRAVITY, rtol=0, atol=1e-12):
        return content.not_written
    return (*content.not_written, f"gravity ({', '.join(f'{x:.6g}' for x in g)}) m/s²: URDF has "
            "none, and its users assume (0, 0, -9.81); set it in the simulator")


def urdf_text(robot: Robot | str | Path, params: object, *, project: bool = False,
              into: str | Path | None = None) -> str:
    """The URDF that :func:`write_urdf` writes, as text (relative mesh file names as in the
    source).

    Examples
    --------
    >>> text = urdf_text("panda", dynid.load_robot("panda").prior)
    >>> model = pinocchio.buildModelFromXML(text)
    """
    robot, content, theta, _, _ = prepare(robot, params, project, into)
    root, _, before = document(robot, content, theta, None)
    return serialize(root, before)


def write_urdf(robot: Robot | str | Path, params: object, path: str | Path, *,
               project: bool = False, into: str | Path | None = None) -> Export:
    """Write identified parameters into a URDF of the robot.

    Parameters
    ----------
    robot
        The robot identified (or its robot file, or an embedded robot's name).
    params
        An :class:`~dynid.identify.result.IdentificationResult` of this robot (or its result
        file), or standard parameters θ (p,) in the order of ``robot.parameters``.
    path
        The URDF file to write; its folder must exist. It is checked before anything is
        computed, and written whole or not at all.
    project
        Parameters that are not physical (a link whose pseudo-inertia is not positive
        semi-definite, negative friction or rotor inertia) raise
        :class:`~dynid.errors.DataError`; with ``project=True`` they are replaced by their
        projection onto the physically consistent set, and the export lists how far each
        moved.
    into
        Another URDF of the same robot to write the parameters into (the manufacturer's, with
        its meshes, for a robot identified from a DH table): its moving joints must be the
        model's by name and type, each link moving as the model's
        (:mod:`dynid.export._target`); the inertias are carried into its link frames.
        Default: the robot's own URDF, or one generated from its model. Refused
        (:class:`~dynid.errors.ModelError`) for a Stewart–Gough platform, whose file is
        dynid's cut tree.

    Returns
    -------
    Export
        The file, what it holds, what it could not hold (:attr:`Export.not_written`) and what
        the projection moved. See the module docstring for the format.

    Examples
    --------
    >>> robot = dynid.load_robot("panda")
    >>> est = dynid.PhysicallyConsistent().fit(data)
    >>> out = dynid.write_urdf(robot, est.result_, "panda_identified.urdf")
    >>> print(out.summary())          # what was written, and what URDF cannot hold
    >>> model = pinocchio.buildModelFromUrdf("panda_identified.urdf")
    """
    start = time.perf_counter()
    path = check_output(path, "URDF file")
    robot, content, theta, moved, distance = prepare(robot, params, project, into)
    root, lines, before = document(robot, content, theta, path.parent)
    text = serialize(root, before)
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Export(path, "urdf", theta, tuple(lines), not_written(robot, content), moved,
                  distance, time.perf_counter() - start)
