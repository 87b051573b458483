"""MJCF text with every number of the model's dynamics at full precision.

MuJoCo's XML writer (``MjSpec.to_xml``) prints six significant digits, which moves masses,
inertias, poses and joint parameters by up to 5e-7 of their value. :func:`exact` takes its text
and writes again, from the spec's doubles, the numbers the dynamics depend on: body poses,
inertials (mass, centre of mass, principal moments and axes), joint poses, axes, ranges,
damping, friction loss and armature, gravity, the coefficients of joint equalities, the
actuators' gears and control ranges and the keyframes' positions. A
number is replaced only where the spec's value rounds to the one MuJoCo wrote, so the pass
refines precision and never changes what MuJoCo meant. Geoms (visual and collision shapes,
which do not enter the dynamics when inertias are not computed from them) keep MuJoCo's
digits. :func:`principal_axes`, run on the spec before MuJoCo compiles it, gives every inertia
as principal moments and axes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from ._elements import nums

#: Joint attributes of the MJCF → those of the spec.
_JOINT = {"pos": "pos", "axis": "axis", "range": "range", "damping": "damping",
          "frictionloss": "frictionloss", "armature": "armature",
          "actuatorfrcrange": "actfrcrange", "ref": "ref", "springref": "springref",
          "stiffness": "stiffness"}


def _close(written: str, values: np.ndarray) -> bool:
    """Whether ``values`` rounds to the numbers of ``written`` (MuJoCo's six digits)."""
    try:
        shown = np.array([float(x) for x in written.split()])
    except ValueError:
        return False
    return shown.shape == values.shape and bool(np.allclose(
        shown, values, rtol=1e-5, atol=1e-300 + 1e-5 * float(np.abs(values).max(initial=0.0))))


def _refine(el: ET.Element, attr: str, value) -> None:
    """Write ``value`` (the first as many numbers as ``el`` shows) into ``attr`` of ``el``."""
    written = el.get(attr)
    if written is None:
        return
    values = np.atleast_1d(np.asarray(value, dtype=float)).ravel()[:len(written.split())]
    if _close(written, values):
        el.set(attr, nums(values))


def _rotation(quat: np.ndarray) -> np.ndarray:
    w, x, y, z = quat / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix."""
    q = pin.Quaternion(R)
    return np.array([q.w, q.x, q.y, q.z])


def principal_axes(spec) -> None:
    """Give every body's inertia as principal moments and axes (``inertia``, ``iquat``), at
    full precision: MuJoCo refuses a ``fullinertia`` that is singular (a thin rod, a point
    mass), which its URDF reader writes for every link. The largest moment is at most the sum
    of the two others (the triangle inequality, which MuJoCo checks without tolerance, and
    which a rod's moments meet with equality up to rounding)."""
    for body in spec.bodies:
        full = np.asarray(body.fullinertia, dtype=float)
        if np.isnan(full[0]):
            continue
        xx, yy, zz, xy, xz, yz = full
        R = _rotation(np.asarray(body.iquat, dtype=float))
        I = R @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ R.T
        moments, axes = np.linalg.eigh(I)
        axes[:, 2] *= np.linalg.det(axes)
        moments = np.maximum(moments, 0.0)
        moments[2] = min(moments[2], moments[0] + moments[1])
        body.inertia, body.iquat = moments, _quaternion(axes)
        body.fullinertia = [np.nan, 0.0, 0.0, 0.0, 0.0, 0.0]


def _inertial(el: ET.Element, body) -> None:
    """Rewrite an ``<inertial>`` from the spec's body: position, mass and the inertia, as
    ``fullinertia`` when the spec has one, else as principal moments and axes."""
    mass, pos = float(body.mass), np.asarray(body.ipos, dtype=float)
    full = np.asarray(body.fullinertia, dtype=float)
    R = _rotation(np.asarray(body.iquat, dtype=float))
    F = np.diag(np.asarray(body.inertia, dtype=float)) if np.isnan(full[0]) else np.array(
        [[full[0], full[3], full[4]], [full[3], full[1], full[5]], [full[4], full[5], full[2]]])
    diag = el.get("diaginertia")
    if not (_close(el.get("mass", ""), np.array([mass]))
            and _close(el.get("pos", "0 0 0"), pos)
            and (diag is None or _close(" ".join(sorted(diag.split(), key=float)),
                                        np.linalg.eigvalsh(R @ F @ R.T)))):
        return
    for key in ("quat", "diaginertia", "fullinertia", "axisangle", "xyaxes", "zaxis", "euler"):
        el.attrib.pop(key, None)
    el.set("pos", nums(pos))
    el.set("mass", nums([mass]))
    if np.isnan(full[0]):
        el.set("quat", nums(body.iquat))
        el.set("diaginertia", nums(body.inertia))
    else:
        I = R @ F @ R.T
        el.set("fullinertia", nums([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]))


def exact(xml: str, spec) -> str:
    """The MJCF ``xml`` written by ``spec.to_xml()`` with the dynamics' numbers of ``spec`` at
    full precision (see the module docstring)."""
    root = ET.fromstring(xml)
    for el in root.iter("body"):
        body = spec.body(el.get("name") or "")
        if body is None:
            continue
        _refine(el, "pos", body.pos)
        _refine(el, "quat", body.quat)
        inertial = el.find("inertial")
        if inertial is not None:
            _inertial(inertial, body)
        for child in el.findall("joint"):
            joint = spec.joint(child.get("name")) if child.get("name") else None
            if joint is not None:
                for attr, field in _JOINT.items():
                    _refine(child, attr, getattr(joint, field))
    option = root.find("option")
    if option is not None:
        _refine(option, "gravity", spec.option.gravity)
    equality = root.find("equality")
    if equality is not None:
        for el, eq in zip(equality, spec.equalities, strict=False):
            _refine(el, "polycoef", eq.data)
    for el in root.iterfind("actuator/*"):
        act = spec.actuator(el.get("name") or "")
        if act is not None:
            _refine(el, "gear", act.gear)
            _refine(el, "ctrlrange", act.ctrlrange)
    for el in root.iterfind("keyframe/key"):
        key = spec.key(el.get("name") or "")
        if key is not None:
            _refine(el, "qpos", key.qpos)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"
