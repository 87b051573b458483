"""Robot files of Stewart–Gough platforms: the ``kinematics.stewart`` section.

Read by :func:`~dynid.models.robotfile.robot_from_mapping` when ``kinematics`` holds
``stewart`` (every key is checked; a wrong one raises :class:`~dynid.errors.ModelError` naming
its path)::

    name: hexapod
    output: motor_torque                # leg forces (N); or current, joint_torque
    gravity: [0, 0, -9.81]
    kinematics:
      stewart:
        symmetric: {base_radius: 0.6, platform_radius: 0.25, base_gap: 20*deg,
                    platform_gap: 20*deg, height: 1.0}
        # or base: [[x, y, z] × 6] and platform: [[x, y, z] × 6] and home: [x, y, z, r, p, y]
        stroke: [0.8, 1.45]             # shortest and longest leg (m)
    identical_legs: false               # true: the legs' links share one set of parameters
    links:                              # priors about the COM, in the link frames
      platform: {mass: 10.2, com: [0, 0, -0.05], inertia: [0.2, 0, 0, 0.2, 0, 0.3]}
      cross: {...}
      cylinder: {...}
      rod: {...}
    friction:                           # of the legs' joints (alpha, beta, length, spherical)
      alpha: {coulomb: 0.6}
      length: {viscous: 20, coulomb: 8}
      shared: [alpha]                   # one coefficient for the six legs
      smoothing: 0.0
    joints:                             # limits of the pose coordinates
      x: {limits: {position: [-0.15, 0.15], velocity: 0.5, acceleration: 10}}
    actuators:                          # the legs (position limits: the stroke)
      limits: {velocity: 2.0, acceleration: 40, effort: 1200}
      resolution: 1.0e-6                # leg sensors (m)
      torque_constant: 60               # N/A (N·m/A with a screw), optional
      screw: {lead: 0.01, ratio: 2, zero: 0.8}   # optional: rotary motors turning screws

With ``screw``, the actuator coordinates are motor angles ``2π ratio (l − zero) / lead`` (rad;
``lead`` in m per screw turn, ``ratio`` motor turns per screw turn) and the rate limits are on
the motor side (rad/s, rad/s², N·m); without it they are the leg lengths (m, m/s, m/s², N).
"""

from __future__ import annotations

import numpy as np

from .. import _schema as S
from ..dh import LinkInertia
from ..regressor import Regressor
from ..robot import Limits, Robot
from .closure import POSE_NAMES
from .friction import JOINTS, KINDS
from .geometry import StewartGeometry
from .platform import stewart_platform

__all__ = ["stewart_from_mapping"]

_TOP = ("name", "description", "gravity", "output", "kinematics", "identical_legs", "links",
        "friction", "joints", "actuators")
_STEWART = ("symmetric", "base", "platform", "home", "stroke")
_SYMMETRIC = ("base_radius", "platform_radius", "base_gap", "platform_gap", "height")
_LINKS = ("platform", "cross", "cylinder", "rod")
_ACTUATORS = ("limits", "resolution", "torque_constant", "screw")
_SCREW = ("lead", "ratio", "zero")
_RATES = ("velocity", "acceleration", "effort")


def _points(value: object, path: str) -> np.ndarray:
    if not isinstance(value, list) or len(value) != 6:
        raise S.fail(path, f"expected six points [x, y, z] (m), found {S.excerpt(value)}")
    return np.array([S.numbers(p, f"{path}[{i}]", 3) for i, p in enumerate(value)])


def _geometry(value: object) -> StewartGeometry:
    path = "kinematics.stewart"
    st = S.mapping(value, path, _STEWART, required=("stroke",))
    stroke = tuple(S.numbers(st["stroke"], f"{path}.stroke", 2, positive=True))
    try:
        if "symmetric" in st:
            if {"base", "platform", "home"} & set(st):
                raise S.fail(path, "give either 'symmetric' or the points 'base', 'platform' "
                                   "and 'home', not both")
            sym = S.mapping(st["symmetric"], f"{path}.symmetric", _SYMMETRIC,
                            required=_SYMMETRIC)
            v = {k: S.number(sym[k], f"{path}.symmetric.{k}", positive=True) for k in sym}
            return StewartGeometry.symmetric(v["base_radius"], v["platform_radius"],
                                             base_gap=v["base_gap"],
                                             platform_gap=v["platform_gap"],
                                             height=v["height"], stroke=stroke)
        missing = [k for k in ("base", "platform", "home") if k not in st]
        if missing:
            raise S.fail(path, f"missing {S.names(missing)}: give 'symmetric: {{...}}' or the "
                               "six base and platform points and a home pose")
        return StewartGeometry(_points(st["base"], f"{path}.base"),
                               _points(st["platform"], f"{path}.platform"), stroke,
                               np.array(S.numbers(st["home"], f"{path}.home", 6)))
    except S.ModelError as exc:
        if str(exc).startswith(path):
            raise
        raise S.fail(path, str(exc)) from None


def _link(value: object, path: str) -> LinkInertia:
    e = S.mapping(value, path, ("mass", "com", "inertia"), required=("mass",))
    try:
        return LinkInertia(S.number(e["mass"], f"{path}.mass", nonnegative=True),
                           tuple(S.numbers(e.get("com", [0, 0, 0]), f"{path}.com", 3)),
                           tuple(S.numbers(e.get("inertia", [0] * 6), f"{path}.inertia", 6)))
    except S.ModelError as exc:
        if str(exc).startswith(path):
            raise
        raise S.fail(path, str(exc)) from None


def _friction(value: object) -> dict:
    fr = S.mapping(value, "friction", (*JOINTS, "shared", "smoothing"))
    options, priors = {}, {}
    for joint in JOINTS:
        if joint in fr:
            kinds = S.mapping(fr[joint], f"friction.{joint}", KINDS)
            options[joint] = list(kinds)
            for k, x in kinds.items():
                priors[f"{joint}.{k}"] = S.number(x, f"friction.{joint}.{k}", nonnegative=True)
    shared = fr.get("shared", [])
    if not isinstance(shared, list):
        raise S.fail("friction.shared", f"expected a list of joints, found {S.excerpt(shared)}")
    for i, j in enumerate(shared):
        S.text(j, f"friction.shared[{i}]", list(options))
    smoothing = S.number(fr.get("smoothing", 0.0), "friction.smoothing", nonnegative=True)
    return {"friction": options, "shared_friction": shared, "friction_priors": priors,
            "smoothing": smoothing}


def _pose_limits(value: object) -> Limits:
    joints = S.mapping(value, "joints", POSE_NAMES)
    lim = Limits.unbounded(6)
    for j, name in enumerate(POSE_NAMES):
        entry = S.mapping(joints.get(name), f"joints.{name}", ("limits",))
        li = S.mapping(entry.get("limits"), f"joints.{name}.limits", ("position", *_RATES))
        if "position" in li:
            lo, hi = S.numbers(li["position"], f"joints.{name}.limits.position", 2)
            if not lo < hi:
                raise S.fail(f"joints.{name}.limits.position", f"expected [lower, upper] with "
                                                               f"lower < upper, found [{lo}, {hi}]")
            lim.lower[j], lim.upper[j] = lo, hi
        for k in _RATES:
            if k in li:
                getattr(lim, k)[j] = S.number(li[k], f"joints.{name}.limits.{k}", positive=True)
    return lim


def stewart_from_mapping(data: dict, default_name: str = "hexapod") -> Robot:
    """A Stewart platform robot from a parsed robot file (module docstring)."""
    top = S.mapping(data, "robot file", _TOP, required=("kinematics", "links"))
    kin = S.mapping(top["kinematics"], "kinematics", ("stewart",), required=("stewart",))
    geometry = _geometry(kin["stewart"])
    links = S.mapping(top["links"], "links", _LINKS, required=_LINKS)
    inertias = {k: _link(links[k], f"links.{k}") for k in _LINKS}
    act = S.mapping(top.get("actuators"), "actuators", _ACTUATORS)
    rates = S.mapping(act.get("limits"), "actuators.limits", _RATES)
    inf = np.full(6, np.inf)
    scale, zero = 1.0, 0.0
    if "screw" in act:
        sc = S.mapping(act["screw"], "actuators.screw", _SCREW, required=("lead",))
        lead = S.number(sc["lead"], "actuators.screw.lead", positive=True)
        ratio = S.number(sc.get("ratio", 1.0), "actuators.screw.ratio", nonzero=True)
        scale = 2 * np.pi * ratio / lead
        zero = S.number(sc.get("zero", 0.0), "actuators.screw.zero")
    ends = np.sort([scale * (s - zero) for s in geometry.stroke])
    actuator_limits = Limits(np.full(6, ends[0]), np.full(6, ends[1]),
                             *(np.full(6, S.number(rates[k], f"actuators.limits.{k}",
                                                   positive=True)) if k in rates else inf
                               for k in _RATES))
    kw = _friction(top.get("friction")) if "friction" in top else {}
    kw["scale"], kw["zero"] = scale, zero
    if "resolution" in act:
        kw["resolution"] = S.number(act["resolution"], "actuators.resolution", positive=True)
    if "torque_constant" in act:
        kw["torque_constants"] = [S.number(act["torque_constant"], "actuators.torque_constant",
                                           positive=True)] * 6
    output = S.text(top.get("output", "motor_torque"), "output",
                    ("joint_torque", "motor_torque", "current"))
    if output == "current" and "torque_constants" not in kw:
        raise S.fail("output", "current output needs actuators.torque_constant (N/A)")
    if "description" in top:
        S.text(top["description"], "description", max_length=100_000)
    identical = top.get("identical_legs", False)
    if not isinstance(identical, bool):
        raise S.fail("identical_legs", f"expected true or false, found {S.excerpt(identical)}; "
                                       "e.g. identical_legs: true")
    robot = stewart_platform(geometry, **inertias,
                             gravity=S.numbers(top.get("gravity", [0, 0, -9.81]), "gravity", 3),
                             name=S.text(top.get("name", default_name), "name"),
                             output=output, pose_limits=_pose_limits(top.get("joints")),
                             actuator_limits=actuator_limits, identical_legs=identical, **kw)
    _check_finite(robot)
    return robot


def _check_finite(robot: Robot) -> None:
    """Evaluate the model once, moving at the home pose: values far too large to compute
    with (``mass: 1e308``) are refused here, named by the parameter they make non-finite."""
    q = robot.transmission.geometry.home[None]
    rates = np.full((1, 6), 0.1)
    with np.errstate(all="ignore"):
        terms = Regressor(robot)(q, rates, rates) * robot.prior
        finite = np.all(np.isfinite(terms.sum(axis=2)))
    if finite:
        return
    size = np.where(np.isfinite(terms), np.abs(terms), np.inf).max(axis=(0, 1))
    p = robot.parameters[int(np.argmax(size))]
    raise S.ModelError(f"the model is not finite with the values of the robot file: parameter "
                       f"{p.name} (prior {p.prior:g} {p.unit}) takes it beyond the largest "
                       "number that can be computed with; some value of the file (a mass, an "
                       "inertia, a length, the screw or gravity) is far too large: check its "
                       "units")
