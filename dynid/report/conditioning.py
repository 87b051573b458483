"""How well the identification data determine the base parameters: condition numbers.

The base regressor ``W_b`` stacks, over every sample the identification used (processed,
decimated, without the rows left out near zero velocity), the rows of the base parameters'
columns. Its condition number ``σ_max / σ_min`` says how much a relative error in the outputs
can grow in the estimate:

* raw, in the parameters' own units: it mixes the scales of masses, inertias and friction and
  so mostly reflects the units;
* column-scaled (each column divided by its norm, as Gautier's excitation criteria use): the
  figure to compare between experiments; below a few hundred is well excited.

Neither needs the dense ``W_b``: the identification system is kept in compressed form, a
triangular ``R`` with ``RᵀR = W_bᵀW_b``, which has the same singular values, and the column
norms of ``R`` are those of ``W_b``. The condition number of the estimate's correlation matrix
(Abdellatif's ``υ``, :class:`~dynid.identify.uncertainty.Uncertainty`) is reported with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..identify.data import IdentificationData
from ..identify.recording import Recording
from ..identify.result import IdentificationResult
from ..models import Robot, base_parameters

__all__ = ["Conditioning", "condition_numbers", "conditioning"]


@dataclass(frozen=True)
class Conditioning:
    """Condition numbers of an identification (see the module docstring).

    Attributes
    ----------
    raw, scaled
        Condition number of the base regressor, as it is and with unit-norm columns.
    correlation
        Condition number of the base estimate's correlation matrix.
    rows, samples
        Regressor rows and samples they come from.
    same_base
        Whether the robot's base parameters (the regressor's columns) are the result's.
    """

    raw: float
    scaled: float
    correlation: float
    rows: int
    samples: int
    same_base: bool = True


def condition_numbers(R: np.ndarray) -> tuple[float, float]:
    """Raw and column-scaled condition numbers of a matrix ``W`` from a triangular factor
    ``R`` (b, b) with ``RᵀR = WᵀW`` (∞ for a zero column or a singular factor)."""
    R = np.asarray(R, dtype=float)
    norms = np.linalg.norm(R, axis=0)
    if np.any(norms == 0) or not np.all(np.isfinite(R)):
        return float("inf"), float("inf")
    raw = _cond(R)
    return raw, _cond(R / norms)


def _cond(M: np.ndarray) -> float:
    s = np.linalg.svd(M, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def conditioning(robot: Robot, result: IdentificationResult,
                 recordings: Sequence[Recording]) -> Conditioning:
    """Condition numbers of the base regressor on ``recordings`` processed as ``result``
    says, and of the result's correlation matrix.

    Examples
    --------
    >>> c = conditioning(robot, result, [rec])
    >>> print(f"{c.scaled:.1f} (column-scaled), {c.raw:.3g} (raw)")
    """
    base = base_parameters(robot)
    data = IdentificationData(robot, list(recordings), processing=result.processing, base=base)
    system = data.system()
    raw, scaled = condition_numbers(system.system().R)
    return Conditioning(raw, scaled, result.uncertainty().condition,
                        int(system.rows.sum()), int(system.n_samples),
                        tuple(base.names) == tuple(result.base_names))
