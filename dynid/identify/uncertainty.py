"""Parameter uncertainty from an estimate's covariance (Abdellatif (10)–(11)).

The covariance ``P`` of an estimate gives each parameter's standard deviation ``σ_i = √P_ii``,
its relative standard deviation ``100 σ_i / |θ_i|`` (%), and the correlation coefficients
``ρ_ij = P_ij / (σ_i σ_j)``. The condition number of the correlation matrix (Abdellatif's
criterion ``υ = cond(ρ)``) summarizes how entangled the estimates are: 1 when they are
independent, large when some combination is poorly determined.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DataError

__all__ = ["Uncertainty"]


@dataclass(frozen=True)
class Uncertainty:
    """Standard deviations and correlations of estimated parameters.

    Attributes
    ----------
    names
        Parameter names.
    values
        Estimates (k,).
    covariance
        Covariance (k, k).
    std
        Standard deviations (k,).
    relative_std
        ``100 σ / |θ|`` in % (inf for a zero estimate).
    correlation
        Correlation coefficients (k, k) (Abdellatif (11)); rows of parameters with zero
        variance are zero.
    condition
        Condition number of ``correlation`` (inf when it is singular).
    """

    names: tuple[str, ...]
    values: np.ndarray
    covariance: np.ndarray
    std: np.ndarray
    relative_std: np.ndarray
    correlation: np.ndarray
    condition: float

    @classmethod
    def from_covariance(cls, names: Sequence[str], values: np.ndarray,
                        covariance: np.ndarray) -> Uncertainty:
        values = np.asarray(values, dtype=float)
        P = np.asarray(covariance, dtype=float)
        k = len(values)
        if P.shape != (k, k) or len(names) != k:
            raise DataError(f"uncertainty: expected {k} names and a ({k}, {k}) covariance, "
                            f"found {len(names)} and {P.shape}")
        var = np.clip(np.diag(P), 0.0, None)
        std = np.sqrt(var)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(values != 0, 100.0 * std / np.abs(values), np.inf)
            inv = np.where(std > 0, 1.0 / std, 0.0)
        corr = P * np.outer(inv, inv)
        np.fill_diagonal(corr, np.where(std > 0, 1.0, 0.0))
        sv = np.linalg.svd(corr, compute_uv=False)
        cond = float(sv[0] / sv[-1]) if sv[-1] > 1e-14 * sv[0] else float("inf")
        return cls(tuple(names), values, P, std, rel, corr, cond)

    def table(self, limit: int | None = None) -> str:
        """A text table: name, value, σ, relative σ."""
        width = min(60, max(len(n) for n in self.names))
        lines = [f"{'parameter':<{width}} {'value':>12} {'σ':>10} {'σ/|θ| %':>9}"]
        for name, value, s, r in list(zip(self.names, self.values, self.std,
                                            self.relative_std, strict=True))[:limit]:
            short = name if len(name) <= width else name[:width - 3] + "..."
            lines.append(f"{short:<{width}} {value:12.6g} {s:10.3g} {r:9.3g}")
        lines.append(f"condition number of the correlation matrix: {self.condition:.4g}")
        return "\n".join(lines)
