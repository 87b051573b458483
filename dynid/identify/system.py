"""The identification system ``W θ = y``, QR-compressed as it is built.

Rows arrive chunk by chunk. Each chunk is stacked under the current triangular factor and
re-factorized, keeping only ``R`` (p × p), ``Qᵀ y`` (p) and the residual norm, so memory does
not grow with the number of samples::

    [R_k  z_k]          [R_{k+1}  z_{k+1}]
    [W    y  ]  = Q  ·  [0        ρ      ]

Two forms:

* :class:`JointSystem` keeps each sample's n output rows *side by side*, as one row
  ``[Y_1 … Y_n  y_1 … y_n]`` of length ``n (p + 1)``. Its factor holds every cross product
  ``W_iᵀ W_j``, so a full output covariance can be applied afterwards
  (:meth:`JointSystem.system`), and per-output residuals and their covariance are available for
  any ``θ`` (:meth:`JointSystem.residual_covariance`), without a second pass over the data.
* :class:`LinearSystem` is one stack of rows in compressed form, the triangular factor of
  ``[W y]``: what :meth:`JointSystem.system` gives, and what the estimators solve.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .. import _validate
from .._blas import single_threaded
from .._linalg import stack_triangular
from ..errors import DataError, SolverError

__all__ = ["JointSystem", "LinearSystem", "RankDeficient"]


class RankDeficient(SolverError):
    """The data do not determine every unknown: ``columns`` are those of the least
    determined combination, largest first."""

    def __init__(self, columns: np.ndarray):
        self.columns = [int(c) for c in columns]
        super().__init__("least squares: the data do not determine every unknown (the "
                         "regressor is rank deficient); record a more exciting trajectory, "
                         "or identify fewer parameters")


class LinearSystem:
    """A least-squares system ``W θ = y`` in compressed form.

    Parameters
    ----------
    Rz
        Triangular factor of ``[W y]`` (``RᵀR = [W y]ᵀ[W y]``), (p + 1) columns; its first
        p + 1 rows are kept.
    n_rows
        Number of rows of ``W``.
    """

    def __init__(self, Rz: np.ndarray, n_rows: int):
        self.n_params = Rz.shape[1] - 1
        self._Rz = np.array(Rz[:Rz.shape[1]], dtype=float)
        self.n_rows = int(n_rows)
        self._yy = float(self._Rz[:, -1] @ self._Rz[:, -1])

    @property
    def R(self) -> np.ndarray:
        """Triangular factor (p, p) with ``RᵀR = WᵀW``."""
        R = np.zeros((self.n_params, self.n_params))
        k = min(self._Rz.shape[0], self.n_params)
        R[:k] = self._Rz[:k, :self.n_params]
        return R

    @property
    def qty(self) -> np.ndarray:
        """``Qᵀ y`` (p,)."""
        z = np.zeros(self.n_params)
        k = min(self._Rz.shape[0], self.n_params)
        z[:k] = self._Rz[:k, self.n_params]
        return z

    def solve(self) -> np.ndarray:
        """Least-squares solution ``argmin ‖W θ − y‖``."""
        R = self.R
        if self.n_rows < self.n_params:
            raise SolverError(f"least squares: {self.n_rows} rows for {self.n_params} unknowns; "
                              "record more samples")
        norms = np.linalg.norm(R, axis=0)
        if np.any(norms == 0) or np.any(~np.isfinite(R)):
            raise RankDeficient(np.flatnonzero(norms == 0)[:3])
        _, s, Vt = np.linalg.svd(R / norms)  # column-normalized: units do not matter
        if s[-1] <= 1e-10 * s[0]:
            raise RankDeficient(np.argsort(-np.abs(Vt[-1]))[:3])
        return scipy.linalg.solve_triangular(R, self.qty)

    def residual_norm2(self, theta: np.ndarray) -> float:
        """``‖W θ − y‖²`` from the compressed form."""
        rho2 = max(self._yy - float(self.qty @ self.qty), 0.0)
        d = self.R @ theta - self.qty
        return float(d @ d) + rho2

    def inverse_information(self) -> np.ndarray:
        """``(WᵀW)⁻¹`` (p, p), from the triangular factor."""
        Rinv = scipy.linalg.solve_triangular(self.R, np.eye(self.n_params))
        return Rinv @ Rinv.T


class JointSystem:
    """Samples of n outputs, compressed side by side (see the module docstring).

    Parameters
    ----------
    n_outputs
        Outputs per sample (n).
    n_params
        Unknowns (p).

    Rows may be missing per output (:meth:`add` with ``keep``, e.g. a joint's rows near zero
    velocity). Samples are then grouped by which outputs they keep, and each group is
    compressed side by side over its own outputs, so that every weighting and covariance stays
    exact: a sample whitened by an output covariance uses the covariance of the outputs it
    keeps. Memory is ``(n (p + 1))²`` numbers per group (at most ``2ⁿ − 1`` groups, one
    without missing rows), whatever the number of samples.

    Examples
    --------
    >>> system = JointSystem(2, 3)
    >>> system.add(Y, y)                       # Y (m, 2, 3), y (m, 2)
    >>> system.add(Y, y, keep=np.abs(v) > 0.05)  # rows of an output left out where False
    >>> theta = system.system().solve()
    """

    def __init__(self, n_outputs: int, n_params: int):
        self.n_outputs, self.n_params = int(n_outputs), int(n_params)
        # Outputs kept (a tuple of booleans) → triangular factor of their rows side by side,
        # and rows not yet compressed into it (fewer than its width).
        self._parts: dict[tuple[bool, ...], np.ndarray] = {}
        self._pending: dict[tuple[bool, ...], list[np.ndarray]] = {}
        self._pairs = np.zeros((self.n_outputs, self.n_outputs), dtype=np.int64)
        #: Samples with at least one row.
        self.n_samples = 0

    @property
    def rows(self) -> np.ndarray:
        """Rows per output (n,)."""
        return np.diag(self._pairs).copy()

    @property
    def pairs(self) -> np.ndarray:
        """Samples (n, n) in which both outputs i and j have their row."""
        return self._pairs.copy()

    @single_threaded
    def add(self, Y: np.ndarray, y: np.ndarray, keep: np.ndarray | None = None) -> None:
        """Append samples: regressor rows ``Y`` (m, n, p) and outputs ``y`` (m, n); ``keep``
        (m, n) booleans say which rows are used (default: all)."""
        n, p = self.n_outputs, self.n_params
        Y = np.asarray(Y, dtype=float)
        y = np.asarray(y, dtype=float)
        if Y.ndim != 3 or Y.shape[1:] != (n, p) or y.shape != Y.shape[:2]:
            raise DataError(f"Y and y: expected shapes (m, {n}, {p}) and (m, {n}), found "
                            f"{Y.shape} and {y.shape}")
        if not (np.all(np.isfinite(Y)) and np.all(np.isfinite(y))):
            raise DataError("Y and y: expected finite values; remove non-finite samples first")
        if keep is None:
            keep = np.ones(y.shape, dtype=bool)
        keep = np.asarray(keep)
        if keep.shape != y.shape or keep.dtype != bool:
            raise DataError(f"keep: expected booleans of shape {y.shape} (one per row), found "
                            f"{keep.dtype} of shape {keep.shape}")
        used = keep.any(axis=1)
        Y, y, keep = Y[used], y[used], keep[used]
        if not len(y):
            return
        patterns, group = np.unique(keep, axis=0, return_inverse=True)
        for g, pattern in enumerate(patterns):
            idx = np.flatnonzero(group.reshape(-1) == g)
            S = np.flatnonzero(pattern)
            rows = np.column_stack([Y[idx][:, S].reshape(len(idx), -1), y[idx][:, S]])
            key = tuple(bool(b) for b in pattern)
            pending = self._pending.setdefault(key, [])
            pending.append(rows)
            if sum(len(r) for r in pending) >= rows.shape[1]:
                self._flush(key)
        counts = keep.astype(np.int64)
        self._pairs += counts.T @ counts
        self.n_samples += len(y)

    def _flush(self, key: tuple[bool, ...]) -> None:
        """Compress a group's pending rows into its factor."""
        rows = np.vstack(self._pending.pop(key))
        R = self._parts.get(key, np.zeros((0, rows.shape[1])))
        self._parts[key] = stack_triangular(R, rows)

    def _groups(self) -> list[tuple[np.ndarray, list[np.ndarray]]]:
        """Per group of samples: its outputs S and, per output of S, the factor's columns
        ``[W_i y_i]`` (r, p + 1)."""
        for key in list(self._pending):
            self._flush(key)
        p = self.n_params
        out = []
        for key, R in self._parts.items():
            S = np.flatnonzero(key)
            k = len(S)
            out.append((S, [np.column_stack([R[:, i * p:(i + 1) * p], R[:, k * p + i]])
                            for i in range(k)]))
        return out

    @single_threaded
    def system(self, *, covariance: np.ndarray | None = None) -> LinearSystem:
        """The stacked system of every output row, whitened by an output covariance (n, n)
        when given (``C⁻¹`` applied to each sample's rows and outputs, ``C Cᵀ`` the
        covariance of the outputs the sample keeps, so the whitened noise has unit
        covariance)."""
        n = self.n_outputs
        if covariance is None:
            return LinearSystem(self._combined(lambda S: np.eye(len(S))),
                                int(self.rows.sum()))
        _validate.whitener(covariance, "covariance", n)
        C = np.asarray(covariance, dtype=float)
        return LinearSystem(self._combined(
            lambda S: _validate.whitener(C[np.ix_(S, S)], "covariance", len(S))),
            int(self.rows.sum()))

    @single_threaded
    def factors(self, weighting: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Triangular factors ``R_v`` and ``R_g`` (p columns) with ``R_vᵀR_v = Wᵀ V⁻¹ W`` and
        ``R_gᵀR_g = Wᵀ V⁻¹ Σ V⁻¹ W``, for an estimate weighted by the output covariance
        ``weighting`` (V, n × n) when each sample's output noise has covariance ``noise``
        (Σ); for a sample that keeps some outputs only, V and Σ are those of its outputs."""
        n = self.n_outputs
        Rv = self.system(covariance=weighting).R
        V = np.asarray(weighting, dtype=float)
        noise = np.asarray(noise, dtype=float)
        if noise.shape != (n, n):
            raise DataError(f"noise: expected an ({n}, {n}) covariance, found {noise.shape}")

        def root(S: np.ndarray) -> np.ndarray:
            Vi = np.linalg.inv(V[np.ix_(S, S)])
            middle = Vi @ noise[np.ix_(S, S)] @ Vi
            d, U = np.linalg.eigh((middle + middle.T) / 2)
            return np.sqrt(np.clip(d, 0.0, None))[:, None] * U.T  # TᵀT = V⁻¹ Σ V⁻¹

        return Rv, self._combined(root)[:, :self.n_params]

    def covariance(self, weighting: np.ndarray, noise: np.ndarray,
                   subspace: np.ndarray | None = None) -> np.ndarray:
        """Covariance (p, p) of the estimate weighted by ``weighting`` (V) when the output
        noise has covariance ``noise`` (Σ): ``(Wᵀ V⁻¹ W)⁻¹ Wᵀ V⁻¹ Σ V⁻¹ W (Wᵀ V⁻¹ W)⁻¹`` (the
        sandwich; ``(Wᵀ Σ⁻¹ W)⁻¹`` when ``V = Σ``), from triangular factors rather than normal
        equations. With ``subspace`` (p, r), orthonormal columns ``U``: the covariance of the
        estimate restricted to ``θ = θ₀ + U α`` (the same sandwich in ``α``, mapped back)."""
        Rv, Rg = self.factors(weighting, noise)
        if subspace is not None:
            U = np.asarray(subspace, dtype=float)
            Rv, Rg = scipy.linalg.qr(Rv @ U, mode="r")[0][:U.shape[1]], Rg @ U
        Y = scipy.linalg.solve_triangular(Rv, Rg.T, trans="T")
        Z = scipy.linalg.solve_triangular(Rv, Y)  # Rv⁻¹ Rv⁻ᵀ Rgᵀ
        P = Z @ Z.T
        return P if subspace is None else U @ P @ U.T

    def _combined(self, transform) -> np.ndarray:
        """Triangular factor of the rows ``Σ_i T_li [W_i y_i]`` of every output l of every
        group, ``T = transform(S)`` for the group's outputs S."""
        stacked = [np.zeros((0, self.n_params + 1))]
        for S, blocks in self._groups():
            T = transform(S)
            stacked.extend(sum(T[l, i] * blocks[i] for i in range(len(S)) if T[l, i] != 0.0)
                           if np.any(T[l] != 0.0) else np.zeros_like(blocks[0])
                           for l in range(len(S)))
        return stack_triangular(np.zeros((0, self.n_params + 1)), np.vstack(stacked))

    def residuals_gram(self, theta: np.ndarray) -> np.ndarray:
        """``EᵀE`` (n, n) of the residuals ``e_i = W_i θ − y_i`` of each output (over the
        samples where both outputs have their row)."""
        theta = np.asarray(theta, dtype=float)
        gram = np.zeros((self.n_outputs, self.n_outputs))
        for S, blocks in self._groups():
            F = np.column_stack([B[:, :-1] @ theta - B[:, -1] for B in blocks])
            gram[np.ix_(S, S)] += F.T @ F
        return gram

    @single_threaded
    def leverage(self, weighting: np.ndarray) -> np.ndarray:
        """Each output's share ``h_j`` (n,) of the leverage of the fit weighted by the output
        covariance ``weighting`` (V): the trace of output j's block of the hat matrix
        ``H = W (Wᵀ V⁻¹ W)⁻¹ Wᵀ V⁻¹``, ``h_j = Σ_k (V⁻¹)_kj tr(P W_kᵀ W_j)`` with
        ``P = (Wᵀ V⁻¹ W)⁻¹`` (per group of samples, V restricted to the outputs they keep);
        they sum to p.

        When V is the noise covariance, output j's residual sum of squares has expectation
        ``σ_j² (N_j − h_j)``: an output weighted heavily takes a larger share of the fit and
        leaves a residual smaller than its noise by that share.
        """
        p = self.n_params
        V = np.asarray(weighting, dtype=float)
        Rv = self.system(covariance=V).R
        h = np.zeros(self.n_outputs)
        for S, blocks in self._groups():
            Vi = np.linalg.inv(V[np.ix_(S, S)])
            X = [scipy.linalg.solve_triangular(Rv, B[:, :p].T, trans="T") for B in blocks]
            traces = np.array([[np.sum(Xk * Xj) for Xj in X] for Xk in X])
            h[S] += np.sum(Vi * traces, axis=0)
        return h

    def residual_covariance(self, theta: np.ndarray, weighting: np.ndarray | None = None
                            ) -> np.ndarray:
        """Covariance (n, n) of the output residuals of ``theta``.

        Entry (i, j) divides the residuals' products over the ``N_ij`` samples where both
        outputs have their row by their degrees of freedom. Without ``weighting``, those of a
        fit of p parameters are shared by the outputs in proportion to their rows,
        ``N_ij (1 − p / Σ_k N_k)`` (``N − p/n`` when no row is missing). With the output
        covariance (n, n) that weighted the fit of ``theta``, each output has its own,
        ``N_j − h_j`` with ``h_j`` its share of the leverage (:meth:`leverage`), and entry
        (i, j) divides by ``N_ij √((1 − h_i/N_i)(1 − h_j/N_j))``: unbiased when the weighting
        is the noise's covariance, as it is at the fixed point of iterated weighted least
        squares. Outputs that never share a sample get 0.
        """
        rows = self.rows
        total = int(rows.sum())
        if weighting is None:
            free = np.full(self.n_outputs, 1.0 - self.n_params / max(total, 1))
        else:
            free = 1.0 - self.leverage(weighting) / np.maximum(rows, 1)
        if np.any(rows * free <= 0):
            raise SolverError(f"residual covariance: {self.n_samples} samples of "
                              f"{self.n_outputs} outputs (rows per output: "
                              f"{', '.join(map(str, rows))}) for {self.n_params} parameters; "
                              "record more samples")
        dof = self._pairs * np.sqrt(np.outer(free, free))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self._pairs > 0, self.residuals_gram(theta) / dof, 0.0)
