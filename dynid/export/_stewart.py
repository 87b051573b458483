"""Stewart–Gough platforms in the exports: the cut tree in URDF, the closed legs in MJCF.

dynid's model of a Stewart–Gough platform (:mod:`dynid.models.stewart`) is a tree: a chain of
six one-degree-of-freedom joints ``x, y, z, roll, pitch, yaw`` whose coordinates are the
platform pose (its five links ``x_slide`` … ``pitch_link`` virtual and massless), and six legs,
each a universal joint (``leg{i}_alpha``, ``leg{i}_beta``) and the prismatic drive
``leg{i}_length``, cut at the spherical joint where the rod meets the platform. The cut leaves
two frames, ``platform_s{i}`` on the platform and ``leg{i}_top`` on the rod, which the URDF
holds as massless links fixed to theirs.

* **URDF** holds open trees only: the file is the cut tree, with the legs' strokes as the
  ``leg{i}_length`` limits; nothing in it holds the legs to the platform
  (:func:`cut_sentence`, in :attr:`~dynid.export.content.Export.not_written`).
* **MJCF** closes the loops: a site at each cut frame and one ``<connect site1 site2>``
  equality per leg (:func:`close_legs`), so that MuJoCo simulates the closed mechanism. The
  pose chain stays, rather than a free joint (whose quaternion would not be the roll–pitch–yaw
  pose), so MuJoCo's coordinates are dynid's (``qpos`` of ``x`` … ``yaw`` is the pose); its
  virtual links get the negligible masses MuJoCo needs
  (:data:`~dynid.export.mjcf.TINY_MASS` kg and :data:`~dynid.export.mjcf.TINY_INERTIA`
  kg·m² each: their weight and inertia, at most ``5 TINY_MASS (|a| + g)`` N on the pose,
  change the embedded hexapod's leg forces by 2e-8 N of 80 N). A keyframe ``home``
  holds the assembled home pose (the model's ``qpos0``, all zeros, has the legs apart). MuJoCo's
  equality constraints are soft; the connects are made as stiff as it allows (:data:`SOLIMP`,
  :data:`SOLREF`; MuJoCo lengthens the 5 ms to two time steps when a step is longer than
  2.5 ms): standing at home under the forces that hold it, the embedded hexapod's spherical
  joints open by about 5e-8 m (0.5 mm with MuJoCo's defaults). Each leg gets a ``motor``
  actuator named as dynid's actuator, whose ``ctrl`` is the drive's force (its gear the
  transmission's units per metre, so a screw drive's ``ctrl`` is its motor torque).

Exporting into another URDF (``into=``) is refused for these robots: the loops' cut frames
and the pose chain are dynid's own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..models import Robot
from ..models.stewart import POSE_NAMES, StewartClosure

__all__ = ["SOLIMP", "SOLREF", "close_legs", "cut_sentence", "is_stewart", "leg_limits",
           "refuse_into"]

#: MuJoCo's impedance and reference (time constant 5 ms, critical damping) of the spherical
#: joints: as stiff as MuJoCo allows, where its defaults (0.9–0.95, 20 ms) let the joints of
#: the embedded hexapod open by 0.5 mm under its own weight.
SOLIMP, SOLREF = (0.9999, 0.9999, 0.001, 0.5, 2.0), (0.005, 1.0)


def is_stewart(robot: Robot) -> bool:
    """Whether ``robot`` is a Stewart–Gough platform (its closure is a StewartClosure)."""
    return isinstance(robot.closure, StewartClosure)


def _legs(robot: Robot) -> list[tuple[str, str, str]]:
    """Per leg: the spherical joint's name and its two frames (platform side, rod side)."""
    return [(cut.name, *cut.frames) for cut in robot.closure.cuts]


def cut_sentence(robot: Robot) -> str:
    """What URDF cannot hold of a Stewart platform's closed legs (one sentence)."""
    legs = _legs(robot)
    frames = ", ".join(f"{name} ({a}–{b})" for name, a, b in legs)
    passive = ", ".join(robot.tree.joint_names[6:])
    return (f"the legs' closed loops, cut at the spherical joints {frames}: the formats' trees "
            "are open, so nothing holds the legs to the platform (write_mjcf closes them with "
            f"MuJoCo connect equalities) and the leg joints {passive} are free joints; the pose "
            f"joints {', '.join(POSE_NAMES)} are a virtual chain whose links "
            f"{', '.join(robot.tree.link_names[:5])} are massless (URDF allows it; a simulator "
            "that needs masses on moving bodies, as MuJoCo does, must give them)")


def leg_limits(robot: Robot, lower: np.ndarray, upper: np.ndarray, velocity: np.ndarray,
               effort: np.ndarray) -> None:
    """Set the ``leg{i}_length`` limits (in place, tree joint order): the stroke (m), and
    the actuators' rate and force limits when the actuator coordinate is the length itself
    (scale 1, zero 0)."""
    trans = robot.transmission
    lo, hi = trans.geometry.stroke
    lengths = np.arange(8, 24, 3)
    lower[lengths], upper[lengths] = lo, hi
    if trans.scale == 1.0 and trans.zero == 0.0:
        velocity[lengths] = robot.actuator_limits.velocity
        effort[lengths] = robot.actuator_limits.effort


def refuse_into(robot: Robot, into: str | Path) -> None:
    """Refuse to export a Stewart platform into another URDF."""
    raise ModelError(
        f"into={str(into)!r}: robot {robot.name!r} is a Stewart–Gough platform, whose export "
        "is dynid's cut tree (the pose chain x … yaw and the legs cut at the spherical "
        "joints, whose frames the MJCF's loop constraints join); another URDF cannot carry "
        "them. Export without into=, e.g. dynid.write_mjcf(robot, result, 'hexapod.xml'), and "
        "add meshes to the written file")


def close_legs(spec, robot: Robot) -> list[str]:
    """Close the legs of a Stewart platform's MuJoCo spec (after every moving body has a mass):
    a site at each cut frame, a ``connect`` equality per leg, a motor per leg and the keyframe
    ``home``; the lines for the export's account."""
    import mujoco

    names = []
    for name, platform_side, rod_side in _legs(robot):
        for frame in (platform_side, rod_side):
            spec.body(frame).add_site(name=frame)
        spec.add_equality(name=name, type=mujoco.mjtEq.mjEQ_CONNECT,
                          objtype=mujoco.mjtObj.mjOBJ_SITE, name1=platform_side, name2=rod_side,
                          solimp=SOLIMP, solref=SOLREF)
        names.append(name)
    drives = _drives(spec, robot)
    model = spec.compile()
    home = robot.closure.geometry.home
    q_t = robot.closure.positions(home[None])[0]
    qpos = model.qpos0.copy()
    for value, joint in zip(q_t, robot.tree.joint_names, strict=True):
        qpos[model.joint(joint).qposadr[0]] = value
    spec.add_key(name="home", qpos=qpos)
    return [f"the legs' loops closed by connect equalities {', '.join(names)} (sites at "
            "the cut frames: each rod's top held at its platform point), as stiff as MuJoCo "
            f"allows (solimp {SOLIMP[0]:g}, solref {SOLREF[0]:g} s)",
            f"keyframe 'home': the assembled home pose ({', '.join(f'{x:.6g}' for x in home)}), "
            "loops closed (qpos0 has the legs apart)", drives]


def _drives(spec, robot: Robot) -> str:
    """A motor on each leg's prismatic joint, its control the drive's force or torque (gear
    ``c``, the actuator units per metre: the leg force is ``c τ_m``), limited where the drive
    is; the line for the export's account."""
    import mujoco

    trans = robot.transmission
    effort = robot.actuator_limits.effort
    for i, name in enumerate(trans.names):
        act = spec.add_actuator(name=name, target=f"leg{i + 1}_length",
                                trntype=mujoco.mjtTrn.mjTRN_JOINT,
                                gear=[trans.scale, 0.0, 0.0, 0.0, 0.0, 0.0])
        if np.isfinite(effort[i]):
            act.ctrlrange = [-effort[i], effort[i]]
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        else:
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
    unit = "N" if trans.scale == 1.0 else "N·m"
    return (f"motors {', '.join(trans.names)} on the legs' prismatic joints (gear "
            f"{trans.scale:g}): ctrl is the drive's force in {unit}, as dynid's actuator "
            "output (not a current)")
