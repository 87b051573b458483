"""Is an estimate physical? The checks the report shows for standard parameters.

* Each link's ten parameters come from a positive mass distribution exactly when its
  pseudo-inertia ``J = [[½ tr(Ī) 1 − Ī, h], [hᵀ, m]]`` is positive definite (Wensing, Kim and
  Slotine, RA-L 2018; :func:`dynid.identify.physical.pseudo_inertia`); its four eigenvalues,
  with the mass and the centre of mass ``h / m``, are reported per link.
* The total mass is the sum of the identified link masses (bodies fixed to links with known
  parameters are not counted: they are not estimated).
* Every other parameter with a bound in the robot's parameter set (friction and rotor inertia
  are non-negative, springs stiff...) is checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..identify.physical import pseudo_inertia
from ..models import Robot

__all__ = ["BoundCheck", "Consistency", "LinkCheck", "consistency"]


@dataclass(frozen=True)
class LinkCheck:
    """One link's physical consistency.

    Attributes
    ----------
    name
        Link (or identified body) name.
    mass
        Its mass, kg.
    com
        Its centre of mass ``h / m`` (3,) in its frame, m (NaN for a zero mass).
    eigenvalues
        Eigenvalues (4,) of its pseudo-inertia, ascending (kg·m² and kg mixed, as the
        matrix holds them).
    """

    name: str
    mass: float
    com: np.ndarray
    eigenvalues: np.ndarray

    @property
    def physical(self) -> bool:
        """Whether the pseudo-inertia is positive definite."""
        return bool(self.eigenvalues[0] > 0)


@dataclass(frozen=True)
class BoundCheck:
    """A parameter with at least one finite bound, and whether its value respects them."""

    name: str
    unit: str
    value: float
    lower: float
    upper: float

    @property
    def within(self) -> bool:
        return bool(self.lower <= self.value <= self.upper)


@dataclass(frozen=True)
class Consistency:
    """The checks of a set of standard parameters (see the module docstring).

    Attributes
    ----------
    links
        One :class:`LinkCheck` per link block.
    bounds
        One :class:`BoundCheck` per bounded parameter outside the link blocks.
    total_mass, prior_total_mass
        Sum of the link masses of the estimate and of the robot's prior, kg.
    """

    links: tuple[LinkCheck, ...]
    bounds: tuple[BoundCheck, ...]
    total_mass: float
    prior_total_mass: float

    @property
    def physical(self) -> bool:
        """Whether every link is physical and every bound respected."""
        return all(c.physical for c in self.links) and all(b.within for b in self.bounds)

    def failures(self) -> list[str]:
        """What is not physical, one phrase each (empty when everything is)."""
        out = [f"{c.name}: pseudo-inertia eigenvalue {c.eigenvalues[0]:.3g} ≤ 0"
               for c in self.links if not c.physical]
        out += [f"{b.name} = {b.value:.4g} outside [{b.lower:g}, {b.upper:g}]"
                for b in self.bounds if not b.within]
        return out


def consistency(robot: Robot, theta: np.ndarray) -> Consistency:
    """Check standard parameters ``theta`` (p,) of ``robot`` (see the module docstring).

    Examples
    --------
    >>> robot = dynid.load_robot("panda")
    >>> checks = consistency(robot, robot.prior)
    >>> checks.physical, round(checks.total_mass, 2)
    (True, 16.06)
    """
    params = robot.parameters
    theta = np.asarray(theta, dtype=float)
    links = []
    for link in params.links:
        block = theta[params.link_block(link)]
        mass = float(block[0])
        com = block[1:4] / mass if mass != 0 else np.full(3, np.nan)
        eig = np.linalg.eigvalsh(pseudo_inertia(block))
        links.append(LinkCheck(link, mass, com, eig))
    bounds = tuple(BoundCheck(p.name, p.unit, float(theta[i]), p.lower, p.upper)
                   for i, p in enumerate(params)
                   if p.group != "link" and (np.isfinite(p.lower) or np.isfinite(p.upper)))
    masses = params.indices(f"{link}.m" for link in params.links)
    counts = robot.link_counts  # a shared block's mass once per link carrying it
    return Consistency(tuple(links), bounds, float(counts @ theta[masses]),
                       float(counts @ params.priors[masses]))
