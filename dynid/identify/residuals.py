"""Is the residual white? The reported uncertainty assumes it is.

Least squares reports the parameters' covariance from the residual's variance per sample,
which is right only when the residual is white noise. A residual that is coloured (correlated
from sample to sample: unmodelled dynamics, a filter applied to one side only, a limit cycle,
noisy states) carries less information than its number of samples says, and the reported σ
are then too small (or too large, for a residual that alternates).

:func:`whiteness` tests the residual of each output with the Ljung–Box statistic over the
first ``L`` lags of its autocorrelation ``ρ_k``,

    Q = N (N + 2) Σ_k ρ_k² / (N − k)   ~ χ²(L) for white noise,

and estimates by how much the σ are off: for parameters determined by slow components of the
regressor (as rigid-body parameters are), the variance of the estimate scales with the
residual's long-run variance, ``1 + 2 Σ_k (1 − k/(L+1)) ρ_k`` times its variance per sample
(Bartlett weights), so ``√`` of that factor is how much larger the true σ are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DataError

__all__ = ["SIGNIFICANCE", "Whiteness", "whiteness"]

#: Ljung–Box p-value below which a residual is called coloured.
SIGNIFICANCE = 1e-3
#: A coloured residual is reported when it also moves the σ by more than this fraction.
TOLERANCE = 0.1


@dataclass(frozen=True)
class Whiteness:
    """The whiteness test of the residual of every output.

    Attributes
    ----------
    names
        Output names (n).
    autocorrelation
        ``ρ_k`` (L, n) for the lags k = 1…L.
    statistic, p_value
        Ljung–Box ``Q`` (n,) and its p-value under ``χ²(L)``.
    sigma_factor
        Estimated ratio (n,) of the true to the reported σ of parameters determined by the
        slow part of the regressor through this output (1 for a white residual).
    n_samples
        Residual samples tested (over every recording, with the rows left out as gaps).
    """

    names: tuple[str, ...]
    autocorrelation: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray
    sigma_factor: np.ndarray
    n_samples: int

    @property
    def lags(self) -> int:
        return self.autocorrelation.shape[0]

    @property
    def coloured(self) -> np.ndarray:
        """Per output: significantly coloured, and enough to move its σ by more than 10 %."""
        return (self.p_value < SIGNIFICANCE) & (np.abs(self.sigma_factor - 1) > TOLERANCE)

    @property
    def white(self) -> bool:
        return not self.coloured.any()

    def message(self) -> str:
        """What is coloured and what it means for the σ (empty when every output is white)."""
        bad = np.flatnonzero(self.coloured)
        if not len(bad):
            return ""
        parts = [f"{self.names[j]} (Ljung–Box p = {self.p_value[j]:.1e}, lag-1 "
                 f"autocorrelation {self.autocorrelation[0, j]:.2f}, σ off by about "
                 f"×{self.sigma_factor[j]:.2f})" for j in bad]
        return ("the residual is not white on " + ", ".join(parts) + "; the reported σ "
                "assume a white residual and are off by about those factors. Decimate more "
                "(Processing(decimate=...)), lower the cutoff, or look for unmodelled "
                "dynamics in the residual")

    def summary(self) -> str:
        lines = [f"residual whiteness over {self.lags} lags ({self.n_samples} samples):",
                 f"{'output':<12} {'lag-1 ρ':>8} {'Ljung–Box p':>12} {'σ factor':>9}"]
        for j, name in enumerate(self.names):
            flag = "  coloured" if self.coloured[j] else ""
            lines.append(f"{name:<12} {self.autocorrelation[0, j]:8.3f} "
                         f"{self.p_value[j]:12.2e} {self.sigma_factor[j]:9.2f}{flag}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"names": list(self.names), "autocorrelation": self.autocorrelation.tolist(),
                "statistic": self.statistic.tolist(), "p_value": self.p_value.tolist(),
                "sigma_factor": self.sigma_factor.tolist(), "n_samples": self.n_samples}

    @classmethod
    def from_json(cls, data: dict) -> Whiteness:
        try:
            names = tuple(str(x) for x in data["names"])
            rho = np.array(data["autocorrelation"], float)
            rest = [np.array(data[k], float) for k in ("statistic", "p_value", "sigma_factor")]
            count = int(data["n_samples"])
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise DataError(f"whiteness: malformed entry ({str(exc)[:80]})") from None
        n = len(names)
        if rho.ndim != 2 or rho.shape[1] != n or rho.shape[0] < 1 or any(
                x.shape != (n,) for x in rest) or count < 1:
            raise DataError(f"whiteness: expected the test of {n} outputs (lags × {n} "
                            f"autocorrelations, {n} statistics, p-values and factors), found "
                            f"shapes {rho.shape}, {[x.shape for x in rest]}")
        return cls(names, rho, *rest, count)


def whiteness(residuals: Sequence[np.ndarray], names: Sequence[str], *,
              lags: int | None = None) -> Whiteness:
    """Test the residuals (one (N_r, n) array per recording, in time order) for whiteness.

    The autocorrelation is pooled over the recordings (each with its own mean removed, no
    product across two recordings); ``lags`` defaults to ``min(20, N / 10)``. NaN marks a
    row left out (near zero velocity, at rest): the products at lag k are summed over the
    pairs where both rows are there and scaled by the pairs a series without gaps would have,
    and each output's Ljung–Box statistic counts its own rows.
    """
    from scipy.stats import chi2

    series = [np.asarray(e, dtype=float) for e in residuals if len(e) > 1]
    if not series:
        raise DataError("whiteness: no residual samples")
    n = series[0].shape[1]
    N = sum(len(e) for e in series)
    L = int(lags) if lags is not None else int(max(1, min(20, N // 10)))
    if not 1 <= L < min(len(e) for e in series):
        raise DataError(f"whiteness: {L} lags need recordings longer than that")
    cross = np.zeros((L + 1, n))
    pairs = np.zeros((L + 1, n))
    present = np.zeros(n)
    for e in series:
        there = ~np.isnan(e)
        m = there.astype(float)
        mean = np.where(m.sum(axis=0) > 0, np.where(there, e, 0.0).sum(axis=0)
                        / np.maximum(m.sum(axis=0), 1), 0.0)
        e = np.where(there, e - mean, 0.0)
        present += m.sum(axis=0)
        cross[0] += np.sum(e * e, axis=0)
        for k in range(1, L + 1):
            cross[k] += np.sum(e[:-k] * e[k:], axis=0)
            pairs[k] += np.sum(m[:-k] * m[k:], axis=0)
    k = np.arange(1, L + 1)[:, None]
    full = present - k * len(series)  # lag-k pairs of series without gaps of as many rows
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where((cross[0] > 0) & (pairs[1:] > 0),
                       cross[1:] / cross[0] * np.maximum(full, 0) / pairs[1:], 0.0)
    count = np.maximum(present, L + 1)
    Q = count * (count + 2) * np.sum(rho ** 2 / (count - k), axis=0)
    weights = 1 - k / (L + 1)
    factor = np.sqrt(np.clip(1 + 2 * np.sum(weights * rho, axis=0), 1e-6, None))
    return Whiteness(tuple(names), rho, Q, chi2.sf(Q, L), factor, N)
