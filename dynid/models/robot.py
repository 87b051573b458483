"""The robot description: tree, attached bodies, closure, transmission, extra terms and what the
model outputs.

A :class:`Robot` is immutable. It says what the robot *is*; computations on it
(:class:`~dynid.models.regressor.Regressor`, :func:`~dynid.models.base.base_parameters`)
take it as an argument. Robots come from robot files (:func:`dynid.load_robot`), URDF, DH
tables, or are assembled in Python from the parts below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import ModelError
from .bodies import Attachments, Body
from .closures import Closure, LinearClosure
from .parameters import GROUPS, ParameterSet
from .terms import Term
from .transmissions import Transmission
from .tree import Tree

__all__ = ["OUTPUTS", "Limits", "Robot"]

#: What a model predicts: generalized force on the basis coordinates, motor-side torque, or
#: motor current ``τ_m / k_T``.
OUTPUTS = ("joint_torque", "motor_torque", "current")


@dataclass(frozen=True)
class Limits:
    """Limits of the basis coordinates (SI units; ±inf where there is none)."""

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort: np.ndarray

    @classmethod
    def unbounded(cls, n: int) -> Limits:
        inf = np.full(n, np.inf)
        return cls(-inf, inf.copy(), inf.copy(), inf.copy(), inf.copy())


@dataclass(frozen=True, eq=False)
class Robot:
    """A robot to identify.

    Parameters
    ----------
    tree
        The rigid-body tree (Pinocchio model).
    name
        A short name for reports.
    closure
        Basis → tree map (default: the identity; the tree joints are the coordinates).
    transmission
        Basis → actuator map (default: every joint driven directly).
    terms
        Friction, motor, spring and cable terms.
    output
        One of :data:`OUTPUTS`.
    limits
        Limits of the basis coordinates (default: the tree's position, velocity and effort
        limits when the closure is the identity, else none).
    actuator_limits
        Limits of the actuator coordinates, SI units on the motor side (rad, rad/s, rad/s²,
        N·m); default: none.
    bodies
        Bodies fixed to links without a joint (:class:`~dynid.models.bodies.Body`):
        counterweights, tools, payloads. Identified ones add ten link parameters each, after
        the tree's links; known ones add their generalized force to the prediction.
    source
        Where the robot was loaded from: an embedded robot's name or a robot file's path
        (set by :func:`~dynid.models.load_robot`; results and parameter files record it).
    """

    tree: Tree
    name: str = "robot"
    closure: Closure | None = None
    transmission: Transmission | None = None
    terms: tuple[Term, ...] = ()
    output: str = "joint_torque"
    limits: Limits | None = None
    actuator_limits: Limits | None = None
    bodies: tuple[Body, ...] = ()
    source: str | None = None
    parameters: ParameterSet = field(init=False)
    attachments: Attachments = field(init=False, repr=False)
    term_columns: tuple[np.ndarray, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.closure is None:
            set_(self, "closure", self.tree.default_closure())
        if self.closure.n_tree != self.tree.n:
            raise ModelError(f"closure maps to {self.closure.n_tree} tree coordinates but the "
                             f"tree has {self.tree.n} joints")
        _check_mimic(self.tree, self.closure)
        n = self.closure.n_basis
        if self.transmission is None:
            set_(self, "transmission", Transmission.direct([f"motor{i + 1}" for i in range(n)]))
        if self.transmission.n != n:
            raise ModelError(f"transmission has {self.transmission.n} actuators for {n} basis "
                             "coordinates; they must match")
        if self.output not in OUTPUTS:
            raise ModelError(f"output: expected one of {OUTPUTS}, found {self.output!r}")
        if self.output == "current" and self.transmission.torque_constants is None:
            raise ModelError("output 'current' needs a torque constant for every actuator; "
                             "give actuator torque_constant values or output torque")
        dims = {"tree": self.tree.n, "basis": n, "actuator": n}
        for term in self.terms:
            if not term.parameters:
                raise ModelError(f"{term!r}: a term without parameters; give at least one of "
                                 "its quantities, or leave the term out")
            if any(not 0 <= r < dims[term.space] for r in term.rows):
                raise ModelError(f"{term!r}: rows {term.rows} outside the {term.space} space "
                                 f"of size {dims[term.space]}")
        order = {g: i for i, g in enumerate(GROUPS)}
        terms = tuple(sorted(self.terms, key=lambda t: order[t.parameters[0].group]))
        set_(self, "terms", terms)
        set_(self, "bodies", (self.bodies,) if isinstance(self.bodies, Body)
             else tuple(self.bodies))
        owners = {*self.transmission.names, *(p.owner for t in terms for p in t.parameters)}
        set_(self, "attachments", Attachments(self.tree, self.bodies, reserved=sorted(owners)))
        params = self.tree.link_parameters() + self.attachments.parameters()
        columns = []
        for term in terms:
            columns.append(np.arange(len(params), len(params) + len(term.parameters)))
            params += term.parameters
        set_(self, "parameters", ParameterSet(params))
        set_(self, "term_columns", tuple(columns))
        if self.limits is None:
            lim = Limits.unbounded(n)
            tree_limits = self.tree.limits()
            for k, t in enumerate(self.closure.tree_joints(self.tree.joint_names)):
                if t is not None:  # a basis coordinate that is a tree joint takes its limits
                    for key, x in zip(("lower", "upper", "velocity", "effort"), tree_limits,
                                      strict=True):
                        getattr(lim, key)[k] = x[t]
            set_(self, "limits", lim)
        if self.actuator_limits is None:
            set_(self, "actuator_limits", Limits.unbounded(n))
        for label, lim in (("limits", self.limits), ("actuator_limits", self.actuator_limits)):
            for key in ("lower", "upper", "velocity", "acceleration", "effort"):
                if np.shape(getattr(lim, key)) != (n,):
                    raise ModelError(f"{label}.{key}: expected {n} values, found shape "
                                     f"{np.shape(getattr(lim, key))}")
            if np.any(~(lim.lower < lim.upper)):
                k = int(np.argmax(~(lim.lower < lim.upper)))
                names = (self.closure.basis_names if label == "limits"
                         else self.transmission.names)
                raise ModelError(f"{label}: every lower position limit must be below the upper "
                                 f"one; {names[k]} has [{lim.lower[k]:g}, {lim.upper[k]:g}]")

    # Shapes and names ------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of basis coordinates."""
        return self.closure.n_basis

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the basis coordinates."""
        return self.closure.basis_names

    @property
    def actuator_names(self) -> tuple[str, ...]:
        return self.transmission.names

    @property
    def output_names(self) -> tuple[str, ...]:
        """Names of the model's output rows."""
        return self.joint_names if self.output == "joint_torque" else self.actuator_names

    @property
    def basis_units(self) -> tuple[str, ...]:
        """Position unit of each basis coordinate: ``"m"`` for a prismatic joint, else
        ``"rad"`` (a coordinate that is not a tree joint is taken as an angle)."""
        types = dict(zip(self.tree.joint_names, self.tree.joint_types, strict=True))
        return tuple("m" if types.get(name) == "prismatic" else "rad"
                     for name in self.joint_names)

    @property
    def actuator_units(self) -> tuple[str, ...]:
        """Position unit of each actuator coordinate: ``"m"`` for an actuator that moves
        prismatic coordinates only, each through a unit gear (its coordinate is a length, as
        the insertion of the dVRK PSM), else ``"rad"`` (a rotary motor)."""
        return self.transmission.actuator_units(self.basis_units)

    @property
    def output_units(self) -> tuple[str, ...]:
        """Unit of each output row: ``"A"`` (current), ``"N"`` (force on a prismatic joint, or
        on an actuator whose coordinate is a length) or ``"N·m"``, so that each output times
        the velocity of its coordinate is a power in W."""
        if self.output == "current":
            return ("A",) * self.n
        units = self.actuator_units if self.output == "motor_torque" else self.basis_units
        return tuple("N" if unit == "m" else "N·m" for unit in units)

    @property
    def prior(self) -> np.ndarray:
        """Prior parameter vector."""
        return self.parameters.priors

    @property
    def link_counts(self) -> np.ndarray:
        """Per link block of :attr:`parameters` (``parameters.links``), how many bodies carry
        it: the links of a shared group, else 1; a total mass is ``link_counts @ masses``."""
        links = self.tree.linkset
        return np.array([len(links.members(k)) if k in links.names else 1
                         for k in self.parameters.links], dtype=float)

    def link_values(self, theta: np.ndarray) -> np.ndarray:
        """The ten inertial parameters (n_t, 10) of every tree link in a parameter vector
        ``theta`` (p,): its own block, its shared group's, or zeros for a massless link.

        Examples
        --------
        >>> robot = dynid.load_robot("hexapod")
        >>> robot.link_values(robot.prior)[0]        # x_slide: massless
        array([0., 0., 0., 0., 0., 0., 0., 0., 0., 0.])
        """
        theta = np.asarray(theta, dtype=float)
        out = np.zeros((self.tree.n, 10))
        for j, owner in enumerate(self.tree.linkset.owners):
            if owner is not None:
                out[j] = theta[self.parameters.link_block(owner)]
        return out

    def with_output(self, output: str) -> Robot:
        """The same robot with another model output."""
        return replace(self, output=output)

    def with_terms(self, terms: Sequence[Term]) -> Robot:
        """The same robot with another set of extra terms."""
        return replace(self, terms=tuple(terms))

    def __repr__(self) -> str:
        return (f"Robot({self.name!r}: {self.n} coordinates, {self.tree.n} tree joints, "
                f"{len(self.parameters)} parameters, output {self.output})")


def _check_mimic(tree: Tree, closure: Closure) -> None:
    """A closure keeps the tree's mimic joints (URDF ``<mimic>``) following their leaders."""
    for m in tree.mimic:
        where = (f"tree joint {m.joint!r} mimics {m.leader!r} (q = {m.multiplier:g}·q_leader "
                 f"+ {m.offset:g}) in the URDF")
        if not isinstance(closure, LinearClosure):
            raise ModelError(f"{where}, which only a linear closure can keep; leave the closure "
                             "out (the tree's default_closure() has the mimic rows), or lock "
                             "the joints")
        t, lead = tree.joint_names.index(m.joint), tree.joint_names.index(m.leader)
        A, b = closure.matrix, closure.offset
        if not (np.allclose(A[t], m.multiplier * A[lead], rtol=1e-12, atol=1e-12)
                and np.isclose(b[t], m.multiplier * b[lead] + m.offset, rtol=1e-12,
                               atol=1e-12)):
            raise ModelError(f"{where}, but the closure's row of {m.joint!r} does not follow "
                             "it; its row must be the multiplier times the leader's row, plus "
                             "the offset")
