"""Robot files: a YAML description of the kinematics source, link priors and what drives each joint.

The format (every key is checked; an unknown, missing or malformed one raises
:class:`~dynid.errors.ModelError` naming its path)::

    name: panda
    description: sources and assumptions, free text
    gravity: [0, 0, -9.81]              # m/s², base frame (default shown)
    output: joint_torque                # or motor_torque, current
    kinematics:
      modified_dh:                      # or dh: (classic), or urdf: path/to/robot.urdf
        - {joint: joint1, d: 0, r: 0.333, alpha: 0, theta: 0}
        - {joint: joint2, d: 0, r: 0, alpha: -pi/2, theta: 0, type: revolute}
      tool: {name: flange, r: 0.107}    # optional fixed frame after the last joint (DH)
      locked: {joint4: 0.0}             # URDF only: joints blocked at a position
      massless: [virtual_link]          # links without parameters (zero inertia, no columns)
    links:                              # inertial priors about the COM, in the link frame
      link1: {mass: 4.97, com: [0.0039, 0.0021, -0.0476],
              inertia: [0.7034, -0.0001, 0.0068, 0.7066, 0.0192, 0.0091]}  # ixx ixy ixz iyy iyz izz
    defaults:                           # merged into every joint entry
      friction: {viscous: 0.1, coulomb: 0.5}
    joints:                             # when present, names every joint exactly once
      joint1:
        limits: {position: [-2.9, 2.9], velocity: 2.175, acceleration: 15, effort: 87}
        friction: {viscous: 0.1, coulomb: 0.5, offset: 0.0, smoothing: 0.01,
                   model: stribeck, velocity: 0.05, static: 0.8, exponent: 2}  # or sigmoid
        actuator: {name: motor1, ratio: 100, rotor_inertia: 1.0e-5, viscous: 1.0e-5,  # or
                   # armature: 0.1 (inertia reflected to the joint, r²·rotor_inertia)
                   coulomb: 1.0e-3, offset: 0.0, torque_constant: 0.1, smoothing: 0.0,
                   encoder: {increments_per_turn: 4096, zero: 0},
                   limits: {position: [-200000, 200000], velocity: 3.0e5, unit: increments}}

Joint limits are in rad (m), rad/s, rad/s² and N·m (N); actuator limits are on the motor side,
in rad, rad/s, rad/s² and N·m, or in encoder increments with ``unit: increments``.

The ``kinematics`` and ``links`` sections become the robot's tree in
:mod:`dynid.models._treesection`.

Stewart–Gough platforms have a section of their own, ``kinematics.stewart``
(:mod:`dynid.models.stewart.robotfile`).

Mechanisms (extra frames, ``closure``, ``transmission.coupling``, ``springs``, ``cables``,
``bodies`` fixed to links, and the lever actuator ``actuator.lever`` / ``actuator.screw``) are
described in :mod:`dynid.models._mechanisms`. With a closure, ``joints`` names every basis
coordinate, and may give ``friction`` to passive tree joints.

Numbers may be written as expressions of ``pi`` and ``deg`` (π/180): ``-pi/2``, ``30*deg``.
Numbers must be finite (position and rate limits may be ``.inf``), and the model is evaluated
once when the file is loaded, so values far too large to compute with are refused there.

A URDF is checked before it is read (:mod:`dynid.models._urdf`): physical masses and inertias,
finite origins, one tree. Its ``<mimic>`` joints follow their leaders through the closure. The
file itself is read with bounds (:mod:`dynid._files`): at most 1 MB of UTF-8 text, and at most
100 000 YAML nodes once anchors and aliases are expanded.
Friction and actuator quantities that are given get a parameter (with the value as prior); those
left out are not modelled. A joint's friction ``model`` is ``coulomb`` (default), ``sigmoid``
(``f_c tanh(v / velocity)``) or ``stribeck`` (static friction ``static``, Stribeck
``velocity`` and ``exponent``; :mod:`dynid.models.friction`); the velocity is the starting value
of its identification (default 0.05).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import yaml

from .._files import load_yaml, read_structured
from ..errors import ModelError
from . import _mechanisms as M
from . import _schema as S
from . import _treesection as K
from .base import random_states
from .friction import FRICTION_MODELS, convert
from .loops import LoopClosure
from .regressor import Regressor
from .robot import OUTPUTS, Limits, Robot
from .terms import armature, joint_friction, motor_dynamics
from .transmissions import Transmission
from .tree import Tree

__all__ = ["load_robot_file", "robot_from_mapping"]

_TOP = ("name", "description", "gravity", "output", "kinematics", "links", "joints", "defaults",
        "closure", "transmission", "springs", "cables", "bodies")
_KIN, _ROW = K.KINEMATICS, K.ROWS
_JOINT = ("limits", "friction", "actuator")
_LIMITS = ("position", "velocity", "acceleration", "effort", "unit")
_ENCODER = ("increments_per_turn", "zero")
_FRICTION = ("viscous", "coulomb", "offset", "smoothing", "model", "velocity", "static",
             "exponent")
_ACTUATOR = ("name", "ratio", "rotor_inertia", "armature", "viscous", "coulomb", "offset",
             "torque_constant", "smoothing", "encoder", "limits", "lever", "screw")
#: Largest robot file read (bytes); the embedded ones are a few kB.
MAX_BYTES = 2 ** 20


def load_robot_file(path: str | Path) -> Robot:
    """Read and validate a robot file."""
    path = Path(path)
    data = read_structured(path, "robot file", "YAML", load_yaml, yaml.YAMLError, ModelError,
                           max_bytes=MAX_BYTES)
    return robot_from_mapping(data, base_dir=path.parent, default_name=path.stem)


def robot_from_mapping(data: object, *, base_dir: str | Path = ".",
                       default_name: str = "robot") -> Robot:
    """Build a robot from a parsed robot file (see the module docstring for the format)."""
    if isinstance(data, dict) and isinstance(data.get("kinematics"), dict) \
            and "stewart" in data["kinematics"]:
        from .stewart.robotfile import stewart_from_mapping

        return stewart_from_mapping(data, default_name)
    top = S.mapping(data, "robot file", _TOP, required=("kinematics",))
    name = S.text(top.get("name", default_name), "name")
    if "description" in top:
        S.text(top["description"], "description", max_length=100_000)
    gravity = S.numbers(top.get("gravity", [0.0, 0.0, -9.81]), "gravity", 3)
    output = S.text(top.get("output", "joint_torque"), "output", OUTPUTS)
    links = K.links(top.get("links"))
    kin = S.mapping(top["kinematics"], "kinematics", _KIN)
    tree = K.tree(kin, Path(base_dir), links, gravity)
    M.add_frames(kin.get("frames"), tree)
    if "massless" in kin:
        tree = K.massless(kin["massless"], tree)
    closure = M.closure(top.get("closure"), tree)
    basis = closure.basis_names
    entries = _joint_entries(top, tree, basis)

    terms, drives, motors, constants, encoders = [], [], [], [], []
    joint_limits, motor_limits = [], []
    lower, upper, velocity, effort = tree.limits()
    same = closure.tree_joints(tree.joint_names)
    for j, joint in enumerate(basis):
        entry, path = entries[joint], f"joints.{joint}"
        t = tree.joint_names.index(joint) if joint in tree.joint_names else None
        defaults = (-np.inf, np.inf, np.inf, np.inf, np.inf)
        if same[j] is not None:  # a tree joint: its limits are the defaults
            defaults = (lower[t], upper[t], velocity[t], np.inf, effort[t])
        joint_limits.append(_limits(entry.get("limits"), f"{path}.limits", defaults))
        prismatic = t is not None and tree.joint_types[t] == "prismatic"
        _friction(entry, path, joint, j, "basis", prismatic, terms)
        act = S.mapping(entry.get("actuator"), f"{path}.actuator", _ACTUATOR)
        path += ".actuator"
        motor = S.text(act.get("name", f"motor{j + 1}"), f"{path}.name")
        ratio = S.number(act.get("ratio", 1.0), f"{path}.ratio", nonzero=True)
        drives.append(M.drive(act, path, joint_limits[-1][:2], ratio, joint))
        motors.append(motor)
        constants.append(S.number(act["torque_constant"], f"{path}.torque_constant",
                                  positive=True) if "torque_constant" in act else None)
        enc = S.mapping(act.get("encoder"), f"{path}.encoder", _ENCODER,
                        required=("increments_per_turn",) if "encoder" in act else ())
        encoders.append((S.number(enc["increments_per_turn"],
                                  f"{path}.encoder.increments_per_turn", positive=True),
                         S.number(enc.get("zero", 0.0), f"{path}.encoder.zero"))
                        if enc else None)
        motor_limits.append(_limits(act.get("limits"), f"{path}.limits",
                                    (-np.inf, np.inf, np.inf, np.inf, np.inf), encoders[-1]))
        values = {k: S.number(act[k], f"{path}.{k}", nonnegative=k != "offset")
                  for k in ("rotor_inertia", "armature", "viscous", "coulomb", "offset",
                            "smoothing") if k in act}
        if "armature" in values:
            if "rotor_inertia" in values:
                raise S.fail(f"{path}.armature", "give either rotor_inertia (motor side) or "
                                                 "armature (reflected to the joint), not both: "
                                                 "their columns are proportional")
            terms.append(armature(motor, j, values.pop("armature"), linear=prismatic))
        if set(values) - {"smoothing"}:
            terms.append(motor_dynamics(motor, j, inertia=values.get("rotor_inertia"),
                                        viscous=values.get("viscous"),
                                        coulomb=values.get("coulomb"),
                                        offset=values.get("offset"),
                                        smoothing=values.get("smoothing", 0.0)))
        screw = M.screw_term(act, path, motor, j, drives[-1], values.get("smoothing", 0.0))
        if screw is not None:
            terms.append(screw)
    for joint, entry in entries.items():
        if joint not in basis:
            t = tree.joint_names.index(joint)
            _friction(entry, f"joints.{joint}", joint, t, "tree",
                      tree.joint_types[t] == "prismatic", terms)
    if len(set(motors)) != len(motors):
        raise ModelError(f"joints.*.actuator.name: actuator names must be unique, found "
                         f"{S.names(motors)}")
    kw = {"torque_constants": _all_or_none(constants, basis, "torque_constant"),
          "coupling": M.coupling(top.get("transmission"), len(basis))}
    encoders = _all_or_none(encoders, basis, "encoder")
    if encoders is not None:
        kw["increments_per_turn"], kw["zero_increments"] = zip(*encoders, strict=True)
    try:
        transmission = Transmission(drives, motors, **kw)
    except ModelError as exc:
        raise S.fail("transmission", str(exc)) from None
    if kw["coupling"] is None:
        _check_motor_range(drives, joint_limits, motor_limits, basis)
    terms += M.springs_and_cables(top, basis, tree)
    robot = Robot(tree, name=name, closure=closure, transmission=transmission,
                  terms=tuple(terms), output=output,
                  limits=Limits(*map(np.array, zip(*joint_limits, strict=True))),
                  actuator_limits=Limits(*map(np.array, zip(*motor_limits, strict=True))),
                  bodies=M.bodies(top.get("bodies")))
    _check_finite(robot)
    if closure.cuts:  # a few positions spread over the limits
        closure.check(tree, _states(robot, 8, 0)[0])
    return robot


def _states(robot: Robot, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random states within the limits for the checks of a loaded robot; loops solved from
    their reference assembly are sampled within a turn of it (within reach of the solver)."""
    q, v, a = random_states(robot, n, np.random.default_rng(seed), margin=0.05)
    if isinstance(robot.closure, LoopClosure):
        ref = robot.closure.basis_reference
        q = np.clip(q, ref - np.pi, ref + np.pi)
    return q, v, a


def _check_finite(robot: Robot) -> None:
    """Evaluate the model at two states within the limits: numbers too large to compute with
    (``mass: 1e308``) are refused here, named by the parameter they make non-finite."""
    q, v, a = _states(robot, 2, 1)
    wide = ~np.all(np.isfinite(q), axis=0)
    if np.any(wide):
        k = int(np.argmax(wide))
        raise S.fail(f"joints.{robot.closure.basis_names[k]}.limits.position",
                     f"the range [{robot.limits.lower[k]:g}, {robot.limits.upper[k]:g}] is too "
                     "wide to compute with; give the joint's real range, or none")
    with np.errstate(all="ignore"):
        Y, y_known = Regressor(robot).affine(q, v, a)
        terms = Y * robot.prior
        y = terms.sum(axis=2)
    if not np.all(np.isfinite(y_known)):
        known = [b.name for b in robot.bodies if b.known]
        raise S.fail("bodies", f"the known bodies {S.names(known)} give a model that is not "
                               "finite; some value (a mass, centre of mass or pose, a length, "
                               "ratio or gravity) is far too large: check its units")
    if np.all(np.isfinite(y)):
        return
    size = np.where(np.isfinite(terms), np.abs(terms), np.inf).max(axis=(0, 1))
    p = robot.parameters[int(np.argmax(size))]
    raise ModelError(f"the model is not finite with the values of the robot file: parameter "
                     f"{p.name} (prior {p.prior:g} {p.unit}) takes it beyond the largest "
                     "number that can be computed with; some value of the file (of "
                     f"{p.owner}, or a length, ratio or gravity) is far too large: check its "
                     "units")


def _check_motor_range(drives: list, joint_limits: list, motor_limits: list,
                       basis: tuple[str, ...]) -> None:
    """The joint's position range, seen on the motor side, overlaps the motor's: else no
    position satisfies both (a wrong zero, ratio sign or unit)."""
    for drive, joint, lim, motor in zip(drives, basis, joint_limits, motor_limits, strict=True):
        ends = np.array(lim[:2])
        if not (np.all(np.isfinite(ends)) and np.all(np.isfinite(motor[:2]))):
            continue
        with np.errstate(all="ignore"):
            seen = np.sort(drive.evaluate(ends)[0])
        if seen[1] < motor[0] or seen[0] > motor[1]:
            raise S.fail(f"joints.{joint}.actuator.limits.position",
                         f"the motor range [{motor[0]:.6g}, {motor[1]:.6g}] rad does not "
                         f"overlap the motor positions [{seen[0]:.6g}, {seen[1]:.6g}] rad of "
                         f"the joint's limits [{ends[0]:.4g}, {ends[1]:.4g}]; no position "
                         "satisfies both. Check the motor's zero (encoder.zero, "
                         "lever.length_at_zero), the ratio and its sign, and the units")


def _friction(entry: dict, path: str, joint: str, row: int, space: str, prismatic: bool,
              terms: list) -> None:
    if entry.get("friction") is None:
        return
    fr = S.mapping(entry["friction"], f"{path}.friction", _FRICTION)
    model = fr.get("model", "coulomb")
    if model not in FRICTION_MODELS:
        raise S.fail(f"{path}.friction.model", f"expected one of {', '.join(FRICTION_MODELS)}, "
                     f"found {model!r}; e.g. model: stribeck")
    values = {k: S.number(fr[k], f"{path}.friction.{k}", nonnegative=k != "offset",
                          positive=k in ("velocity", "exponent"))
              for k in fr if k != "model"}
    shape = {"velocity", "static", "exponent"} & set(values)
    allowed = {"coulomb": set(), "sigmoid": {"velocity"}, "stribeck": shape}[model]
    if shape - allowed:
        key = sorted(shape - allowed)[0]
        raise S.fail(f"{path}.friction.{key}", f"a {model} friction has no {key}; "
                     f"give model: stribeck (velocity, static, exponent) or sigmoid (velocity)")
    if model != "coulomb" and "coulomb" not in values:
        raise S.fail(f"{path}.friction", f"a {model} friction needs its coulomb value (the "
                     f"prior of {joint}.fc), e.g. {{model: {model}, coulomb: 0.5, "
                     "velocity: 0.05}")
    if not set(values) - {"smoothing"} - shape:  # no friction quantity given: none modelled
        return
    term = joint_friction(joint, row, space=space, linear=prismatic,
                          viscous=values.get("viscous"), coulomb=values.get("coulomb"),
                          offset=values.get("offset"), smoothing=values.get("smoothing", 0.0))
    if model == "coulomb":
        terms.append(term)
    else:
        terms.extend(convert(term, model, values.get("velocity", 0.05),
                             values.get("exponent", 2.0), values.get("static")))


def _all_or_none(values: list, names: tuple[str, ...], key: str) -> list | None:
    given = [v is not None for v in values]
    if any(given) and not all(given):
        missing = [j for j, g in zip(names, given, strict=True) if not g]
        raise ModelError(f"joints.{missing[0]}.actuator.{key}: given for some actuators but "
                         f"not for {S.names(missing)}; give all or none")
    return values if all(given) else None


def _limits(value: object, path: str, defaults: tuple[float, ...],
            encoder: tuple[float, float] | None = None) -> tuple[float, ...]:
    """(lower, upper, velocity, acceleration, effort) of one coordinate, in SI units.

    Actuator limits may be given in encoder increments (``unit: increments``)."""
    lim = S.mapping(value, path, _LIMITS)
    lower, upper, velocity, acceleration, effort = defaults
    scale, zero = 1.0, 0.0
    if S.text(lim.get("unit", "si"), f"{path}.unit", ("si", "increments")) == "increments":
        if ".actuator." not in f"{path}.":
            raise S.fail(f"{path}.unit", "joint limits are in rad (m for a prismatic joint); "
                                         "encoder increments belong to the motor side, under "
                                         "actuator.limits")
        if encoder is None:
            raise S.fail(f"{path}.unit", "limits in increments need the actuator's encoder "
                                         "(encoder: {increments_per_turn: ...})")
        scale, zero = 2 * np.pi / encoder[0], encoder[1]
    if "position" in lim:
        lo, hi = S.numbers(lim["position"], f"{path}.position", 2, finite=False)
        if not lo < hi:
            raise S.fail(f"{path}.position", f"expected [lower, upper] with lower < upper, "
                                             f"found [{lo}, {hi}]")
        lower, upper = (lo - zero) * scale, (hi - zero) * scale
        if (np.isfinite(lo) and not np.isfinite(lower)) or (np.isfinite(hi) and not np.isfinite(
                upper)) or (np.isfinite(lower) and np.isfinite(upper)
                            and not np.isfinite(upper - lower)):
            raise S.fail(f"{path}.position", f"[{lo:g}, {hi:g}] is too large to compute with; "
                                             "give the real range, or .inf for none")
    rates = {k: S.number(lim[k], f"{path}.{k}", positive=True, finite=False)
             for k in ("velocity", "acceleration", "effort") if k in lim}
    velocity = rates.get("velocity", velocity / scale) * scale
    acceleration = rates.get("acceleration", acceleration / scale) * scale
    return lower, upper, velocity, acceleration, rates.get("effort", effort)


def _joint_entries(top: Mapping, tree: Tree, basis: tuple[str, ...]) -> dict[str, dict]:
    """Entries per basis coordinate (all of them), and per passive tree joint (friction only,
    only those given)."""
    defaults = S.mapping(top.get("defaults"), "defaults", _JOINT)
    joints = S.mapping(top.get("joints"), "joints", S.ANY)
    passive = [j for j in tree.joint_names if j not in basis]
    if "joints" in top:
        names = list(basis)
        extra = [j for j in joints if j not in names and j not in passive]
        if extra:
            raise S.fail(f"joints.{S.key(extra[0])}", f"no such joint in the kinematics; "
                                                      f"joints are {S.names(names + passive)}")
        missing = [j for j in names if j not in joints]
        if missing:
            raise S.fail("joints", f"joints {S.names(missing)} are missing; name every joint (an "
                                   "empty entry {} takes the defaults)")
    out = {}
    for joint in [*basis, *(j for j in passive if j in joints)]:
        entry = S.mapping(joints.get(joint), f"joints.{joint}", _JOINT)
        if joint in passive:
            if set(entry) - {"friction"}:
                raise S.fail(f"joints.{joint}.{sorted(set(entry) - {'friction'})[0]}",
                             "a passive tree joint (moved by the closure) takes friction only")
            out[joint] = entry
            continue
        merged = dict(defaults)
        for key, value in entry.items():
            merged[key] = ({**S.mapping(defaults[key], f"defaults.{key}", S.ANY),
                            **S.mapping(value, f"joints.{joint}.{key}", S.ANY)}
                           if key in defaults else value)
        out[joint] = merged
    return out
