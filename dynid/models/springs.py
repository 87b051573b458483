"""Springs and cables: position-dependent forces linear in their parameters.

Each term gives the generalized force the drives must supply to hold the coordinate against it,
which is the derivative of the term's potential energy:

* :class:`TorsionalSpring`: ``τ = k (x − x0)``, energy ``½ k (x − x0)²`` (the PSM roll joint);
* :class:`LinearSpring`: a spring between a point at distance ``a`` from the joint axis on one
  link and a point at distance ``b`` on the other, length ``l(x) = sqrt(a² + b² − 2ab cos(x + γ))``;
  ``τ = k (l − l0) ∂l/∂x``, energy ``½ k (l − l0)²`` (the gravity-balancing spring of the MTM's
  joint 5, Wang Fig. 7);
* :class:`CableTorque`: ``τ = Σ_k c_k x^k``, the torque of a cable wound along a joint as a
  polynomial of its position (the MTM's joint 4, Wang Fig. 6), energy ``Σ c_k x^{k+1}/(k+1)``.

Wang's package writes the spring columns with the opposite sign (the spring's torque on the
joint); here every term is what the drive supplies, so stiffnesses are ≥ 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ModelError
from ._geometry import cosine_law
from .parameters import Parameter
from .terms import SPACES, Term

__all__ = ["CableTorque", "LinearSpring", "TorsionalSpring"]


def _check(owner: str, space: str) -> None:
    """The row is checked against the space's size by the robot."""
    if space not in SPACES:
        raise ModelError(f"{owner}: space must be one of {SPACES}, found {space!r}")


class TorsionalSpring(Term):
    """``τ = k (x − x0)`` on one coordinate; parameter ``owner.k``.

    Parameters
    ----------
    owner, row, space
        Name of the spring, index of its coordinate, and the coordinate's space.
    stiffness
        Prior of ``k`` (N·m/rad, or N/m on a prismatic coordinate), ≥ 0.
    rest
        Position ``x0`` (rad or m) where the spring is relaxed.
    linear
        True on a prismatic coordinate.
    """

    def __init__(self, owner: str, row: int, space: str, *, stiffness: float = 0.0,
                 rest: float = 0.0, linear: bool = False):
        _check(owner, space)
        if not stiffness >= 0:
            raise ModelError(f"{owner}.k: spring stiffness must be ≥ 0, found {stiffness}")
        self.owner, self.rows, self.space, self.rest = owner, (row,), space, float(rest)
        unit = "N/m" if linear else "N·m/rad"
        self.parameters = (Parameter(owner, "k", unit, "spring", float(stiffness), lower=0.0),)

    def columns(self, x, xd, xdd):
        return (x[:, self.rows[0]] - self.rest)[:, None, None]

    def __repr__(self) -> str:
        return f"TorsionalSpring({self.owner} on {self.space}[{self.rows[0]}])"


class LinearSpring(Term):
    """A linear spring across a revolute joint, ``τ = k (l(x) − l0) ∂l/∂x``.

    Parameters
    ----------
    owner, row, space
        Name of the spring, index of its joint, and the joint's space.
    a, b
        Distances (m) from the joint axis to the spring's two attachment points.
    gamma
        Angle (rad) between the two attachment arms at ``x = 0`` is ``x + gamma``.
    rest_length
        Length ``l0`` (m) of the relaxed spring.
    stiffness
        Prior of ``k`` (N/m), ≥ 0.
    """

    def __init__(self, owner: str, row: int, space: str, *, a: float, b: float, gamma: float,
                 rest_length: float, stiffness: float = 0.0):
        _check(owner, space)
        for key, value in (("a", a), ("b", b), ("rest_length", rest_length)):
            if not np.isfinite(value) or value <= 0:
                raise ModelError(f"{owner}.{key}: expected a length > 0 m, found {value}")
        if not stiffness >= 0:
            raise ModelError(f"{owner}.k: spring stiffness must be ≥ 0, found {stiffness}")
        self.owner, self.rows, self.space = owner, (row,), space
        self.a, self.b, self.gamma, self.rest_length = float(a), float(b), float(gamma), \
            float(rest_length)
        self.parameters = (Parameter(owner, "k", "N/m", "spring", float(stiffness), lower=0.0),)

    def length(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Spring length ``l`` (m) and ``∂l/∂x`` (m/rad) at joint positions (N,)."""
        return cosine_law(self.a, self.b, x + self.gamma)[:2]

    def columns(self, x, xd, xdd):
        l, dl = self.length(x[:, self.rows[0]])
        return ((l - self.rest_length) * dl)[:, None, None]

    def __repr__(self) -> str:
        return f"LinearSpring({self.owner} on {self.space}[{self.rows[0]}])"


class CableTorque(Term):
    """``τ = Σ_k c_k x^k`` on one coordinate; parameters ``owner.c0`` … ``owner.c<d>``.

    Parameters
    ----------
    owner, row, space
        Name of the cable, index of its coordinate, and the coordinate's space.
    coefficients
        Priors of ``c_0 … c_d`` (N·m/rad^k), lowest degree first.
    """

    def __init__(self, owner: str, row: int, space: str, coefficients: Sequence[float]):
        _check(owner, space)
        coefficients = [float(c) for c in coefficients]
        if not coefficients or not all(np.isfinite(coefficients)):
            raise ModelError(f"{owner}: expected at least one finite polynomial coefficient, "
                             f"found {coefficients}")
        self.owner, self.rows, self.space = owner, (row,), space
        self.degree = len(coefficients) - 1
        self.parameters = tuple(
            Parameter(owner, f"c{k}", "N·m" if k == 0 else f"N·m/rad^{k}", "cable", c)
            for k, c in enumerate(coefficients))

    def columns(self, x, xd, xdd):
        return np.power.outer(x[:, self.rows[0]], np.arange(self.degree + 1))[:, None, :]

    def __repr__(self) -> str:
        return f"CableTorque({self.owner}: degree {self.degree} on {self.space}[{self.rows[0]}])"
