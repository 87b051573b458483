"""Model-structure selection by the correlation of the parameter estimates (Abdellatif (10)–(11)).

For a candidate model (which friction terms, in which joints: for parallel robots the passive
joints outnumber the actuators, and not every joint's friction shows in the actuator forces),
the Gauss–Markov covariance of its base parameters on a given excitation is

    P = (Ψᵀ Σ⁻¹ Ψ)⁻¹                                              Abdellatif (10)

with ``Σ`` the covariance of the output noise of one sample (full, across actuators), and the
correlation coefficients ``ρ_ij = P_ij / √(P_ii P_jj)`` (11). Abdellatif's criterion is the
condition number ``υ = cond(ρ)``: comparable across models of different sizes, large when some
parameters cannot be told apart on that excitation. ``Ψᵀ Σ⁻¹ Ψ`` is accumulated chunk by chunk
from the regressor, so memory does not grow with the samples.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validate
from ..errors import DataError
from ..models import Regressor, Robot, base_parameters
from .uncertainty import Uncertainty

__all__ = ["compare_structures", "structure_uncertainty"]


def structure_uncertainty(robot: Robot, q: np.ndarray, v: np.ndarray, a: np.ndarray, *,
                          covariance: np.ndarray | None = None) -> Uncertainty:
    """Gauss–Markov uncertainty of the robot's base parameters on the states ``q, v, a``
    (N, n), for output noise of covariance ``covariance`` (n, n; default the identity).

    The values are the base parameters of the priors; ``.condition`` is Abdellatif's
    ``υ = cond(ρ)``.

    Examples
    --------
    >>> u = structure_uncertainty(robot, q, v, a, covariance=np.diag([4.0] * 6))
    >>> u.condition                    # cond of the correlation matrix, Abdellatif (11)
    """
    q, v, a = _validate.states(q, v, a, robot.n)
    n = robot.n
    Linv = np.eye(n) if covariance is None else _validate.whitener(covariance, "covariance", n)
    reg = Regressor(robot)
    base = base_parameters(reg)
    cols = base.independent
    info = np.zeros((len(cols), len(cols)))
    for _, Y in reg.chunks(q, v, a):
        W = np.matmul(Linv, Y[:, :, cols])
        info += np.einsum("nip,niq->pq", W, W)
    scale = np.sqrt(np.diag(info))
    if np.any(scale == 0):
        k = int(np.argmax(scale == 0))
        raise DataError(f"structure_uncertainty: base parameter {base.names[k]} has no "
                        "column on these states (the motion does not move what it acts on); "
                        "use states that excite every coordinate")
    # Inverse of the scaled information: the correlation does not depend on the scaling.
    Pn = np.linalg.pinv(info / np.outer(scale, scale), hermitian=True)
    P = Pn / np.outer(scale, scale)
    return Uncertainty.from_covariance(base.names, base.to_base(robot.prior), P)


def compare_structures(candidates: Mapping[str, Robot], q: np.ndarray, v: np.ndarray,
                       a: np.ndarray, *, covariance: np.ndarray | None = None
                       ) -> list[tuple[str, int, float]]:
    """``(name, number of base parameters, cond(ρ))`` of each candidate model on one
    excitation, from the best conditioned to the worst.

    Examples
    --------
    >>> from dynid.models.stewart import leg_friction
    >>> table_1 = {"alpha": ["coulomb"], "beta": ["coulomb"], "length": ["viscous", "coulomb"]}
    >>> full = {**table_1, "spherical": ["viscous"]}
    >>> compare_structures({
    ...     "Table I": robot.with_terms(leg_friction(robot.closure, table_1,
    ...                                              shared=["alpha", "beta"])),
    ...     "with spherical": robot.with_terms(leg_friction(robot.closure, full,
    ...                                                     shared=["alpha", "beta"]))},
    ...     q, v, a)
    """
    if not candidates:
        raise DataError("compare_structures: expected at least one candidate model, e.g. "
                        "compare_structures({'base': robot}, q, v, a)")
    rows = []
    for name, robot in candidates.items():
        u = structure_uncertainty(robot, q, v, a, covariance=covariance)
        rows.append((name, len(u.names), u.condition))
    return sorted(rows, key=lambda r: r[2])
