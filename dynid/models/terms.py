"""Extra terms of the model, beyond the rigid links: friction, rotor inertia, springs, cables.

Each term acts in one coordinate space (``"tree"``, ``"basis"`` or ``"actuator"``) on a few of
its coordinates (``rows``), is linear in its own parameters, and gives its regressor columns
for a batch of N samples. The regressor projects each term's rows to the output space.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

import numpy as np

from ..errors import ModelError
from .parameters import Parameter

__all__ = ["SPACES", "CoordinateBlock", "CoordinateTerm", "Term", "armature", "joint_friction",
           "motor_dynamics"]

SPACES = ("tree", "basis", "actuator")


class Term(ABC):
    """A block of regressor columns acting on some coordinates of one space."""

    space: str
    rows: tuple[int, ...]
    parameters: tuple[Parameter, ...]

    @abstractmethod
    def columns(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> np.ndarray:
        """Columns (N, len(rows), len(parameters)) at positions, velocities, accelerations
        (N, dim) of the term's space."""


# kind → (column, unit for a rotary coordinate, unit for a linear one, lower bound)
_COLUMNS = {
    "inertia": ("a", "kg·m²", "kg", 0.0),
    "viscous": ("v", "N·m·s/rad", "N·s/m", 0.0),
    "coulomb": ("sign", "N·m", "N", 0.0),
    "offset": ("one", "N·m", "N", -np.inf),
}


class CoordinateTerm(Term):
    """Inertia, viscous and Coulomb friction and a constant offset on one coordinate.

    The force on the coordinate is ``J ẍ + f_v ẋ + f_c sgn(ẋ) + f_o``, where ``sgn`` is the
    sign function, or ``tanh(ẋ / smoothing)`` when a smoothing velocity is given.

    Parameters
    ----------
    owner
        Owner of the parameters (a joint or motor name).
    row
        Index of the coordinate in its space.
    space
        ``"tree"``, ``"basis"`` or ``"actuator"``.
    priors
        Physical quantity → (parameter kind, prior): quantities are ``inertia``,
        ``viscous``, ``coulomb``, ``offset``; only those given get a column.
    linear
        True for a prismatic coordinate (units in N rather than N·m).
    smoothing
        Velocity below which the Coulomb sign is smoothed (0: exact sign).
    scales, units
        Optional constant factor of a quantity's column and its parameter's unit, for
        quantities that act on the coordinate through a constant ratio (the translating mass
        of a ball screw, seen from its motor).
    """

    def __init__(self, owner: str, row: int, space: str,
                 priors: Mapping[str, tuple[str, float]], *,
                 linear: bool = False, smoothing: float = 0.0,
                 scales: Mapping[str, float] | None = None,
                 units: Mapping[str, str] | None = None):
        if space not in SPACES:
            raise ModelError(f"term {owner}: space must be one of {SPACES}, found {space!r}")
        if not smoothing >= 0:
            raise ModelError(f"{owner}: sign smoothing must be a velocity ≥ 0, found {smoothing}")
        self.owner, self.space, self.rows = owner, space, (row,)
        self.smoothing = float(smoothing)
        self._sources: list[str] = []
        self._scales: list[float] = []
        scales, units = dict(scales or {}), dict(units or {})
        params = []
        for quantity, (kind, prior) in priors.items():
            source, rot_unit, lin_unit, low = _COLUMNS[quantity]
            if quantity in units:
                rot_unit = lin_unit = units[quantity]
            self._scales.append(float(scales.get(quantity, 1.0)))
            group = "friction" if quantity != "inertia" and space != "actuator" else "actuator"
            if prior < low:
                raise ModelError(f"{owner}.{kind}: the {quantity} prior must be ≥ 0, "
                                 f"found {prior}")
            params.append(Parameter(owner, kind, lin_unit if linear else rot_unit, group,
                                    float(prior), lower=low))
            self._sources.append(source)
        self.parameters = tuple(params)

    def columns(self, x, xd, xdd):
        return CoordinateBlock([self], [np.arange(len(self.parameters))]).values(
            x, xd, xdd)[:, None, :]

    def __repr__(self) -> str:
        kinds = ", ".join(p.kind for p in self.parameters)
        return f"CoordinateTerm({self.owner}: {kinds} on {self.space}[{self.rows[0]}])"


class CoordinateBlock:
    """Many :class:`CoordinateTerm` of one space evaluated together.

    Each parameter is one entry ``(row, column)`` of the regressor; :meth:`values` gives all
    entries at once, (N, k), so the regressor places them with a single indexed assignment.
    """

    def __init__(self, terms: list[CoordinateTerm], columns: list[np.ndarray]):
        self.rows = np.array([t.rows[0] for t in terms for _ in t.parameters], dtype=int)
        self.cols = np.concatenate(columns).astype(int) if columns else np.zeros(0, int)
        sources = np.array([s for t in terms for s in t._sources])
        smoothing = np.array([t.smoothing for t in terms for _ in t.parameters])
        self._a = np.flatnonzero(sources == "a")
        self._v = np.flatnonzero(sources == "v")
        self._sign = np.flatnonzero((sources == "sign") & (smoothing == 0))
        self._tanh = np.flatnonzero((sources == "sign") & (smoothing > 0))
        self._one = np.flatnonzero(sources == "one")
        self._smoothing = smoothing[self._tanh]
        scales = np.array([s for t in terms for s in t._scales])
        self._scale = None if np.all(scales == 1.0) else scales

    def __len__(self) -> int:
        return len(self.rows)

    def values(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> np.ndarray:
        """Entry values (N, k) at the states (N, dim) of the block's space."""
        rows = self.rows
        out = np.empty((x.shape[0], len(rows)))
        out[:, self._a] = xdd[:, rows[self._a]]
        out[:, self._v] = xd[:, rows[self._v]]
        out[:, self._sign] = np.sign(xd[:, rows[self._sign]])
        out[:, self._tanh] = np.tanh(xd[:, rows[self._tanh]] / self._smoothing)
        out[:, self._one] = 1.0
        if self._scale is not None:
            out *= self._scale
        return out


def joint_friction(joint: str, row: int, *, space: str = "basis", linear: bool = False,
                   viscous: float | None = None, coulomb: float | None = None,
                   offset: float | None = None, smoothing: float = 0.0) -> CoordinateTerm:
    """Friction of a joint: ``joint.fv``, ``joint.fc``, ``joint.fo`` for the values given."""
    priors = {q: (k, v) for q, k, v in (("viscous", "fv", viscous), ("coulomb", "fc", coulomb),
                                         ("offset", "fo", offset)) if v is not None}
    return CoordinateTerm(joint, row, space, priors, linear=linear, smoothing=smoothing)


def armature(motor: str, row: int, inertia: float, *, linear: bool = False) -> CoordinateTerm:
    """Actuator inertia reflected to its joint, ``motor.Ia`` (``r² J_m`` for a gear), on a basis
    coordinate. The usual identification parameter when the motor side is not modelled: its
    column is the joint acceleration, in joint-side units like the links' inertias."""
    return CoordinateTerm(motor, row, "basis", {"inertia": ("Ia", inertia)}, linear=linear)


def motor_dynamics(motor: str, row: int, *, inertia: float | None = None,
                   viscous: float | None = None, coulomb: float | None = None,
                   offset: float | None = None, smoothing: float = 0.0) -> CoordinateTerm:
    """Rotor inertia and motor friction on an actuator coordinate (Leborne (2)):
    ``motor.Jm``, ``motor.fvm``, ``motor.fcm`` and the constant friction offset ``motor.fom``
    (N·m, either sign) for the values given.

    Acting on the motor, these reach the joints through the transmission, ``τ = Kᵀ τ_m``: with
    a coupling, one motor's offset loads every joint it moves.

    Examples
    --------
    >>> term = motor_dynamics("motor6", 5, viscous=1e-4, offset=0.02)
    >>> [p.name for p in term.parameters]
    ['motor6.fvm', 'motor6.fom']
    """
    priors = {q: (k, v) for q, k, v in (("inertia", "Jm", inertia), ("viscous", "fvm", viscous),
                                         ("coulomb", "fcm", coulomb), ("offset", "fom", offset))
              if v is not None}
    return CoordinateTerm(motor, row, "actuator", priors, smoothing=smoothing)
