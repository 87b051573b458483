"""Friction in the joints of a Stewart platform's legs (Abdellatif Table I).

Each leg has a universal joint at the base (angles ``α``, ``β``), its prismatic actuator joint
(length ``l``) and a spherical joint at the platform. Friction of the first three is a force on
their tree coordinates, ``f_v q̇ + f_c sgn q̇``, projected like the links (``Gᵀ``, then
``K⁻ᵀ``); the spherical joint's opposes the relative angular velocity ``ω_rel = ω_platform −
ω_rod`` of its two sides, ``f_v ω_rel + f_c ω_rel / |ω_rel|``, whose generalized force on the
pose is ``J_relᵀ`` times it. Every coefficient is either one per leg (``leg3_alpha.fc``) or
shared by the six legs (``legs_alpha.fc``: identical joints, as in Table I, where the universal
joints have one Coulomb coefficient per axis, ``r_α`` and ``r_β``, and each actuator its own
``r_i`` and ``v_i``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...errors import ModelError
from ..parameters import Parameter
from ..terms import Term, joint_friction

__all__ = ["JOINTS", "KINDS", "SharedFriction", "SphericalFriction", "leg_friction"]

#: Leg joints with friction options, and the tree coordinate of each (offset in a leg).
JOINTS = {"alpha": 0, "beta": 1, "length": 2, "spherical": None}
#: Friction kinds: viscous and Coulomb.
KINDS = ("viscous", "coulomb")
_KIND = {"viscous": ("fv", "v"), "coulomb": ("fc", "sign")}
_UNITS = {"viscous": ("N·m·s/rad", "N·s/m"), "coulomb": ("N·m", "N")}


def _sign(x: np.ndarray, smoothing: float) -> np.ndarray:
    return np.tanh(x / smoothing) if smoothing > 0 else np.sign(x)


class SharedFriction(Term):
    """One friction coefficient shared by a joint of all six legs (tree space)."""

    def __init__(self, joint: str, kind: str, prior: float, *, smoothing: float = 0.0):
        offset = JOINTS[joint]
        self.space, self.rows = "tree", tuple(6 + 3 * i + offset for i in range(6))
        self.kind, self.smoothing = kind, float(smoothing)
        unit = _UNITS[kind][joint == "length"]
        self.parameters = (Parameter(f"legs_{joint}", _KIND[kind][0], unit, "friction",
                                     float(prior), lower=0.0),)

    def columns(self, x, xd, xdd):
        rates = xd[:, self.rows]
        col = rates if self.kind == "viscous" else _sign(rates, self.smoothing)
        return col[:, :, None]

    def __repr__(self) -> str:
        return f"SharedFriction({self.parameters[0].name})"


class SphericalFriction(Term):
    """Friction of the spherical joints, on the pose (basis space): one coefficient per leg
    (``leg{i}_spherical``), or one shared by the six (``shared``)."""

    def __init__(self, closure, kind: str, priors: Sequence[float], *, shared: bool = False,
                 smoothing: float = 0.0):
        self.space, self.rows = "basis", tuple(range(6))
        self.closure, self.kind, self.smoothing = closure, kind, float(smoothing)
        self.shared = bool(shared)
        owners = ["legs_spherical"] if shared else [f"leg{i + 1}_spherical" for i in range(6)]
        if len(priors) != len(owners):
            raise ModelError(f"spherical friction: expected {len(owners)} priors, found "
                             f"{len(priors)}")
        self.parameters = tuple(Parameter(o, _KIND[kind][0], _UNITS[kind][0], "friction",
                                          float(p), lower=0.0)
                                for o, p in zip(owners, priors, strict=True))

    def relative_jacobian(self, q: np.ndarray) -> np.ndarray:
        """``J_rel`` (N, 6, 3, 6): ``ω_platform − ω_rod`` of each leg per unit pose rate."""
        q_t, G, _ = self.closure.evaluate(q, None)
        geo = self.closure.geometry
        H = geo.legs(q).H
        alpha = q_t[:, 6::3]
        ex = geo.leg_frames[:, :, 0]  # (6, 3): first axis of each universal joint
        ey = (np.cos(alpha)[..., None] * geo.leg_frames[None, :, :, 1]
              + np.sin(alpha)[..., None] * geo.leg_frames[None, :, :, 2])  # moved second axis
        J = np.zeros((q.shape[0], 6, 3, 6))
        J[..., 3:] = H[:, None]
        J -= ex[None, :, :, None] * G[:, None, 6::3, :].swapaxes(1, 2)
        J -= ey[..., None] * G[:, 7::3, None, :]
        return J

    def columns(self, x, xd, xdd):
        J = self.relative_jacobian(x)
        w = np.matmul(J, xd[:, None, :, None])[..., 0]  # (N, 6, 3)
        if self.kind == "coulomb":
            norm = np.linalg.norm(w, axis=2, keepdims=True)
            scale = (np.tanh(norm / self.smoothing) if self.smoothing > 0
                     else (norm > 0).astype(float))
            w = np.divide(w * scale, norm, out=np.zeros_like(w), where=norm > 0)
        cols = np.matmul(np.swapaxes(J, 2, 3), w[..., None])[..., 0]  # (N, 6 legs, 6)
        if self.shared:
            return cols.sum(axis=1)[:, :, None]
        return np.swapaxes(cols, 1, 2)

    def __repr__(self) -> str:
        return f"SphericalFriction({self.parameters[0].name})"


def leg_friction(closure, options: Mapping[str, Sequence[str]], *,
                 shared: Sequence[str] = (), priors: Mapping[str, float] | None = None,
                 smoothing: float = 0.0) -> tuple[Term, ...]:
    """Friction terms of the legs' joints.

    Parameters
    ----------
    closure
        The platform's :class:`~dynid.models.stewart.closure.StewartClosure`.
    options
        Joint (one of :data:`JOINTS`) → kinds of friction (of :data:`KINDS`) it has.
    shared
        Joints whose coefficients the six legs share (one parameter per kind).
    priors
        ``"joint.kind"`` → prior value (default 0), e.g. ``{"length.viscous": 20.0}``.
    smoothing
        Velocity below which the Coulomb sign is smoothed (0: exact sign).

    Examples
    --------
    >>> terms = leg_friction(robot.closure, {"alpha": ["coulomb"], "beta": ["coulomb"],
    ...                                      "length": ["viscous", "coulomb"]},
    ...                      shared=["alpha", "beta"])        # Abdellatif Table I
    >>> robot = robot.with_terms(terms)
    """
    priors = dict(priors or {})
    example = ("e.g. leg_friction(closure, {'alpha': ['coulomb'], 'length': ['viscous', "
               "'coulomb']}, shared=['alpha'])")
    for joint, kinds in options.items():
        if joint not in JOINTS or any(k not in KINDS for k in kinds):
            raise ModelError(f"leg friction {joint!r}: {list(kinds)}; expected joints from "
                             f"{list(JOINTS)} with kinds from {list(KINDS)}; {example}")
    for name in [*shared, *(k.split(".")[0] for k in priors)]:
        if name not in options:
            raise ModelError(f"leg friction: {name!r} is named but has no friction kinds; "
                             f"joints with friction are {list(options)}; {example}")
    terms: list[Term] = []
    for joint, kinds in options.items():
        values = {k: float(priors.get(f"{joint}.{k}", 0.0)) for k in kinds}
        if joint == "spherical":
            count = 1 if joint in shared else 6
            terms += [SphericalFriction(closure, k, [v] * count, shared=joint in shared,
                                        smoothing=smoothing) for k, v in values.items()]
        elif joint in shared:
            terms += [SharedFriction(joint, k, v, smoothing=smoothing)
                      for k, v in values.items()]
        else:
            for i in range(6):
                kw = {"viscous": values.get("viscous"), "coulomb": values.get("coulomb")}
                terms.append(joint_friction(f"leg{i + 1}_{joint}", 6 + 3 * i + JOINTS[joint],
                                            space="tree", linear=joint == "length",
                                            smoothing=smoothing, **kw))
    return tuple(terms)
