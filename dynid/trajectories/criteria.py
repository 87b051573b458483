"""Design criteria on the base regressor of an excitation, with their gradients.

A criterion takes the base regressor ``W`` (N, n, b) of a trajectory at N samples (rows: the
model outputs, whitened by the noise covariance when one is given) and returns an objective to
minimize and its gradient ``∂f/∂W`` (N, n, b). The information of earlier experiments can be
added (:class:`Information`): the design then completes what is already known.

* :class:`ConditionNumber`: ``cond(W D⁻¹)``, the condition number of the column-scaled base
  regressor (Swevers; Abdellatif (21)); ``D`` divides each column by its range ``max − min`` over
  every row (as the dVRK package does, Wang), by its norm (the scaling of van der Sluis, within
  √b of the best diagonal scaling), or not at all. The objective is ``log cond``.
* :class:`DOptimal`: ``−log det(Wᵀ Σ⁻¹ W)`` (Abdellatif (22)), the log-volume of the
  confidence ellipsoid of the base parameters for output noise of covariance ``Σ``. The
  objective is divided by b, the number of base parameters (minus the log of the geometric
  mean of the eigenvalues): the same minimizer, with gradients of order one like ``log cond``,
  which keeps a quasi-Newton method's first steps within reach of the constraints.

The extreme singular values of a scaled regressor come from the eigenvalues of its small Gram
matrix (``∂λ_i/∂M = v_i v_iᵀ``); the plain one, whose condition number in SI units can exceed
1e8, goes through a QR factorization and the SVD of the triangular factor, which stay accurate:
with ``W = Q R`` and ``R = U S Vᵀ``, ``∂σ_i/∂W = (Q u_i) v_iᵀ``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .. import _validate
from .._linalg import stack_triangular
from ..errors import DataError, TrajectoryError

__all__ = ["CRITERIA", "SCALINGS", "ConditionNumber", "Criterion", "DOptimal", "Information",
           "condition_numbers", "make_criterion", "noise_whitener"]

#: Column scalings of :class:`ConditionNumber`.
SCALINGS = ("range", "norm", "none")


@dataclass(frozen=True)
class Information:
    """What earlier experiments tell about the base parameters.

    The information matrix ``Σ_k W_kᵀ Σ⁻¹ W_k`` of regressors in SI units is too ill-conditioned
    to be stored as such (its condition number is the square of the regressor's), so it is kept
    as its triangular root ``R`` from a QR factorization of the whitened rows, ``RᵀR = M``.

    Attributes
    ----------
    root
        ``R`` (r, b) upper triangular, r = b (or the number of rows, when fewer).
    column_min, column_max
        Smallest and largest entry of each whitened base-regressor column (b,), for range
        scaling.
    samples
        Number of recorded samples.
    """

    root: np.ndarray
    column_min: np.ndarray
    column_max: np.ndarray
    samples: int

    @property
    def matrix(self) -> np.ndarray:
        """``Σ_k W_kᵀ Σ⁻¹ W_k`` (b, b)."""
        return self.root.T @ self.root

    def __add__(self, other: Information) -> Information:
        b = self.root.shape[1]
        if other.root.shape[1] != b:
            raise DataError(f"information: expected {b} base parameters, found "
                            f"{other.root.shape[1]}; combine experiments on one robot")
        return Information(stack_triangular(self.root, other.root),
                           np.minimum(self.column_min, other.column_min),
                           np.maximum(self.column_max, other.column_max),
                           self.samples + other.samples)

    def restrict(self, idx: np.ndarray) -> Information:
        """The information about the base parameters ``idx`` alone: ``M[idx][:, idx]``, whose
        root is the triangular factor of ``R[:, idx]`` (``R[:, idx]ᵀ R[:, idx]`` is that
        block)."""
        idx = np.asarray(idx, dtype=int)
        return Information(np.linalg.qr(self.root[:, idx], mode="r"), self.column_min[idx],
                           self.column_max[idx], self.samples)

    @classmethod
    def from_regressor(cls, W: np.ndarray) -> Information:
        """The information of whitened base-regressor rows ``W`` (N, n, b) or (rows, b)."""
        Wf = np.asarray(W, float).reshape(-1, np.shape(W)[-1])
        return cls(np.linalg.qr(Wf, mode="r"), Wf.min(axis=0), Wf.max(axis=0),
                   int(np.shape(W)[0]))


class Criterion(ABC):
    """An excitation criterion on the (whitened) base regressor."""

    name: str

    def __init__(self, previous: Information | None = None, weight: float = 1.0):
        self.previous = previous
        if not (np.isfinite(weight) and weight > 0):
            raise TrajectoryError(f"criterion weight: expected > 0, found {weight}")
        self.weight = float(weight)

    @abstractmethod
    def objective(self, W: np.ndarray, gradient: bool = True
                  ) -> tuple[float, np.ndarray | None]:
        """Objective to minimize and ``∂f/∂W`` (same shape as ``W``, (N, n, b))."""

    @abstractmethod
    def score(self, W: np.ndarray) -> float:
        """The criterion's value as it is reported (a condition number, or ``−log det``)."""

    @abstractmethod
    def score_of(self, value: float, b: int) -> float:
        """The reported value of an objective value (of a regressor with b columns)."""


class ConditionNumber(Criterion):
    """Condition number of the column-scaled base regressor (objective: its logarithm).

    Parameters
    ----------
    scaling
        ``"range"`` (each column divided by ``max − min`` of its entries), ``"norm"`` (by its
        Euclidean norm) or ``"none"``.
    previous
        Information of earlier experiments, stacked under the new rows.
    weight
        How many recorded samples each row of ``W`` stands for (scales the new information
        against ``previous``; irrelevant without it).
    """

    name = "condition"

    def __init__(self, scaling: str = "range", previous: Information | None = None,
                 weight: float = 1.0):
        if scaling not in SCALINGS:
            raise TrajectoryError(f"scaling: expected one of {SCALINGS}, found {scaling!r}")
        super().__init__(previous, weight)
        self.scaling = scaling

    def _columns(self, Wf: np.ndarray):
        """Column scales d (b,) and what each depends on."""
        b = Wf.shape[1]
        if self.scaling == "none":
            return np.ones(b), None
        if self.scaling == "norm":
            sq = self.weight * np.einsum("ij,ij->j", Wf, Wf)
            if self.previous is not None:
                sq = sq + np.einsum("ij,ij->j", self.previous.root, self.previous.root)
            return np.sqrt(sq), None
        imax, imin = Wf.argmax(axis=0), Wf.argmin(axis=0)
        hi, lo = Wf[imax, np.arange(b)], Wf[imin, np.arange(b)]
        own_hi, own_lo = np.ones(b, bool), np.ones(b, bool)
        if self.previous is not None:
            own_hi = hi >= self.previous.column_max
            own_lo = lo <= self.previous.column_min
            hi = np.maximum(hi, self.previous.column_max)
            lo = np.minimum(lo, self.previous.column_min)
        return hi - lo, (imax, imin, own_hi, own_lo)

    def _rows(self, W: np.ndarray):
        Wf = W.reshape(-1, W.shape[-1])
        d, extremes = self._columns(Wf)
        d = np.where(d > 0, d, 1.0)
        rows = np.sqrt(self.weight) * Wf / d
        if self.previous is not None:
            rows = np.vstack([rows, self.previous.root / d])
        return Wf, d, extremes, rows

    def _extremes(self, rows: np.ndarray, gradient: bool):
        """Largest and smallest singular values of ``rows`` and ``∂ log(σ_1/σ_b)/∂rows``.

        Scaled regressors have modest condition numbers: the eigenvalues of the Gram matrix
        are accurate enough and cheap. The plain one keeps full accuracy through QR and the
        SVD of the triangular factor."""
        if self.scaling != "none":
            lam, V = np.linalg.eigh(rows.T @ rows)
            hi, lo = np.sqrt(max(lam[-1], 0.0)), np.sqrt(max(lam[0], 0.0))
            if not gradient or lo <= 0:
                return hi, lo, None
            F = np.outer(V[:, -1], V[:, -1]) / lam[-1] - np.outer(V[:, 0], V[:, 0]) / lam[0]
            return hi, lo, rows @ F
        Q, R = np.linalg.qr(rows)
        U, S, Vt = np.linalg.svd(R)
        if not gradient or S[-1] <= 0:
            return S[0], S[-1], None
        return S[0], S[-1], (np.outer(Q @ U[:, 0], Vt[0]) / S[0]
                             - np.outer(Q @ U[:, -1], Vt[-1]) / S[-1])

    def score(self, W: np.ndarray) -> float:
        hi, lo, _ = self._extremes(self._rows(W)[3], gradient=False)
        return float(hi / lo) if lo > 0 else np.inf

    def score_of(self, value, b):
        """``cond = exp(log cond)``."""
        return float(np.exp(value))

    def objective(self, W, gradient=True):
        Wf, d, extremes, rows = self._rows(W)
        hi, lo, G_rows = self._extremes(rows, gradient)
        if not lo > 0:
            return np.inf, (np.zeros_like(W) if gradient else None)
        f = float(np.log(hi / lo))
        if not gradient:
            return f, None
        m = Wf.shape[0]
        G = G_rows[:m] * (np.sqrt(self.weight) / d)
        if self.scaling != "none":
            # rows = (scaled rows) / d: ∂f/∂d_c = −Σ_rows G_rows ⊙ rows / d_c.
            g_d = -np.einsum("ij,ij->j", G_rows, rows) / d
            if self.scaling == "norm":
                G += (g_d / d * self.weight) * Wf
            else:
                imax, imin, own_hi, own_lo = extremes
                cols = np.arange(Wf.shape[1])
                np.add.at(G, (imax[own_hi], cols[own_hi]), g_d[own_hi])
                np.add.at(G, (imin[own_lo], cols[own_lo]), -g_d[own_lo])
        return f, G.reshape(W.shape)


class DOptimal(Criterion):
    """``−log det(w Wᵀ W + M_0)``: D-optimal design on whitened rows (Abdellatif (22)).

    ``w`` (:attr:`weight`) is the number of recorded samples each row stands for, so that the
    information is that of the whole recorded experiment and adds correctly to ``M_0``, the
    information of earlier experiments. The determinant comes from the QR factorization of
    the stacked rows ``[√w W; R_0] = Q R`` (``log det = 2 Σ log |R_ii|``) and the gradient
    ``−2 w W M⁻¹`` from triangular solves with ``R``, both accurate for regressors in SI units.
    """

    name = "d-optimal"

    def score(self, W):
        """``−log det(w WᵀW + M_0)``."""
        return self.score_of(self.objective(W, gradient=False)[0], W.shape[-1])

    def score_of(self, value, b):
        """``−log det = b · (−log det / b)``."""
        return float(value * b)

    def objective(self, W, gradient=True):
        """``−log det(w WᵀW + M_0) / b`` and its gradient."""
        Wf = W.reshape(-1, W.shape[-1])
        b = Wf.shape[1]
        rows = np.sqrt(self.weight) * Wf
        if self.previous is not None:
            rows = np.vstack([rows, self.previous.root])
        R = np.linalg.qr(rows, mode="r")
        diag = np.abs(np.diag(R))
        if not np.all(diag > 0):
            return np.inf, (np.zeros_like(W) if gradient else None)
        f = float(-2 * np.sum(np.log(diag))) / b
        if not gradient:
            return f, None
        # W M⁻¹ = W R⁻¹ R⁻ᵀ
        X = scipy.linalg.solve_triangular(R, Wf.T, trans="T")       # R⁻ᵀ Wᵀ
        Y = scipy.linalg.solve_triangular(R, X)                     # R⁻¹ R⁻ᵀ Wᵀ
        return f, (-2 * self.weight / b * Y.T).reshape(W.shape)


#: Criterion names accepted by :func:`make_criterion`.
CRITERIA = ("condition", "d-optimal")


def make_criterion(name: str, *, scaling: str = "range", previous: Information | None = None,
                   weight: float = 1.0) -> Criterion:
    """The criterion called ``name`` (one of :data:`CRITERIA`)."""
    if name == "condition":
        return ConditionNumber(scaling, previous, weight)
    if name == "d-optimal":
        return DOptimal(previous, weight)
    raise TrajectoryError(f"criterion: expected one of {CRITERIA}, found {name!r}")


def noise_whitener(noise: object, n: int) -> np.ndarray | None:
    """``L⁻¹`` (n, n) with ``Σ = L Lᵀ``, from standard deviations (n,) or a covariance (n, n);
    ``None`` when ``noise`` is ``None``."""
    if noise is None:
        return None
    S = np.asarray(noise, dtype=float)
    if S.shape == (n,):
        if np.any(~np.isfinite(S)) or np.any(S <= 0):
            raise TrajectoryError(f"noise: expected {n} standard deviations > 0, found {S}")
        return np.diag(1.0 / S)
    if S.ndim != 2:
        raise TrajectoryError(f"noise: expected {n} standard deviations or a symmetric ({n}, "
                              f"{n}) covariance, found shape {S.shape}")
    return _validate.whitener(S, "noise", n, TrajectoryError)


def condition_numbers(W: np.ndarray) -> dict[str, float]:
    """Plain, norm-scaled and range-scaled condition numbers of ``W`` (N, n, b) or (rows, b)."""
    W = np.asarray(W, float)
    return {s: ConditionNumber(s).score(W.reshape(-1, W.shape[-1])) for s in
            ("none", "norm", "range")}
