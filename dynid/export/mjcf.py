"""MJCF export of identified parameters, through MuJoCo's own compiler.

:func:`write_mjcf` builds the URDF of :func:`~dynid.export.urdf.write_urdf` and hands it to
MuJoCo (``mujoco.MjSpec.from_string``), which converts it the way MuJoCo users expect: links to
bodies (fixed links stay bodies welded to their parent, so every link keeps its name), joints to
hinges and slides, ``<mimic>`` to joint equalities. Then, on the spec:

* ``inertiafromgeom`` is off: the identified inertias are the bodies' inertias, and geoms
  (visual and collision shapes) add no mass;
* each joint gets its ``armature``, the drive's inertia reflected to the joint (``Ia + r² Jm``),
  its ``damping`` (viscous friction ``fv``) and ``frictionloss`` (Coulomb friction ``fc``), and a
  range and force range only where the robot has limits;
* gravity is the robot's.

MuJoCo solves ``frictionloss`` as a constraint (soft, regularized, like contacts), not as the
exact ``fc sgn(v)``; inverse dynamics without it: ``model.opt.disableflags |=
mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS``. A moving link without mass (between two joints)
gets a negligible one (:data:`TINY_MASS`), and a moving point mass a negligible inertia, which
MuJoCo needs. Meshes MuJoCo cannot find
(``package://`` names, missing files, formats other than STL, OBJ and MSH) are dropped with
their visual or collision element, and the export names them. The text is written with full
precision (:mod:`dynid.export._exact`). A Stewart–Gough platform's legs are closed on the
platform by ``connect`` equalities, with a keyframe ``home`` where the loops are assembled
(:mod:`dynid.export._stewart`).
"""

from __future__ import annotations

import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .._arguments import check_output, replacing
from ..errors import ModelError
from ..models import Robot
from . import _elements as E
from ._exact import exact, principal_axes
from ._generate import joint_limits
from ._stewart import close_legs, is_stewart
from .content import Export
from .urdf import document, prepare, serialize

__all__ = ["write_mjcf"]

#: Mass (kg) and principal moments (kg·m²) given to a massless moving link.
TINY_MASS, TINY_INERTIA = 1e-9, 1e-12
_MESHES = (".stl", ".obj", ".msh")


def _mesh_file(name: str, source: Path | None) -> tuple[Path | None, str]:
    """The mesh file a URDF names, or ``None`` and why MuJoCo cannot read it."""
    if name.startswith("file://"):
        name = name[len("file://"):]
    elif "://" in name:
        return None, "a ROS package path"
    path = Path(name)
    if not path.is_absolute():
        if source is None:
            return None, "relative to no known folder"
        path = source.parent / path
    if path.suffix.lower() not in _MESHES:
        return None, f"MuJoCo reads {', '.join(_MESHES)} meshes"
    if not path.is_file():
        return None, "no such file"
    return path.resolve(), ""


def _meshes(root: ET.Element, source: Path | None) -> list[str]:
    """Make the mesh names absolute, and drop the visuals and collisions whose mesh MuJoCo
    cannot read; the dropped ones (link: file, why)."""
    dropped = []
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                mesh = el.find("geometry/mesh")
                if mesh is None:
                    continue
                path, why = _mesh_file(mesh.get("filename") or "", source)
                if path is None:
                    link.remove(el)
                    dropped.append(f"{link.get('name')} {tag} {mesh.get('filename')!r} ({why})")
                else:
                    mesh.set("filename", str(path))
    return dropped


def _repeated_origins(root: ET.Element) -> list[str]:
    """Keep the first ``<origin>`` of an element that has several (as urdfdom reads them;
    MuJoCo refuses them); the elements' names."""
    out = []
    for el in root.iter():
        origins = el.findall("origin")
        for extra in origins[1:]:
            el.remove(extra)
        if len(origins) > 1:
            out.append(el.get("name") or el.tag)
    return out


def _spec(text: str, robot: Robot):
    import mujoco

    try:
        return mujoco.MjSpec.from_string(text)
    except ValueError as exc:
        raise ModelError(f"robot {robot.name!r}: MuJoCo cannot read its URDF: {exc}") from None


def _joints(spec, robot: Robot, content, theta: np.ndarray) -> None:
    """Set each joint's armature, damping, friction loss, range and force range."""
    import mujoco

    value = dict(zip(robot.parameters.names, theta.tolist(), strict=True))
    lower, upper, _, effort = joint_limits(robot)
    for t, name in enumerate(robot.tree.joint_names):
        joint = spec.joint(name)
        damping, friction, armature = content.joints[name].values(value)
        joint.armature, joint.frictionloss = armature, friction
        joint.damping = np.r_[damping, np.zeros(len(joint.damping) - 1)]
        if np.isfinite(lower[t]) and np.isfinite(upper[t]):
            joint.range, joint.limited = [lower[t], upper[t]], mujoco.mjtLimited.mjLIMITED_TRUE
        else:
            joint.range, joint.limited = [0.0, 0.0], mujoco.mjtLimited.mjLIMITED_FALSE
        if np.isfinite(effort[t]):
            joint.actfrcrange = [-effort[t], effort[t]]
            joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_TRUE
        else:
            joint.actfrcrange, joint.actfrclimited = [0.0, 0.0], mujoco.mjtLimited.mjLIMITED_FALSE


def _light(spec, robot: Robot) -> list[str]:
    """Give the moving links without mass or without inertia the tiny ones MuJoCo needs; their
    names. (After :func:`principal_axes`: inertias are principal moments.)"""
    light = []
    for name in robot.tree.joint_names:
        body = spec.joint(name).parent
        if body.mass == 0:
            body.mass, body.inertia = TINY_MASS, [TINY_INERTIA] * 3
            body.ipos, body.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
            body.fullinertia = [np.nan, 0, 0, 0, 0, 0]
            body.explicitinertial = True
        elif np.min(body.inertia) < TINY_INERTIA:  # a point mass: the moments stay balanced
            body.inertia = np.asarray(body.inertia) + TINY_INERTIA
        else:
            continue
        light.append(body.name)
    return light


def write_mjcf(robot: Robot | str | Path, params: object, path: str | Path, *,
               project: bool = False, into: str | Path | None = None) -> Export:
    """Write identified parameters into a MuJoCo model (MJCF) of the robot.

    Parameters
    ----------
    robot, params, project, into
        As for :func:`~dynid.export.urdf.write_urdf`: the robot, an identification result
        or standard parameters θ (p,), whether to project non-physical ones, and another URDF
        of the robot to build the model from.
    path
        The MJCF file to write; checked before anything is computed, written whole or not at
        all. Mesh files are named relative to its folder.

    Returns
    -------
    Export
        The file, what it holds, what it could not hold, and what the projection moved.

    Examples
    --------
    >>> out = dynid.write_mjcf("panda", est.result_, "panda.xml")
    >>> model = mujoco.MjModel.from_xml_path("panda.xml")
    >>> model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS  # exact inverse

    A Stewart–Gough platform's legs are held to the platform by connect equalities; start a
    simulation from the keyframe where they are assembled:

    >>> out = dynid.write_mjcf("hexapod", est.result_, "hexapod.xml")
    >>> model = mujoco.MjModel.from_xml_path("hexapod.xml")
    >>> data = mujoco.MjData(model)
    >>> mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    """
    start = time.perf_counter()
    path = check_output(path, "MJCF file")
    robot, content, theta, moved, distance = prepare(robot, params, project, into)
    root, lines, _ = document(robot, content, theta, None, urdf=False)
    dropped = _meshes(root, robot.tree.urdf.path if robot.tree.urdf is not None else None)
    repeated = _repeated_origins(root)
    E.drop(root, "mujoco")  # a source's own MuJoCo settings: these replace them
    ET.SubElement(ET.SubElement(root, "mujoco"), "compiler", inertiafromgeom="false",
                  fusestatic="false", discardvisual="false", strippath="false",
                  balanceinertia="false", boundmass="0", boundinertia="0")
    spec = _spec(serialize(root), robot)
    _joints(spec, robot, content, theta)
    principal_axes(spec)
    light = _light(spec, robot)
    stewart = is_stewart(robot)
    closed = close_legs(spec, robot) if stewart else []
    spec.option.gravity = robot.tree.model.gravity.linear
    spec.modelname = robot.name
    try:
        text = spec.to_xml()
    except ValueError as exc:
        raise ModelError(f"robot {robot.name!r}: MuJoCo cannot compile its model: {exc}"
                         ) from None
    text = _relative_meshes(exact(text, spec), path.parent)
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
        _check(tmp)
    lines.append("MuJoCo joints: armature (Ia + r² Jm), damping (fv), frictionloss (fc: a "
                 "constraint, disable mjDSBL_FRICTIONLOSS for exact inverse dynamics), gravity "
                 f"({', '.join(f'{x:.6g}' for x in robot.tree.model.gravity.linear)}) m/s²")
    if repeated:
        lines.append(f"repeated <origin> of {', '.join(repeated)} in the source: the first "
                     "kept, as urdfdom reads it")
    if light:
        lines.append(f"moving links without mass or inertia given {TINY_MASS:g} kg or "
                     f"{TINY_INERTIA:g} kg·m² (MuJoCo needs them): {', '.join(light)}")
    lines += closed
    not_written = content.not_written
    if stewart:  # the loops are closed here
        not_written = tuple(line for line in not_written if line != content.loops)
    if dropped:
        not_written = (*not_written, "meshes MuJoCo cannot read, dropped with their visual or "
                       f"collision element: {'; '.join(dropped)}")
    return Export(path, "mjcf", theta, tuple(lines), not_written, moved, distance,
                  time.perf_counter() - start)


def _relative_meshes(text: str, folder: Path) -> str:
    """Mesh files named relative to the MJCF's folder."""
    root = ET.fromstring(text)
    for mesh in root.iter("mesh"):
        if mesh.get("file"):
            mesh.set("file", os.path.relpath(mesh.get("file"), folder.resolve()))
    return ET.tostring(root, encoding="unicode") + "\n"


def _check(path: Path) -> None:
    """The written file loads in MuJoCo."""
    import mujoco

    mujoco.MjModel.from_xml_path(str(path))
