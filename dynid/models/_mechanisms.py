"""Robot-file sections for mechanisms: extra frames, closures, lever drives, coupling, springs,
attached bodies.

Read by :mod:`dynid.models.robotfile` (see its docstring for the whole format)::

    kinematics:
      frames:                           # fixed frames, e.g. the two sides of a cut joint
        - {name: tip_a, parent: link3, xyz: [0.28, 0, 0], rpy: [0, 0, 0]}
    closure:
      basis: [q1, q2, q3]               # basis coordinates (default: tree joints not listed
                                        # under linear or passive, in tree order)
      linear:                           # tree joint = Σ coefficient·basis + offset
        link3b_joint: {q2: -1, q3: 1, offset: pi/2}
      passive: [j2, j3]                 # or: tree joints solved from the cuts (nonlinear)
      reference: {j2: 0.4, j3: 1.2}     # nonlinear only: an assembled configuration
      cuts:                             # frame pairs the mechanism keeps together
        - {frames: [tip_a, tip_b], type: revolute}    # or point, weld
        # cuts: []  says the rows close no loop (gears, belts, a change of coordinates)
    transmission:
      coupling: [[1, 0], [0.7, 1]]      # q_m = C (r ⊙ q), rows and columns in basis order
    springs:
      - {name: roll, joint: q4, type: torsional, stiffness: 0.02, rest: 0}
      - {name: balance, joint: q5, type: linear, a: 0.0075, b: 0.1035, gamma: -pi - 23*deg,
         rest_length: 0.0613, stiffness: 100}
    cables:
      - {name: q4_cable, joint: q4, coefficients: [0.01, -0.002, 0.0003]}
    bodies:                             # rigid bodies fixed to a link, without a joint
      - {name: counterweight, parent: link2, xyz: [-0.15, 0, 0], rpy: [0, 0, 0],
         mass: 3.0, com: [0, 0, 0.01], inertia: [0.002, 0, 0, 0.002, 0, 0.003]}
      - {name: payload, parent: link6, xyz: [0, 0, 0.1], mass: 0.5, known: true}

Each cut closes a loop of the tree (the joints between its two frames), which must hold a
dependent joint (a row, or a passive joint); the rows are checked against the cuts at positions
spread over the limits when the file is loaded. ``linear`` rows need ``cuts``: the cut joints of
the loops they close, or ``cuts: []`` to say that they close none, so that a row of a loop is
never left unchecked by omission. A URDF's ``<mimic>`` joints are rows of their own (joint =
multiplier · leader + offset), added to the ``linear`` rows, or making the whole closure when
there is no ``closure`` section; they are not basis coordinates and cannot be given rows here.

A body's ``xyz`` (m) and ``rpy`` (rad) place its frame in its parent link's frame (the link's
DH frame, or the URDF link's frame; default: the link frame itself); ``mass`` (kg, required),
``com`` (m) and ``inertia`` (``[ixx, ixy, ixz, iyy, iyz, izz]``, kg·m², about the centre of
mass) are in the body's frame and checked like a link's. An identified body (the default) gets
ten link parameters of its own, with these values as priors; a known body (``known: true``)
adds its fixed generalized force to the prediction (:mod:`dynid.models.bodies`).

and, per joint, ``actuator.lever`` (a :class:`~dynid.models.levers.LeverScrew`) and
``actuator.screw`` (its translating mass and friction, :func:`~dynid.models.levers.screw_dynamics`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from . import _schema as S
from .bodies import Body
from .closures import Closure, LinearClosure
from .cuts import CUT_KINDS, Cut, add_frame, loop_joints
from .dh import LinkInertia
from .levers import LeverScrew, screw_dynamics
from .loops import LoopClosure
from .springs import CableTorque, LinearSpring, TorsionalSpring
from .terms import Term
from .transmissions import Drive, Gear
from .tree import Tree

_FRAME = ("name", "parent", "xyz", "rpy")
_CLOSURE = ("basis", "linear", "passive", "reference", "cuts")
_CUT = ("frames", "type", "name")
_LEVER = ("l1", "l2", "beta", "pitch", "length_at_zero")
_SCREW = ("mass", "viscous", "coulomb")
_SPRING = ("name", "joint", "type", "stiffness", "rest", "a", "b", "gamma", "rest_length")
_CABLE = ("name", "joint", "coefficients")
_BODY = ("name", "parent", "xyz", "rpy", "mass", "com", "inertia", "known")


def add_frames(value: object, tree: Tree) -> None:
    """Add the ``kinematics.frames`` entries to the tree's model."""
    if value is None:
        return
    if not isinstance(value, list):
        raise S.fail("kinematics.frames", "expected a list of {name, parent, xyz, rpy}")
    for i, entry in enumerate(value):
        path = f"kinematics.frames[{i}]"
        e = S.mapping(entry, path, _FRAME, required=("name", "parent"))
        xyz = S.numbers(e.get("xyz", [0, 0, 0]), f"{path}.xyz", 3)
        rpy = S.numbers(e.get("rpy", [0, 0, 0]), f"{path}.rpy", 3)
        placement = pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz))
        try:
            add_frame(tree.model, S.text(e["name"], f"{path}.name"),
                      S.text(e["parent"], f"{path}.parent"), placement)
        except S.ModelError as exc:
            raise S.fail(path, str(exc)) from None


def _cuts(value: object) -> list[Cut]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise S.fail("closure.cuts", "expected a list of {frames: [a, b], type: revolute}")
    cuts = []
    for i, entry in enumerate(value):
        path = f"closure.cuts[{i}]"
        e = S.mapping(entry, path, _CUT, required=("frames",))
        frames = e["frames"]
        if not isinstance(frames, list) or len(frames) != 2:
            raise S.fail(f"{path}.frames", f"expected two frame names, found "
                                           f"{S.excerpt(frames)}")
        kind = S.text(e.get("type", "revolute"), f"{path}.type", CUT_KINDS)
        pair = (S.text(frames[0], f"{path}.frames[0]"), S.text(frames[1], f"{path}.frames[1]"))
        if pair[0] == pair[1]:
            raise S.fail(f"{path}.frames", f"expected two different frames, found {pair[0]!r} "
                                           "twice; a cut joins the frames on either side of a "
                                           "loop's cut joint")
        cuts.append(Cut(pair, kind, S.text(e["name"], f"{path}.name") if "name" in e else ""))
    return cuts


def closure(value: object, tree: Tree) -> Closure:
    """The closure described by the ``closure`` section (when absent: the identity, or the
    rows of the URDF's mimic joints)."""
    if value is None:
        return tree.default_closure()
    c = S.mapping(value, "closure", _CLOSURE)
    names = list(tree.joint_names)
    if "linear" in c and "passive" in c:
        raise S.fail("closure", "give either 'linear' rows or 'passive' joints, not both")
    linear = S.mapping(c.get("linear"), "closure.linear", S.ANY)
    passive = c.get("passive", [])
    if not isinstance(passive, list):
        raise S.fail("closure.passive", f"expected a list of tree joints, found "
                                        f"{S.excerpt(passive)}")
    passive = [S.text(p, f"closure.passive[{i}]") for i, p in enumerate(passive)]
    for key in [*linear, *passive]:
        if key not in names:
            raise S.fail(f"closure.{'linear' if key in linear else 'passive'}.{S.key(key)}",
                         f"no such tree joint; tree joints are {S.names(names)}")
    follows = {m.joint: m for m in tree.mimic}
    _check_mimic_rows(follows, linear, passive)
    dependent = set(linear) | set(passive) | set(follows)
    basis = c.get("basis", [j for j in names if j not in dependent])
    if "basis" not in c and not basis:
        raise S.fail("closure", "every tree joint is passive or given a row; at least one must "
                                "be a basis coordinate (an independent one)")
    if not isinstance(basis, list) or not basis:
        raise S.fail("closure.basis", f"expected a list of distinct names, found "
                                      f"{S.excerpt(basis)}")
    basis = [S.text(b, f"closure.basis[{i}]") for i, b in enumerate(basis)]
    if len(set(basis)) != len(basis):
        raise S.fail("closure.basis", f"expected a list of distinct names, found "
                                      f"{S.names(basis)}")
    mimicking = [b for b in basis if b in follows]
    if mimicking:
        m = follows[mimicking[0]]
        raise S.fail("closure.basis", f"{m.joint!r} mimics {m.leader!r} in the URDF, so it is "
                                      "not a basis coordinate; remove it from the basis")
    cuts = _cuts(c.get("cuts"))
    if passive:
        if "basis" in c and any(b not in names or b in passive for b in basis):
            raise S.fail("closure.basis", "with passive joints the basis coordinates are the "
                                          f"other tree joints, found {S.names(basis)}")
        reference = {k: S.number(v, f"closure.reference.{S.key(k)}") for k, v in
                     S.mapping(c.get("reference"), "closure.reference", S.ANY).items()}
        unknown = [k for k in reference if k not in names]
        if unknown:
            raise S.fail(f"closure.reference.{S.key(unknown[0])}",
                         f"no such tree joint; tree joints are {S.names(names)}")
        _check_loops(tree, cuts, set(passive), "passive")
        return LoopClosure(tree, basis, cuts, reference=reference)
    if "reference" in c:
        raise S.fail("closure.reference", "a reference assembly belongs to passive joints")
    if linear and c.get("cuts") is None:
        raise S.fail("closure", "rows are given under 'linear' but no 'cuts': if the rows "
                                "close a loop (a parallelogram), name the frames its cut joint "
                                "keeps together under 'cuts', so that the rows are checked "
                                "against the loop when the file is loaded; if they only couple "
                                "joints (gears, belts, a change of coordinates), write "
                                "'cuts: []' to say so")
    A, b = _rows(names, basis, linear, follows)
    _check_loops(tree, cuts, set(linear) | set(follows), "linear")
    try:
        return LinearClosure(A, basis, offset=b, cuts=cuts)
    except S.ModelError as exc:
        raise S.fail("closure", str(exc)) from None


def _check_mimic_rows(follows: dict, linear: dict, passive: list[str]) -> None:
    if not follows:
        return
    if passive:
        raise S.fail("closure.passive", f"the URDF's mimic joints {S.names(follows)} are "
                                        "linear closure rows, which a loop solved for passive "
                                        "joints cannot hold; lock them, or describe the "
                                        "mechanism with 'linear' rows")
    given = [j for j in linear if j in follows]
    if given:
        m = follows[given[0]]
        raise S.fail(f"closure.linear.{m.joint}", f"this joint mimics {m.leader!r} in the URDF,"
                                                  " which gives its row already; remove the "
                                                  "row here (or the <mimic> in the URDF)")


def _rows(names: list[str], basis: list[str], linear: dict, follows: dict
          ) -> tuple[np.ndarray, np.ndarray]:
    """``A`` and ``b`` of a linear closure: basis joints, rows, then mimic joints."""
    A, b = np.zeros((len(names), len(basis))), np.zeros(len(names))
    for j, joint in enumerate(names):
        if joint in linear:
            row = S.mapping(linear[joint], f"closure.linear.{joint}", [*basis, "offset"])
            for key, coef in row.items():
                x = S.number(coef, f"closure.linear.{joint}.{key}")
                if key == "offset":
                    b[j] = x
                else:
                    A[j, basis.index(key)] = x
        elif joint in basis:
            A[j, basis.index(joint)] = 1.0
        elif joint not in follows:
            raise S.fail("closure", f"tree joint {joint!r} is neither a basis coordinate "
                                    f"(closure.basis: {S.names(basis)}) nor given a row under "
                                    "'linear'")
    for joint, m in follows.items():  # leaders mimic nothing, so their rows are set
        j, lead = names.index(joint), names.index(m.leader)
        A[j], b[j] = m.multiplier * A[lead], m.multiplier * b[lead] + m.offset
    unused = [bn for k, bn in enumerate(basis) if not np.any(A[:, k])]
    if unused:
        raise S.fail("closure.basis", f"basis coordinates {S.names(unused)} move no tree "
                                      "joint")
    return A, b


def _check_loops(tree: Tree, cuts: list[Cut], dependent: set[str], kind: str) -> None:
    """Each cut closes a loop that holds a dependent joint (a row, or a passive joint)."""
    for i, cut in enumerate(cuts):
        try:
            joints = loop_joints(tree.model, cut)
        except S.ModelError as exc:
            raise S.fail(f"closure.cuts[{i}]", str(exc)) from None
        if not joints:
            raise S.fail(f"closure.cuts[{i}]", f"frames {cut.frames[0]!r} and {cut.frames[1]!r} "
                                               "are on the same link, so the cut closes no "
                                               "loop; a cut joins the two links on either side "
                                               "of a loop's cut joint")
        loop = [tree.joint_names[t] for t in joints]
        if not dependent & set(loop):
            what = ("given a row under 'closure.linear'" if kind == "linear"
                    else "listed under 'closure.passive'")
            raise S.fail(f"closure.cuts[{i}]", f"the loop it closes runs through joints "
                                               f"{S.names(loop)}, none of them {what}: a loop "
                                               "makes some of its joints depend on the others;"
                                               " give them rows (or make them passive)")


def drive(act: dict, path: str, limits: tuple[float, float], ratio: float,
          joint: str = "") -> Drive:
    """A gear, or a ball-screw lever when ``actuator.lever`` is given (``joint``: the joint it
    drives, for messages)."""
    if "lever" not in act:
        if "screw" in act:
            raise S.fail(f"{path}.screw", "screw parameters need a lever (actuator.lever)")
        return Gear(ratio)
    lev = S.mapping(act["lever"], f"{path}.lever", _LEVER,
                    required=("l1", "l2", "beta", "pitch"))
    v = {k: S.number(lev[k], f"{path}.lever.{k}", positive=k != "beta") for k in lev}
    return LeverScrew(v["l1"], v["l2"], v["beta"], v["pitch"], ratio,
                      length_at_zero=v.get("length_at_zero"), limits=limits,
                      name=f"{path}.lever", joint=joint)


def screw_term(act: dict, path: str, motor: str, row: int, lever: Drive,
               smoothing: float) -> Term | None:
    """Translating mass and friction of the ball screw, when ``actuator.screw`` is given."""
    if "screw" not in act:
        return None
    sc = S.mapping(act["screw"], f"{path}.screw", _SCREW)
    v = {k: S.number(sc[k], f"{path}.screw.{k}", nonnegative=True) for k in sc}
    if not v:  # no screw quantity given: none modelled
        return None
    return screw_dynamics(motor, row, lever.lead, mass=v.get("mass"),
                          viscous=v.get("viscous"), coulomb=v.get("coulomb"),
                          smoothing=smoothing)


def coupling(value: object, n: int) -> np.ndarray | None:
    """The ``transmission.coupling`` matrix (checked for shape here, for rank by
    :class:`~dynid.models.transmissions.Transmission`)."""
    t = S.mapping(value, "transmission", ("coupling",))
    if "coupling" not in t:
        return None
    rows = t["coupling"]
    if not isinstance(rows, list) or len(rows) != n:
        found = f"{len(rows)} rows" if isinstance(rows, list) else S.excerpt(rows)
        raise S.fail("transmission.coupling", f"coupling matrix: expected {n} rows of {n} "
                                              f"numbers (one per actuator), found {found}")
    return np.array([S.numbers(r, f"transmission.coupling[{i}]", n)
                     for i, r in enumerate(rows)])


def _target(joint: object, path: str, basis: Sequence[str], tree: Tree) -> tuple[int, str]:
    name = S.text(joint, path)
    if name in basis:
        return list(basis).index(name), "basis"
    if name in tree.joint_names:
        return tree.joint_names.index(name), "tree"
    raise S.fail(path, f"no such coordinate; basis coordinates are {S.names(basis)}, tree "
                       f"joints are {S.names(tree.joint_names)}")


def springs_and_cables(top: dict, basis: Sequence[str], tree: Tree) -> list[Term]:
    """Terms of the ``springs`` and ``cables`` sections."""
    terms: list[Term] = []
    for section in ("springs", "cables"):
        entries = top.get(section) or []
        if not isinstance(entries, list):
            raise S.fail(section, "expected a list of entries")
        for i, entry in enumerate(entries):
            path = f"{section}[{i}]"
            keys = _SPRING if section == "springs" else _CABLE
            e = S.mapping(entry, path, keys, required=("name", "joint"))
            name = S.text(e["name"], f"{path}.name")
            row, space = _target(e["joint"], f"{path}.joint", basis, tree)
            if section == "cables":
                coefs = e.get("coefficients")
                if not isinstance(coefs, list) or not coefs:
                    raise S.fail(f"{path}.coefficients", "expected a list of polynomial "
                                                         "coefficients, lowest degree first")
                terms.append(CableTorque(name, row, space, [
                    S.number(c, f"{path}.coefficients[{k}]") for k, c in enumerate(coefs)]))
                continue
            kind = S.text(e.get("type", "torsional"), f"{path}.type", ("torsional", "linear"))
            num = {k: S.number(e[k], f"{path}.{k}", nonnegative=k == "stiffness") for k in e
                   if k not in ("name", "joint", "type")}
            if kind == "torsional":
                extra = set(num) - {"stiffness", "rest"}
                if extra:
                    raise S.fail(f"{path}.{sorted(extra)[0]}", "belongs to a linear spring")
                joint = tree.joint_names.index(e["joint"]) if e["joint"] in tree.joint_names \
                    else None
                terms.append(TorsionalSpring(
                    name, row, space, stiffness=num.get("stiffness", 0.0),
                    rest=num.get("rest", 0.0),
                    linear=joint is not None and tree.joint_types[joint] == "prismatic"))
            else:
                missing = [k for k in ("a", "b", "gamma", "rest_length") if k not in num]
                if missing:
                    raise S.fail(path, f"a linear spring needs {missing}")
                if "rest" in num:
                    raise S.fail(f"{path}.rest", "a linear spring has rest_length instead")
                terms.append(LinearSpring(name, row, space, a=num["a"], b=num["b"],
                                          gamma=num["gamma"], rest_length=num["rest_length"],
                                          stiffness=num.get("stiffness", 0.0)))
    return terms


def bodies(value: object) -> tuple[Body, ...]:
    """The ``bodies`` section: rigid bodies fixed to links (their names and parents are checked
    against the tree by the robot, under the same key paths)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise S.fail("bodies", "expected a list of {name, parent, xyz, rpy, mass, com, inertia}"
                               f", found {S.excerpt(value)}")
    out = []
    for i, entry in enumerate(value):
        path = f"bodies[{i}]"
        e = S.mapping(entry, path, _BODY, required=("name", "parent", "mass"))
        known = e.get("known", False)
        if not isinstance(known, bool):
            raise S.fail(f"{path}.known", f"expected true or false, found {S.excerpt(known)}")
        mass = S.number(e["mass"], f"{path}.mass", nonnegative=True)
        com = S.numbers(e.get("com", [0, 0, 0]), f"{path}.com", 3)
        inertia = S.numbers(e.get("inertia", [0] * 6), f"{path}.inertia", 6)
        try:
            values = LinkInertia(mass, tuple(com), tuple(inertia))
        except S.ModelError as exc:  # the message starts with the field's name
            raise S.ModelError(f"{path}.{exc}") from None
        out.append(Body(S.text(e["name"], f"{path}.name"), S.text(e["parent"], f"{path}.parent"),
                        values, xyz=tuple(S.numbers(e.get("xyz", [0, 0, 0]), f"{path}.xyz", 3)),
                        rpy=tuple(S.numbers(e.get("rpy", [0, 0, 0]), f"{path}.rpy", 3)),
                        known=known))
    return tuple(out)
