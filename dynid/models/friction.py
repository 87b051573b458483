"""Friction that is nonlinear in a few parameters: Stribeck and sigmoid Coulomb friction.

Both act on one coordinate ``x`` of a space (a joint on the tree or basis side, a motor on the
actuator side) next to its viscous and offset friction, and replace its Coulomb term:

* sigmoid Coulomb: ``τ = f_c tanh(ẋ / v_c)``, with the sigmoid velocity ``v_c`` unknown;
* Stribeck: ``τ = (f_c + (f_s − f_c) exp(−|ẋ / v_s|^δ)) s(ẋ)``, with ``f_s`` the static
  friction, ``v_s`` the Stribeck velocity, ``δ`` its exponent (2: Gaussian) and ``s`` the sign,
  smoothed to ``tanh(ẋ / ε)`` when a smoothing velocity ``ε`` is given (as the simulator needs).

For fixed ``v_c``, ``v_s``, the force is linear in the amplitudes: written
``f_c s (1 − e) + f_s s e`` with ``e = exp(−|ẋ/v_s|^δ)``, the Stribeck term has the columns
``s (1 − e)`` (``f_c``) and ``s e`` (``f_s``), both non-negative parameters. The velocities are
estimated by variable projection (:mod:`dynid.identify.friction`), which also needs
:class:`FrictionSlope`: the derivative of a term's force with respect to the logarithm of its
velocity, per unit of the amplitude it multiplies.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import numpy as np

from ..errors import ModelError
from .parameters import Parameter
from .robot import Robot
from .terms import SPACES, CoordinateTerm, Term

__all__ = ["FRICTION_MODELS", "FrictionSlope", "SigmoidCoulomb", "StribeckFriction",
           "apply_friction", "friction_models", "with_friction"]

#: The friction models a coordinate may have, from the simplest.
FRICTION_MODELS = ("coulomb", "sigmoid", "stribeck")


def _sign(xd: np.ndarray, smoothing: float) -> np.ndarray:
    return np.tanh(xd / smoothing) if smoothing > 0 else np.sign(xd)


def _check_velocity(owner: str, name: str, value: float) -> float:
    if not (np.isfinite(value) and value > 0):
        raise ModelError(f"{owner}: the {name} must be a velocity > 0 (rad/s or m/s), found "
                         f"{value}; e.g. {name}=0.05")
    return float(value)


class _Nonlinear(Term):
    """A friction term with one nonlinear velocity (``velocity``) on one coordinate."""

    #: Name of the velocity (``"stribeck_velocity"``, ``"sigmoid_velocity"``).
    velocity_name: str
    model: str

    def __init__(self, owner: str, row: int, space: str, velocity: float, scale: float):
        if space not in SPACES:
            raise ModelError(f"term {owner}: space must be one of {SPACES}, found {space!r}")
        self.owner, self.space, self.rows = owner, space, (int(row),)
        self.velocity = _check_velocity(owner, self.velocity_name, velocity)
        self.scale = float(scale)

    def with_velocity(self, velocity: float) -> _Nonlinear:
        """The same term with another velocity."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.velocity = _check_velocity(self.owner, self.velocity_name, velocity)
        return out

    def slope(self, xd: np.ndarray) -> np.ndarray:
        """``∂(force)/∂ log v`` per unit of :attr:`amplitude` (N,), at velocities (N,)."""
        raise NotImplementedError

    @property
    def amplitude(self) -> tuple[tuple[str, float], ...]:
        """The amplitude the slope multiplies, as (parameter name, coefficient) pairs."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.owner} on {self.space}[{self.rows[0]}], "
                f"{self.velocity_name}={self.velocity:g})")


class SigmoidCoulomb(_Nonlinear):
    """Sigmoid Coulomb friction ``f_c tanh(ẋ / v_c)`` on one coordinate.

    Parameters
    ----------
    owner
        Joint or motor name; the parameter is ``owner.<kind>``.
    row
        Index of the coordinate in its space.
    velocity
        The sigmoid velocity ``v_c`` > 0 (rad/s or m/s).
    space
        ``"tree"``, ``"basis"`` or ``"actuator"``.
    coulomb
        Prior of ``f_c`` (≥ 0).
    kind, unit, scale
        Parameter kind (``"fc"``; ``"fcm"`` on a motor), its unit, and a constant factor of
        the column (the ratio through which a translating part acts on its motor).

    Examples
    --------
    >>> term = SigmoidCoulomb("joint2", 1, velocity=0.05, coulomb=0.8)
    >>> term.columns(np.zeros((1, 3)), np.array([[0.0, 0.05, 0.0]]), np.zeros((1, 3)))[0, 0]
    array([0.76159416])
    """

    velocity_name = "sigmoid_velocity"
    model = "sigmoid"

    def __init__(self, owner: str, row: int, *, velocity: float, space: str = "basis",
                 coulomb: float = 0.0, kind: str = "fc", unit: str = "N·m", scale: float = 1.0):
        super().__init__(owner, row, space, velocity, scale)
        group = "actuator" if space == "actuator" else "friction"
        self.parameters = (Parameter(owner, kind, unit, group, float(coulomb), lower=0.0),)

    def columns(self, x, xd, xdd):
        v = xd[:, self.rows[0]]
        return (self.scale * np.tanh(v / self.velocity))[:, None, None]

    def slope(self, xd):
        u = xd / self.velocity
        return -self.scale * u / np.cosh(np.clip(u, -350, 350)) ** 2

    @property
    def amplitude(self):
        return ((self.parameters[0].name, 1.0),)


class StribeckFriction(_Nonlinear):
    """Stribeck friction ``(f_c + (f_s − f_c) exp(−|ẋ/v_s|^δ)) s(ẋ)`` on one coordinate.

    Parameters
    ----------
    owner
        Joint or motor name; the parameters are ``owner.<kinds>`` (Coulomb, static).
    row
        Index of the coordinate in its space.
    velocity
        The Stribeck velocity ``v_s`` > 0 (rad/s or m/s).
    space
        ``"tree"``, ``"basis"`` or ``"actuator"``.
    coulomb, static
        Priors of ``f_c`` and ``f_s`` (≥ 0).
    exponent
        The exponent ``δ`` > 0 (2: Gaussian, 1: exponential).
    smoothing
        Velocity ``ε`` of the smoothed sign ``tanh(ẋ/ε)`` (0: the exact sign).
    kinds, unit, scale
        Parameter kinds (``("fc", "fs")``; ``("fcm", "fsm")`` on a motor), their unit, and a
        constant factor of the columns.

    Examples
    --------
    >>> term = StribeckFriction("joint1", 0, velocity=0.1, coulomb=0.5, static=0.8)
    >>> [p.name for p in term.parameters]
    ['joint1.fc', 'joint1.fs']
    >>> v = np.array([[0.1]])
    >>> round(float(term.columns(v, v, v)[0, 0] @ [0.5, 0.8]), 4)    # 0.5 + 0.3 / e
    0.6104
    """

    velocity_name = "stribeck_velocity"
    model = "stribeck"

    def __init__(self, owner: str, row: int, *, velocity: float, space: str = "basis",
                 coulomb: float = 0.0, static: float = 0.0, exponent: float = 2.0,
                 smoothing: float = 0.0, kinds: tuple[str, str] = ("fc", "fs"),
                 unit: str = "N·m", scale: float = 1.0):
        super().__init__(owner, row, space, velocity, scale)
        if not (np.isfinite(exponent) and exponent > 0):
            raise ModelError(f"{owner}: the Stribeck exponent must be > 0, found {exponent}; "
                             "e.g. exponent=2.0")
        if not smoothing >= 0:
            raise ModelError(f"{owner}: sign smoothing must be a velocity ≥ 0, found "
                             f"{smoothing}")
        self.exponent, self.smoothing = float(exponent), float(smoothing)
        group = "actuator" if space == "actuator" else "friction"
        self.parameters = tuple(Parameter(owner, k, unit, group, float(p), lower=0.0)
                                for k, p in zip(kinds, (coulomb, static), strict=True))

    def _shape(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sign ``s`` and ``e = exp(−|v/v_s|^δ)``."""
        return _sign(v, self.smoothing), np.exp(-np.abs(v / self.velocity) ** self.exponent)

    def columns(self, x, xd, xdd):
        s, e = self._shape(xd[:, self.rows[0]])
        return (self.scale * np.stack([s * (1 - e), s * e], axis=-1))[:, None, :]

    def slope(self, xd):
        s, e = self._shape(xd)
        # ∂e/∂ log v_s = δ |v/v_s|^δ e; it multiplies (f_s − f_c).
        return self.scale * s * e * self.exponent * np.abs(xd / self.velocity) ** self.exponent

    @property
    def amplitude(self):
        fc, fs = (p.name for p in self.parameters)
        return ((fs, 1.0), (fc, -1.0))


class FrictionSlope(Term):
    """The derivative of a nonlinear friction term's force with respect to the logarithm of
    its velocity, per unit of its amplitude: one column, parameter ``owner.dlog_<velocity>``.

    Added to a model next to its term, its coefficient estimates the step of ``log v`` that
    the data ask for (times the amplitude), and its variance that step's: the Gauss–Newton
    linearization of the model in its velocity.
    """

    def __init__(self, term: _Nonlinear):
        self.term = term
        self.space, self.rows, self.owner = term.space, term.rows, term.owner
        group = "actuator" if term.space == "actuator" else "friction"
        self.parameters = (Parameter(term.owner, f"dlog_{term.velocity_name}", "1", group),)

    def columns(self, x, xd, xdd):
        return self.term.slope(xd[:, self.rows[0]])[:, None, None]

    def __repr__(self) -> str:
        return f"FrictionSlope({self.term!r})"


def friction_models(robot: Robot) -> dict[str, str]:
    """``owner → model`` of every coordinate with Coulomb-like friction (a joint or motor
    name → ``"coulomb"``, ``"sigmoid"`` or ``"stribeck"``), in the robot's term order."""
    out = {}
    for term in robot.terms:
        if isinstance(term, _Nonlinear):
            out[term.owner] = term.model
        elif isinstance(term, CoordinateTerm) and "sign" in term._sources:
            out[term.owner] = "coulomb"
    return out


def nonlinear_terms(robot: Robot) -> list[_Nonlinear]:
    """The robot's sigmoid and Stribeck terms, in term order."""
    return [t for t in robot.terms if isinstance(t, _Nonlinear)]


def with_friction(robot: Robot, models: str | Mapping[str, str], *,
                  velocities: float | Mapping[str, float] = 0.05,
                  exponent: float | Mapping[str, float] = 2.0) -> Robot:
    """The robot with the Coulomb friction of some coordinates replaced by another model.

    Parameters
    ----------
    robot
        A robot whose joints or motors have Coulomb friction (a ``coulomb`` friction term,
        ``fc`` or ``fcm``), or a model set by this function before.
    models
        One of :data:`FRICTION_MODELS` for every coordinate with friction, or a mapping
        ``owner → model`` (joint or motor names; the others keep theirs).
    velocities
        Initial Stribeck or sigmoid velocity (rad/s or m/s), one for all or per owner.
    exponent
        Stribeck exponent ``δ``, one for all or per owner.

    The viscous and offset friction of a coordinate stay as they are; its Coulomb term (and its
    prior) becomes the new model's, the static friction's prior being the Coulomb one. The
    sign smoothing of the Coulomb term is kept by the Stribeck sign.

    Examples
    --------
    >>> from dynid.models import load_robot
    >>> robot = with_friction(load_robot("panda"), {"joint2": "stribeck"}, velocities=0.1)
    >>> friction_models(robot)["joint2"], friction_models(robot)["joint1"]
    ('stribeck', 'coulomb')
    >>> [p.name for p in robot.parameters if p.owner == "joint2"]
    ['joint2.fv', 'joint2.fc', 'joint2.fs']
    """
    have = friction_models(robot)
    if isinstance(models, str):
        models = dict.fromkeys(have, models)
    models = dict(models)
    for owner, model in models.items():
        if model not in FRICTION_MODELS:
            raise ModelError(f"friction of {owner}: unknown model {model!r}; expected one of "
                             f"{', '.join(FRICTION_MODELS)}, e.g. "
                             f"with_friction(robot, {{{owner!r}: 'stribeck'}})")
        if owner not in have:
            raise ModelError(f"friction: {owner!r} has no Coulomb friction to replace (those "
                             f"that have: {', '.join(have) or 'none'}); give its friction "
                             "a coulomb value in the robot file")
    if isinstance(velocities, Mapping):
        unknown = sorted(set(velocities) - set(have))
        if unknown:
            raise ModelError(f"friction velocities: {unknown[0]!r} has no friction (those "
                             f"that have: {', '.join(have)})")
    terms = []
    for term in robot.terms:
        model = models.get(getattr(term, "owner", None))
        coulomb = isinstance(term, CoordinateTerm) and "sign" in term._sources
        if model is None or not (isinstance(term, _Nonlinear) or coulomb) or \
                (coulomb and model == "coulomb"):
            terms.append(term)
            continue
        v = velocities.get(term.owner, 0.05) if isinstance(velocities, Mapping) \
            else velocities
        d = exponent.get(term.owner, 2.0) if isinstance(exponent, Mapping) else exponent
        terms.extend(convert(term, model, v, d))
    return robot.with_terms(terms)


def convert(term: Term, model: str, velocity: float, exponent: float = 2.0,
            static: float | None = None) -> list[Term]:
    """A Coulomb (or sigmoid, Stribeck) friction term as ``model``: its other quantities in a
    :class:`~dynid.models.terms.CoordinateTerm`, then the new term (``static``: the Stribeck
    static friction's prior, default the Coulomb one)."""
    rest, coulomb = _split(term)
    new = _build(model, coulomb, velocity, exponent)
    if static is not None and isinstance(new, StribeckFriction):
        fc, fs = new.parameters
        new.parameters = (fc, Parameter(fs.owner, fs.kind, fs.unit, fs.group, float(static),
                                        lower=0.0))
    return [*rest, new]


def apply_friction(robot: Robot, settings: Mapping, where: str = "friction") -> Robot:
    """The robot with the friction models, velocities and exponents of ``settings`` (as a
    result stores them in ``solver["friction"]``: ``models``, ``velocities``,
    ``exponents``); ``where`` names the settings in messages."""
    try:
        models = dict(settings["models"])
        velocities = {k: float(v) for k, v in dict(settings.get("velocities", {})).items()}
        exponents = {k: float(v) for k, v in dict(settings.get("exponents", {})).items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{where}: expected models (owner → model) and velocities and "
                         f"exponents (owner → number), found {dict(settings)!r} ({exc})"
                         ) from None
    missing = [o for o, m in models.items() if m != "coulomb" and o not in velocities]
    if missing:
        raise ModelError(f"{where}: no velocity for the {models[missing[0]]} friction of "
                         f"{missing[0]}; the settings name one per sigmoid or Stribeck model")
    try:
        return with_friction(robot, models, velocities=velocities, exponent=exponents)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None


def _split(term) -> tuple[list[Term], dict]:
    """A friction term without its Coulomb part, and that part's description."""
    if isinstance(term, _Nonlinear):
        p = term.parameters[0]
        smoothing = getattr(term, "smoothing", 0.0)
        return [], {"owner": term.owner, "row": term.rows[0], "space": term.space,
                    "kind": p.kind, "unit": p.unit, "prior": p.prior, "scale": term.scale,
                    "smoothing": smoothing, "velocity": term.velocity}
    i = term._sources.index("sign")
    p = term.parameters[i]
    rest = copy.copy(term)
    keep = [k for k in range(len(term.parameters)) if k != i]
    rest.parameters = tuple(term.parameters[k] for k in keep)
    rest._sources = [term._sources[k] for k in keep]
    rest._scales = [term._scales[k] for k in keep]
    return ([rest] if keep else []), {
        "owner": term.owner, "row": term.rows[0], "space": term.space, "kind": p.kind,
        "unit": p.unit, "prior": p.prior, "scale": term._scales[i],
        "smoothing": term.smoothing, "velocity": term.smoothing or None}


def _build(model: str, c: dict, velocity: float, exponent: float) -> Term:
    if model == "coulomb":
        return CoordinateTerm(c["owner"], c["row"], c["space"],
                              {"coulomb": (c["kind"], c["prior"])},
                              smoothing=c["smoothing"], scales={"coulomb": c["scale"]},
                              units={"coulomb": c["unit"]})
    if model == "sigmoid":
        return SigmoidCoulomb(c["owner"], c["row"], velocity=velocity, space=c["space"],
                              coulomb=c["prior"], kind=c["kind"], unit=c["unit"],
                              scale=c["scale"])
    static = "fs" + c["kind"][2:] if c["kind"].startswith("fc") else c["kind"] + "_s"
    return StribeckFriction(c["owner"], c["row"], velocity=velocity, space=c["space"],
                            coulomb=c["prior"], static=c["prior"], exponent=exponent,
                            smoothing=c["smoothing"], kinds=(c["kind"], static),
                            unit=c["unit"], scale=c["scale"])
